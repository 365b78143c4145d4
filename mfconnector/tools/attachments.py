"""``mail_attachment``: a message's attachments, or one of them read as text.

Without ``attachment_id`` it lists the attachments (metadata, paged with a cursor). With
it, a text-like file attachment comes back as text in the 10,000-character window
(``offset`` reads on); a Word, Excel, PowerPoint, PDF or .eml file attachment goes through
the same document extractor as ``files_read`` (spooled by the backend to a private file
under ``document_bytes``, parsed in the isolated worker, ``part`` jumps to a page, sheet,
slide or heading); an attached email comes back as a message (compact, its body as text);
anything else is metadata with a clear reason. Bytes never reach the assistant: they are
read only to make text.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.mail.backend import AttachmentContent, OnBytes, Spooled
from mfconnector.mail.model import Attachment, Message
from mfconnector.mail.refs import Reference
from mfconnector.shaping import Skipped, clip_window, redact_text
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    MAILBOX,
    MESSAGE_REF,
    OUTPUT_SCHEMA,
    UNTRUSTED,
    input_schema,
)
from mfconnector.tools.content import NOT_READABLE_YET, extract_text, readable_as
from mfconnector.tools.documents import (
    PART,
    Spool,
    document_kind,
    read_document,
    unreadable_reason,
)
from mfconnector.tools.mail_call import MailCall, mail_call
from mfconnector.tools.mail_view import Bounds, compact_message, full_attachment
from mfconnector.tools.message_pages import item_result
from mfconnector.tools.paging import start_listing
from mfconnector.tools.reading import conversion_record

__all__ = ["MAIL_ATTACHMENT"]

# files_read's schema describes `part`; the description points there (discovery budget)
PART_AS_IN_FILES_READ = {key: value for key, value in PART.items() if key != "description"}
LINK_ELSEWHERE = "a link to a cloud file, not a copy: find it with files_search"


async def mail_attachment(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    call = await mail_call(ctx, arguments)
    message = call.reference(arguments["message_id"], "message_id")
    if "attachment_id" not in arguments:
        listing = start_listing(ctx, "mail_attachment", arguments, scope=call.scope)
        page = await call.backend.attachments(message, listing.request)
        return item_result(
            call,
            listing,
            page,
            key="attachments",
            echo={"message_id": arguments["message_id"]},
            shape=full_attachment,
        )
    attachment = call.reference(arguments["attachment_id"], "attachment_id")
    if "part" in arguments and "offset" in arguments:
        raise ToolInputError("give `offset` or `part`, not both")
    found = await call.backend.attachment(message, attachment, 0)
    meta = found.attachment
    skipped = Skipped(ctx.limits.skipped_paths_listed)
    result: dict[str, Any] = {
        "attachment": full_attachment(meta, Bounds(ctx.limits, skipped), "attachment")
    }
    name, content_type = meta.name, meta.content_type
    document = document_kind(name, content_type) if meta.kind == "file" else None
    if "part" in arguments and document is None:
        raise ToolInputError("`part` is for documents (PDF, Word, Excel, PowerPoint, .eml)")
    offset = arguments.get("offset", 0)
    if meta.kind == "message":
        result["message"] = _attached_message(ctx, call, found, offset, skipped)
    elif document is not None:
        result["content"] = await read_document(
            ctx,
            _backend_spool(call, message, attachment),
            kind=document,
            size=None,  # an attachment's size counts MIME overhead; the download decides
            arguments=arguments,
            skipped=skipped,
        )
    elif meta.kind == "file" and readable_as(name, content_type):
        content = await call.backend.attachment(message, attachment, ctx.limits.graph_body_bytes)
        result["content"] = await _file_text(ctx, content, offset, skipped)
    else:
        reason = (unreadable_reason(name) if meta.kind == "file" else None) or NOT_READABLE_YET
        if meta.kind == "reference":
            reason = LINK_ELSEWHERE
        result["content"] = {"returned": False, "reason": reason}
    call.labelled(result)
    return skipped.apply(result)


def _backend_spool(call: MailCall, message: Reference, attachment: Reference) -> Spool:
    def spool(limit: int, suffix: str, on_bytes: OnBytes) -> AbstractAsyncContextManager[Spooled]:
        return call.backend.spool_attachment(
            message, attachment, limit=limit, suffix=suffix, on_bytes=on_bytes
        )

    return spool


async def _file_text(
    ctx: ToolContext, content: AttachmentContent, offset: int, skipped: Skipped
) -> dict[str, Any]:
    meta: Attachment = content.attachment
    extracted = await extract_text(
        content.data, name=meta.name, content_type=meta.content_type, complete=content.complete
    )
    if extracted is None:
        return {"returned": False, "reason": NOT_READABLE_YET}
    text, redactions = redact_text(extracted.text)
    if redactions:
        skipped.removed.append("content.text")
    window, clip = clip_window(text, offset, ctx.limits.body_chars, "offset")
    out: dict[str, Any] = {"returned": True, "text": window, "chars_read": len(text)}
    if extracted.undecodable_chars:
        out["undecodable_chars"] = extracted.undecodable_chars
    record: dict[str, Any] = {"field": "content.text", **(clip or {})}
    if not content.complete:
        record["bytes_read"] = len(content.data)
        record["total_bytes"] = meta.size
        record["note"] = f"only the first {ctx.limits.graph_body_bytes:,} bytes can be read"
    if "next_offset" in record or not content.complete:
        skipped.text = record
    return out


def _attached_message(
    ctx: ToolContext, call: MailCall, found: AttachmentContent, offset: int, skipped: Skipped
) -> dict[str, Any]:
    """An attached email, compact, with its body as text in the window from ``offset``."""
    attached: Message | None = found.message
    if attached is None:
        return {}
    shown = compact_message(attached, call.zone, Bounds(ctx.limits, skipped), "message")
    body = attached.body
    text = body.text if body is not None else ""
    if body is not None and body.redactions:
        skipped.removed.append("message.body")
    if body is not None and body.conversion_limit is not None:
        skipped.fields.append(conversion_record("message.body", body.conversion_limit, ctx.limits))
    window, clip = clip_window(text, offset, ctx.limits.body_chars, "offset")
    shown["body"] = window
    if clip is not None and "next_offset" in clip:
        skipped.text = {"field": "message.body", **clip}
    return shown


MAIL_ATTACHMENT = Tool(
    name="mail_attachment",
    title="Mail attachments",
    description=(
        "A message's attachments, or with attachment_id one: text as in files_read (offset, "
        f"part) or an attached email as a message. Never bytes. {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "message_id": MESSAGE_REF,
            "attachment_id": MESSAGE_REF,
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
