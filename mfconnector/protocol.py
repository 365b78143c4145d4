"""MCP eras: which revision a request speaks, and the result shapes each revision wants.

The stateless revision 2026-07-28 ("modern") is chosen per request by the presence of
``io.modelcontextprotocol/protocolVersion`` in ``params._meta``; the handshake revisions
2025-11-25 and 2025-06-18 ("legacy") by ``initialize``. Rules and sources:
shared/reference/mcp-spec-digest.md sections 2-5.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mfconnector import SERVER_NAME, __version__
from mfconnector.errors import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, ProtocolError

__all__ = [
    "LEGACY_VERSIONS",
    "MODERN_VERSION",
    "SUPPORTED_VERSIONS",
    "Era",
    "finish_result",
    "is_modern",
    "modern_era",
    "negotiate_legacy",
    "server_info",
    "unpaired_reply",
    "unsupported_version",
]

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")
SUPPORTED_VERSIONS = (MODERN_VERSION, *LEGACY_VERSIONS)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
LOG_LEVELS = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)
CACHE_TTL_MS = 0
CACHE_SCOPE = "private"


@dataclass(frozen=True, slots=True)
class Era:
    """The revision one request is served under."""

    version: str

    @property
    def modern(self) -> bool:
        return self.version == MODERN_VERSION


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


def is_modern(params: Any) -> bool:
    """A request is modern when its ``_meta`` names a protocol version, whatever came before."""
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def modern_era(params: dict[str, Any]) -> Era:
    """Check the required per-request ``_meta`` keys in the order the digest recommends (M4)."""
    meta = params["_meta"]
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise ProtocolError(INVALID_PARAMS, f"_meta {META_PROTOCOL_VERSION} must be a string")
    if version != MODERN_VERSION:
        raise unsupported_version(version)
    if META_CLIENT_CAPABILITIES not in meta:
        raise ProtocolError(
            INVALID_PARAMS, f"Missing required _meta field {META_CLIENT_CAPABILITIES}"
        )
    if not isinstance(meta[META_CLIENT_CAPABILITIES], dict):
        raise ProtocolError(INVALID_PARAMS, f"_meta {META_CLIENT_CAPABILITIES} must be an object")
    level = meta.get(META_LOG_LEVEL)
    if level is not None and (not isinstance(level, str) or level not in LOG_LEVELS):
        raise ProtocolError(
            INVALID_PARAMS, f"_meta {META_LOG_LEVEL} must be one of {sorted(LOG_LEVELS)}"
        )
    return Era(MODERN_VERSION)


HOW_TO_REACH = {
    MODERN_VERSION: f"_meta {META_PROTOCOL_VERSION} on each request",
    **{
        version: "initialize (params.protocolVersion), then requests without it"
        for version in LEGACY_VERSIONS
    },
}
"""How a client reaches each supported version: a retry that follows this cannot loop."""


def unsupported_version(requested: str) -> ProtocolError:
    """-32022 that says how each supported version is reached, not only which exist.

    ``supported`` lists every version (the seed requires it); a client that retries a
    legacy version in ``_meta`` would be refused again, so the message and ``reach`` say
    that the legacy versions are reached through ``initialize``.
    """
    shown = json.dumps(requested[:64])
    message = (
        f"Unsupported protocol version {shown} in _meta: per-request _meta serves "
        f"{MODERN_VERSION} only; {' and '.join(LEGACY_VERSIONS)} are reached through "
        "initialize (without _meta)"
    )
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        message,
        {"supported": list(SUPPORTED_VERSIONS), "requested": requested, "reach": HOW_TO_REACH},
    )


def negotiate_legacy(requested: Any) -> str:
    """Echo a supported legacy version; counter-offer 2025-11-25 for anything else."""
    if requested in LEGACY_VERSIONS:
        return str(requested)
    return LEGACY_VERSIONS[0]


def finish_result(result: dict[str, Any], era: Era, *, cacheable: bool = False) -> dict[str, Any]:
    """Add what a modern result must carry; legacy results stay as they are."""
    if not era.modern:
        return result
    result["resultType"] = "complete"
    if cacheable:
        result["ttlMs"] = CACHE_TTL_MS
        result["cacheScope"] = CACHE_SCOPE
    meta = result.setdefault("_meta", {})
    meta[META_SERVER_INFO] = server_info()
    return result


ERAS_WITHOUT_NULL_ID = (MODERN_VERSION, "2025-11-25")
"""Eras whose schema makes ``id`` optional in JSONRPCErrorResponse (string or integer only)."""


def unpaired_reply(reply: dict[str, Any], legacy_version: str | None) -> dict[str, Any]:
    """An error that answers no request (parse error, oversized line, batch, reused id),
    shaped for the session's era as the official schemas decide.

    JSON-RPC 2.0 writes ``"id": null``, but RequestId is a string or an integer in every MCP
    schema: 2025-11-25 and 2026-07-28 make ``id`` optional, so it is left out; 2025-06-18
    requires it and no value validates, so a session that negotiated 2025-06-18 keeps
    JSON-RPC's ``null``. A session is modern until ``initialize`` says otherwise.
    """
    if reply.get("id") is not None or legacy_version not in (None, *ERAS_WITHOUT_NULL_ID):
        return reply
    return {key: value for key, value in reply.items() if key != "id"}
