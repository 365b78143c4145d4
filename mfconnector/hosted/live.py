"""Live hosted mode: each user's Graph reached with a token from the on-behalf-of exchange.

The confidential client is the connector's app registration: ``MFC_CLIENT_ID`` with
exactly one credential, a secret (``MFC_CLIENT_SECRET``) or a certificate
(``MFC_CLIENT_CERT_PATH``, a PEM file with the RSA private key and its certificate,
read by ``auth.pem`` as for the stdio sign-in; ``MFC_CLIENT_CERT_PASSPHRASE`` if the key is
encrypted). With a certificate msal signs the client assertion with the key and names the
certificate by its SHA-256 thumbprint (``x5t#S256``), sending the certificate too
(``x5c``), which subject-name/issuer authentication needs.

The authority is the tenant of ``--oauth-issuer`` on the issuer's own host, and that host
names the Microsoft cloud, so the exchange and the Graph it is for are always one cloud's
(``auth.config.CLOUDS``, the stdio sign-in's table): login.microsoftonline.com is the
global cloud; login.microsoftonline.us is US Government, whose two Graphs (L4
graph.microsoft.us, L5 DoD dod-graph.microsoft.us) share it, so ``MFC_CLOUD`` must say
which; login.chinacloudapi.cn and login.partner.microsoftonline.cn are 21Vianet. Any other
issuer is refused: the on-behalf-of exchange is Entra's. Graph is asked for
``{graph}/.default``: every delegated permission the tenant consented to the connector,
which the acting tools check for themselves. The client's own token never reaches Graph: it
is only the assertion of the exchange.

Sources: Microsoft identity platform, "OAuth 2.0 On-Behalf-Of flow", "Certificate
credentials" and "National clouds"; Microsoft Graph, "National cloud deployments"
(Microsoft Learn).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mfconnector.auth.config import CLOUDS, Cloud
from mfconnector.hosted.obo import OnBehalfOf
from mfconnector.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from mfconnector.net.settings import NetworkSettings
    from mfconnector.writes.redis_store import RedisState

__all__ = [
    "CERT_PASSPHRASE_ENV",
    "CERT_PATH_ENV",
    "CLIENT_ID_ENV",
    "CLIENT_SECRET_ENV",
    "CLOUD_ENV",
    "ISSUER_HOSTS",
    "LiveSettingsError",
    "authority_of",
    "client_credential_of",
    "issuer_cloud",
    "on_behalf_of",
]

CLIENT_ID_ENV = "MFC_CLIENT_ID"
CLIENT_SECRET_ENV = "MFC_CLIENT_SECRET"
CERT_PATH_ENV = "MFC_CLIENT_CERT_PATH"
CERT_PASSPHRASE_ENV = "MFC_CLIENT_CERT_PASSPHRASE"
CERT_THUMBPRINT_ENV = "MFC_CLIENT_CERT_THUMBPRINT"
CLOUD_ENV = "MFC_CLOUD"
CHINA_PARTNER_HOST = "login.partner.microsoftonline.cn"
"""21Vianet's current sign-in host; login.chinacloudapi.cn (the table's) still answers."""


def _issuer_hosts() -> dict[str, tuple[str, ...]]:
    hosts: dict[str, tuple[str, ...]] = {}
    for cloud in CLOUDS.values():
        hosts[cloud.authority_host] = (*hosts.get(cloud.authority_host, ()), cloud.name)
    hosts[CHINA_PARTNER_HOST] = hosts[CLOUDS["china"].authority_host]
    return hosts


ISSUER_HOSTS: Mapping[str, tuple[str, ...]] = _issuer_hosts()
"""Entra's issuer hosts and the clouds (``CLOUDS`` rows) each serves."""
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")
_MODE_DOC = "(docs/HOSTING.md, 'Live mode')"


class LiveSettingsError(ValueError):
    """A live-mode setting that is missing or cannot work; the message names it (never a
    secret's value)."""


def issuer_cloud(issuer: str, env: Mapping[str, str]) -> Cloud:
    """The Microsoft cloud of ``--oauth-issuer``'s host; ``MFC_CLOUD`` picks between the
    clouds that share a host and must otherwise agree with it."""
    parts = urlsplit(issuer)
    host = (parts.hostname or "").lower()
    names = ISSUER_HOSTS.get(host) if parts.scheme == "https" else None
    if not names:
        raise LiveSettingsError(
            "serve-http without --demo exchanges tokens with Microsoft Entra: --oauth-issuer "
            "must be an Entra v2 issuer, https://HOST/TENANT-ID/v2.0 on "
            + ", ".join(ISSUER_HOSTS)
            + f", not one on {host[:80] or parts.scheme[:20] or 'no host'} {_MODE_DOC}"
        )
    chosen = env.get(CLOUD_ENV, "").strip().lower()
    if not chosen:
        if len(names) > 1:
            raise LiveSettingsError(
                f"--oauth-issuer is on {host}, which {' and '.join(names)} share: set "
                f"{CLOUD_ENV} to "
                + " or ".join(f"{n} (Graph at {CLOUDS[n].graph_host})" for n in names)
            )
        return CLOUDS[names[0]]
    if chosen not in names:
        known = chosen if chosen in CLOUDS else f"{chosen[:40]!r}"
        raise LiveSettingsError(
            f"{CLOUD_ENV}={known} is not the cloud of --oauth-issuer's host {host} "
            f"({' or '.join(names)}): unset it or use the issuer of that cloud"
        )
    return CLOUDS[chosen]


