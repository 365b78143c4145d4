"""Mail tools over the account's backend: folders, listing (with triage and threads), search.

Reading messages is in ``mail_read.py``, attachments in ``attachments.py``; which account,
mailbox and time zone a call means is settled in ``mail_call.py``; results are shaped and
encoded in ``message_pages.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.mail.failures import Unsupported
from mfconnector.mail.query import MessageFilter, View
from mfconnector.timezones import MailboxZone
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    DETAIL,
    FOLDER,
    LIMIT,
    MAILBOX,
    MESSAGE_REF,
    OUTPUT_SCHEMA,
    QUERY,
    UNTRUSTED,
    input_schema,
)
from mfconnector.tools.mail_call import mail_call
from mfconnector.tools.message_pages import folder_result, message_result
from mfconnector.tools.paging import continued_arguments, start_listing

__all__ = ["MAIL_FOLDERS", "MAIL_LIST", "MAIL_SEARCH", "message_filter"]

FILTERS = ("unread_only", "flagged", "triage", "from", "since", "before", "has_attachments")

DATE = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\d", "maxLength": 35}
"""A date or date-time, local to the mailbox unless it has an offset; checked in full by
``MailboxZone.utc_instant`` (a short pattern keeps tools/list small)."""


def _instant(zone: MailboxZone, value: str, argument: str) -> datetime:
    return datetime.fromisoformat(zone.utc_instant(value, argument).replace("Z", "+00:00"))


def message_filter(arguments: dict[str, Any], zone: MailboxZone) -> MessageFilter:
    """``mail_list``'s filters; dates without an offset are local to the mailbox's zone."""
    return MessageFilter(
        unread_only=bool(arguments.get("unread_only")),
        flagged=bool(arguments.get("flagged")),
        triage=bool(arguments.get("triage")),
        sender=arguments.get("from"),
        since=_instant(zone, arguments["since"], "since") if "since" in arguments else None,
        before=_instant(zone, arguments["before"], "before") if "before" in arguments else None,
        has_attachments=bool(arguments.get("has_attachments")),
    )


async def mail_folders(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_folders", arguments)
    call = await mail_call(ctx, arguments)
    full = arguments.get("detail") == "full"
    listing = start_listing(
        ctx, "mail_folders", arguments, scope=call.scope, view="full" if full else "compact"
    )
    parent_name = arguments.get("parent")
    parent = None
    if parent_name is not None:
        parent = await call.backend.resolve_folder(parent_name, "parent")
    page = await call.backend.folders(parent, listing.request)
    return folder_result(
        call, listing, page, echo={"parent": parent_name or "(top level)"}, full=full
    )


async def mail_list(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_list", arguments)
    call = await mail_call(ctx, arguments)
    full = arguments.get("detail") == "full"
    view: View = "full" if full else "compact"
    thread = arguments.get("thread_of")
    if thread is not None:
        extra = [name for name in ("folder", *FILTERS) if name in arguments]
        if extra:
            raise ToolInputError(
                f"`thread_of` lists a whole conversation across folders; drop `{extra[0]}`",
                hint="call mail_list without thread_of to filter a folder",
            )
        if not call.backend.capabilities.threads:
            raise Unsupported(
                f"account {call.account!r} cannot list a conversation",
                hint="search for the subject with mail_search instead",
            )
        message = call.reference(thread, "thread_of")
        listing = start_listing(ctx, "mail_list", arguments, scope=call.scope, view=view)
        page = await call.backend.thread(message, listing.request)
        echo: dict[str, Any] = {"thread_of": thread, "order": "oldest first"}
        return message_result(call, listing, page, echo=echo, full=full, spans_folders=True)
    where = message_filter(arguments, call.zone)
    listing = start_listing(ctx, "mail_list", arguments, scope=call.scope, view=view)
    name = arguments.get("folder", "inbox")
    folder = await call.backend.resolve_folder(name, "folder")
    page = await call.backend.list_messages(folder, where, listing.request)
    return message_result(
        call,
        listing,
        page,
        echo={"folder": name},
        full=full,
        spans_folders=False,
        counts=bool(arguments.get("triage")),
    )


async def mail_search(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "mail_search", arguments)
    call = await mail_call(ctx, arguments)
    full = arguments.get("detail") == "full"
    listing = start_listing(
        ctx, "mail_search", arguments, scope=call.scope, view="full" if full else "compact"
    )
    folder = None
    if "folder" in arguments:
        folder = await call.backend.resolve_folder(arguments["folder"], "folder")
    page = await call.backend.search(arguments["query"], folder, listing.request)
    return message_result(
        call,
        listing,
        page,
        echo={"query": arguments["query"]},
        full=full,
        spans_folders=folder is None,
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
            "thread_of": MESSAGE_REF,
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
