"""The pipeline under pressure: backpressure, cancellation, end of input, bad lines."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.runtime import Runtime
from mfconnector.server import McpServer
from mfconnector.tools.base import Tool, ToolContext
from tests.support.harness import (
    client_context,
    initialize,
    open_session,
    plain_context,
    request,
    rows,
    slow_inbox_fixtures,
)

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
    assert "id" not in oversized and oversized["error"]["code"] == -32600
    assert f"{limits.line_bytes:,}-byte limit" in oversized["error"]["message"]
    assert "id" not in bad_utf8 and bad_utf8["error"]["code"] == -32700
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
    """Endless client input, one ``tools/call`` line per read; counts what the server pulled."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name
        self.lines_pulled = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        self.lines_pulled += 1
        return json.dumps(call(self.lines_pulled, self.tool_name)).encode() + b"\n"

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class CloggedStdout(trio.abc.SendStream):
    """A client that stopped reading: every write waits until the test unclogs it."""

    def __init__(self) -> None:
        self.unclog = trio.Event()
        self.lines = 0
        self.batches: list[int] = []
        """Lines per write: the writer joins the replies already waiting into one write."""
        self.written = bytearray()

    async def send_all(self, data: bytes) -> None:
        await self.unclog.wait()
        self.batches.append(data.count(b"\n"))
        self.lines += data.count(b"\n")
        self.written.extend(data)

    def ids(self) -> list[Any]:
        return [json.loads(line)["id"] for line in bytes(self.written).splitlines()]

    async def wait_send_all_might_not_block(self) -> None:
        await self.unclog.wait()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def test_a_stalled_stdout_stops_the_reader_at_the_bound() -> None:
    """Tool calls through the workers: with stdout stalled, the writer, the outbox, every
    worker and the queue fill up, the reader blocks with one reply in hand and stops
    reading; once stdout moves, every request pulled is answered exactly once."""
    limits = DEFAULT_LIMITS
    source, stdout = RequestSource("quick"), CloggedStdout()
    server = McpServer([tool("quick", quick)], plain_context())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Runtime(server, limits).serve, source, stdout)
        await trio.testing.wait_all_tasks_blocked()
        pulled = source.lines_pulled
        await trio.testing.wait_all_tasks_blocked()
        assert source.lines_pulled == pulled, "the reader kept reading while stdout was stalled"
        stdout.unclog.set()
        with trio.fail_after(5):
            while stdout.lines < pulled + 100:  # noqa: ASYNC110 - polling a counter in a test
                await trio.sleep(0.001)
        nursery.cancel_scope.cancel()
    # the writer's first batch + outbox + one reply per worker + the queue + the reader's reply
    held_by_writer = stdout.batches[0]
    assert held_by_writer <= limits.outbox_depth + 1
    assert pulled == held_by_writer + limits.outbox_depth + limits.workers + limits.inbox_depth + 1
    replies = [json.loads(line) for line in bytes(stdout.written).splitlines()]
    ids = [reply["id"] for reply in replies]
    assert len(ids) == len(set(ids)), "a request was answered twice"
    assert set(range(1, pulled + 1)) <= set(ids)
    busy = [r["id"] for r in replies if "busy" in r["result"]["content"][0]["text"]]
    done = [r["id"] for r in replies if r["result"].get("structuredContent") == {"ok": True}]
    assert sorted(busy + done) == sorted(ids)
    assert busy == [pulled]  # only the call that found the workers and the queue full


PARSE, INVALID, PARAMS = -32700, -32600, -32602
MALFORMED_LINES: list[tuple[bytes, int, Any]] = [
    (b"{not json", PARSE, None),
    (b"\xff\xfe", PARSE, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","p":NaN}', PARSE, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"x","p":Infinity}', PARSE, None),
    (b"[" * 5_000, PARSE, None),  # nested too deeply, under the value limit
    (b"[" * 50_000, INVALID, None),  # over the value limit: refused before parsing
    (b'{"jsonrpc":"2.0","id":4,"method":"x","params":[' + b"{}," * 9_999 + b"{}]}", INVALID, 4),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID, None),
    (b'"a string"', INVALID, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":false,"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":2.5,"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', INVALID, None),
    (b'{"jsonrpc":"2.0","id":3}', INVALID, 3),
    (b'{"jsonrpc":"2.0","id":3,"method":["x"]}', INVALID, 3),
    (b'{"jsonrpc":"1.0","id":3,"method":"ping"}', INVALID, 3),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"}', PARAMS, 3),
    (b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"n":1e999}}', PARAMS, 3),
]


