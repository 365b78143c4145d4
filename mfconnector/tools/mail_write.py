"""``mail_create`` (additions), ``mail_modify`` (changes) and ``mail_delete_permanently``.

Every request body is built here from checked arguments; ids go into paths percent-encoded.
Ids are immutable (``Prefer: IdType="ImmutableId"``), so a moved message keeps its id.
"""

from __future__ import annotations

from typing import Any

from mfconnector.elicitation import Question
from mfconnector.errors import ToolError
from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.tools.acting import (
    ACTING,
    DESTRUCTIVE,
    Action,
    Progress,
    acting_handler,
    check_id,
    folder_argument,
)
from mfconnector.tools.attachment_sources import (
    ATTACHMENT_ITEMS,
    AttachmentSource,
    attach_sources,
    resolve_sources,
)
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import input_schema
from mfconnector.writes.confirm import confirm_with_person, delete_question
from mfconnector.writes.errors import WriteError, as_write_error
from mfconnector.writes.folder_policy import WELL_KNOWN, check_destination, check_renamable
from mfconnector.writes.message import (
    PREFER_IDS,
    freeze_unchanged_draft,
    recipients,
)
from mfconnector.writes.outgoing import check_subject, parse_recipient
from mfconnector.writes.setup import WriteSetup, require_scopes, setup_of

__all__ = [
    "MAIL_CREATE",
    "MAIL_DELETE_PERMANENTLY",
    "MAIL_MODIFY",
    "create_draft",
    "draft_fields",
    "write",
]

STR: dict[str, Any] = {"type": "string"}
PEOPLE: dict[str, Any] = {"type": "array", "items": {"type": ["string", "object"]}}
"""Recipients: ``"addr"``, ``"Name <addr>"`` or ``{name, address}``, checked one by one by
``writes.outgoing.parse_recipient``."""
NAMES: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
"""Category names; each one's length is checked by ``check_shapes``."""
DIGEST = STR
"""64 lowercase hex digits, checked by ``check_hex`` (a pattern costs discovery bytes)."""
ATTACHMENTS = ATTACHMENT_ITEMS
"""Drive files, message attachments or inline content (``tools.attachment_sources``)."""
DRAFT_FIELDS = ("to", "cc", "bcc", "subject", "text", "html", "attachments")
OUTPUT = None
"""Acting tools publish no output schema: their results are small objects described in
docs/TOOLS.md, and the discovery budget counts every byte."""


def _user(ctx: ToolContext) -> str:
    return ctx.user_path.rstrip("/")


def _message_path(ctx: ToolContext, message_id: str) -> str:
    return f"{_user(ctx)}/messages/{quote_segment(check_id(message_id, 'message_id'))}"


