"""What the acting tools share in one process: gates, the state store, the cloud, caches.

Also the checks every acting call makes before its first Graph request: the gate (a
hidden tool can still be called by name), then the token's permissions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mfconnector.writes.errors import WriteError
from mfconnector.writes.gates import GATES, Gates
from mfconnector.writes.store import AsyncSendStore, StateStoreError

if TYPE_CHECKING:
    from mfconnector.tools.base import ToolContext

__all__ = ["WriteSetup", "account_of", "gate_error", "require_scopes", "setup_of", "state_error"]


@dataclass
class WriteSetup:
    gates: Gates
    store: AsyncSendStore
    cloud: str = "global"
    clock: Callable[[], float] = time.time
    mailbox_address: dict[str, str] | None = None
    well_known_folder_ids: dict[str, str] = field(default_factory=dict)
    confirm: str = "auto"
    """Who confirms sends and permanent deletions (``writes.confirm``): auto, user, assistant."""


def gate_error(tool: str, gate: str) -> WriteError:
    """What a call to a tool whose gate is off answers (before anything else)."""
    switch = GATES[gate]
    needs = " and --enable-writes" if gate == "delete" else ""
    return WriteError(
        "gate_disabled",
        f"{tool} is turned off on this server",
        hint=f"the operator can turn it on with {switch.flag}{needs} (or {switch.env}=1) "
        "and restart the server",
    )


def setup_of(ctx: ToolContext, tool: str, gate: str) -> WriteSetup:
    setup = ctx.writes
    if setup is None or not setup.gates.on(gate):
        raise gate_error(tool, gate)
    return setup


def _short(scope: str) -> str:
    return scope.rsplit("/", 1)[-1].lower()


async def require_scopes(ctx: ToolContext, setup: WriteSetup, needed: tuple[str, ...]) -> None:
    """Refuse before any request when the signed-in token lacks a needed permission.

    Only a token that reports its scopes can be checked (delegated sign-in does; app-only
    permissions are granted in the portal and show up as 403s instead).
    """
    facts: dict[str, Any] = await ctx.token_provider.describe()
    granted = facts.get("scopes")
    if not isinstance(granted, list) or not granted or facts.get("mode") == "app-only":
        return
    have = {_short(str(s)) for s in granted}
    missing = [s for s in needed if _short(s) not in have]
    if missing:
        raise WriteError(
            "insufficient_scope",
            f"the signed-in token lacks {', '.join(missing)}; nothing was requested",
            hint=f"run `{setup.gates.login_command()}` in a terminal to consent, then call again",
            details={"missing_scopes": missing},
        )


async def account_of(ctx: ToolContext) -> str:
    """Who a preparation belongs to: the signed-in account as the token provider names it."""
    facts: dict[str, Any] = await ctx.token_provider.describe()
    return str(facts.get("account") or "unknown account")


def state_error(error: StateStoreError) -> WriteError:
    return WriteError("state_unavailable", error.message, hint=error.hint)
