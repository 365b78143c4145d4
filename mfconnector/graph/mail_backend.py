"""Microsoft Graph as a ``MailBackend``: the tools' neutral calls as Graph requests.

``GraphMailbox`` is what both halves share: the client (made on first use: msal and
httpx stay off the start-up path), the mailbox path (``/me`` or ``/users/{address}``),
the active limits, the account's reference tag, and what is learnt once per process
(time zone, folder names and ids), bounded. ``graph.mail_reads`` holds the reads,
``graph.mail_acts`` the changes and sending; ``GraphMailBackend`` is both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mfconnector.limits import Limits
from mfconnector.mail.refs import AccountTag

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient

__all__ = ["ClientFactory", "GraphMailbox"]

ClientFactory = Callable[[], Awaitable["GraphClient"]]


@dataclass
class GraphMailbox:
    """One Graph mailbox of one account: what every Graph mail request needs."""

    tag: AccountTag
    client: ClientFactory
    limits: Limits
    path: str = "/me"
    """``/me``, or ``/users/{address}`` for a shared or delegated mailbox."""
    label: str | None = None
    """The mailbox as the operator or the call named it (None: the signed-in user's)."""
    time_zone_setting: str | None = None
    """``--time-zone``: shown and filtered in this zone instead of the mailbox's own."""
    caches: dict[str, object] = field(default_factory=dict)
