"""The pipeline under pressure: backpressure, cancellation, end of input, bad lines."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import trio
import trio.testing
from harness import open_session, plain_context, request

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.runtime import Runtime
from mfconnector.server import McpServer
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import Tool, ToolContext

EMPTY_SCHEMA: dict[str, Any] = {"type": "object"}


def tool(name: str, handler: Any) -> Tool:
    return Tool(name, name, name, EMPTY_SCHEMA, EMPTY_SCHEMA, handler)


class Gate:
    """A tool that waits for the test, and records how it ended."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.started = 0
        self.cancelled = 0

    async def handler(self, ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        self.started += 1
        try:
            await self.release.wait()
        except trio.Cancelled:
            self.cancelled += 1
            raise
        return {"done": True}


def sleeper(seconds: float) -> Tool:
    async def handler(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        await trio.sleep(seconds)
        return {"slept": seconds}

    return tool(f"sleep_{seconds:g}", handler)


async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True}


def call(request_id: Any, name: str) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": {}})


async def test_cancelled_request_gets_no_reply_and_its_work_stops() -> None:
    gate = Gate()
    async with open_session(tools=[tool("gate", gate.handler)]) as session:
        await session.send(call(1, "gate"))
        await trio.testing.wait_all_tasks_blocked()
        await session.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "user"},
            }
        )
        reply = await session.call(request(2, "server/discover"))
    assert reply["id"] == 2
    assert gate.cancelled == 1


async def test_cancel_of_a_queued_request_means_it_never_starts() -> None:
    gate = Gate()
    limits = dataclasses.replace(DEFAULT_LIMITS, workers=1)
    async with open_session(tools=[tool("gate", gate.handler)], limits=limits) as session:
        await session.send(call(1, "gate"))
        await session.send(call(2, "gate"))
        await trio.testing.wait_all_tasks_blocked()
        await session.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        )
        await trio.testing.wait_all_tasks_blocked()
        gate.release.set()
        first = await session.receive()
        await session.close_input()
        rest = await session.remaining()
    assert first["id"] == 1 and rest == []
    assert gate.started == 1


async def test_end_of_input_answers_every_request_in_flight(autojump_clock: trio.abc.Clock) -> None:
    slow = sleeper(3.0)
    async with open_session(tools=[slow]) as session:
        for request_id in range(16):
            await session.send(call(request_id, slow.name))
        await session.close_input()
        replies = await session.remaining(timeout=60)
    assert sorted(reply["id"] for reply in replies) == list(range(16))
    assert all(reply["result"]["structuredContent"] == {"slept": 3.0} for reply in replies)


async def test_grace_period_bounds_shutdown_and_says_why(autojump_clock: trio.abc.Clock) -> None:
    slow = sleeper(1000.0)
    async with open_session(tools=[slow]) as session:
        start = trio.current_time()
        await session.send(call(1, slow.name))
        await session.close_input()
        replies = await session.remaining(timeout=60)
        elapsed = trio.current_time() - start
    assert len(replies) == 1
    assert replies[0]["error"]["code"] == -32603
    assert "grace period" in replies[0]["error"]["message"]
    assert elapsed < DEFAULT_LIMITS.eof_grace_seconds + 1


async def test_duplicate_id_in_flight_is_refused_and_the_first_still_answers() -> None:
    gate = Gate()
    async with open_session(tools=[tool("gate", gate.handler)]) as session:
        await session.send(call(1, "gate"))
        duplicate = await session.call(call(1, "gate"))
        gate.release.set()
        first = await session.receive()
    assert duplicate["error"]["code"] == -32600
    assert first["result"]["structuredContent"] == {"done": True}


async def test_oversized_line_and_bad_utf8_then_serving_continues() -> None:
    limits = DEFAULT_LIMITS
    async with open_session() as session:
        await session.send_raw(
            b'{"jsonrpc":"2.0","id":1,"method":"' + b"x" * (limits.line_bytes + 10) + b'"}\n'
        )
        oversized = await session.receive()
        await session.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"\xc3\x28"}\n')
        bad_utf8 = await session.receive()
        ok = await session.call(request(3, "server/discover"))
    assert oversized["id"] is None and oversized["error"]["code"] == -32600
    assert f"{limits.line_bytes:,}-byte limit" in oversized["error"]["message"]
    assert bad_utf8["id"] is None and bad_utf8["error"]["code"] == -32700
    assert ok["id"] == 3


async def test_a_reply_over_the_response_limit_becomes_an_internal_error() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, response_bytes=2_000)

    async def big(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"blob": "x" * 5_000}

    async with open_session(tools=[tool("big", big)], limits=limits) as session:
        reply = await session.call(call(1, "big"))
    assert reply["error"]["code"] == -32603
    assert "2,000-byte limit" in reply["error"]["message"]


