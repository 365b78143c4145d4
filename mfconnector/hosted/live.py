"""Live hosted mode: each user's Graph reached with a token from the on-behalf-of exchange.

The confidential client is the connector's app registration (``MFC_CLIENT_ID`` and
``MFC_CLIENT_SECRET``); its authority is the tenant of ``--oauth-issuer`` (Entra's v2
issuer is ``https://login.microsoftonline.com/{tenant}/v2.0``). Graph is asked for
``https://graph.microsoft.com/.default``: every delegated permission the tenant consented
to the connector, which the acting tools check for themselves. The client's own token
never reaches Graph: it is only the assertion of the exchange.

Source: Microsoft identity platform, "OAuth 2.0 On-Behalf-Of flow" (Microsoft Learn).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mfconnector.hosted.obo import OnBehalfOf

if TYPE_CHECKING:
    from mfconnector.net.settings import NetworkSettings
    from mfconnector.writes.redis_store import RedisState

__all__ = [
    "CLIENT_ID_ENV",
    "CLIENT_SECRET_ENV",
    "ENTRA_AUTHORITY_HOST",
    "GRAPH_DEFAULT_SCOPE",
    "LiveSettingsError",
    "authority_of",
    "on_behalf_of",
]

CLIENT_ID_ENV = "MFC_CLIENT_ID"
CLIENT_SECRET_ENV = "MFC_CLIENT_SECRET"
ENTRA_AUTHORITY_HOST = "login.microsoftonline.com"
GRAPH_DEFAULT_SCOPE = "https://graph.microsoft.com/.default"
OBO_HTTP_SECONDS = 20.0
"""msal's time-out for each HTTP request to Entra (the whole exchange has its own bound)."""
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")


class LiveSettingsError(ValueError):
    """A live-mode setting that is missing or cannot work; the message names it (never a
    secret's value)."""


def authority_of(issuer: str) -> str:
    """Entra's authority for the tenant of ``--oauth-issuer`` (its first path segment)."""
    segments = [s for s in urlsplit(issuer).path.split("/") if s]
    tenant = segments[0] if segments else ""
    if not _TENANT.match(tenant) or tenant in {"common", "organizations", "consumers"}:
        raise LiveSettingsError(
            "--oauth-issuer must name one tenant, as Entra's v2 issuer does "
            "(https://login.microsoftonline.com/TENANT-ID/v2.0): the on-behalf-of exchange "
            "is made in that tenant"
        )
    return f"https://{ENTRA_AUTHORITY_HOST}/{tenant}"


def on_behalf_of(
    issuer: str,
    env: Mapping[str, str],
    network: NetworkSettings,
    state: RedisState | None = None,
) -> OnBehalfOf:
    """The server's one exchange, from the environment; with a shared state store and
    ``MFC_TOKEN_CACHE_KEY`` its Graph tokens are also cached there, sealed."""
    client_id = env.get(CLIENT_ID_ENV, "").strip()
    secret = env.get(CLIENT_SECRET_ENV, "").strip()
    missing = [
        name
        for name, value in ((CLIENT_ID_ENV, client_id), (CLIENT_SECRET_ENV, secret))
        if not value
    ]
    if missing:
        raise LiveSettingsError(
            f"serve-http without --demo needs {' and '.join(missing)}: the connector's app "
            "registration, a confidential client that exchanges each user's token for a "
            "Graph token (docs/HOSTING.md, 'Live mode')"
        )
    authority = authority_of(issuer)
    shared = None
    if state is not None:
        from mfconnector.hosted.sealed_tokens import SealedTokens, seal_key_of

        key = seal_key_of(env)
        if key is not None:
            shared = SealedTokens(state.store, key)
    from mfconnector.net.signin_session import signin_session

    return OnBehalfOf(
        client_id=client_id,
        client_credential=secret,
        authority=authority,
        scopes=[GRAPH_DEFAULT_SCOPE],
        http_client=signin_session(network, timeout_seconds=OBO_HTTP_SECONDS),
        shared=shared,
    )
