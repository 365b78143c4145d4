"""Which tools a server lists, given the operator's gates, and what the hidden ones answer.

The read tools are always listed. Each acting tool is listed only when its gate is on; a
call to a hidden one by name answers ``gate_disabled`` naming the flag that turns it on.
"""

from __future__ import annotations

import dataclasses

from mfconnector.errors import ToolError
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import Tool
from mfconnector.tools.mail_write import MAIL_CREATE, MAIL_DELETE_PERMANENTLY, MAIL_MODIFY
from mfconnector.tools.send import MAIL_PREPARE, MAIL_REVIEW, MAIL_SEND_CONFIRMED
from mfconnector.writes.audit import audited, hinted
from mfconnector.writes.gates import Gates
from mfconnector.writes.setup import gate_error

__all__ = ["GATED_TOOLS", "hidden_tools", "listed_tools"]


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


def listed_tools(gates: Gates) -> tuple[Tool, ...]:
    """The read tools, then each acting tool whose gate is on, in a fixed order."""
    gated = tuple(tool for tool, names in GATED_TOOLS if any(gates.on(n) for n in names))
    return (*ALL_TOOLS, *gated)


def hidden_tools(gates: Gates) -> dict[str, ToolError]:
    """What a call to each hidden acting tool answers, by name."""
    return {
        tool.name: gate_error(tool.name, names[0])
        for tool, names in GATED_TOOLS
        if not any(gates.on(n) for n in names)
    }
