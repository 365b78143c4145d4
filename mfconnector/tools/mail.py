"""Outlook mail tools: folders, listing (with triage and threads), and search.

Reading messages is in ``mail_read.py``, attachments in ``attachments.py``; which mailbox,
which folder and which time zone a call means is decided in ``mailbox.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.graph.urls import quote_segment
from mfconnector.shaping import Skipped
from mfconnector.timezones import MailboxZone
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    DETAIL,
    FOLDER,
    LIMIT,
    MAILBOX,
    OUTLOOK_ID,
    OUTPUT_SCHEMA,
    QUERY,
    UNTRUSTED,
    input_schema,
    item_shaper,
)
from mfconnector.tools.item_tables import folder_table
from mfconnector.tools.listing import ItemShaper, continued_arguments, list_result
from mfconnector.tools.mailbox import (
    Mailbox,
    folder_names,
    mailbox_of,
    mailbox_zone,
    prefer_header,
    resolve_folder,
)
from mfconnector.tools.messages import (
    COMPACT_LIST_FIELDS,
    FULL_LIST_FIELDS,
    GET_FULL,
    compact_message,
    long_subjects,
    omitted_record,
    table,
)

__all__ = ["MAIL_FOLDERS", "MAIL_LIST", "MAIL_SEARCH", "message_filter"]

FOLDER_FIELDS = (
    "id",
    "displayName",
    "parentFolderId",
    "childFolderCount",
    "unreadItemCount",
    "totalItemCount",
    "isHidden",
)
LIST_FIELDS = FULL_LIST_FIELDS
NO_FILTER_LOWER_BOUND = "1900-01-01T00:00:00Z"
TRIAGE_TERM = "(isRead eq false or flag/flagStatus eq 'flagged')"
FILTERS = ("unread_only", "flagged", "triage", "from", "since", "before", "has_attachments")

DATE = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\d", "maxLength": 35}
"""A date or date-time, local to the mailbox unless it has an offset; checked in full by
``MailboxZone.utc_instant`` (a short pattern keeps tools/list small)."""
MESSAGE_ID = OUTLOOK_ID


def odata_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def message_filter(arguments: dict[str, Any], zone: MailboxZone) -> str | None:
    """Outlook needs the ``$orderby`` property first in ``$filter`` (else InefficientFilter).

    Dates without an offset are local to the mailbox's zone.
    """
    time_terms = []
    if "since" in arguments:
        time_terms.append(f"receivedDateTime ge {zone.utc_instant(arguments['since'], 'since')}")
    if "before" in arguments:
        time_terms.append(f"receivedDateTime lt {zone.utc_instant(arguments['before'], 'before')}")
    other_terms = []
    if arguments.get("unread_only"):
        other_terms.append("isRead eq false")
    if arguments.get("flagged"):
        other_terms.append("flag/flagStatus eq 'flagged'")
    if arguments.get("triage"):
        other_terms.append(TRIAGE_TERM)
    if "from" in arguments:
        other_terms.append(f"from/emailAddress/address eq {odata_string(arguments['from'])}")
    if arguments.get("has_attachments"):
        other_terms.append("hasAttachments eq true")
    if not time_terms and not other_terms:
        return None
    if not time_terms:
        time_terms.append(f"receivedDateTime ge {NO_FILTER_LOWER_BOUND}")
    return " and ".join(time_terms + other_terms)


async def mail_folders(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_folders", arguments)
    mailbox = mailbox_of(ctx, arguments)
    parent = arguments.get("parent")
    path = f"{mailbox.path}/mailFolders"
    if parent is not None:
        path += f"/{await resolve_folder(ctx, mailbox, parent, 'parent')}/childFolders"
    limit = arguments.get("limit", ctx.limits.list_items)
    result = await list_result(
        ctx,
        arguments,
        key="folders",
        shape=item_shaper(ctx, FOLDER_FIELDS),
        echo={"parent": parent or "(top level)"},
        tool="mail_folders",
        scope=mailbox.cursor_scope,
        path=path,
        query={"$top": str(limit), "$select": ",".join(FOLDER_FIELDS)},
        headers=prefer_header(await mailbox_zone(ctx, mailbox)),
    )
    for folder in result["folders"]:
        if isinstance(folder.get("id"), str) and isinstance(folder.get("displayName"), str):
            ctx.state.folder_names.put((mailbox.path, folder["id"]), folder["displayName"])
    if arguments.get("detail") != "full":
        result = folder_table(result, FOLDER_FIELDS)
    return _with_mailbox(result, mailbox)


def _with_mailbox(result: dict[str, Any], mailbox: Mailbox) -> dict[str, Any]:
    if mailbox.shared:
        result["mailbox"] = mailbox.label
    return result


def message_pages(
    ctx: ToolContext, mailbox: Mailbox, zone: MailboxZone, *, full: bool, spans_folders: bool
) -> tuple[tuple[str, ...], Callable[[list[Any]], Awaitable[ItemShaper]], list[dict[str, Any]]]:
    """The fields to ask Graph for, the page shaper, and the shaped items it saw.

    Compact rows that span folders show each folder's display name (looked up once per
    process); the shaped items are kept so the result can name what compact left out.
    """
    fields = FULL_LIST_FIELDS if full else COMPACT_LIST_FIELDS
    if spans_folders and not full:
        fields = (*fields, "parentFolderId")
    seen: list[dict[str, Any]] = []
    base = item_shaper(ctx, fields)

    async def prepare(items: list[Any]) -> ItemShaper:
        names: dict[str, str] = {}
        if spans_folders and not full:
            ids = {
                item["parentFolderId"]
                for item in items
                if isinstance(item, dict) and isinstance(item.get("parentFolderId"), str)
            }
            names = await folder_names(ctx, mailbox, ids)

        def shape(item: Any, skipped: Skipped, path: str) -> dict[str, Any]:
            shaped = base(item, skipped, path)
            if full:
                return shaped
            seen.append(shaped)
            folder = None
            if spans_folders:
                folder_id = shaped.get("parentFolderId")
                folder = names.get(folder_id, folder_id) if isinstance(folder_id, str) else None
            return compact_message(shaped, zone, folder=folder)

        return shape

    return fields, prepare, seen


def finish_messages(
    result: dict[str, Any],
    mailbox: Mailbox,
    zone: MailboxZone,
    *,
    full: bool,
    seen: list[dict[str, Any]],
    subject_chars: int,
) -> dict[str, Any]:
    """Say the zone; in compact, make the table and name once what was left out."""
    rows = result.pop("messages")
    ordered = {key: value for key, value in result.items() if key not in ("incomplete", "skipped")}
    if mailbox.shared:
        ordered["mailbox"] = mailbox.label
    ordered["timeZone"] = zone.name
    if full:
        ordered["messages"] = rows
    else:
        ordered.update(table(rows, subject_chars))
        omitted = omitted_record(FULL_LIST_FIELDS, COMPACT_LIST_FIELDS, seen)
        cut = long_subjects(rows, subject_chars)
        if cut:
            omitted = omitted or {"fields": [], "get": GET_FULL}
            omitted["subjectsCut"] = {"count": cut, "keptChars": subject_chars}
        if omitted:
            ordered["omitted"] = omitted
    for key in ("incomplete", "skipped"):
        if key in result:
            ordered[key] = result[key]
    return ordered


async def _conversation_of(ctx: ToolContext, mailbox: Mailbox, message_id: str) -> str:
    graph = await ctx.graph()
    answer = await graph.get_json(
        f"{mailbox.path}/messages/{quote_segment(message_id)}",
        query={"$select": "id,conversationId"},
        headers=prefer_header(await mailbox_zone(ctx, mailbox)),
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    conversation = body.get("conversationId")
    if not isinstance(conversation, str) or not conversation:
        raise ToolInputError(
            "that message has no conversationId, so its thread cannot be listed",
            hint="read the message itself with mail_read",
        )
    return conversation


def page_counts(rows: list[dict[str, Any]], *, full: bool) -> dict[str, Any]:
    """Counts over the messages of this page only (triage)."""

    def unread(row: dict[str, Any]) -> bool:
        return row.get("isRead") is False if full else "unread" in row.get("flags", "").split()

    def flagged(row: dict[str, Any]) -> bool:
        if full:
            flag = row.get("flag")
            return isinstance(flag, dict) and flag.get("flagStatus") == "flagged"
        return "flagged" in row.get("flags", "").split()

    return {
        "messages": len(rows),
        "unread": sum(1 for row in rows if unread(row)),
        "flagged": sum(1 for row in rows if flagged(row)),
        "unreadAndFlagged": sum(1 for row in rows if unread(row) and flagged(row)),
        "covers": "this page only",
    }


async def mail_list(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_list", arguments)
    mailbox = mailbox_of(ctx, arguments)
    zone = await mailbox_zone(ctx, mailbox)
    full = arguments.get("detail") == "full"
    thread = arguments.get("thread_of")
    query: dict[str, str] = {"$top": str(arguments.get("limit", ctx.limits.list_items))}
    if thread is not None:
        extra = [name for name in ("folder", *FILTERS) if name in arguments]
        if extra:
            raise ToolInputError(
                f"`thread_of` lists a whole conversation across folders; drop `{extra[0]}`",
                hint="call mail_list without thread_of to filter a folder",
            )
        path = f"{mailbox.path}/messages"
        if arguments.get("cursor") is None:
            conversation = await _conversation_of(ctx, mailbox, thread)
            query["$filter"] = (
                f"receivedDateTime ge {NO_FILTER_LOWER_BOUND} and conversationId eq "
                f"{odata_string(conversation)}"
            )
        query["$orderby"] = "receivedDateTime asc"
        echo: dict[str, Any] = {"thread_of": thread, "order": "oldest first"}
    else:
        folder = arguments.get("folder", "inbox")
        segment = await resolve_folder(ctx, mailbox, folder, "folder")
        path = f"{mailbox.path}/mailFolders/{segment}/messages"
        query["$orderby"] = "receivedDateTime desc"
        odata_filter = message_filter(arguments, zone)
        if odata_filter:
            query["$filter"] = odata_filter
        echo = {"folder": folder}
    fields, prepare, seen = message_pages(
        ctx, mailbox, zone, full=full, spans_folders=thread is not None
    )
    query["$select"] = ",".join(fields)
    result = await list_result(
        ctx,
        arguments,
        key="messages",
        prepare=prepare,
        echo=echo,
        tool="mail_list",
        scope=mailbox.cursor_scope,
        path=path,
        query=query,
        headers=prefer_header(zone),
    )
    if arguments.get("triage"):
        result["pageCounts"] = page_counts(result["messages"], full=full)
    return finish_messages(
        result, mailbox, zone, full=full, seen=seen, subject_chars=ctx.limits.compact_subject_chars
    )


async def mail_search(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_search", arguments)
    mailbox = mailbox_of(ctx, arguments)
    zone = await mailbox_zone(ctx, mailbox)
    full = arguments.get("detail") == "full"
    text = arguments["query"].replace("\\", "\\\\").replace('"', '\\"')
    path = f"{mailbox.path}/messages"
    if "folder" in arguments:
        segment = await resolve_folder(ctx, mailbox, arguments["folder"], "folder")
        path = f"{mailbox.path}/mailFolders/{segment}/messages"
    fields, prepare, seen = message_pages(
        ctx, mailbox, zone, full=full, spans_folders="folder" not in arguments
    )
    limit = arguments.get("limit", ctx.limits.list_items)
    result = await list_result(
        ctx,
        arguments,
        key="messages",
        prepare=prepare,
        echo={"query": arguments["query"]},
        tool="mail_search",
        scope=mailbox.cursor_scope,
        path=path,
        query={"$search": f'"{text}"', "$select": ",".join(fields), "$top": str(limit)},
        headers=prefer_header(zone),
    )
    return finish_messages(
        result, mailbox, zone, full=full, seen=seen, subject_chars=ctx.limits.compact_subject_chars
    )


MAIL_FOLDERS = Tool(
    name="mail_folders",
    title="Mail folders",
    description=(
        "Folders with unread and total counts: top level or under `parent` (id, well-known "
        f"name or path like Projects/Contoso). {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {"parent": FOLDER, "detail": DETAIL, "mailbox": MAILBOX, "limit": LIMIT, "cursor": CURSOR}
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=mail_folders,
)

MAIL_LIST = Tool(
    name="mail_list",
    title="List messages",
    description=(
        "Messages in a folder (id, well-known name or path; default inbox), newest first, "
        "no bodies; filters; triage: unread/flagged with page counts; thread_of: a "
        f"message's conversation across folders, oldest first. {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "folder": FOLDER,
            "unread_only": {"type": "boolean"},
            "flagged": {"type": "boolean"},
            "triage": {"type": "boolean"},
            "from": {"type": "string", "minLength": 3, "maxLength": 320, "pattern": "@"},
            "since": DATE,
            "before": DATE,
            "has_attachments": {"type": "boolean"},
            "thread_of": MESSAGE_ID,
            "detail": DETAIL,
            "mailbox": MAILBOX,
            "limit": LIMIT,
            "cursor": CURSOR,
        }
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=mail_list,
)

MAIL_SEARCH = Tool(
    name="mail_search",
    title="Search mail",
    description=(
        "Full-text search (KQL, e.g. `from:alice subject:invoice`) in the mailbox or one "
        f"folder, newest first. {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "query": QUERY,
            "folder": FOLDER,
            "detail": DETAIL,
            "mailbox": MAILBOX,
            "limit": LIMIT,
            "cursor": CURSOR,
        },
        "query",
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=mail_search,
)