@pytest.mark.parametrize(
    ("line", "code", "request_id"), MALFORMED_LINES, ids=range(len(MALFORMED_LINES))
)
async def test_each_malformed_line_gets_one_error_and_serving_continues(
    line: bytes, code: int, request_id: Any
) -> None:
    async with open_session() as session:
        await session.send_raw(line + b"\n")
        error = await session.receive()
        after = await session.call(request("next", "server/discover"))
    # A reply that answers no request carries no id in a modern session (see test_protocol).
    assert set(error) == (
        {"jsonrpc", "error"} if request_id is None else {"jsonrpc", "id", "error"}
    )
    assert error["error"]["code"] == code
    assert error.get("id") == request_id
    assert after["id"] == "next" and "result" in after


def values_line(request_id: Any, values: int) -> bytes:
    """A modern tools/call line holding exactly ``values`` JSON values (keys included)."""
    message = request(request_id, "tools/call", {"name": "quick", "arguments": {"pad": []}})
    base = json.dumps(message, separators=(",", ":")).encode()
    counted = 1 + sum(base.count(mark) for mark in (b"{", b"[", b",", b":"))
    pad = values - counted + 1  # the first zero fills the slot the empty array already counts
    assert pad >= 1
    return base.replace(b'"pad":[]', b'"pad":[' + b",".join([b"0"] * pad) + b"]")


@pytest.mark.parametrize("offset", [-1, 0, 1])
async def test_request_values_limit(offset: int) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, request_values=500)
    line = values_line("v", limits.request_values + offset)
    async with open_session(tools=[tool("quick", quick)], limits=limits) as session:
        await session.send_raw(line + b"\n")
        reply = await session.receive()
    assert reply["id"] == "v"
    if offset <= 0:
        assert reply["result"]["structuredContent"] == {"ok": True}
    else:
        assert reply["error"]["code"] == -32600
        assert f"{limits.request_values + 1:,} JSON values" in reply["error"]["message"]
        assert f"the {limits.request_values:,}-value limit" in reply["error"]["message"]


async def test_values_inside_strings_do_not_count() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, request_values=100)
    arguments = {"text": "[{,:}]" * 1_000}
    async with open_session(tools=[tool("quick", quick)], limits=limits) as session:
        reply = await session.call(
            request(1, "tools/call", {"name": "quick", "arguments": arguments})
        )
    assert reply["result"]["structuredContent"] == {"ok": True}


async def test_a_costly_line_keeps_its_id_wherever_the_id_sits() -> None:
    """The TypeScript SDK writes ``id`` after ``params``; the id is still recovered."""
    pad = b",".join([b"[[]]"] * 20_000)
    id_last = (
        b'{"method":"tools/call","params":{"arguments":{"x":['
        + pad
        + b']}},"jsonrpc":"2.0","id":"late"}'
    )
    id_first = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"a":[' + pad + b"]}}"
    notification = b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":[' + pad + b"]}}"
    bracket_in_id = b'{"jsonrpc":"2.0","id":"a{}b","method":"m","params":{"a":[' + pad + b"]}}"
    async with open_session() as session:
        for line in (id_last, id_first, notification, bracket_in_id):
            await session.send_raw(line + b"\n")
        replies = [await session.receive() for _ in range(3)]
        after = await session.call(request("next", "server/discover"))
    assert [reply.get("id") for reply in replies] == [
        "late",
        9,
        None,
    ]  # silence for the notification
    assert all(reply["error"]["code"] == -32600 for reply in replies)
    assert after["id"] == "next"


