"""Reading one message: fetch it (body as text, attachment list) and shape it, compact or full.

Shared by ``mail_read`` (one message), ``batch_read`` (several under a byte budget) and
``mail_attachment`` (an attached email).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import trio

from mfconnector.graph.urls import quote_segment
from mfconnector.shaping import Skipped, clip_window, redact_text, shape_item
from mfconnector.textconv import html_to_text
from mfconnector.timezones import MailboxZone
from mfconnector.tools.base import ToolContext
from mfconnector.tools.mailbox import Mailbox, prefer_header
from mfconnector.tools.messages import (
    COMPACT_READ_FIELDS,
    FULL_READ_FIELDS,
    compact_message,
    omitted_record,
)

__all__ = [
    "ATTACHMENT_FIELDS",
    "ATTACHMENT_SELECT",
    "COMPACT_ATTACHMENT_OMITS",
    "Fetched",
    "attachment_kind",
    "compact_attachment",
    "fetch_message",
    "readable_body",
    "shape_message",
]

ATTACHMENT_FIELDS = (
    "@odata.type",
    "id",
    "name",
    "contentType",
    "size",
    "isInline",
    "lastModifiedDateTime",
)
ATTACHMENT_SELECT = "id,name,contentType,size,isInline,lastModifiedDateTime"
COMPACT_ATTACHMENT_OMITS = "attachments.lastModifiedDateTime"


def readable_body(body: Any) -> tuple[str, int]:
    """The body as text with credential links cut out, and how many were cut."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), str):
        return redact_text("")
    content: str = body["content"]
    if str(body.get("contentType", "")).lower() == "html":
        content = html_to_text(content)
    return redact_text(content)


def attachment_kind(item: dict[str, Any]) -> str:
    kind = str(item.get("@odata.type", "")).rsplit(".", 1)[-1]
    return {"fileAttachment": "file", "itemAttachment": "item"}.get(kind, "reference")


def compact_attachment(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {key: item[key] for key in ("id", "name") if key in item}
    out["kind"] = attachment_kind(item)
    for key in ("contentType", "size"):
        if item.get(key) is not None:
            out[key] = item[key]
    if item.get("isInline") is True:
        out["inline"] = True
    return out


@dataclass
class Fetched:
    """One message as Graph sent it (bodies as text), with its attachment page."""

    raw: dict[str, Any]
    text: str
    redactions: int
    attachments: list[Any]
    more_attachments: bool


async def fetch_message(
    ctx: ToolContext,
    mailbox: Mailbox,
    zone: MailboxZone,
    message_id: str,
    *,
    full: bool,
    unique: bool,
) -> Fetched:
    graph = await ctx.graph()
    path = f"{mailbox.path}/messages/{quote_segment(message_id)}"
    body_field = "uniqueBody" if unique else "body"
    fields = FULL_READ_FIELDS if full else COMPACT_READ_FIELDS
    answer = await graph.get_json(
        path,
        query={"$select": ",".join((*fields, body_field))},
        headers=prefer_header(zone, text_bodies=True),
    )
    raw = answer.body if isinstance(answer.body, dict) else {}
    # Up to 2 MB of untrusted HTML: converted off the event loop, which keeps serving.
    text, redactions = await trio.to_thread.run_sync(
        readable_body, raw.get(body_field), abandon_on_cancel=True
    )
    attachments: list[Any] = []
    more = False
    if raw.get("hasAttachments"):
        listed = await graph.get_json(
            f"{path}/attachments",
            query={"$select": ATTACHMENT_SELECT, "$top": str(ctx.limits.list_items)},
            headers=prefer_header(zone),
        )
        values = listed.body.get("value") if isinstance(listed.body, dict) else None
        values = values if isinstance(values, list) else []
        attachments = values[: ctx.limits.list_items]
        more = len(values) > len(attachments) or "@odata.nextLink" in listed.body
    return Fetched(raw, text, redactions, attachments, more)


def shape_message(
    ctx: ToolContext,
    fetched: Fetched,
    zone: MailboxZone,
    *,
    full: bool,
    unique: bool,
    offset: int,
    window_chars: int,
) -> tuple[dict[str, Any], Skipped]:
    """The ``message`` (and ``attachments``) of a read, and what it left out."""
    skipped = Skipped()
    body_field = "uniqueBody" if unique else "body"
    fields = FULL_READ_FIELDS if full else COMPACT_READ_FIELDS
    shaped = shape_item(
        {key: value for key, value in fetched.raw.items() if key not in ("body", "uniqueBody")},
        fields,
        skipped,
        "message",
        max_chars=ctx.limits.field_chars,
        max_items=ctx.limits.list_field_items,
    )
    if fetched.redactions:
        skipped.removed.append(f"message.{body_field}.content")
    window, clip = clip_window(fetched.text, offset, window_chars, "body_offset")
    if full:
        message = shaped
        message[body_field] = {
            "contentType": "text",
            "content": window,
            "totalChars": len(fetched.text),
        }
        text_path = f"message.{body_field}.content"
    else:
        message = compact_message(shaped, zone)
        message[body_field] = window
        text_path = f"message.{body_field}"
    if clip is not None and "nextOffset" in clip:
        skipped.text = {"field": text_path, **clip}
    out: dict[str, Any] = {"message": message}
    if fetched.attachments or fetched.more_attachments:
        listed = [
            shape_item(
                item,
                ATTACHMENT_FIELDS,
                skipped,
                f"attachments[{index}]",
                max_chars=ctx.limits.field_chars,
                max_items=ctx.limits.list_field_items,
            )
            for index, item in enumerate(fetched.attachments)
        ]
        out["attachments"] = listed if full else [compact_attachment(a) for a in listed]
        if fetched.more_attachments:
            note = f"only the first {len(listed)} attachments can be listed through this server"
            skipped.fields.append(
                {"path": "attachments", "keptItems": len(listed), "morePages": True, "note": note}
            )
    if not full:
        omitted = omitted_record(FULL_READ_FIELDS, COMPACT_READ_FIELDS, [shaped])
        if omitted is not None and "attachments" in out:
            omitted["fields"].append(COMPACT_ATTACHMENT_OMITS)
        if omitted is not None:
            out["omitted"] = omitted
    return out, skipped