def authority_of(issuer: str) -> str:
    """Entra's authority for the tenant of ``--oauth-issuer`` (its first path segment), on
    the issuer's host."""
    parts = urlsplit(issuer)
    segments = [s for s in parts.path.split("/") if s]
    tenant = segments[0] if segments else ""
    if not _TENANT.match(tenant) or tenant in {"common", "organizations", "consumers"}:
        raise LiveSettingsError(
            "--oauth-issuer must name one tenant, as Entra's v2 issuer does "
            "(https://login.microsoftonline.com/TENANT-ID/v2.0): the on-behalf-of exchange "
            "is made in that tenant"
        )
    return f"https://{(parts.hostname or '').lower()}/{tenant}"


def client_credential_of(env: Mapping[str, str], limits: Limits) -> str | dict[str, str]:
    """The app registration's one credential: the secret, or msal's certificate credential
    from the PEM file (checked now, so a file msal could not sign with is a usage error)."""
    from mfconnector.auth.config import AuthConfigError
    from mfconnector.auth.pem import certificate_credential

    secret = env.get(CLIENT_SECRET_ENV, "").strip()
    cert_path = env.get(CERT_PATH_ENV, "").strip()
    passphrase = env.get(CERT_PASSPHRASE_ENV, "")
    if secret and cert_path:
        raise LiveSettingsError(
            f"serve-http takes one client credential, and both {CLIENT_SECRET_ENV} and "
            f"{CERT_PATH_ENV} are set: unset one"
        )
    if not cert_path:
        for stray in (CERT_PASSPHRASE_ENV, CERT_THUMBPRINT_ENV):
            if env.get(stray, "").strip():
                raise LiveSettingsError(f"{stray} is set but {CERT_PATH_ENV} is not")
        return secret
    if env.get(CERT_THUMBPRINT_ENV, "").strip():
        raise LiveSettingsError(
            f"serve-http reads the thumbprint from the certificate in {CERT_PATH_ENV}: "
            f"unset {CERT_THUMBPRINT_ENV}"
        )
    try:
        return certificate_credential(
            Path(cert_path).expanduser().absolute(),
            max_bytes=limits.cert_file_bytes,
            passphrase=passphrase or None,
            setting=CERT_PATH_ENV,
            passphrase_setting=CERT_PASSPHRASE_ENV,
        )
    except AuthConfigError as error:
        hint = f": {error.hint}" if error.hint else ""
        raise LiveSettingsError(f"{CERT_PATH_ENV}: {error.message}{hint}") from None


def on_behalf_of(
    issuer: str,
    env: Mapping[str, str],
    network: NetworkSettings,
    state: RedisState | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[OnBehalfOf, Cloud]:
    """The server's one exchange, and the cloud whose Graph its tokens are for, from the
    environment; with a shared state store and ``MFC_TOKEN_CACHE_KEY`` its Graph tokens are
    also cached there, sealed."""
    client_id = env.get(CLIENT_ID_ENV, "").strip()
    has_credential = any(env.get(name, "").strip() for name in (CLIENT_SECRET_ENV, CERT_PATH_ENV))
    missing = [
        name
        for name, given in (
            (CLIENT_ID_ENV, bool(client_id)),
            (f"a client credential ({CLIENT_SECRET_ENV} or {CERT_PATH_ENV})", has_credential),
        )
        if not given
    ]
    if missing:
        raise LiveSettingsError(
            f"serve-http without --demo needs {' and '.join(missing)}: the connector's app "
            "registration, a confidential client that exchanges each user's token for a "
            f"Graph token {_MODE_DOC}"
        )
    credential = client_credential_of(env, limits)
    cloud = issuer_cloud(issuer, env)
    authority = authority_of(issuer)
    shared = None
    if state is not None:
        from mfconnector.hosted.sealed_tokens import SealedTokens, seal_key_of

        key = seal_key_of(env)
        if key is not None:
            shared = SealedTokens(state.store, key)
    from mfconnector.net.signin_session import signin_session

    exchange = OnBehalfOf(
        client_id=client_id,
        client_credential=credential,
        authority=authority,
        scopes=[cloud.graph_host + "/.default"],
        http_client=signin_session(network, timeout_seconds=limits.obo_http_seconds),
        shared=shared,
        limits=limits,
        network=network,
    )
    return exchange, cloud
