"""What a Streamable HTTP request's headers must say, checked before the body is routed.

Pure functions over header values. Sources: the MCP specification 2026-07-28 "Streamable
HTTP" (``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` must agree with the body,
else 400 with -32020; a bad ``Origin`` is refused with 403), RFC 6454 (origins).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlsplit

from mfconnector.protocol import META_PROTOCOL_VERSION

__all__ = ["HEADER_MISMATCH", "accepted_media", "accepts_sse", "header_mismatch", "origin_of"]

HEADER_MISMATCH = -32020
NAME_BEARING = {"tools/call": "name"}
"""Methods whose ``Mcp-Name`` header mirrors a body parameter (the only one we serve)."""
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` in lower case without a default port; None if not a URL."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    shown = "" if port is None or port == DEFAULT_PORTS[parts.scheme] else f":{port}"
    return f"{parts.scheme}://{host}{shown}"


def _decoded_name(value: str | None) -> str | None:
    """``Mcp-Name`` as sent: plain ASCII, or ``=?base64?…?=`` for any other text."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_mismatch(headers: dict[str, str], method: str, params: dict[str, Any]) -> str | None:
    """Why a 2026-07-28 request's headers disagree with its body, or None when they agree."""
    version = params["_meta"].get(META_PROTOCOL_VERSION)
    if headers.get("mcp-protocol-version") != version:
        return "the MCP-Protocol-Version header does not match _meta's protocol version"
    if headers.get("mcp-method") != method:
        return "the Mcp-Method header does not match the body's method"
    key = NAME_BEARING.get(method)
    mirrored = params.get(key) if key is not None else None
    if mirrored is not None and _decoded_name(headers.get("mcp-name")) != mirrored:
        return f"the Mcp-Name header does not match the body's {key}"
    return None


def accepted_media(accept: str | None) -> str | None:
    """``application/json`` or ``text/event-stream``, whichever the client takes (JSON
    first); None when it takes neither."""
    if accept is None or not accept.strip():
        return "application/json"
    kinds = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    if kinds & {"application/json", "application/*", "*/*"}:
        return "application/json"
    if "text/event-stream" in kinds:
        return "text/event-stream"
    return None


def accepts_sse(accept: str | None) -> bool:
    """The client named ``text/event-stream`` (a stream of progress it can read)."""
    if accept is None:
        return False
    return "text/event-stream" in {part.split(";")[0].strip().lower() for part in accept.split(",")}
