"""Reading one message: fetch it (body as text, attachment list) and shape it, compact or full.

Shared by ``mail_read`` (one message), ``batch_read`` (several under a byte budget) and
``mail_attachment`` (an attached email).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio

from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.shaping import Skipped, clip_window, redact_text, shape_item
from mfconnector.textconv import convert_html
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
    "BodyText",
    "Fetched",
    "attachment_kind",
    "body_text",
    "compact_attachment",
    "conversion_record",
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


@dataclass(frozen=True, slots=True)
class BodyText:
    """A body as text with credential links cut out, how many were cut, and the limit
    that cut an HTML body's layout short (``None``: none did)."""

    text: str
    redactions: int = 0
    limit: str | None = None


def readable_body(
    body: Any, *, max_tags: int, check: Callable[[], object] | None = None
) -> BodyText:
    """``body`` (Graph's ``{contentType, content}``) as text; blocking, for a thread."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), str):
        return BodyText("")
    content: str = body["content"]
    limit = None
    if str(body.get("contentType", "")).lower() == "html":
        converted = convert_html(content, max_tags=max_tags, check=check)
        content, limit = converted.text, converted.limit
    text, redactions = redact_text(content)
    return BodyText(text, redactions, limit)


async def body_text(body: Any, limits: Limits) -> BodyText:
    """Up to 2 MB of untrusted HTML converted off the event loop, which keeps serving.

    The thread is not abandoned on cancel: the converter asks trio every few thousand tags
    whether its call was cancelled, and stops there, so a cancelled or timed-out read
    leaves nothing running (trio.from_thread.check_cancelled).
    """
    convert = partial(
        readable_body, body, max_tags=limits.html_tags, check=trio.from_thread.check_cancelled
    )
    return await trio.to_thread.run_sync(convert)


def conversion_record(path: str, limit: str, limits: Limits) -> dict[str, Any]:
    """The ``skipped.fields`` entry for a body whose layout a limit cut short."""
    return {
        "path": path,
        "limit": limit,
        "keptTags": getattr(limits, limit),
        "note": "past this many HTML tags the rest of the body is shown as plain words "
        "(its words are all there; line breaks, list marks and link targets are not)",
    }


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
    conversion_limit: str | None = None


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
    converted = await body_text(raw.get(body_field), ctx.limits)
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
    return Fetched(raw, converted.text, converted.redactions, attachments, more, converted.limit)


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
    if fetched.conversion_limit is not None:
        skipped.fields.append(conversion_record(text_path, fetched.conversion_limit, ctx.limits))
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
