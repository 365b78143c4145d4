"""The Microsoft Graph delegated permissions each acting gate needs.

A gate never grants a permission and a permission never opens a gate: ``login`` asks for
these only when the matching gate is on, and the Graph backend refuses an acting call
before any request when the signed-in token lacks one (``missing_scopes``).
Microsoft Learn, "Microsoft Graph permissions reference": Mail.ReadWrite, Mail.Send.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["GATE_SCOPES", "READ_WRITE", "SEND", "missing_scopes", "scopes_for"]

READ_WRITE = "Mail.ReadWrite"
SEND = "Mail.Send"
GATE_SCOPES: Mapping[str, tuple[str, ...]] = {
    "writes": (READ_WRITE,),
    "send": (READ_WRITE, SEND),
    "send_confirmed": (SEND,),
    "delete": (READ_WRITE,),
}
"""``send_confirmed``: the send itself needs only Mail.Send (the draft exists already)."""


def scopes_for(gates: Iterable[str]) -> tuple[str, ...]:
    """The permissions the open gates need, beyond the read-only ones, in a stable order."""
    needed: list[str] = []
    for gate in gates:
        needed += [s for s in GATE_SCOPES.get(gate, ()) if s not in needed]
    return tuple(needed)


def _short(scope: str) -> str:
    return scope.rsplit("/", 1)[-1].lower()


def missing_scopes(facts: Mapping[str, Any], gate: str) -> Sequence[str]:
    """What a token that reports its scopes (delegated sign-in) lacks for ``gate``.

    App-only permissions are granted in the portal and show up as 403s instead, so a token
    that names no scopes is not refused here."""
    granted = facts.get("scopes")
    if not isinstance(granted, list) or not granted or facts.get("mode") == "app-only":
        return ()
    have = {_short(str(s)) for s in granted}
    return [s for s in GATE_SCOPES[gate] if _short(s) not in have]
