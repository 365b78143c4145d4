"""``mail_attachment``: a message's attachments, or one of them read as text.

Without ``attachment_id`` it lists the attachments (metadata, paged with a cursor). With
it, a text-like file attachment comes back as text in the 10,000-character window
(``offset`` reads on); a Word, Excel, PowerPoint, PDF or .eml file attachment goes through
the same document extractor as ``files_read`` (spooled to a private file under
``document_bytes``, parsed in the isolated worker, ``part`` jumps to a page, sheet, slide
or heading); an attached Outlook item comes back as a message (compact, its body as
text); anything else is metadata with a clear reason. Bytes never reach the assistant:
``$select`` keeps ``contentBytes`` off the wire, and ``$value`` is read only to make text.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.graph.urls import quote_segment
from mfconnector.shaping import Skipped, clip_window, redact_text, shape_item
from mfconnector.timezones import MailboxZone
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    MAILBOX,
    OUTLOOK_ID,
    OUTPUT_SCHEMA,
    UNTRUSTED,
    input_schema,
    item_shaper,
)
from mfconnector.tools.content import NOT_READABLE_YET, extract_text, readable_as
from mfconnector.tools.documents import PART, document_kind, read_document, unreadable_reason
from mfconnector.tools.listing import list_result
from mfconnector.tools.mailbox import (
    Mailbox,
    mailbox_of,
    mailbox_zone,
    prefer_header,
)
from mfconnector.tools.messages import COMPACT_READ_FIELDS, compact_message
from mfconnector.tools.reading import (
    ATTACHMENT_FIELDS,
    ATTACHMENT_SELECT,
    attachment_kind,
    body_text,
    conversion_record,
)

__all__ = ["MAIL_ATTACHMENT"]

ITEM_EXPAND = "microsoft.graph.itemattachment/item"
# files_read's schema describes `part`; the description points there (discovery budget)
PART_AS_IN_FILES_READ = {key: value for key, value in PART.items() if key != "description"}


async def mail_attachment(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    mailbox = mailbox_of(ctx, arguments)
    zone = await mailbox_zone(ctx, mailbox)
    message_path = f"{mailbox.path}/messages/{quote_segment(arguments['message_id'])}"
    if "attachment_id" not in arguments:
        return await list_result(
            ctx,
            arguments,
            key="attachments",
            shape=item_shaper(ctx, ATTACHMENT_FIELDS),
            echo={"message_id": arguments["message_id"]},
            tool="mail_attachment",
            scope=mailbox.cursor_scope,
            path=f"{message_path}/attachments",
            query={"$select": ATTACHMENT_SELECT, "$top": str(ctx.limits.list_items)},
            headers=prefer_header(zone),
        )
    path = f"{message_path}/attachments/{quote_segment(arguments['attachment_id'])}"
    graph = await ctx.graph()
    answer = await graph.get_json(
        path, query={"$select": ATTACHMENT_SELECT}, headers=prefer_header(zone)
    )
    skipped = Skipped()
    meta = shape_item(
        answer.body,
        ATTACHMENT_FIELDS,
        skipped,
        "attachment",
        max_chars=ctx.limits.field_chars,
        max_items=ctx.limits.list_field_items,
    )
    result: dict[str, Any] = {"attachment": meta}
    kind = attachment_kind(meta)
    name, content_type = str(meta.get("name", "")), meta.get("contentType")
    document = document_kind(name, content_type) if kind == "file" else None
    if "part" in arguments and document is None:
        raise ToolInputError("`part` is for documents (PDF, Word, Excel, PowerPoint, .eml)")
    offset = arguments.get("offset", 0)
    if kind == "item":
        result["message"] = await _attached_message(ctx, mailbox, zone, path, offset, skipped)
    elif document is not None:
        result["content"] = await read_document(
            ctx,
            graph,
            f"{path}/$value",
            kind=document,
            size=None,  # Graph's attachment size counts MIME overhead; the download decides
            arguments=arguments,
            skipped=skipped,
        )
    elif kind == "file" and readable_as(name, content_type):
        result["content"] = await _file_text(ctx, path, meta, offset, skipped)
    else:
        reason = (unreadable_reason(name) if kind == "file" else None) or NOT_READABLE_YET
        if kind == "reference":
            reason = "a link to a cloud file, not a copy: find it with files_search"
        result["content"] = {"returned": False, "reason": reason}
    if mailbox.shared:
        result["mailbox"] = mailbox.label
    return skipped.apply(result)


async def _file_text(
    ctx: ToolContext, path: str, meta: dict[str, Any], offset: int, skipped: Skipped
) -> dict[str, Any]:
    graph = await ctx.graph()
    download = await graph.download(f"{path}/$value", max_bytes=ctx.limits.graph_body_bytes)
    extracted = await extract_text(
        download.data,
        name=str(meta.get("name", "")),
        content_type=meta.get("contentType"),
        complete=download.complete,
    )
    if extracted is None:
        return {"returned": False, "reason": NOT_READABLE_YET}
    text, redactions = redact_text(extracted.text)
    if redactions:
        skipped.removed.append("content.text")
    window, clip = clip_window(text, offset, ctx.limits.body_chars, "offset")
    content: dict[str, Any] = {"returned": True, "text": window, "charsRead": len(text)}
    if extracted.undecodable_chars:
        content["undecodableChars"] = extracted.undecodable_chars
    record: dict[str, Any] = {"field": "content.text", **(clip or {})}
    if not download.complete:
        record["bytesRead"] = len(download.data)
        record["totalBytes"] = download.total_size or meta.get("size")
        record["note"] = f"only the first {ctx.limits.graph_body_bytes:,} bytes can be read"
    if "nextOffset" in record or not download.complete:
        skipped.text = record
    return content


async def _attached_message(
    ctx: ToolContext,
    mailbox: Mailbox,
    zone: MailboxZone,
    path: str,
    offset: int,
    skipped: Skipped,
) -> dict[str, Any]:
    """An attached email, compact, with its body as text in the window from ``offset``."""
    graph = await ctx.graph()
    answer = await graph.get_json(
        path, query={"$expand": ITEM_EXPAND}, headers=prefer_header(zone, text_bodies=True)
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    found = body.get("item")
    item: dict[str, Any] = found if isinstance(found, dict) else {}
    shaped = shape_item(
        {key: value for key, value in item.items() if key != "body"},
        COMPACT_READ_FIELDS,
        skipped,
        "message",
        max_chars=ctx.limits.field_chars,
        max_items=ctx.limits.list_field_items,
    )
    converted = await body_text(item.get("body"), ctx.limits)
    text = converted.text
    if converted.redactions:
        skipped.removed.append("message.body")
    if converted.limit is not None:
        skipped.fields.append(conversion_record("message.body", converted.limit, ctx.limits))
    message = compact_message(shaped, zone)
    window, clip = clip_window(text, offset, ctx.limits.body_chars, "offset")
    message["body"] = window
    if clip is not None and "nextOffset" in clip:
        skipped.text = {"field": "message.body", **clip}
    return message


MAIL_ATTACHMENT = Tool(
    name="mail_attachment",
    title="Mail attachments",
    description=(
        "A message's attachments, or with attachment_id one: text as in files_read (offset, "
        f"part) or an attached email as a message. Never bytes. {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "message_id": OUTLOOK_ID,
            "attachment_id": OUTLOOK_ID,
            "offset": {"type": "integer", "minimum": 0},
            "part": PART_AS_IN_FILES_READ,
            "mailbox": MAILBOX,
            "cursor": CURSOR,
        },
        "message_id",
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=mail_attachment,
)
