"""What every acting tool does before its first request, and how its failures read.

Order: the gate (a hidden tool can still be called by name), the chosen action's own
fields (unknown, irrelevant or missing ones fail here; nulls already failed the schema),
the token's permissions, then the work. Any failure becomes a ``WriteError`` with a
stable ``error_code``; a multi-request operation reports what it did and did not do.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from mfconnector.errors import ToolError
from mfconnector.graph.folders import GRAPH_WELL_KNOWN_FOLDERS
from mfconnector.limits import Limits
from mfconnector.tools.attachment_sources import check_entries
from mfconnector.tools.base import ToolContext
from mfconnector.tools.mailbox import MIN_FOLDER_ID_CHARS, mailbox_of, resolve_folder
from mfconnector.writes.errors import WriteError, as_write_error
from mfconnector.writes.setup import WriteSetup, require_scopes, setup_of

__all__ = [
    "ACTING",
    "DESTRUCTIVE",
    "SENDING",
    "Action",
    "Progress",
    "acting_handler",
    "check_id",
    "check_shapes",
    "folder_argument",
    "folder_target",
]

ACTING: dict[str, Any] = {"destructiveHint": False, "openWorldHint": False}
"""Not read-only, not destructive, not idempotent, not open world. MCP's defaults are
readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true, so only
the hints that differ are sent (the discovery budget counts every byte)."""
DESTRUCTIVE: dict[str, Any] = {"openWorldHint": False}
SENDING: dict[str, Any] = {}
"""Destructive and open world: every hint is MCP's default."""
_ID = re.compile(r"^[A-Za-z0-9_=+/!.-]{1,1024}$")
MIN_ID_CHARS = 16
"""Outlook ids are long; a short word that is not a well-known name is a typo."""


@dataclass(frozen=True)
class Action:
    """One action: the fields it needs, the fields it may take, and the work."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    run: Callable[[ToolContext, WriteSetup, dict[str, Any], Progress], Awaitable[dict[str, Any]]]
    scopes: tuple[str, ...] = ("Mail.ReadWrite",)


@dataclass
class Progress:
    """What a multi-request operation has done so far, for a partial outcome."""

    done: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    writing: bool = False
    """True while a request that may change the mailbox is in flight."""

    def plan(self, *steps: str) -> None:
        self.pending = list(steps)

    def did(self, step: str, **facts: Any) -> None:
        self.done.append(step)
        if step in self.pending:
            self.pending.remove(step)
        self.facts.update(facts)

    def outcome(self) -> dict[str, Any] | None:
        if not self.done:
            return None
        return {"done": list(self.done), "not_done": list(self.pending), **self.facts}


def _field_error(message: str, hint: str) -> WriteError:
    return WriteError("invalid_arguments", message, hint=hint)


def check_fields(name: str, arguments: Mapping[str, Any], actions: Mapping[str, Action]) -> Action:
    """The chosen action, once its arguments are exactly its own."""
    action_name = arguments.get("action")
    key = action_name if isinstance(action_name, str) else ""
    action = actions.get(key)
    if action is None:
        raise _field_error(
            f"{name} needs `action`, one of {', '.join(actions)}", "add the action and call again"
        )
    allowed = {"action", *action.required, *action.optional}
    extra = sorted(set(arguments) - allowed)
    if extra:
        raise _field_error(
            f"`{key}` does not take {', '.join(f'`{e}`' for e in extra)}; nothing was done",
            f"`{key}` takes: {', '.join(sorted(allowed - {'action'}))}",
        )
    missing = [f for f in action.required if f not in arguments]
    if missing:
        raise _field_error(
            f"`{key}` needs {', '.join(f'`{m}`' for m in missing)}; nothing was done",
            f"`{key}` takes: {', '.join(sorted(allowed - {'action'}))}",
        )
    return action


_HEX = {"source_digest": 64, "confirmed_digest": 64, "prepared_id": 32}
_STRING_LISTS = ("categories_add", "categories_remove")
"""Recipient lists (to, cc, bcc) are checked item by item by ``writes.outgoing``."""


def check_shapes(arguments: Mapping[str, Any], limits: Limits) -> None:
    """What the compact schemas leave to code: list items, attachment objects, hex ids."""
    for name, digits in _HEX.items():
        value = arguments.get(name)
        if value is not None and not re.fullmatch(f"[0-9a-f]{{{digits}}}", value):
            raise _field_error(
                f"`{name}` must be {digits} lowercase hex digits",
                "pass it exactly as the previous result gave it",
            )
    for name in _STRING_LISTS:
        for index, item in enumerate(arguments.get(name, ())):
            if not isinstance(item, str) or not 0 < len(item) <= limits.action_list_item_chars:
                raise _field_error(
                    f"`{name}[{index}]` must be a non-empty string of at most "
                    f"{limits.action_list_item_chars} characters",
                    "pass plain strings",
                )
    if "attachments" in arguments:
        check_entries(arguments["attachments"], limits)


def acting_handler(
    name: str, gate: str, actions: Mapping[str, Action]
) -> Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The tool handler: gate, fields, scopes, then the action; failures classified."""

    async def handle(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        setup = setup_of(ctx, name, gate)
        action = check_fields(name, arguments, actions)
        check_shapes(arguments, ctx.limits)
        await require_scopes(ctx, setup, action.scopes)
        progress = Progress()
        try:
            return await action.run(ctx, setup, arguments, progress)
        except ToolError as error:
            raise as_write_error(
                error, writing=progress.writing, outcome=progress.outcome()
            ) from None

    return handle


def check_id(value: str, argument: str) -> str:
    """An Outlook message or folder id as given by a previous result."""
    if len(value) < MIN_ID_CHARS or not _ID.match(value):
        raise _field_error(
            f"`{argument}` is not an Outlook id: {value[:40]!r}",
            "pass an id exactly as mail_list, mail_search or mail_folders gave it",
        )
    return value


def folder_target(value: str, argument: str) -> str:
    """A folder id or a well-known folder name (lowercased), for destinations."""
    if value.lower() in GRAPH_WELL_KNOWN_FOLDERS:
        return value.lower()
    return check_id(value, argument)


async def folder_argument(ctx: ToolContext, value: str, argument: str) -> str:
    """A folder as the read tools take it: well-known name, id, display name or path
    (``Projects/Contoso``), resolved the way the read tools resolve it; returns the
    well-known name or the folder's id, unquoted (for a request body)."""
    if value.lower() in GRAPH_WELL_KNOWN_FOLDERS or (
        len(value) >= MIN_FOLDER_ID_CHARS and _ID.match(value)
    ):
        return folder_target(value, argument)
    segment = await resolve_folder(ctx, mailbox_of(ctx, {}), value, argument)
    return unquote(segment)