class RequestSource(trio.abc.ReceiveStream):
    """Endless client input, one request line per read; counts what the server pulled."""

    def __init__(self) -> None:
        self.lines_pulled = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        self.lines_pulled += 1
        return json.dumps(request(self.lines_pulled, "tools/list")).encode() + b"\n"

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class CloggedStdout(trio.abc.SendStream):
    """A client that stopped reading: every write waits until the test unclogs it."""

    def __init__(self) -> None:
        self.unclog = trio.Event()
        self.lines = 0
        self.written = bytearray()

    async def send_all(self, data: bytes) -> None:
        await self.unclog.wait()
        self.lines += data.count(b"\n")
        self.written.extend(data)

    def ids(self) -> list[Any]:
        return [json.loads(line)["id"] for line in bytes(self.written).splitlines()]

    async def wait_send_all_might_not_block(self) -> None:
        await self.unclog.wait()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def test_a_stalled_stdout_stops_the_reader_at_the_bound() -> None:
    limits = DEFAULT_LIMITS
    source, stdout = RequestSource(), CloggedStdout()
    server = McpServer(ALL_TOOLS, plain_context())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Runtime(server, limits).serve, source, stdout)
        await trio.testing.wait_all_tasks_blocked()
        pulled = source.lines_pulled
        await trio.testing.wait_all_tasks_blocked()
        assert source.lines_pulled == pulled, "the reader kept reading while stdout was stalled"
        # writer(1) + outbox + one reply per worker + inbox + the reader's own line
        bound = 1 + limits.outbox_depth + limits.workers + limits.inbox_depth + 1
        assert pulled <= bound
        stdout.unclog.set()
        with trio.fail_after(5):
            while stdout.lines < pulled + 100:  # noqa: ASYNC110 - polling a counter in a test
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()


MALFORMED_LINES = [
    b"{not json",
    b"\xff\xfe",
    b'{"jsonrpc":"2.0","id":1,"method":"x","p":NaN}',
    b'{"jsonrpc":"2.0","id":1,"method":"x","p":Infinity}',
    b"[" * 50_000,
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    b'"a string"',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":false,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":2.5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":3}',
    b'{"jsonrpc":"2.0","id":3,"method":["x"]}',
    b'{"jsonrpc":"1.0","id":3,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"}',
]


@pytest.mark.parametrize("line", MALFORMED_LINES, ids=range(len(MALFORMED_LINES)))
async def test_each_malformed_line_gets_one_error_and_serving_continues(line: bytes) -> None:
    async with open_session() as session:
        await session.send_raw(line + b"\n")
        error = await session.receive()
        after = await session.call(request("next", "server/discover"))
    assert set(error) == {"jsonrpc", "id", "error"}
    assert error["error"]["code"] in (-32700, -32600, -32602)
    assert after["id"] == "next" and "result" in after


async def test_a_cancel_that_arrives_while_stdout_is_stalled_still_silences_the_reply() -> None:
    """C2 (stdio): after notifications/cancelled nothing more is sent for that request."""
    limits = dataclasses.replace(DEFAULT_LIMITS, outbox_depth=1)

    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    stdout = CloggedStdout()
    server = McpServer([tool("quick", quick)], plain_context(limits))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Runtime(server, limits).serve, server_in, stdout)
        # 1 ends up in the stalled writer's hands, 2 waits in the outbox (depth 1), and 3's
        # worker waits to hand its reply over: only 3 can still be silenced, and must be.
        for request_id in (1, 2, 3):
            await to_server.send_all(json.dumps(call(request_id, "quick")).encode() + b"\n")
            await trio.testing.wait_all_tasks_blocked()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
        await to_server.send_all(json.dumps(cancel).encode() + b"\n")
        await trio.testing.wait_all_tasks_blocked()
        stdout.unclog.set()
        await to_server.aclose()
    assert stdout.ids() == [1, 2]


async def test_a_reply_ready_before_the_grace_period_ends_is_delivered_late(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The grace period bounds the work, not the wait for a slow reader of stdout."""
    limits = dataclasses.replace(DEFAULT_LIMITS, outbox_depth=1, eof_grace_seconds=1.0)

    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    stdout = CloggedStdout()
    server = McpServer([tool("quick", quick)], plain_context(limits))

    async def unclog_after_the_grace_period() -> None:
        await trio.sleep(limits.eof_grace_seconds + 1.0)
        stdout.unclog.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(Runtime(server, limits).serve, server_in, stdout)
        for request_id in (1, 2, 3):
            await to_server.send_all(json.dumps(call(request_id, "quick")).encode() + b"\n")
            await trio.testing.wait_all_tasks_blocked()
        await to_server.aclose()
        nursery.start_soon(unclog_after_the_grace_period)
    replies = [json.loads(line) for line in bytes(stdout.written).splitlines()]
    assert sorted(reply["id"] for reply in replies) == [1, 2, 3]
    assert all(reply["result"]["structuredContent"] == {"ok": True} for reply in replies)