async def write(
    ctx: ToolContext,
    progress: Progress,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One mailbox-changing request; ``progress.writing`` marks it ambiguous while in flight."""
    from mfconnector.graph.write_call import write_json

    graph = await ctx.graph()
    progress.writing = True
    answer = await write_json(graph, method, path, body=body, headers=headers or PREFER_IDS)
    progress.writing = False
    return answer.body if isinstance(answer.body, dict) else {}


def _pick(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: item[key] for key in keys if key in item}


def _display_name(value: str, argument: str, limits: Limits) -> str:
    name = value.strip()
    if not name or len(name) > limits.display_name_chars or any(ord(c) < 32 for c in name):
        raise WriteError(
            "invalid_arguments",
            f"`{argument}` must be 1-{limits.display_name_chars} printable characters",
            hint="choose a shorter plain name",
        )
    return name


def draft_fields(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The Graph message properties named by the arguments (checked, nothing sent yet)."""
    if "text" in arguments and "html" in arguments:
        raise WriteError(
            "invalid_arguments",
            "give `text` or `html`, not both: a message has one body",
            hint="drop one of them",
        )
    message: dict[str, Any] = {}
    count = 0
    for argument, graph_name in (
        ("to", "toRecipients"),
        ("cc", "ccRecipients"),
        ("bcc", "bccRecipients"),
    ):
        if argument in arguments:
            people = [
                parse_recipient(item, f"{argument}[{index}]", ctx.limits)
                for index, item in enumerate(arguments[argument])
            ]
            count += len(people)
            message[graph_name] = recipients(people)
    if count > ctx.limits.draft_recipients:
        raise WriteError(
            "invalid_arguments",
            f"{count} recipients; at most {ctx.limits.draft_recipients} in To, Cc and Bcc together",
            hint="send to a distribution list instead",
        )
    if "subject" in arguments:
        message["subject"] = check_subject(arguments["subject"])
    if "text" in arguments:
        message["body"] = {"contentType": "text", "content": arguments["text"]}
    if "html" in arguments:
        message["body"] = {"contentType": "html", "content": arguments["html"]}
    return message


async def create_draft(
    ctx: ToolContext,
    progress: Progress,
    message: dict[str, Any],
    attachments: list[AttachmentSource],
) -> tuple[str, list[dict[str, Any]]]:
    """POST the draft, then each attachment (each step reported if one fails).

    Returns the draft's id and what was attached (name, size, SHA-256, source)."""
    progress.plan("create the draft", *(f"attach {a.name}" for a in attachments))
    created = await write(ctx, progress, "POST", f"{_user(ctx)}/messages", message)
    draft_id = str(created.get("id") or "")
    if not draft_id:
        raise WriteError(
            "outcome_unknown",
            "Graph created the draft but returned no id",
            hint="look in Drafts before creating it again",
        )
    progress.did("create the draft", draft_id=draft_id)
    attached = await attach_sources(ctx, progress, _message_path(ctx, draft_id), attachments)
    return draft_id, attached


# --- mail_create ---------------------------------------------------------------------


async def create_folder(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    name = _display_name(arguments["name"], "name", ctx.limits)
    path = f"{_user(ctx)}/mailFolders"
    if "parent" in arguments:
        parent = await check_destination(
            ctx, setup, await folder_argument(ctx, arguments["parent"], "parent"), "parent"
        )
        path += f"/{quote_segment(parent)}/childFolders"
    created = await write(ctx, progress, "POST", path, {"displayName": name})
    return {"created": _pick(created, "id", "displayName", "parentFolderId")}


async def copy_message(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    destination = await check_destination(
        ctx,
        setup,
        await folder_argument(ctx, arguments["destination"], "destination"),
        "destination",
    )
    path = f"{_message_path(ctx, arguments['message_id'])}/copy"
    copied = await write(ctx, progress, "POST", path, {"destinationId": destination})
    return {"copied": _pick(copied, "id", "parentFolderId", "subject")}


async def new_draft(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    message = draft_fields(ctx, arguments)
    attachments = await resolve_sources(ctx, arguments.get("attachments", []))
    draft_id, attached = await create_draft(ctx, progress, message, attachments)
    draft: dict[str, Any] = {"id": draft_id, "attachments": len(attachments)}
    if attached:
        draft["attached"] = attached
    return {"draft": draft}


async def revise_draft(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """A revised copy of a draft read just now; a stale digest writes nothing."""
    changes = draft_fields(ctx, arguments)
    replaced = (
        await resolve_sources(ctx, arguments["attachments"]) if "attachments" in arguments else None
    )
    source = await freeze_unchanged_draft(
        ctx,
        check_id(arguments["message_id"], "message_id"),
        arguments["source_digest"],
        consequence="nothing was written",
        hint="read the draft again (mail_review draft) and decide on the new content",
    )
    source_path = _message_path(ctx, source.draft_id)
    old_files = [a["name"] for a in source.record["attachments"]]
    progress.plan(
        "copy the draft",
        *(["apply the changes"] if changes else []),
        *(f"remove {name}" for name in (old_files if replaced is not None else [])),
        *(f"attach {a.name}" for a in replaced or []),
    )
    # A copy keeps what Outlook keeps with the draft (reply threading, inline images);
    # only the changed properties are then written to the copy.
    copied = await write(ctx, progress, "POST", f"{source_path}/copy", {"destinationId": "drafts"})
    draft_id = str(copied.get("id") or "")
    if not draft_id:
        raise WriteError(
            "outcome_unknown",
            "Graph copied the draft but returned no id",
            hint="look in Drafts before revising again",
        )
    progress.did("copy the draft", draft_id=draft_id)
    if copied.get("isDraft") is False:
        raise WriteError(
            "unsupported_operation",
            "Graph's copy of the draft is not a draft, so it cannot be revised; it was left "
            "in Drafts",
            hint="create a new draft with mail_create draft instead",
        )
    path = _message_path(ctx, draft_id)
    if changes:
        await write(ctx, progress, "PATCH", path, changes)
        progress.did("apply the changes")
    if replaced is not None:
        graph = await ctx.graph()
        listed = await graph.get_json(
            f"{path}/attachments", query={"$select": "id,name"}, headers=PREFER_IDS
        )
        values = listed.body.get("value") if isinstance(listed.body, dict) else None
        for item in values if isinstance(values, list) else []:
            attachment = quote_segment(str(item.get("id", "")))
            await write(ctx, progress, "DELETE", f"{path}/attachments/{attachment}")
            progress.did(f"remove {item.get('name')}")
        attached = await attach_sources(ctx, progress, path, replaced)
    kept = len(old_files) if replaced is None else len(replaced)
    revision: dict[str, Any] = {"id": draft_id, "attachments": kept}
    if replaced:
        revision["attached"] = attached
    return {
        "revision": revision,
        "source": {"id": source.draft_id, "source_digest": source.digest},
        "original_retained": True,
    }


MAIL_CREATE = Tool(
    name="mail_create",
    title="Create mail",
    description=(
        "Adds only. folder: name,parent. copy: message_id,destination. draft: to,cc,bcc,"
        "subject,text|html,attachments. revise_draft: message_id,"
        "source_digest + changes (a copy)."
    ),
    input_schema=input_schema(
        {
            "action": {"enum": ["folder", "copy", "draft", "revise_draft"]},
            "name": STR,
            "parent": STR,
            "message_id": STR,
            "destination": STR,
            "source_digest": DIGEST,
            "to": PEOPLE,
            "cc": PEOPLE,
            "bcc": PEOPLE,
            "subject": STR,
            "text": STR,
            "html": STR,
            "attachments": ATTACHMENTS,
        },
        "action",
    ),
    output_schema=OUTPUT,
    handler=acting_handler(
        "mail_create",
        "writes",
        {
            "folder": Action(("name",), ("parent",), create_folder),
            "copy": Action(("message_id", "destination"), (), copy_message),
            "draft": Action((), DRAFT_FIELDS, new_draft),
            "revise_draft": Action(("message_id", "source_digest"), DRAFT_FIELDS, revise_draft),
        },
    ),
    annotations=dict(ACTING),
)


# --- mail_modify ---------------------------------------------------------------------

FLAG_STATES = ("flagged", "notFlagged", "complete")


async def set_flags(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """isRead, follow-up flag and categories; ``unchanged_since`` guards with the change key."""
    changes = {"read", "flag", "categories_add", "categories_remove"} & set(arguments)
    if not changes:
        raise WriteError(
            "invalid_arguments",
            "`flags` needs at least one of read, flag, categories_add, categories_remove",
            hint="say what to change",
        )
    path = _message_path(ctx, arguments["message_id"])
    patch: dict[str, Any] = {}
    if "read" in arguments:
        patch["isRead"] = arguments["read"]
    if "flag" in arguments:
        patch["flag"] = {"flagStatus": arguments["flag"]}
    expected = arguments.get("unchanged_since")
    if expected is not None or changes & {"categories_add", "categories_remove"}:
        graph = await ctx.graph()
        current = await graph.get_json(
            path, query={"$select": "categories,changeKey"}, headers=PREFER_IDS
        )
        body = current.body if isinstance(current.body, dict) else {}
        if expected is not None and body.get("changeKey") != expected:
            raise WriteError(
                "conflict",
                "the message changed since `unchanged_since` was read; nothing was changed",
                hint="read the message again and decide again",
                retry_safe=True,
                details={"current_change_key": body.get("changeKey")},
            )
        if changes & {"categories_add", "categories_remove"}:
            categories = [c for c in body.get("categories") or [] if isinstance(c, str)]
            remove = set(arguments.get("categories_remove", []))
            categories = [c for c in categories if c not in remove]
            categories += [c for c in arguments.get("categories_add", []) if c not in categories]
            patch["categories"] = categories
    headers = dict(PREFER_IDS)
    if expected is not None:
        headers["If-Match"] = f'W/"{expected}"'
    updated = await write(ctx, progress, "PATCH", path, patch, headers)
    return {"updated": _pick(updated, "id", "isRead", "flag", "categories", "changeKey")}


async def move_message(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    destination = await check_destination(
        ctx,
        setup,
        await folder_argument(ctx, arguments["destination"], "destination"),
        "destination",
    )
    path = f"{_message_path(ctx, arguments['message_id'])}/move"
    moved = await write(ctx, progress, "POST", path, {"destinationId": destination})
    return {"moved": _pick(moved, "id", "parentFolderId", "subject")}


async def trash_message(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    path = f"{_message_path(ctx, arguments['message_id'])}/move"
    moved = await write(ctx, progress, "POST", path, {"destinationId": "deleteditems"})
    return {"trashed": _pick(moved, "id", "parentFolderId", "subject")}


async def rename_folder(
    ctx: ToolContext, setup: WriteSetup, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    folder = arguments["folder_id"]
    if folder.strip().lower() not in WELL_KNOWN:
        check_id(folder, "folder_id")
    name = _display_name(arguments["name"], "name", ctx.limits)
    await check_renamable(ctx, setup, folder)
    path = f"{_user(ctx)}/mailFolders/{quote_segment(folder)}"
    renamed = await write(ctx, progress, "PATCH", path, {"displayName": name})
    return {"renamed": _pick(renamed, "id", "displayName", "parentFolderId")}


MAIL_MODIFY = Tool(
    name="mail_modify",
    title="Change mail",
    description=(
        "flags: message_id,read,flag,categories_add/remove,unchanged_since (changeKey). "
        "move: message_id,destination. rename: folder_id,name. trash: message_id."
    ),
    input_schema=input_schema(
        {
            "action": {"enum": ["flags", "move", "rename", "trash"]},
            "message_id": STR,
            "read": {"type": "boolean"},
            "flag": {"enum": list(FLAG_STATES)},
            "categories_add": NAMES,
            "categories_remove": NAMES,
            "unchanged_since": STR,
            "destination": STR,
            "folder_id": STR,
            "name": STR,
        },
        "action",
    ),
    output_schema=OUTPUT,
    handler=acting_handler(
        "mail_modify",
        "writes",
        {
            "flags": Action(
                ("message_id",),
                ("read", "flag", "categories_add", "categories_remove", "unchanged_since"),
                set_flags,
            ),
            "move": Action(("message_id", "destination"), (), move_message),
            "rename": Action(("folder_id", "name"), (), rename_folder),
            "trash": Action(("message_id",), (), trash_message),
        },
    ),
    annotations=dict(DESTRUCTIVE),
)


# --- mail_delete_permanently ---------------------------------------------------------


async def delete_permanently(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Graph ``permanentDelete`` (global cloud only), echoing what was deleted."""
    setup = setup_of(ctx, "mail_delete_permanently", "delete")
    if not setup.gates.writes:
        setup_of(ctx, "mail_delete_permanently", "writes")
    if setup.cloud != "global":
        raise WriteError(
            "unsupported_operation",
            f"permanent deletion is not offered by Microsoft Graph in the {setup.cloud} cloud; "
            "nothing was requested",
            hint="use mail_modify trash (to Deleted Items) instead",
        )
    path = _message_path(ctx, arguments["message_id"])
    await require_scopes(ctx, setup, ("Mail.ReadWrite",))
    progress = Progress()
    try:
        graph = await ctx.graph()
        answer = await graph.get_json(
            path,
            query={"$select": "id,subject,from,receivedDateTime,parentFolderId"},
            headers=PREFER_IDS,
        )
        item = answer.body if isinstance(answer.body, dict) else {}
        sender = (
            item.get("from", {}).get("emailAddress", {})
            if isinstance(item.get("from"), dict)
            else {}
        )

        async def question() -> Question:
            return delete_question(item, sender.get("address"), str(item.get("id") or path))

        confirmed_by = await confirm_with_person(
            setup.confirm,
            "mail_delete_permanently",
            arguments,
            question,
            now=setup.clock(),
            limits=ctx.limits,
            consequence="nothing was deleted",
        )
        await write(ctx, progress, "POST", f"{path}/permanentDelete")
    except ToolError as error:
        raise as_write_error(error, writing=progress.writing) from None
    return {
        "deleted": {
            "id": item.get("id", arguments["message_id"]),
            "subject": item.get("subject"),
            "from": sender.get("address"),
            "receivedDateTime": item.get("receivedDateTime"),
        },
        "recoverable": False,
        "confirmed_by": confirmed_by,
    }


MAIL_DELETE_PERMANENTLY = Tool(
    name="mail_delete_permanently",
    title="Delete permanently",
    description="Deletes a message for good, not to Deleted Items.",
    input_schema=input_schema({"message_id": STR}, "message_id"),
    output_schema=OUTPUT,
    handler=delete_permanently,
    annotations=dict(DESTRUCTIVE),
)
