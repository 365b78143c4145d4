"""The audit trail: one record per acting call, on stderr and in the state store.

Each call to an acting tool (mail_create, mail_modify, mail_delete_permanently,
mail_prepare, mail_send_confirmed) leaves one log line at ``info`` on the
``mfconnector.audit`` logger (stderr, never stdout) and the same entry in the state file
for the outcome retention period, which ``mail_review recent`` reads back. An entry holds
the tool, the action, the target id, what was made (a draft or preparation id) and the
outcome (the result's status, ``ok``, or the error code); never a body, a subject, an
address or a token. Ids come from the caller, so the log line is JSON (control characters
escaped) and each one is cut to ``AUDIT_ID_CHARS``.

The same wrapper gives ``auth_required`` and ``insufficient_scope`` one hint that names
the sign-in command with every gate in force, whichever layer raised them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from mfconnector.errors import ToolError
from mfconnector.writes.setup import WriteSetup
from mfconnector.writes.store import StateStoreError

__all__ = ["AUDIT_ID_CHARS", "ActingContext", "audited", "hinted", "login_hint"]


class _Tokens(Protocol):
    async def describe(self) -> dict[str, Any]: ...


class ActingContext(Protocol):
    """What the audit reads of a tool's context (``tools.base.ToolContext`` is one)."""

    @property
    def writes(self) -> WriteSetup | None: ...

    @property
    def sign_in(self) -> _Tokens: ...

    @property
    def user_path(self) -> str: ...


C = TypeVar("C", bound=ActingContext)
Handler = Callable[[C, dict[str, Any]], Awaitable[dict[str, Any]]]
AUDIT_ID_CHARS = 200
"""Longest id kept in an audit entry (Outlook ids are about 150 characters)."""
TARGETS = ("message_id", "prepared_id", "folder", "destination", "parent", "name")
"""Arguments that name what a call acts on, first match wins (``name``: a new folder)."""
MADE = ("draft", "revision", "copied", "moved", "trashed", "created", "renamed", "deleted")
log = logging.getLogger("mfconnector.audit")


def login_hint(error: ToolError, ctx: ActingContext) -> None:
    """Point a sign-in failure at the command that consents to every open gate."""
    code = getattr(error, "error_code", None)
    if ctx.writes is None or code not in ("auth_required", "insufficient_scope"):
        return
    command = ctx.writes.gates.login_command()
    error.hint = f"run `{command}` in a terminal to sign in and consent, then call again"


def _short(value: Any) -> str | None:
    return value[:AUDIT_ID_CHARS] if isinstance(value, str) else None


def _entry(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"tool": tool}
    action = _short(arguments.get("action"))
    if action is not None:
        entry["action"] = action
    for key in TARGETS:
        if isinstance(arguments.get(key), str):
            entry["target"] = _short(arguments[key])
            break
    return entry


def _made(result: dict[str, Any]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for key in ("prepared_id", "draft_id"):
        if isinstance(result.get(key), str):
            facts[key] = _short(result[key])
    message = result.get("message")
    if "draft_id" not in facts and isinstance(message, dict) and "id" in message:
        facts["draft_id"] = _short(message["id"])
    for key in MADE:
        value = result.get(key)
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            facts["made"] = _short(value["id"])
            break
    return facts


async def _keep(ctx: ActingContext, entry: dict[str, Any]) -> None:
    log.info("acting call %s", json.dumps(entry, ensure_ascii=True, sort_keys=True))
    setup = ctx.writes
    if setup is None:
        return
    try:
        facts = await ctx.sign_in.describe()
        account = str(facts.get("account") or "unknown account")
        await setup.store.record(account, ctx.user_path, entry)
    except (StateStoreError, ToolError) as error:
        log.warning("the audit entry could not be kept in the state file: %s", error)


def audited(tool: str, handler: Handler[C]) -> Handler[C]:
    """``handler`` with its call and outcome recorded, and sign-in hints made whole."""

    async def handle(ctx: C, arguments: dict[str, Any]) -> dict[str, Any]:
        entry = _entry(tool, arguments)
        try:
            result = await handler(ctx, arguments)
        except ToolError as error:
            login_hint(error, ctx)
            entry["outcome"] = str(error.error_code)
            outcome = getattr(error, "outcome", None)
            if isinstance(outcome, dict):
                entry.update(_made(outcome))
                if isinstance(outcome.get("status"), str):
                    entry["status"] = outcome["status"]
            await _keep(ctx, entry)
            raise
        status = result.get("status")
        entry["outcome"] = status if isinstance(status, str) else "ok"
        entry.update(_made(result))
        await _keep(ctx, entry)
        return result

    return handle


def hinted(handler: Handler[C]) -> Handler[C]:
    """``handler`` with sign-in hints made whole (for ``mail_review``, which acts on nothing)."""

    async def handle(ctx: C, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return await handler(ctx, arguments)
        except ToolError as error:
            login_hint(error, ctx)
            raise

    return handle
