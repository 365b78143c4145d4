"""``mail_create`` (additions), ``mail_modify`` (changes) and ``mail_delete_permanently``.

Every call speaks the mail model: messages by reference (parsed against the call's account
before any request), folders by reference, role, name or path (the backend says which role
a folder has; ``writes.folder_policy`` decides by it), changes as ``FlagChange`` and
drafts as ``DraftContent``. What the account's backend cannot do is ``unsupported``
before any request.
"""

from __future__ import annotations

import hmac
from typing import Any

from mfconnector.elicitation import Question
from mfconnector.errors import ToolError
from mfconnector.limits import Limits
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.failures import Conflict
from mfconnector.mail.model import Folder
from mfconnector.mail.outgoing import DraftRevision, FrozenOutgoing
from mfconnector.mail.query import FlagChange, ReadRequest
from mfconnector.mail.refs import Reference
from mfconnector.tools.acting import (
    ACTING,
    DESTRUCTIVE,
    Action,
    acting_handler,
    destination,
    mail_of,
    message_ref,
    require_permissions,
    unsupported,
)
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import input_schema
from mfconnector.tools.draft_input import (
    ATTACHMENT_ITEMS,
    DRAFT_FIELDS,
    attached_view,
    attachments_of,
    draft_content,
)
from mfconnector.writes.confirm import confirm_with_person, delete_question
from mfconnector.writes.errors import WriteError, as_write_error
from mfconnector.writes.folder_policy import check_renamable
from mfconnector.writes.setup import WriteSetup, open_setup

__all__ = [
    "MAIL_CREATE",
    "MAIL_DELETE_PERMANENTLY",
    "MAIL_MODIFY",
    "freeze_unchanged",
]

STR: dict[str, Any] = {"type": "string"}
PEOPLE: dict[str, Any] = {"type": "array", "items": {"type": ["string", "object"]}}
"""Recipients: ``"addr"``, ``"Name <addr>"`` or ``{name, address}``, checked one by one by
``writes.outgoing.parse_recipient``."""
NAMES: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
"""Category names; each one's length is checked by ``check_shapes``."""
DIGEST = STR
"""64 lowercase hex digits, checked by ``check_shapes`` (a pattern costs discovery bytes)."""
OUTPUT = None
"""Acting tools publish no output schema: their results are small objects described in
docs/TOOLS.md, and the discovery budget counts every byte."""


def _display_name(value: str, argument: str, limits: Limits) -> str:
    name = value.strip()
    if not name or len(name) > limits.display_name_chars or any(ord(c) < 32 for c in name):
        raise WriteError(
            "invalid_arguments",
            f"`{argument}` must be 1-{limits.display_name_chars} printable characters",
            hint="choose a shorter plain name",
        )
    return name


def _folder_view(folder: Folder) -> dict[str, Any]:
    view: dict[str, Any] = {"id": str(folder.ref), "name": folder.name}
    if folder.parent is not None:
        view["parent"] = str(folder.parent)
    return view


def _moved(new: Reference | None, message: Reference, folder: Folder) -> dict[str, Any]:
    return {"id": str(new or message), "folder": str(folder.ref)}


async def freeze_unchanged(
    backend: MailBackend, draft: Reference, source_digest: str, *, consequence: str, hint: str
) -> FrozenOutgoing:
    """Freeze a draft that must still be what the caller read (its ``source_digest``);
    a stale digest is a ``conflict`` that says what was not done (``consequence``)."""
    frozen = await backend.freeze(draft)
    if not hmac.compare_digest(frozen.digest, source_digest):
        raise Conflict(
            f"the draft changed since it was read (source_digest differs); {consequence}",
            hint=hint,
            details={"current_digest": frozen.digest},
        )
    return frozen


# --- mail_create ---------------------------------------------------------------------


