"""The Graph backend's reads: list (``$filter``), search (KQL), thread, read, attachments.

Every request asks Graph only for the fields its view shows (``graph.mail_model``), with
immutable ids; a listing that spans folders looks up each folder's display name once per
process. Message filters compile to OData with ``receivedDateTime`` first (the
``$orderby`` property must lead ``$filter``, else Outlook answers InefficientFilter).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import ToolInputError
from mfconnector.graph.mail_folders import folder_names, folder_segment
from mfconnector.graph.mail_model import (
    ATTACHMENT_SELECT,
    COMPACT_LIST_FIELDS,
    COMPACT_READ_FIELDS,
    FULL_LIST_FIELDS,
    FULL_READ_FIELDS,
    attachment_of,
    message_of,
    summary_of,
)
from mfconnector.graph.mail_pages import RawPage, fetch_page
from mfconnector.graph.mailbox import outlook_native
from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.mail.backend import AttachmentContent, OnBytes, Spooled
from mfconnector.mail.model import Attachment, Body, Folder, Message, MessageSummary, Page
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import Reference
from mfconnector.shaping import redact_text
from mfconnector.textconv import convert_html

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import GraphMailbox

__all__ = [
    "attachment",
    "attachments",
    "body_text",
    "list_messages",
    "odata_filter",
    "read",
    "search",
    "spool_attachment",
    "thread",
]

NO_FILTER_LOWER_BOUND = "1900-01-01T00:00:00Z"
TRIAGE_TERM = "(isRead eq false or flag/flagStatus eq 'flagged')"
ITEM_EXPAND = "microsoft.graph.itemattachment/item"


def odata_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _instant(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def odata_filter(where: MessageFilter) -> str | None:
    """``where`` as ``$filter``, ``receivedDateTime`` first; None when nothing is filtered."""
    time_terms = []
    if where.since is not None:
        time_terms.append(f"receivedDateTime ge {_instant(where.since)}")
    if where.before is not None:
        time_terms.append(f"receivedDateTime lt {_instant(where.before)}")
    other = []
    if where.unread_only:
        other.append("isRead eq false")
    if where.flagged:
        other.append("flag/flagStatus eq 'flagged'")
    if where.triage:
        other.append(TRIAGE_TERM)
    if where.sender is not None:
        other.append(f"from/emailAddress/address eq {odata_string(where.sender)}")
    if where.has_attachments:
        other.append("hasAttachments eq true")
    if not time_terms and not other:
        return None
    if not time_terms:
        time_terms.append(f"receivedDateTime ge {NO_FILTER_LOWER_BOUND}")
    return " and ".join(time_terms + other)


def _list_fields(page: PageRequest, *, spans_folders: bool) -> str:
    fields = FULL_LIST_FIELDS if page.view == "full" else COMPACT_LIST_FIELDS
    if spans_folders and page.view != "full":
        fields = (*fields, "parentFolderId")
    return ",".join(fields)


async def _summaries(
    mailbox: GraphMailbox, raw: RawPage[Any], *, spans_folders: bool
) -> Page[MessageSummary]:
    items = [item for item in raw.items if isinstance(item, dict)]
    names: dict[str, str] | None = None
    if spans_folders:
        ids = {i["parentFolderId"] for i in items if isinstance(i.get("parentFolderId"), str)}
        names = await folder_names(mailbox, ids)
    return raw.with_items([summary_of(item, mailbox.tag, names) for item in items])


async def list_messages(
    mailbox: GraphMailbox, folder: Folder, where: MessageFilter, page: PageRequest
) -> Page[MessageSummary]:
    query = {
        "$top": str(page.limit),
        "$orderby": "receivedDateTime desc",
        "$select": _list_fields(page, spans_folders=False),
    }
    compiled = odata_filter(where)
    if compiled:
        query["$filter"] = compiled
    path = f"{mailbox.path}/mailFolders/{folder_segment(folder)}/messages"
    raw = await fetch_page(mailbox, path, query, page, headers=mailbox.prefer())
    return await _summaries(mailbox, raw, spans_folders=False)


async def search(
    mailbox: GraphMailbox, text: str, folder: Folder | None, page: PageRequest
) -> Page[MessageSummary]:
    """KQL passed through as one quoted ``$search`` term (Graph's own syntax inside)."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    path = f"{mailbox.path}/messages"
    if folder is not None:
        path = f"{mailbox.path}/mailFolders/{folder_segment(folder)}/messages"
    spans = folder is None
    query = {
        "$search": f'"{quoted}"',
        "$select": _list_fields(page, spans_folders=spans),
        "$top": str(page.limit),
    }
    raw = await fetch_page(mailbox, path, query, page, headers=mailbox.prefer())
    result = await _summaries(mailbox, raw, spans_folders=spans)
    return Page(
        items=result.items,
        here=result.here,
        next=result.next,
        more_pages=result.more_pages,
        left_on_page=result.left_on_page,
        note=result.note,
        searched="Outlook's KQL over subject, body, people and attachments' names",
    )


async def _conversation_of(mailbox: GraphMailbox, message: Reference) -> str:
    graph = await mailbox.client()
    answer = await graph.get_json(
        f"{mailbox.path}/messages/{quote_segment(outlook_native(message, 'thread_of'))}",
        query={"$select": "id,conversationId"},
        headers=mailbox.prefer(),
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    conversation = body.get("conversationId")
    if not isinstance(conversation, str) or not conversation:
        raise ToolInputError(
            "that message has no conversation id, so its thread cannot be listed",
            hint="read the message itself with mail_read",
        )
    return conversation


async def thread(
    mailbox: GraphMailbox, message: Reference, page: PageRequest
) -> Page[MessageSummary]:
    """The conversation across folders, oldest first (a cursor's page needs no lookup)."""
    query = {
        "$top": str(page.limit),
        "$orderby": "receivedDateTime asc",
        "$select": _list_fields(page, spans_folders=True),
    }
    if page.position is None:
        conversation = await _conversation_of(mailbox, message)
        query["$filter"] = (
            f"receivedDateTime ge {NO_FILTER_LOWER_BOUND} and conversationId eq "
            f"{odata_string(conversation)}"
        )
    raw = await fetch_page(
        mailbox, f"{mailbox.path}/messages", query, page, headers=mailbox.prefer()
    )
    return await _summaries(mailbox, raw, spans_folders=True)


def readable_body(body: Any, *, max_tags: int, unique: bool, check: Any = None) -> Body:
    """Graph's ``{contentType, content}`` as text, credential links cut; blocking."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), str):
        return Body("", unique=unique)
    content: str = body["content"]
    limit = None
    if str(body.get("contentType", "")).lower() == "html":
        converted = convert_html(content, max_tags=max_tags, check=check)
        content, limit = converted.text, converted.limit
    text, redactions = redact_text(content)
    return Body(text, redactions, limit, unique)


async def body_text(body: Any, limits: Limits, *, unique: bool = False) -> Body:
    """Up to 2 MB of untrusted HTML converted off the event loop, which keeps serving.

    The converter asks trio every few thousand tags whether its call was cancelled, and
    stops there, so a cancelled or timed-out read leaves nothing running. A text body (what
    reads ask for) needs no thread: only its credential links are cut.
    """
    if not isinstance(body, dict) or str(body.get("contentType", "")).lower() != "html":
        return readable_body(body, max_tags=limits.html_tags, unique=unique)
    convert = partial(
        readable_body,
        body,
        max_tags=limits.html_tags,
        unique=unique,
        check=trio.from_thread.check_cancelled,
    )
    return await trio.to_thread.run_sync(convert)


async def body_of(mailbox: GraphMailbox, body: Any, *, unique: bool = False) -> Body:
    return await body_text(body, mailbox.limits, unique=unique)


def _message_path(mailbox: GraphMailbox, message: Reference, argument: str) -> str:
    return f"{mailbox.path}/messages/{quote_segment(outlook_native(message, argument))}"


async def read(mailbox: GraphMailbox, message: Reference, request: ReadRequest) -> Message:
    graph = await mailbox.client()
    path = _message_path(mailbox, message, "message_id")
    body_field = "uniqueBody" if request.unique_body else "body"
    fields = FULL_READ_FIELDS if request.view == "full" else COMPACT_READ_FIELDS
    select = ",".join((*fields, body_field)) if request.with_body else ",".join(fields)
    answer = await graph.get_json(
        path, query={"$select": select}, headers=mailbox.prefer(text_bodies=True)
    )
    raw = answer.body if isinstance(answer.body, dict) else {}
    body = None
    if request.with_body:
        body = await body_of(mailbox, raw.get(body_field), unique=request.unique_body)
    listed: tuple[Attachment, ...] = ()
    more = False
    if raw.get("hasAttachments"):
        limit = mailbox.limits.list_items
        answer = await graph.get_json(
            f"{path}/attachments",
            query={"$select": ATTACHMENT_SELECT, "$top": str(limit)},
            headers=mailbox.prefer(),
        )
        values = answer.body.get("value") if isinstance(answer.body, dict) else None
        values = [v for v in values if isinstance(v, dict)] if isinstance(values, list) else []
        listed = tuple(attachment_of(v, mailbox.tag) for v in values[:limit])
        more = len(values) > limit or "@odata.nextLink" in answer.body
    return message_of(raw, mailbox.tag, body=body, attachments=listed, more_attachments=more)


async def attachments(
    mailbox: GraphMailbox, message: Reference, page: PageRequest
) -> Page[Attachment]:
    path = f"{_message_path(mailbox, message, 'message_id')}/attachments"
    query = {"$select": ATTACHMENT_SELECT, "$top": str(mailbox.limits.list_items)}
    raw = await fetch_page(mailbox, path, query, page, headers=mailbox.prefer())
    items = [item for item in raw.items if isinstance(item, dict)]
    return raw.with_items([attachment_of(item, mailbox.tag) for item in items])


def _attachment_path(mailbox: GraphMailbox, message: Reference, attachment: Reference) -> str:
    native = quote_segment(outlook_native(attachment, "attachment_id"))
    return f"{_message_path(mailbox, message, 'message_id')}/attachments/{native}"


async def attachment(
    mailbox: GraphMailbox, message: Reference, attachment_ref: Reference, max_bytes: int
) -> AttachmentContent:
    """A file attachment's first ``max_bytes`` bytes (0: its metadata only), an attached
    email parsed, or a reference attachment's metadata (its bytes are elsewhere)."""
    graph = await mailbox.client()
    path = _attachment_path(mailbox, message, attachment_ref)
    answer = await graph.get_json(
        path, query={"$select": ATTACHMENT_SELECT}, headers=mailbox.prefer()
    )
    meta = answer.body if isinstance(answer.body, Mapping) else {}
    found = attachment_of(meta, mailbox.tag)
    if found.kind == "message":
        expanded = await graph.get_json(
            path, query={"$expand": ITEM_EXPAND}, headers=mailbox.prefer(text_bodies=True)
        )
        outer = expanded.body if isinstance(expanded.body, dict) else {}
        found_item = outer.get("item")
        item: dict[str, Any] = found_item if isinstance(found_item, dict) else {}
        body = await body_of(mailbox, item.get("body"))
        attached = message_of(item, mailbox.tag, body=body)
        return AttachmentContent(found, b"", True, attached)
    if found.kind != "file" or max_bytes <= 0:
        return AttachmentContent(found, b"", found.kind != "file")
    download = await graph.download(f"{path}/$value", max_bytes=max_bytes)
    return AttachmentContent(found, download.data, download.complete)


@contextlib.asynccontextmanager
async def spool_attachment(
    mailbox: GraphMailbox,
    message: Reference,
    attachment_ref: Reference,
    *,
    limit: int,
    suffix: str = "",
    on_bytes: OnBytes | None = None,
) -> AsyncIterator[Spooled]:
    from mfconnector.graph.spool import spooled_download

    graph = await mailbox.client()
    path = f"{_attachment_path(mailbox, message, attachment_ref)}/$value"
    async with spooled_download(
        graph, path, limit=limit, suffix=suffix, on_bytes=on_bytes
    ) as spooled:
        yield spooled
