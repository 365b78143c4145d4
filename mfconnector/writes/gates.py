"""The operator's switches for acting on mail: three risk classes, all off by default.

A gate never grants a permission and a permission never opens a gate: what each provider's
sign-in must grant for a gate is the backend's (``graph.scopes`` for Microsoft Graph), and
the server refuses a gated tool before any request when the sign-in lacks it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass

from mfconnector.errors import AuthError

__all__ = [
    "GATES",
    "Gate",
    "GateConfigError",
    "Gates",
    "add_gate_arguments",
    "gates_from_args",
]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True, slots=True)
class Gate:
    name: str
    flag: str
    env: str


GATES: Mapping[str, Gate] = {
    "writes": Gate("writes", "--enable-writes", "MFC_ENABLE_WRITES"),
    "send": Gate("send", "--enable-send", "MFC_ENABLE_SEND"),
    "delete": Gate("delete", "--enable-delete", "MFC_ENABLE_DELETE"),
}


class GateConfigError(AuthError):
    """Switches that cannot work together; the hint says what to change."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code="config")


@dataclass(frozen=True, slots=True)
class Gates:
    """Which risk classes the operator turned on for this process."""

    writes: bool = False
    send: bool = False
    delete: bool = False

    def on(self, name: str) -> bool:
        return bool(getattr(self, name))

    @property
    def any(self) -> bool:
        return self.writes or self.send or self.delete

    @property
    def names(self) -> tuple[str, ...]:
        """The open gates, in a fixed order."""
        return tuple(gate.name for gate in GATES.values() if self.on(gate.name))

    def login_command(self) -> str:
        """The command that consents to exactly what these gates need."""
        flags = [gate.flag for gate in GATES.values() if self.on(gate.name)]
        return " ".join(["mfconnector login", *flags])


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The three switches; absent flags set nothing, so the environment can decide."""
    group = parser.add_argument_group("acting on mail (all off by default)")
    helps = {
        "writes": "turn on mail_create, mail_modify and mail_review (asks for Mail.ReadWrite "
        "at login)",
        "send": "turn on mail_prepare, mail_send_confirmed and mail_review (asks for Mail.Send "
        "at login)",
        "delete": "turn on mail_delete_permanently (needs --enable-writes)",
    }
    for gate in GATES.values():
        group.add_argument(
            gate.flag,
            dest=f"gate_{gate.name}",
            action="store_true",
            default=argparse.SUPPRESS,
            help=f"{helps[gate.name]} [{gate.env}=1]",
        )


def _env_switch(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name)
    if raw is None:
        return False
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise GateConfigError(f"{name} must be 1 or 0, not {raw[:20]!r}")


def gates_from_args(args: argparse.Namespace, env: Mapping[str, str] = os.environ) -> Gates:
    """Flags first, then ``MFC_ENABLE_*``; delete without writes is refused."""
    values = {
        gate.name: bool(getattr(args, f"gate_{gate.name}", False)) or _env_switch(env, gate.env)
        for gate in GATES.values()
    }
    gates = Gates(**values)
    if gates.delete and not gates.writes:
        raise GateConfigError(
            "--enable-delete needs --enable-writes as well",
            hint="add --enable-writes (or MFC_ENABLE_WRITES=1), or drop --enable-delete",
        )
    return gates
