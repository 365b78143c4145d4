"""The connector as an OAuth protected resource: its settings, metadata and challenges.

MCP authorization (2025-11-25 and 2026-07-28) makes an HTTP server a resource server in
the sense of RFC 9728: it publishes which authorization servers issue tokens for it and
which scopes it wants, points clients there from every 401 (``WWW-Authenticate: Bearer
resource_metadata="…"``), and answers a token that lacks a scope with 403
``insufficient_scope`` so that the client can step up. Nothing here does I/O.

Sources: RFC 9728 §3 (metadata, the well-known path), §5.1 (the ``WWW-Authenticate``
parameter); RFC 6750 §3 (``error``, ``error_description``, ``scope``); the MCP
specification, "Authorization".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mfconnector.net.hosts import is_loopback_host

__all__ = [
    "METADATA_PREFIX",
    "TENANT_PLACEHOLDER",
    "ResourceSettings",
    "SettingsError",
    "challenge",
    "metadata_document",
    "metadata_path",
    "metadata_url",
]

METADATA_PREFIX = "/.well-known/oauth-protected-resource"
TENANT_PLACEHOLDER = "{tenantid}"
"""In an issuer, the token's own ``tid``: Entra's multi-tenant issuer pattern."""


class SettingsError(ValueError):
    """A hosted-mode OAuth setting that cannot work; the message names the setting."""


def _check_url(setting: str, url: str, *, allow_loopback_http: bool) -> str:
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise SettingsError(f"{setting} must not carry a user name or password")
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and allow_loopback_http and is_loopback_host(parts.hostname):
        return url
    loopback = " (or http to a loopback address)" if allow_loopback_http else ""
    raise SettingsError(f"{setting} must be an https URL{loopback}: {parts.scheme}://…")


@dataclass(frozen=True, slots=True)
class ResourceSettings:
    """What the operator said about tokens: who issues them, for whom, with which scope."""

    public_url: str
    """The resource identifier clients see (``https://mail.example.com/mcp``)."""
    issuer: str
    """Expected ``iss``; may contain ``{tenantid}`` (Entra multi-tenant)."""
    audience: tuple[str, ...]
    """Accepted ``aud`` values: the public URL unless told otherwise (an Entra v2 token
    names the app's client id or its Application ID URI)."""
    scope: str
    """The scope every token must carry, advertised in ``scopes_supported``."""
    jwks_url: str | None = None
    """Where the signing keys are; None: from the issuer's OIDC discovery document."""
    allowed_tenants: frozenset[str] = frozenset()
    """Entra ``tid`` values accepted; empty: any."""

    @classmethod
    def build(
        cls,
        *,
        public_url: str,
        issuer: str,
        scope: str,
        audience: str | None = None,
        jwks_url: str | None = None,
        allowed_tenants: str = "",
    ) -> ResourceSettings:
        """Check each setting once, at start-up, and say which one is wrong."""
        _check_url("--public-url", public_url, allow_loopback_http=True)
        if urlsplit(public_url).query or urlsplit(public_url).fragment:
            raise SettingsError("--public-url must not have a query or a fragment")
        _check_url(
            "--oauth-issuer", issuer.replace(TENANT_PLACEHOLDER, "t"), allow_loopback_http=True
        )
        if jwks_url is not None:
            _check_url("--oauth-jwks-url", jwks_url, allow_loopback_http=True)
        elif TENANT_PLACEHOLDER in issuer:
            raise SettingsError(
                "an issuer with {tenantid} has no single discovery document: set --oauth-jwks-url"
            )
        if not scope or any(c.isspace() for c in scope):
            raise SettingsError("--oauth-scope must be one scope name, without spaces")
        audiences = tuple(a.strip() for a in (audience or public_url).split(",") if a.strip())
        if not audiences:
            raise SettingsError("--oauth-audience names no audience")
        tenants = frozenset(t.strip().lower() for t in allowed_tenants.split(",") if t.strip())
        return cls(
            public_url=public_url,
            issuer=issuer,
            audience=audiences,
            scope=scope,
            jwks_url=jwks_url,
            allowed_tenants=tenants,
        )

    def expected_issuer(self, tenant: str | None) -> str | None:
        """The ``iss`` a token must carry, given its ``tid`` (None when it cannot match)."""
        if TENANT_PLACEHOLDER not in self.issuer:
            return self.issuer
        return self.issuer.replace(TENANT_PLACEHOLDER, tenant) if tenant else None

    @property
    def discovery_url(self) -> str:
        """OpenID Connect Discovery 1.0 §4: the issuer plus the well-known suffix."""
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"


def metadata_path(public_url: str) -> str:
    """RFC 9728 §3.1: the well-known prefix inserted before the resource's own path."""
    path = urlsplit(public_url).path.rstrip("/")
    return METADATA_PREFIX + path


def metadata_url(public_url: str) -> str:
    """The absolute metadata URL, on the public URL's origin."""
    parts = urlsplit(public_url)
    return urlunsplit((parts.scheme, parts.netloc, metadata_path(public_url), "", ""))


def metadata_document(settings: ResourceSettings) -> dict[str, Any]:
    """The protected-resource metadata (RFC 9728 §2) this server publishes."""
    issuer = settings.issuer
    if TENANT_PLACEHOLDER in issuer and settings.allowed_tenants:
        servers = [issuer.replace(TENANT_PLACEHOLDER, t) for t in sorted(settings.allowed_tenants)]
    else:
        servers = [issuer.replace(TENANT_PLACEHOLDER, "organizations")]
    return {
        "resource": settings.public_url,
        "authorization_servers": servers,
        "scopes_supported": [settings.scope],
        "bearer_methods_supported": ["header"],
        "resource_name": "mfconnector",
    }


def _quoted(value: str) -> str:
    """An RFC 7235 quoted-string: our messages never hold quotes or backslashes."""
    return '"' + value.replace("\\", "").replace('"', "'") + '"'


def challenge(
    settings: ResourceSettings,
    *,
    error: str | None = None,
    description: str | None = None,
    scope: str | None = None,
) -> str:
    """A ``WWW-Authenticate`` value: always the metadata URL, then what went wrong."""
    params = [f"resource_metadata={_quoted(metadata_url(settings.public_url))}"]
    if error:
        params.append(f"error={_quoted(error)}")
    if description:
        params.append(f"error_description={_quoted(description)}")
    if scope:
        params.append(f"scope={_quoted(scope)}")
    return "Bearer " + ", ".join(params)
