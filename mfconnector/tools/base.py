"""What a tool is, what it gets to work with, and how its answer becomes a CallToolResult."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mfconnector.errors import ToolError
from mfconnector.jsonrpc import encode_json
from mfconnector.limits import Limits
from mfconnector.tools.state import ReadState

if TYPE_CHECKING:
    from mfconnector.auth import TokenProvider
    from mfconnector.graph.client import GraphClient

__all__ = [
    "READ_ONLY",
    "Tool",
    "ToolContext",
    "error_result",
    "success_result",
    "wire_bytes",
]

READ_ONLY: dict[str, Any] = {"readOnlyHint": True}
"""All a read tool needs to say: MCP reads destructiveHint and idempotentHint only when
readOnlyHint is false, and openWorldHint defaults to true. Every byte here is paid on
every tools/list, once per tool."""

GraphFactory = Callable[[], Awaitable["GraphClient"]]


@dataclass
class ToolContext:
    """Everything a handler may use. Built once by the CLI; handlers never see stdio."""

    limits: Limits
    mode: str
    allow_partial: bool
    token_provider: TokenProvider
    graph_factory: GraphFactory
    user_path: str = "/me"
    source: str | None = None
    mailbox: str | None = None
    """``--mailbox``: the shared or delegated mailbox read when a call names none."""
    time_zone: str | None = None
    """``--time-zone``: shown and filtered in this zone instead of the mailbox's own."""
    all_files: bool = False
    """``--all-files``: Files.Read.All and Sites.Read.All, so other drives can be read."""
    state: ReadState = field(default_factory=ReadState)

    async def graph(self) -> GraphClient:
        return await self.graph_factory()


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    """One read-only tool: its published contract and the handler that fulfils it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    handler: Handler
    annotations: dict[str, Any] = field(default_factory=lambda: dict(READ_ONLY))

    def definition(self) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list``; identical in every era (26/tools)."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        }


def _text(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def wire_bytes(payload: Any) -> int:
    """What ``payload`` costs in a reply: as structured content and again as its text copy.

    Both are ASCII-escaped on the wire; the copy is a JSON string, so its quotes and
    backslashes are escaped once more (a subject of 1,000 quotes costs 2,000 bytes there).
    """
    return len(encode_json(payload)) + len(encode_json(_text(payload)))


def success_result(structured: dict[str, Any], *, allow_partial: bool) -> dict[str, Any]:
    """Structured data twice (object and JSON text); incomplete data is an error unless allowed."""
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": _text(structured)}],
        "structuredContent": structured,
    }
    if structured.get("incomplete") is True:
        result["isError"] = not allow_partial
    else:
        result["isError"] = False
    return result


def error_result(error: ToolError) -> dict[str, Any]:
    """A failure the assistant can act on: what happened and what to do, no structured data."""
    return {
        "content": [{"type": "text", "text": _text({"error": error.to_payload()})}],
        "isError": True,
    }
