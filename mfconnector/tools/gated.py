"""Which tools a server lists, given the operator's gates and what its accounts' backends
can do, and what the hidden ones answer.

The read tools are always listed. Each acting tool is listed only when its gate is on; a
call to a hidden one by name answers ``gate_disabled`` naming the flag that turns it on.
A tool no account's backend can honour (``mail_delete_permanently`` where no provider
deletes permanently, the files tools where no account has files) is not offered either,
and a call to it is ``unsupported``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mfconnector.errors import ToolError
from mfconnector.mail.backend import MailCapabilities
from mfconnector.mail.failures import Unsupported
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import Tool
from mfconnector.tools.files import FILES_TOOL_NAMES
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


NEEDS: dict[str, str] = {"mail_delete_permanently": "permanent_delete"}
"""Acting tools that need a capability of some account's backend (``MailCapabilities``)."""


def _honoured(tool: Tool, capabilities: Sequence[MailCapabilities] | None) -> bool:
    need = NEEDS.get(tool.name)
    if need is None or capabilities is None:
        return True
    return any(getattr(c, need) for c in capabilities)


def _no_files(tool: str) -> Unsupported:
    return Unsupported(
        f"{tool} is not offered: no account of this server has files (OneDrive, SharePoint); "
        "nothing was requested",
        hint="the files tools read Microsoft 365 accounts",
    )


def listed_tools(
    gates: Gates, capabilities: Sequence[MailCapabilities] | None = None, *, files: bool = True
) -> tuple[Tool, ...]:
    """The read tools (the files tools when some account has ``files``), then each acting
    tool whose gate is on and that some account's backend can honour (``capabilities``:
    one per account; None: not considered)."""
    reads = tuple(t for t in ALL_TOOLS if files or t.name not in FILES_TOOL_NAMES)
    gated = tuple(
        tool
        for tool, names in GATED_TOOLS
        if any(gates.on(n) for n in names) and _honoured(tool, capabilities)
    )
    return (*reads, *gated)


def hidden_tools(
    gates: Gates, capabilities: Sequence[MailCapabilities] | None = None, *, files: bool = True
) -> dict[str, ToolError]:
    """What a call to each hidden tool answers, by name."""
    hidden: dict[str, ToolError] = {} if files else {n: _no_files(n) for n in FILES_TOOL_NAMES}
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
