"""What the acting tools share in one process: gates, the state store, who confirms.

Also the first check every acting call makes, before anything else: the gate (a hidden
tool can still be called by name).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mfconnector.writes.errors import WriteError
from mfconnector.writes.gates import GATES, Gates
from mfconnector.writes.store import AsyncSendStore, StateStoreError

__all__ = ["WriteSetup", "gate_error", "open_setup", "state_error"]


@dataclass
class WriteSetup:
    gates: Gates
    store: AsyncSendStore
    cloud: str = "global"
    """The Microsoft cloud (the wiring gives the Graph backend its capabilities from it)."""
    clock: Callable[[], float] = time.time
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


def open_setup(setup: WriteSetup | None, tool: str, gate: str) -> WriteSetup:
    """``setup`` when ``gate`` is on in it; else the ``gate_disabled`` refusal."""
    if setup is None or not setup.gates.on(gate):
        raise gate_error(tool, gate)
    return setup


def state_error(error: StateStoreError) -> WriteError:
    return WriteError("state_unavailable", error.message, hint=error.hint)