@pytest.mark.parametrize("offset", [-1, 0, 1])
@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25", "2025-06-18"])
async def test_tool_arguments_bytes_limit(offset: int, era: str) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, tool_arguments_bytes=1_000)
    base = len(json.dumps({"text": ""}, separators=(",", ":")))
    arguments = {"text": "é" * ((limits.tool_arguments_bytes + offset - base) // 2)}
    if (limits.tool_arguments_bytes + offset - base) % 2:
        arguments["text"] += "x"
    size = len(json.dumps(arguments, ensure_ascii=False, separators=(",", ":")).encode())
    assert size == limits.tool_arguments_bytes + offset
    modern = era == "2026-07-28"
    async with open_session(tools=[tool("quick", quick)], limits=limits) as session:
        if not modern:
            await session.call(initialize(0, era))
        reply = await session.call(
            request(1, "tools/call", {"name": "quick", "arguments": arguments}, modern=modern)
        )
    if offset <= 0:
        assert reply["result"]["structuredContent"] == {"ok": True}
        return
    text = f"{size:,} bytes as compact JSON, over the 1,000-byte limit for tool arguments"
    if era == "2025-06-18":
        assert reply["error"]["code"] == -32602 and text in reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True and text in reply["result"]["content"][0]["text"]


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


# --- control messages while every worker is busy ----------------------------------------

SLOW_MS = 10_000
"""Slow, yet 16 such calls through 4 Graph slots finish within the 60 s Graph deadline."""
CAPACITY = DEFAULT_LIMITS.workers + DEFAULT_LIMITS.inbox_depth
GRAPH_SLOTS = DEFAULT_LIMITS.graph_concurrency


class CountingTransport(httpx.AsyncBaseTransport):
    """The real FixtureTransport, counting the Graph requests that started and were cut."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.started = 0
        self.interrupted = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.started += 1
        try:
            return await self.inner.handle_async_request(request)
        except trio.Cancelled:
            self.interrupted += 1
            raise


@asynccontextmanager
async def slow_graph(
    limits: Limits = DEFAULT_LIMITS, delay_ms: int = SLOW_MS
) -> AsyncIterator[tuple[ToolContext, CountingTransport]]:
    fixture_set = parse_fixtures(slow_inbox_fixtures(delay_ms))
    transport = CountingTransport(FixtureTransport(fixture_set))
    client = GraphClient(
        token_provider=StaticTokenProvider("t"),
        limits=limits,
        root=fixture_set.graph_root,
        transport=transport,
    )
    try:
        # A named zone: the calls counted here make only their own Graph requests.
        yield client_context(client, limits, time_zone="UTC"), transport
    finally:
        await client.aclose()


def mail_list(request_id: Any) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": "mail_list", "arguments": {"limit": 50}})


def cancel(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }


async def test_control_messages_are_handled_at_once_while_every_worker_is_busy(
    autojump_clock: trio.abc.Clock,
) -> None:
    """16 slow calls fill the workers and the queue, 4 more are turned away; cancels, ping,
    discovery, tools/list and protocol errors still take effect before any virtual time
    passes (each slow answer takes 10 s)."""
    extra = 4
    async with slow_graph() as (context, transport), open_session(context=context) as session:
        start = trio.current_time()
        for request_id in range(CAPACITY + extra):
            await session.send(mail_list(request_id))
        busy = [await session.receive() for _ in range(extra)]
        await trio.testing.wait_all_tasks_blocked()
        # 4 calls wait on Graph (its concurrency), 4 more workers wait for a Graph slot, 8 queue.
        assert transport.started == GRAPH_SLOTS
        running, queued = GRAPH_SLOTS - 1, CAPACITY - 2
        await session.send(cancel(running))
        await session.send(cancel(queued))
        ping = await session.call({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        discover = await session.call(request("discover", "server/discover"))
        listed = await session.call(request("list", "tools/list"))
        bad = await session.call({"jsonrpc": "2.0", "id": "bad", "method": 7})
        assert trio.current_time() == start, "a control message waited for the workers"
        await trio.testing.wait_all_tasks_blocked()
        assert transport.interrupted == 1  # the running call's Graph wait was cut
        assert transport.started == GRAPH_SLOTS + 1  # its Graph slot went to the next call
        assert trio.current_time() == start
        replies = [await session.receive(timeout=100) for _ in range(CAPACITY - 2)]
        await session.close_input()
        rest = await session.remaining()
    assert [reply["id"] for reply in busy] == list(range(CAPACITY, CAPACITY + extra))
    assert all("busy" in reply["result"]["content"][0]["text"] for reply in busy)
    assert ping == {"jsonrpc": "2.0", "id": "ping", "result": {}}
    assert "supportedVersions" in discover["result"] and "tools" in listed["result"]
    assert bad["error"]["code"] == -32600
    answered = sorted(reply["id"] for reply in replies)
    assert answered == [i for i in range(CAPACITY) if i not in (running, queued)]
    assert all(reply["result"]["structuredContent"]["messages"] for reply in replies)
    assert rest == []
    assert transport.started == CAPACITY - 1  # the cancelled queued call never reached Graph


async def test_a_call_past_the_capacity_is_answered_busy_at_once(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with slow_graph() as (context, transport), open_session(context=context) as session:
        start = trio.current_time()
        for request_id in range(CAPACITY):
            await session.send(mail_list(request_id))
        busy = await session.call(mail_list("one-too-many"))
        assert trio.current_time() == start
        await session.send(cancel(0))
        await trio.testing.wait_all_tasks_blocked()
        room_again = mail_list("room-again")
        await session.send(room_again)
        replies = [await session.receive(timeout=100) for _ in range(CAPACITY)]
    assert busy["id"] == "one-too-many"
    result = busy["result"]
    assert result["isError"] is True and result["resultType"] == "complete"
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["error_code"] == "busy" and error["retry_safe"] is True
    assert f"{CAPACITY} tool calls are in flight" in error["message"]
    assert sorted(map(str, (r["id"] for r in replies))) == sorted(
        map(str, [*range(1, CAPACITY), "room-again"])
    )
    assert transport.started == CAPACITY + 1


async def test_a_timeout_interrupts_a_slow_fixture_answer(autojump_clock: trio.abc.Clock) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, graph_request_seconds=2.0)
    async with (
        slow_graph(limits, delay_ms=120_000) as (context, transport),
        open_session(context=context, limits=limits) as session,
    ):
        start = trio.current_time()
        reply = await session.call(mail_list(1))
        elapsed = trio.current_time() - start
    assert transport.interrupted == 1
    error = json.loads(reply["result"]["content"][0]["text"])["error"]
    assert error["error_code"] == "timeout"
    assert elapsed == pytest.approx(limits.graph_request_seconds, abs=0.5)


async def test_a_fixture_delay_holds_the_answer_back(autojump_clock: trio.abc.Clock) -> None:
    async with (
        slow_graph(delay_ms=2_500) as (context, _),
        open_session(context=context) as session,
    ):
        start = trio.current_time()
        reply = await session.call(mail_list(1))
        elapsed = trio.current_time() - start
    assert rows(reply["result"]["structuredContent"])[0]["subject"] == "late"
    assert elapsed == pytest.approx(2.5, abs=0.1)


async def test_a_reused_id_gets_no_id_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    gate = Gate()
    async with open_session(tools=[tool("gate", gate.handler)]) as session:
        await session.send(call("same", "gate"))
        await trio.testing.wait_all_tasks_blocked()
        duplicate = await session.call(call("same", "gate"))
        gate.release.set()
        first = await session.receive()
        again = await session.call(call("same", "gate"))  # free again once answered
    assert "id" not in duplicate and duplicate["error"]["code"] == -32600
    assert '"same" is already in use' in duplicate["error"]["message"]
    assert first == {**first, "id": "same"} and "result" in first
    assert again["id"] == "same" and "result" in again
    assert gate.started == 2
    assert any("reused" in record.getMessage() for record in caplog.records)


async def test_one_runtime_serves_session_after_session() -> None:
    """No cancel scope or registry lives on the Runtime: each serve() is a fresh session."""
    runtime = Runtime(McpServer([tool("quick", quick)], plain_context()), DEFAULT_LIMITS)
    for round_id in range(2):
        to_server, server_in = trio.testing.memory_stream_one_way_pair()
        stdout = CloggedStdout()
        stdout.unclog.set()
        await to_server.send_all(json.dumps(call(round_id, "quick")).encode() + b"\n")
        await to_server.aclose()
        with trio.fail_after(5):
            await runtime.serve(server_in, stdout)
        assert stdout.ids() == [round_id]


async def test_cancelling_the_reading_scope_ends_like_end_of_input() -> None:
    """What the CLI does on SIGTERM: stop reading, answer what is in flight, return."""
    gate = Gate()
    runtime = Runtime(McpServer([tool("gate", gate.handler)], plain_context()), DEFAULT_LIMITS)
    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    stdout = CloggedStdout()
    stdout.unclog.set()
    reading = trio.CancelScope()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: runtime.serve(server_in, stdout, reading=reading))
        await to_server.send_all(json.dumps(call("in-flight", "gate")).encode() + b"\n")
        await trio.testing.wait_all_tasks_blocked()
        reading.cancel()
        await trio.testing.wait_all_tasks_blocked()
        await to_server.send_all(json.dumps(call("too-late", "gate")).encode() + b"\n")
        gate.release.set()
    assert stdout.ids() == ["in-flight"]
    assert gate.started == 1
