"""What every acting tool does before its first request, and how its failures read.

Order: the gate (a hidden tool can still be called by name), the chosen action's own
fields (unknown, irrelevant or missing ones fail here; nulls already failed the schema),
the shapes the compact schemas leave to code, every reference parsed against the call's
account (``stale_reference``), what the account's backend can do (``unsupported``), the
sign-in's permissions, then the work. Every failure has a stable ``error_code``; a
multi-request operation reports what it did and did not do (``outcome``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import ToolError
from mfconnector.limits import Limits
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.failures import Unsupported
from mfconnector.mail.model import Folder
from mfconnector.mail.refs import Reference, parse_reference
from mfconnector.tools.base import ToolContext
from mfconnector.tools.draft_input import check_entries
from mfconnector.writes.errors import WriteError, as_write_error
from mfconnector.writes.folder_policy import check_destination
from mfconnector.writes.setup import WriteSetup, open_setup

__all__ = [
    "ACTING",
    "DESTRUCTIVE",
    "SENDING",
    "Action",
    "acting_handler",
    "check_shapes",
    "destination",
    "mail_of",
    "message_ref",
    "require_permissions",
    "signed_in_account",
    "unsupported",
]

ACTING: dict[str, Any] = {"destructiveHint": False, "openWorldHint": False}
"""Not read-only, not destructive, not idempotent, not open world. MCP's defaults are
readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true, so only
the hints that differ are sent (the discovery budget counts every byte)."""
DESTRUCTIVE: dict[str, Any] = {"openWorldHint": False}
SENDING: dict[str, Any] = {}
"""Destructive and open world: every hint is MCP's default."""

Run = Callable[[ToolContext, WriteSetup, MailBackend, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Action:
    """One action: the fields it needs, the fields it may take, the work, and the gate
    whose permissions the sign-in must hold for it."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    run: Run
    permissions: str = "writes"


def _field_error(message: str, hint: str) -> WriteError:
    return WriteError("invalid_arguments", message, hint=hint)


def check_fields(name: str, arguments: Mapping[str, Any], actions: Mapping[str, Action]) -> Action:
    """The chosen action, once its arguments are exactly its own (and ``account``)."""
    action_name = arguments.get("action")
    key = action_name if isinstance(action_name, str) else ""
    action = actions.get(key)
    if action is None:
        raise _field_error(
            f"{name} needs `action`, one of {', '.join(actions)}", "add the action and call again"
        )
    allowed = {"action", "account", *action.required, *action.optional}
    extra = sorted(set(arguments) - allowed)
    if extra:
        raise _field_error(
            f"`{key}` does not take {', '.join(f'`{e}`' for e in extra)}; nothing was done",
            f"`{key}` takes: {', '.join(sorted(allowed - {'action', 'account'}))}",
        )
    missing = [f for f in action.required if f not in arguments]
    if missing:
        raise _field_error(
            f"`{key}` needs {', '.join(f'`{m}`' for m in missing)}; nothing was done",
            f"`{key}` takes: {', '.join(sorted(allowed - {'action', 'account'}))}",
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


def mail_of(ctx: ToolContext, arguments: Mapping[str, Any]) -> MailBackend:
    """The backend of the call's account, for its own mailbox (acting never reaches a
    shared mailbox named by ``--mailbox``)."""
    return ctx.account(dict(arguments)).mail


def unsupported(what: str, hint: str) -> Unsupported:
    return Unsupported(f"{what}; nothing was requested", hint=hint)


def message_ref(backend: MailBackend, arguments: Mapping[str, Any], argument: str) -> Reference:
    """A message reference of the call's account, parsed before any request."""
    return parse_reference(arguments[argument], backend.tag, argument)


async def destination(backend: MailBackend, value: str, argument: str) -> Folder:
    """A folder mail may be filed into, named as the read tools take folders (reference,
    role, name or path), with the role the provider states for it now."""
    folder = await backend.resolve_folder(value, argument)
    return check_destination(await backend.classify_folder(folder), argument)


async def require_permissions(
    ctx: ToolContext, setup: WriteSetup, backend: MailBackend, gate: str
) -> None:
    """Refuse before any request when the sign-in lacks what ``gate``'s actions need."""
    missing = list(await backend.missing_permissions(gate))
    if missing:
        raise WriteError(
            "insufficient_scope",
            f"the signed-in token lacks {', '.join(missing)}; nothing was requested",
            hint=f"run `{setup.gates.login_command()}` in a terminal to consent, then call again",
            details={"missing_scopes": missing},
        )


async def signed_in_account(ctx: ToolContext) -> str:
    """Who a preparation belongs to: the signed-in account as the token provider names it."""
    facts: dict[str, Any] = await ctx.sign_in.describe()
    return str(facts.get("account") or "unknown account")


def acting_handler(
    name: str, gate: str, actions: Mapping[str, Action]
) -> Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The tool handler: gate, fields, shapes, permissions, then the action."""

    async def handle(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        setup = open_setup(ctx.writes, name, gate)
        action = check_fields(name, arguments, actions)
        check_shapes(arguments, ctx.limits)
        try:
            backend = mail_of(ctx, arguments)
            await require_permissions(ctx, setup, backend, action.permissions)
            return await action.run(ctx, setup, backend, arguments)
        except ToolError as error:
            raise as_write_error(error) from None

    return handle
