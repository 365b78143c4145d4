"""What every Gmail request of one account needs: the client, the tag, the limits, the
granted scopes, and what is learnt once (the label tree, the account's address).

The client is made on first use (``ClientFactory``), so a server that never calls Gmail
never builds one. The label tree is kept until this process changes a label, and fetched
again when a name or id is not found in it (someone changed labels in Gmail meanwhile).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mfconnector.gmail.client import GmailClient
from mfconnector.gmail.labels import LabelTree
from mfconnector.gmail.scopes import FULL_MAIL
from mfconnector.limits import Limits
from mfconnector.mail.refs import AccountTag

__all__ = ["FULL_MAIL_SCOPE", "ClientFactory", "GmailMailbox"]

ClientFactory = Callable[[], Awaitable[GmailClient]]
FULL_MAIL_SCOPE = FULL_MAIL
"""The only scope that permits ``messages.delete`` (permanent deletion)."""


@dataclass
class GmailMailbox:
    tag: AccountTag
    client: ClientFactory
    limits: Limits
    scopes: frozenset[str] = frozenset()
    """The scopes this account's sign-in asks for (what the gates turned on)."""
    login_command: str = "mfconnector login --provider gmail"
    _labels: LabelTree | None = field(default=None, repr=False)
    _address: str | None = field(default=None, repr=False)

    async def labels(self, *, fresh: bool = False) -> LabelTree:
        if self._labels is None or fresh:
            client = await self.client()
            self._labels = LabelTree(self.tag, await client.get("labels"))
        return self._labels

    def forget_labels(self) -> None:
        self._labels = None

    async def address(self) -> str:
        """The signed-in user's address (``getProfile``), asked once."""
        if self._address is None:
            client = await self.client()
            profile = await client.get("profile")
            found = profile.get("emailAddress") if isinstance(profile, dict) else None
            self._address = found if isinstance(found, str) else ""
        return self._address