async def create_folder(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    name = _display_name(arguments["name"], "name", ctx.limits)
    parent = (
        await destination(backend, arguments["parent"], "parent") if "parent" in arguments else None
    )
    return {"created": _folder_view(await backend.create_folder(parent, name))}


async def copy_message(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    if not backend.capabilities.copy:
        raise unsupported("this account's provider cannot copy messages", "move it instead")
    message = message_ref(backend, arguments, "message_id")
    target = await destination(backend, arguments["destination"], "destination")
    return {"copied": _moved(await backend.copy(message, target), message, target)}


async def new_draft(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    draft_content(arguments, ctx.limits)  # every field checked before any request
    attachments = await attachments_of(backend, arguments.get("attachments", []), ctx.limits)
    made = await backend.create_draft(draft_content(arguments, ctx.limits, attachments))
    draft: dict[str, Any] = {"id": str(made.ref), "attachments": len(attachments)}
    if made.attached:
        draft["attached"] = attached_view(made.attached)
    return {"draft": draft}


async def revise_draft(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    """A revised copy of a draft read just now; a stale digest writes nothing."""
    draft = message_ref(backend, arguments, "message_id")
    changed = frozenset(
        "text" if name == "html" else name for name in DRAFT_FIELDS if name in arguments
    )
    draft_content(arguments, ctx.limits)
    replaced = (
        await attachments_of(backend, arguments["attachments"], ctx.limits)
        if "attachments" in arguments
        else None
    )
    source = await freeze_unchanged(
        backend,
        draft,
        arguments["source_digest"],
        consequence="nothing was written",
        hint="read the draft again (mail_review draft) and decide on the new content",
    )
    content = draft_content(arguments, ctx.limits, replaced or ())
    made = await backend.revise_draft(draft, DraftRevision(content, changed))
    kept = len(source.record["attachments"]) if replaced is None else len(replaced)
    revision: dict[str, Any] = {"id": str(made.ref), "attachments": kept}
    if made.attached:
        revision["attached"] = attached_view(made.attached)
    return {
        "revision": revision,
        "source": {"id": str(draft), "source_digest": source.digest},
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
            "attachments": ATTACHMENT_ITEMS,
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

FLAG_STATES = ("flagged", "none", "done")


async def set_flags(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Read state, follow-up flag and categories; ``unchanged_since`` guards with the
    message's change token (``change_token`` of a full read)."""
    changes = {"read", "flag", "categories_add", "categories_remove"} & set(arguments)
    if not changes:
        raise WriteError(
            "invalid_arguments",
            "`flags` needs at least one of read, flag, categories_add, categories_remove",
            hint="say what to change",
        )
    message = message_ref(backend, arguments, "message_id")
    capabilities = backend.capabilities
    if "unchanged_since" in arguments and not capabilities.conditional_flags:
        raise unsupported(
            "this account's provider cannot make a change only if the message is unchanged "
            "(`unchanged_since`)",
            "drop `unchanged_since`, or read the message again just before changing it",
        )
    if changes & {"categories_add", "categories_remove"} and not capabilities.categories:
        raise unsupported("this account's provider has no categories", "change read or flag only")
    change = FlagChange(
        unread=None if "read" not in arguments else not arguments["read"],
        flag=arguments.get("flag"),
        add_categories=tuple(arguments.get("categories_add", ())),
        remove_categories=tuple(arguments.get("categories_remove", ())),
        unchanged_since=arguments.get("unchanged_since"),
    )
    summary = await backend.set_flags(message, change)
    if summary is None:
        return {"updated": {"id": str(message)}}
    updated: dict[str, Any] = {
        "id": str(summary.ref),
        "read": not summary.unread,
        "flag": summary.flag,
        "categories": list(summary.categories),
    }
    if summary.change_token is not None:
        updated["change_token"] = summary.change_token
    return {"updated": updated}


async def move_message(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    if not backend.capabilities.move:
        raise unsupported("this account's provider cannot move messages", "copy it instead")
    message = message_ref(backend, arguments, "message_id")
    target = await destination(backend, arguments["destination"], "destination")
    return {"moved": _moved(await backend.move(message, target), message, target)}


async def trash_message(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    message = message_ref(backend, arguments, "message_id")
    return {"trashed": {"id": str(await backend.trash(message) or message)}}


async def rename_folder(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, arguments: dict[str, Any]
) -> dict[str, Any]:
    name = _display_name(arguments["name"], "name", ctx.limits)
    folder = await backend.resolve_folder(arguments["folder"], "folder")
    folder = await backend.classify_folder(folder)
    check_renamable(folder)
    return {"renamed": _folder_view(await backend.rename_folder(folder, name))}


MAIL_MODIFY = Tool(
    name="mail_modify",
    title="Change mail",
    description=(
        "flags: message_id,read,flag,categories_add/remove,unchanged_since (change_token). "
        "move: message_id,destination. rename: folder,name. trash: message_id."
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
            "folder": STR,
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
            "rename": Action(("folder", "name"), (), rename_folder),
            "trash": Action(("message_id",), (), trash_message),
        },
    ),
    annotations=dict(DESTRUCTIVE),
)


# --- mail_delete_permanently ---------------------------------------------------------


def _iso(value: Any) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


async def delete_permanently(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Exactly that message, for good, echoing what was deleted; the person confirms where
    the client can ask."""
    setup = open_setup(ctx.writes, "mail_delete_permanently", "delete")
    if not setup.gates.writes:
        open_setup(ctx.writes, "mail_delete_permanently", "writes")
    try:
        backend = mail_of(ctx, arguments)
        message = message_ref(backend, arguments, "message_id")
        capabilities = backend.capabilities
        if not capabilities.permanent_delete:
            why = dict(capabilities.missing).get("permanent_delete")
            raise unsupported(
                why or "permanent deletion is not offered for this account",
                "use mail_modify trash (to Deleted Items) instead",
            )
        await require_permissions(ctx, setup, backend, "delete")
        item = await backend.read(message, ReadRequest(with_body=False))
        sender = item.sender.address if item.sender is not None else None
        received = _iso(item.received)

        async def question() -> Question:
            return delete_question(item.subject, sender, received, str(message))

        confirmed_by = await confirm_with_person(
            setup.confirm,
            "mail_delete_permanently",
            arguments,
            question,
            now=setup.clock(),
            limits=ctx.limits,
            consequence="nothing was deleted",
        )
        await backend.delete_permanently(message)
    except ToolError as error:
        raise as_write_error(error) from None
    return {
        "deleted": {
            "id": str(item.ref),
            "subject": item.subject,
            "from": sender,
            "received": received,
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
