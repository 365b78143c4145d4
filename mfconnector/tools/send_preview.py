"""The complete outgoing message as the assistant (and the person) sees it before a send.

A preview is never cut: a message too large to show whole is refused, so what is
confirmed is all of what is sent. An HTML body is shown as text as well, converted by
the bounded converter; look-alike addresses and hidden characters are flagged.
"""

from __future__ import annotations

from typing import Any

import trio

from mfconnector.limits import Limits
from mfconnector.mail.failures import Unsupported
from mfconnector.mail.outgoing import FrozenOutgoing
from mfconnector.textconv import html_to_text
from mfconnector.tools.base import wire_bytes
from mfconnector.writes.outgoing import record_warnings

__all__ = ["body_text", "preview"]


async def body_text(frozen: FrozenOutgoing) -> str:
    """The frozen body as plain text (HTML converted in a worker thread)."""
    body = frozen.record["body"]
    if body["content_type"] == "html":
        text: str = await trio.to_thread.run_sync(html_to_text, body["content"])
        return text
    return str(body["content"])


async def preview(frozen: FrozenOutgoing, limits: Limits, **extra: Any) -> dict[str, Any]:
    """The complete message with ``extra`` facts; refused whole when it cannot fit."""
    message = dict(frozen.record)
    message["text"] = await body_text(frozen)
    result = {**extra, "message": message}
    warnings = record_warnings(dict(frozen.record))
    if warnings:
        result["warnings"] = warnings
    size = wire_bytes(result)
    if size > limits.preview_bytes:
        raise Unsupported(
            f"the message is {size:,} bytes as a complete preview, over the "
            f"{limits.preview_bytes:,}-byte limit; previews are never cut, so nothing "
            "was prepared",
            hint="shorten the body or remove attachments",
        )
    return result
