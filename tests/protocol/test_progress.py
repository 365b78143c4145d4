"""``notifications/progress``: the reporter's rules, the runtime's plumbing, a slow Graph.

The reporter is driven on trio's ``MockClock`` (time moves only when the test says), the
runtime with a real ``McpServer`` over memory streams, and a document read against a real
HTTP server on 127.0.0.1 that sends the file slowly, so several notifications are due.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio.testing

import mfconnector.demo_documents as docbuild
from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.progress import Outgoing, ProgressReporter, ProgressSlot
from mfconnector.runtime import Runtime
from mfconnector.server import McpServer
from mfconnector.tools.base import ToolContext
from tests.protocol.test_runtime import CloggedStdout, tool
from tests.support.harness import client_context, modern_meta, open_session, plain_context, request
from tests.support.loopback import LoopbackServer, Reply
from tests.support.mcp_schemas import assert_valid

INTERVAL = DEFAULT_LIMITS.progress_interval_seconds
MESSAGE_CHARS = DEFAULT_LIMITS.progress_message_chars
VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"]


def reporter(
    depth: int = 8, *, limits: Any = DEFAULT_LIMITS
) -> tuple[ProgressReporter, trio.MemoryReceiveChannel[Outgoing], trio.CancelScope]:
    send, receive = trio.open_memory_channel[Outgoing](depth)
    scope = trio.CancelScope()
    return ProgressReporter("tok", send, scope, limits), receive, scope


def drain(receive: trio.MemoryReceiveChannel[Outgoing]) -> list[dict[str, Any]]:
    """What the writer would write now, as messages."""
    out = []
    while True:
        try:
            item = receive.receive_nowait()
        except trio.WouldBlock:
            return out
        data = item.take() if isinstance(item, ProgressSlot) else item
        if data is not None:
            out.append(json.loads(data))


# --- the reporter's rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("gap", "sent"), [(INTERVAL - 0.001, False), (INTERVAL, True), (INTERVAL + 0.001, True)]
)
async def test_progress_interval_limit(
    gap: float, sent: bool, mock_clock: trio.testing.MockClock
) -> None:
    report, receive, _ = reporter()
    report(1, 10, "one")
    assert [m["params"]["progress"] for m in drain(receive)] == [1]
    mock_clock.jump(gap)
    report(2, 10, "two")
    assert [m["params"]["progress"] for m in drain(receive)] == ([2] if sent else [])


async def test_a_report_that_does_not_grow_is_dropped(mock_clock: trio.testing.MockClock) -> None:
    report, receive, _ = reporter()
    sent = []
    for value in (5, 5, 4, float("nan"), float("inf"), 6):
        report(value, None, None)
        sent += [m["params"]["progress"] for m in drain(receive)]
        mock_clock.jump(INTERVAL)
    assert sent == [5, 6]


async def test_a_waiting_notification_is_replaced_by_the_newer_one() -> None:
    """Coalescing: the writer has not reached the slot, so it says the latest figure."""
    report, receive, _ = reporter()
    for value in range(1, 1001):
        report(value, 1000, f"{value} of 1000")
    assert drain(receive) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": "tok",
                "progress": 1000,
                "total": 1000,
                "message": "1000 of 1000",
            },
        }
    ]


async def test_a_full_outbox_drops_progress(mock_clock: trio.testing.MockClock) -> None:
    send, receive = trio.open_memory_channel[Outgoing](1)
    send.send_nowait(b'{"a reply":1}\n')
    report = ProgressReporter(7, send, trio.CancelScope(), DEFAULT_LIMITS)
    report(1, None, None)
    assert report.sent == 0
    assert drain(receive) == [{"a reply": 1}]
    mock_clock.jump(INTERVAL)
    report(2, None, None)
    assert [m["params"] for m in drain(receive)] == [{"progressToken": 7, "progress": 2}]


async def test_nothing_after_close_and_nothing_once_cancelled(
    mock_clock: trio.testing.MockClock,
) -> None:
    report, receive, scope = reporter()
    report(1, None, None)
    scope.cancel()  # the client cancelled while the notification was still in the outbox
    assert drain(receive) == []
    mock_clock.jump(INTERVAL)
    report(2, None, None)
    assert drain(receive) == []
    closed, receive, _ = reporter()
    closed.close()
    closed(1, None, None)
    assert drain(receive) == []


@pytest.mark.parametrize("length", [MESSAGE_CHARS - 1, MESSAGE_CHARS, MESSAGE_CHARS + 1])
async def test_progress_message_chars_limit(length: int) -> None:
    report, receive, _ = reporter()
    report(1, None, "x" * length)
    assert drain(receive)[0]["params"]["message"] == "x" * min(length, MESSAGE_CHARS)


@pytest.mark.parametrize("version", VERSIONS)
async def test_notifications_fit_the_official_schema(version: str) -> None:
    for done, total, message in ((1, 2, "half"), (0.5, None, None), (3, 2, "total below")):
        report, receive, _ = reporter()
        report(done, total, message)
        (note,) = drain(receive)
        assert_valid(version, "ProgressNotification", note)
        assert ("total" in note["params"]) is (total is not None and total >= done)


# --- through the runtime ------------------------------------------------------------------


async def counting(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    for value in range(1, 1001):
        ctx.report_progress(value, 1000, f"item {value}")
        await trio.lowlevel.checkpoint()
    return {"counted": 1000}


def counting_call(request_id: Any, token: Any) -> dict[str, Any]:
    meta = {**modern_meta(), "progressToken": token}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"_meta": meta, "name": "count", "arguments": {}},
    }


async def test_a_stalled_client_gets_the_latest_figure_then_the_reply() -> None:
    """1,000 reports while stdout is stalled: two notifications at most, never a backlog."""
    limits = dataclasses.replace(DEFAULT_LIMITS, progress_interval_seconds=0.0)
    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    stdout = CloggedStdout()
    server = McpServer([tool("count", counting)], plain_context(limits))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Runtime(server, limits).serve, server_in, stdout)
        await to_server.send_all(json.dumps(counting_call(1, "p")).encode() + b"\n")
        await trio.testing.wait_all_tasks_blocked()
        stdout.unclog.set()
        await to_server.aclose()
    lines = [json.loads(line) for line in bytes(stdout.written).splitlines()]
    notes = [m for m in lines if m.get("method") == "notifications/progress"]
    assert 1 <= len(notes) <= 2
    assert notes[-1]["params"]["progress"] == 1000
    assert lines[-1]["id"] == 1 and lines[-1]["result"]["structuredContent"] == {"counted": 1000}


@pytest.mark.parametrize("token", [1.5, True, {"a": 1}, [1]])
async def test_a_malformed_progress_token_is_refused_and_serving_goes_on(token: Any) -> None:
    async with open_session(tools=[tool("count", counting)]) as session:
        reply = await session.call(counting_call(1, token))
        assert reply["error"]["code"] == -32602
        assert reply["error"]["message"] == "_meta.progressToken must be a string or an integer"
        reply = await session.call(counting_call(2, "fine"))
        while "method" in reply:
            reply = await session.receive()
        assert reply["id"] == 2 and reply["result"]["isError"] is False


async def test_a_call_without_a_token_gets_no_notification() -> None:
    async with open_session(tools=[tool("count", counting)]) as session:
        reply = await session.call(request(1, "tools/call", {"name": "count", "arguments": {}}))
        assert reply["id"] == 1 and "result" in reply


# --- a document read against a slow Graph on 127.0.0.1 ------------------------------------

FILE_ID = "01LOOPBACKDOC"
PDF = docbuild.pdf("Slow report", [f"line {n} of the slow report" for n in range(2_000)])


@pytest.fixture
def graph() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def serve_slow_pdf(graph: LoopbackServer, chunk_delay: float) -> None:
    location = f"{graph.url}/personal/u/download.aspx?UniqueId=1&tempauth=SECRET"
    item = {
        "id": FILE_ID,
        "name": "Slow report.pdf",
        "size": len(PDF),
        "file": {"mimeType": "application/pdf"},
    }
    graph.route("GET", f"/v1.0/me/drive/items/{FILE_ID}", Reply.json(item))
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{FILE_ID}/content",
        Reply(302, (("Location", location), ("Content-Length", "0"))),
    )
    graph.route(
        "GET",
        "/personal/u/download.aspx",
        Reply(
            200,
            (("Content-Type", "application/pdf"),),
            PDF,
            chunk_size=8_192,
            chunk_delay=chunk_delay,
        ),
    )


def read_call(request_id: Any) -> dict[str, Any]:
    meta = {**modern_meta(), "progressToken": f"read-{request_id}"}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"_meta": meta, "name": "files_read", "arguments": {"item_id": f"msb.{FILE_ID}"}},
    }


def loopback_context(graph: LoopbackServer) -> tuple[GraphClient, ToolContext]:
    tokens = StaticTokenProvider("t", account="test")
    client = GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens, limits=DEFAULT_LIMITS)
    return client, client_context(client, DEFAULT_LIMITS, mode="live", tokens=tokens)


@pytest.mark.slow
async def test_a_slow_document_read_reports_bytes_then_pages(graph: LoopbackServer) -> None:
    serve_slow_pdf(graph, chunk_delay=0.1)  # 16 chunks: about 1.5 s of download
    client, ctx = loopback_context(graph)
    with trio.fail_after(30):
        async with client, open_session(context=ctx) as session:
            await session.send(read_call(1))
            messages = [await session.receive(timeout=20)]
            while "method" in messages[-1]:
                messages.append(await session.receive(timeout=20))
    *notes, reply = messages
    data = reply["result"]["structuredContent"]
    assert reply["id"] == 1 and "line 0 of the slow report" in data["content"]["text"]
    assert data["content"]["parts_total"] == 45  # 2,000 lines at 45 a page
    assert len(notes) >= 4, [n["params"] for n in notes]
    for note in notes:
        assert_valid("2026-07-28", "ProgressNotification", note)
        assert note["params"]["progressToken"] == "read-1"
    values = [n["params"]["progress"] for n in notes]
    assert values == sorted(set(values))
    downloads = [n["params"] for n in notes if n["params"]["message"].startswith("downloaded")]
    assert downloads and all(p["total"] == len(PDF) for p in downloads[:-1])
    assert (
        downloads[0]["message"]
        == f"downloaded {downloads[0]['progress']:,} of {len(PDF):,} bytes of the PDF"
    )
    assert [r.path for r in graph.requests] == [
        f"/v1.0/me/drive/items/{FILE_ID}",
        f"/v1.0/me/drive/items/{FILE_ID}/content",
        "/personal/u/download.aspx",
    ]


@pytest.mark.slow
async def test_a_cancelled_read_says_nothing_more(graph: LoopbackServer) -> None:
    serve_slow_pdf(graph, chunk_delay=0.2)
    client, ctx = loopback_context(graph)
    with trio.fail_after(30):
        async with client, open_session(context=ctx) as session:
            await session.send(read_call(1))
            first = await session.receive(timeout=20)
            assert first["method"] == "notifications/progress"
            cancel = {"requestId": 1, "reason": "user stopped it"}
            await session.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )
            await trio.sleep(1.0)  # several chunks' time: any progress would be due by now
            listed = await session.call(request(2, "tools/list"))
    assert listed["id"] == 2 and listed["result"]["tools"]
