"""A Gmail ``Account`` for the wiring: the backend, its lazily made client, its gates.

The token provider comes from the caller (``mfconnector.auth.google`` for a signed-in
account, a static token for ``MFC_GMAIL_ACCESS_TOKEN`` and the demo): this package sees
only the ``TokenProvider`` interface, so Google's libraries stay out of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from mfconnector.auth import TokenProvider
from mfconnector.gmail.api_root import DEFAULT_GMAIL_API_ROOT, checked_api_root
from mfconnector.gmail.backend import GmailMailBackend
from mfconnector.gmail.client import GmailClient
from mfconnector.gmail.scopes import login_command, scopes_for
from mfconnector.limits import Limits
from mfconnector.mail.accounts import Account
from mfconnector.mail.refs import account_tag
from mfconnector.net.settings import NetworkSettings

__all__ = ["LazyGmailClient", "gmail_account"]


class LazyGmailClient:
    """Makes the client on the first call (inside trio), then hands out the same one."""

    def __init__(
        self,
        token_provider: TokenProvider,
        limits: Limits,
        root: str,
        login: str,
        transport: httpx.AsyncBaseTransport | None,
        network: NetworkSettings | None,
    ) -> None:
        self._args = (token_provider, limits, root, login, transport, network)
        self.client: GmailClient | None = None

    async def __call__(self) -> GmailClient:
        if self.client is None:
            tokens, limits, root, login, transport, network = self._args
            self.client = GmailClient(
                token_provider=tokens,
                limits=limits,
                root=root,
                login_command=login,
                transport=transport,
                network=network,
            )
        return self.client

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()


def gmail_account(
    name: str,
    *,
    token_provider: TokenProvider,
    limits: Limits,
    gates: frozenset[str] = frozenset(),
    root: str = DEFAULT_GMAIL_API_ROOT,
    transport: httpx.AsyncBaseTransport | None = None,
    network: NetworkSettings | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Account:
    """One Gmail account. ``gates``: the open gates' names (``writes``, ``send``,
    ``delete``); they decide the scopes the backend assumes and the login command it names.
    ``root`` is checked by ``checked_api_root`` (``ApiRootError`` when refused)."""
    root = checked_api_root(root)
    switches = {gate: gate in gates for gate in ("writes", "send", "delete")}
    login = login_command(**switches)
    client = LazyGmailClient(token_provider, limits, root, login, transport, network)
    backend = GmailMailBackend(
        account_tag("gmail", name),
        client,
        limits,
        scopes=frozenset(scopes_for(**switches)),
        login_command=login,
    )
    shown = {"api_root": root, **(settings or {})}
    return Account(name, "gmail", backend, None, gates, shown)
