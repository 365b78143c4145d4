"""Reading one message: its body in a window, its attachments, compact or full.

Shared by ``mail_read`` (one message), ``batch_read`` (several under a byte budget) and
``mail_attachment`` (an attached email). The backend has converted the body to text and
cut its credential links (``Body``); here it is windowed, and everything left out is named.
"""

from __future__ import annotations

from typing import Any

from mfconnector.limits import Limits
from mfconnector.mail.model import Message
from mfconnector.mail.query import ReadRequest
from mfconnector.shaping import Skipped, clip_window
from mfconnector.timezones import MailboxZone
from mfconnector.tools.mail_view import (
    COMPACT_READ_OMITS,
    Bounds,
    compact_attachment,
    compact_message,
    full_attachment,
    full_message,
    omitted_record,
)

__all__ = ["conversion_record", "read_request", "shape_message"]


def read_request(*, full: bool, unique: bool) -> ReadRequest:
    return ReadRequest(view="full" if full else "compact", unique_body=unique)


def conversion_record(path: str, limit: str, limits: Limits) -> dict[str, Any]:
    """The ``skipped.fields`` entry for a body whose layout a limit cut short."""
    return {
        "path": path,
        "limit": limit,
        "kept_tags": getattr(limits, limit),
        "note": "past this many HTML tags the rest of the body is shown as plain words "
        "(its words are all there; line breaks, list marks and link targets are not)",
    }


def shape_message(
    limits: Limits,
    message: Message,
    zone: MailboxZone,
    *,
    full: bool,
    offset: int,
    window_chars: int,
    path: str = "message",
    with_omitted: bool = True,
) -> tuple[dict[str, Any], Skipped]:
    """The ``message`` (and ``attachments``) of a read, and what it left out."""
    skipped = Skipped(limits.skipped_paths_listed)
    bounds = Bounds(limits, skipped)
    body = message.body
    body_key = "unique_body" if body is not None and body.unique else "body"
    text = body.text if body is not None else ""
    window, clip = clip_window(text, offset, window_chars, "body_offset")
    if full:
        shown = full_message(message, zone, bounds, path)
        shown[body_key] = {"text": window, "total_chars": len(text)}
        text_path = f"{path}.{body_key}.text"
    else:
        shown = compact_message(message, zone, bounds, path)
        shown[body_key] = window
        text_path = f"{path}.{body_key}"
    if body is not None and body.redactions:
        skipped.removed.append(text_path)
    if clip is not None and "next_offset" in clip:
        skipped.text = {"field": text_path, **clip}
    if body is not None and body.conversion_limit is not None:
        skipped.fields.append(conversion_record(text_path, body.conversion_limit, limits))
    for limit, note in body.cut_by if body is not None else ():
        skipped.fields.append({"path": text_path, "limit": limit, "note": note})
    out: dict[str, Any] = {"message": shown}
    if message.attachments or message.more_attachments:
        attach = full_attachment if full else compact_attachment
        out["attachments"] = [
            attach(a, bounds, f"attachments[{i}]") for i, a in enumerate(message.attachments)
        ]
        if message.more_attachments:
            kept = len(message.attachments)
            skipped.fields.append(
                {
                    "path": "attachments",
                    "kept_items": kept,
                    "more_pages": True,
                    "note": f"only the first {kept} attachments are listed here; "
                    "mail_attachment lists them all",
                }
            )
    if not full and with_omitted:
        omitted = omitted_record(COMPACT_READ_OMITS, [message])
        if omitted is not None:
            out["omitted"] = omitted
    return out, skipped
