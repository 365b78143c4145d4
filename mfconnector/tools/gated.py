"""Which tools a server lists, given the operator's gates and what its accounts' backends
can do, and what the hidden ones answer.

The read tools are always listed. Each acting tool is listed only when its gate is on; a
call to a hidden one by name answers ``gate_disabled`` naming the flag that turns it on.
A tool no account's backend can honour (``mail_delete_permanently`` where no provider
deletes permanently) is not offered either, and a call to it is ``unsupported``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mfconnector.errors import ToolError
from mfconnector.mail.backend import MailCapabilities
from mfconnector.mail.failures import Unsupported
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import Tool
from mfconnector.tools.mail_write import MAIL_CREATE, MAIL_DELETE_PERMANENTLY, MAIL_MODIFY
from mfconnector.tools.send import MAIL_PREPARE, MAIL_REVIEW, MAIL_SEND_CONFIRMED
from mfconnector.writes.audit import audited, hinted
from mfconnector.writes.gates import Gates
from mfconnector.writes.setup import gate_error

__all__ = ["GATED_TOOLS", "hidden_tools", "instructions", "listed_tools"]


def _audited(tool: Tool) -> Tool:
    """The tool with every call recorded (``writes.audit``)."""
    return dataclasses.replace(tool, handler=audited(tool.name, tool.handler))


GATED_TOOLS: tuple[tuple[Tool, tuple[str, ...]], ...] = (
    (dataclasses.replace(MAIL_REVIEW, handler=hinted(MAIL_REVIEW.handler)), ("writes", "send")),
    (_audited(MAIL_CREATE), ("writes",)),
    (_audited(MAIL_MODIFY), ("writes",)),
    (_audited(MAIL_DELETE_PERMANENTLY), ("delete",)),
    (_audited(MAIL_PREPARE), ("send",)),
    (_audited(MAIL_SEND_CONFIRMED), ("send",)),
)
"""Each acting tool and the gates of which any one lists it; every call of the tools that
act is audited."""


NEEDS: dict[str, str] = {"mail_delete_permanently": "permanent_delete"}
"""Acting tools that need a capability of some account's backend (``MailCapabilities``)."""


def _honoured(tool: Tool, capabilities: Sequence[MailCapabilities] | None) -> bool:
    need = NEEDS.get(tool.name)
    if need is None or capabilities is None:
        return True
    return any(getattr(c, need) for c in capabilities)


def listed_tools(
    gates: Gates, capabilities: Sequence[MailCapabilities] | None = None
) -> tuple[Tool, ...]:
    """The read tools, then each acting tool whose gate is on and that some account's
    backend can honour (``capabilities``: one per account; None: not considered)."""
    gated = tuple(
        tool
        for tool, names in GATED_TOOLS
        if any(gates.on(n) for n in names) and _honoured(tool, capabilities)
    )
    return (*ALL_TOOLS, *gated)


def hidden_tools(
    gates: Gates, capabilities: Sequence[MailCapabilities] | None = None
) -> dict[str, ToolError]:
    """What a call to each hidden acting tool answers, by name."""
    hidden: dict[str, ToolError] = {}
    for tool, names in GATED_TOOLS:
        if not any(gates.on(n) for n in names):
            hidden[tool.name] = gate_error(tool.name, names[0])
        elif not _honoured(tool, capabilities):
            reasons = [dict(c.missing).get(NEEDS[tool.name]) for c in capabilities or ()]
            why = next((r for r in reasons if r), "no account of this server can do it")
            hidden[tool.name] = Unsupported(
                f"{tool.name} is not offered: {why}; nothing was requested",
                hint="use mail_modify trash (to Deleted Items) instead",
            )
    return hidden


def instructions(gates: Gates) -> str:
    """The server's instructions: read-only by default, and how to act when a gate is on."""
    from mfconnector.server import INSTRUCTIONS

    if not gates.any:
        return INSTRUCTIONS
    text = INSTRUCTIONS.replace("Read-only access", "Access", 1)
    text += (
        " The operator turned on tools that change the mailbox: use them only for what the "
        "user asked."
    )
    if gates.send:
        text += (
            " Before mail_send_confirmed, show the user the complete mail_prepare preview "
            "(recipients including Bcc, subject, text, attachments) and send only after they "
            "approve that exact message; never call it again after an unclear outcome. "
            "Where the client can ask, the server also asks the user itself before sending, "
            "and acts only on their own answer; show them the preview's "
            "warnings (look-alike addresses, hidden characters)."
        )
    return text
