"""Drive the real Runtime + McpServer over in-memory streams (no subprocess)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from mfconnector.auth import StaticTokenProvider
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.runtime import Runtime
from mfconnector.server import McpServer
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import Tool, ToolContext

MODERN = "2026-07-28"


def modern_meta(version: str = MODERN) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def request(
    request_id: Any, method: str, params: dict[str, Any] | None = None, *, modern: bool = True
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if modern:
        message["params"] = {"_meta": modern_meta(), **(params or {})}
    elif params is not None:
        message["params"] = params
    return message


def initialize(request_id: Any = 0, version: str = "2025-11-25") -> dict[str, Any]:
    return request(
        request_id,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
        modern=False,
    )


def slow_inbox_fixtures(delay_ms: int) -> bytes:
    """A fixture file whose inbox answers ``mail_list`` after ``delay_ms`` (``delayMs``)."""
    entry = {
        "request": {"method": "GET", "path": "/me/mailFolders/inbox/messages"},
        "response": {
            "delayMs": delay_ms,
            "json": {"value": [{"id": "AAMk-slow-1", "subject": "late"}]},
        },
    }
    return json.dumps({"responses": [entry]}).encode()


async def _no_graph() -> Any:
    raise AssertionError("this test does not use Graph")


def ref(native: str) -> str:
    """The reference the server hands out for a Graph id of its one account, ``default``."""
    from mfconnector.mail.refs import Reference, account_tag

    return str(Reference(account_tag("graph", "default"), native))


def graph_accounts(
    graph: Any, limits: Limits = DEFAULT_LIMITS, user_path: str = "/me", *, all_files: bool = False
) -> Any:
    """The one Graph account the CLI's wiring builds, around ``graph`` (a client factory);
    ``all_files``: other drives may be read (``--all-files``)."""
    from mfconnector.graph.mail_backend import graph_account
    from mfconnector.mail.accounts import AccountSet

    return AccountSet(
        [graph_account("default", graph, limits, own_path=user_path, all_files=all_files)]
    )


def plain_context(limits: Limits = DEFAULT_LIMITS, *, allow_partial: bool = False) -> ToolContext:
    return ToolContext(
        limits=limits,
        mode="live",
        allow_partial=allow_partial,
        sign_in=StaticTokenProvider(None),
        accounts=graph_accounts(_no_graph, limits),
    )


def client_context(
    client: Any,
    limits: Limits = DEFAULT_LIMITS,
    *,
    mode: str = "fixtures",
    allow_partial: bool = False,
    tokens: Any = None,
    **options: Any,
) -> ToolContext:
    """A tool context around an existing GraphClient (fixture transport or loopback).

    ``options`` are further ToolContext fields (``time_zone``, ``mailbox``), and
    ``all_files`` for the account's files.
    """

    async def graph() -> Any:
        return client

    all_files = bool(options.pop("all_files", False))
    options.setdefault(
        "accounts",
        graph_accounts(graph, limits, options.get("user_path", "/me"), all_files=all_files),
    )
    return ToolContext(
        limits=limits,
        mode=mode,
        allow_partial=allow_partial,
        sign_in=tokens or StaticTokenProvider("t"),
        **options,
    )


class Session:
    def __init__(
        self,
        to_server: trio.testing.MemorySendStream,
        from_server: trio.testing.MemoryReceiveStream,
    ) -> None:
        self._to_server = to_server
        self._from_server = from_server
        self._buffer = b""

    async def send_raw(self, data: bytes) -> None:
        await self._to_server.send_all(data)

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def close_input(self) -> None:
        await self._to_server.aclose()

    async def receive(self, timeout: float = 5.0) -> dict[str, Any]:  # noqa: ASYNC109
        with trio.fail_after(timeout):
            while b"\n" not in self._buffer:
                data = await self._from_server.receive_some(65_536)
                if not data:
                    raise EOFError("server closed its output")
                self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        line.decode("ascii")
        message: dict[str, Any] = json.loads(line)
        return message

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.send(message)
        return await self.receive()

    async def remaining(self, timeout: float = 5.0) -> list[dict[str, Any]]:  # noqa: ASYNC109
        """Everything the server writes until it closes its output."""
        out = []
        while True:
            try:
                out.append(await self.receive(timeout))
            except EOFError:
                return out


@asynccontextmanager
async def open_session(
    *,
    tools: Sequence[Tool] = ALL_TOOLS,
    context: ToolContext | None = None,
    limits: Limits = DEFAULT_LIMITS,
    hidden: Any = None,
) -> AsyncIterator[Session]:
    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    server_out, from_server = trio.testing.memory_stream_one_way_pair()
    server = McpServer(tools, context or plain_context(limits), hidden)

    async def run() -> None:
        await Runtime(server, limits).serve(server_in, server_out)
        await server_out.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        yield Session(to_server, from_server)
        nursery.cancel_scope.cancel()


def rows(data: dict[str, Any], key: str = "messages") -> list[dict[str, Any]]:
    """The items of a list result as objects, whether full or a compact table.

    A compact list (mail, drive items, folders) is ``{"columns": [...], key: [[...], ...]}``;
    its rows come back keyed by column (only the values the row has: a row may stop early).
    """
    items = data[key]
    if "columns" not in data:
        return list(items)
    columns = data["columns"]
    out = []
    for values in items:
        assert isinstance(values, list) and len(values) <= len(columns)
        assert not values or values[-1] not in (None, ""), "a row ends at its last value"
        out.append({c: v for c, v in zip(columns, values, strict=False) if v not in (None, "")})
    return out
