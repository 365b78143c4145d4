"""A tool call answered as an SSE stream: progress notifications, then the response.

Used when the client accepts ``text/event-stream`` and the call may say something before
its result: it carries a ``progressToken``, or it belongs to a 2025 session whose client
can answer ``elicitation/create`` (sent on this stream; the answer comes in its own POST).
The same pieces as stdio's pipeline, for one request:

    call_tool ─► ProgressReporter ─► outbox[outbox_depth] ─► writer ─► SSE events
        └──────────── the response (never dropped) ──┘

Progress is coalesced exactly as on stdio (``mfconnector.progress``): a client that reads
slowly gets the latest figure, never a backlog, and the writer waits for the transport, so
a stalled client costs at most ``outbox_depth`` encoded messages. The client closing the
stream (``http.disconnect``) cancels the call: the 2026-07-28 rule "closing the SSE stream
is cancellation", and for 2025 sessions the same, as there is no other stream to answer on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from mfconnector.asking import PendingAsks
from mfconnector.errors import INTERNAL_ERROR
from mfconnector.jsonrpc import error_response
from mfconnector.limits import Limits
from mfconnector.progress import Outgoing, ProgressReporter, ProgressSlot
from mfconnector.server import McpServer, Reply, ToolCall
from mfconnector.session import Session
from mfconnector.tools.progress import reporting_to

__all__ = ["sse_event", "stream_tool_call"]

log = logging.getLogger("mfconnector.hosted.sse")

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def sse_event(line: bytes) -> bytes:
    """One JSON-RPC message as one SSE ``message`` event (our JSON has no newlines)."""
    return b"event: message\ndata: " + line.rstrip(b"\n") + b"\n\n"


async def stream_tool_call(
    server: McpServer,
    call: ToolCall,
    *,
    receive: Receive,
    send: Send,
    limits: Limits,
    deadline: float,
    headers: list[tuple[bytes, bytes]],
    asks: PendingAsks | None = None,
) -> None:
    """Run ``call`` and stream what it says; returns when the stream has ended.

    ``asks``: a 2025 session's pending questions; its ``elicitation/create`` requests go
    out on this stream and the client's answers arrive in POSTs of their own.
    """
    outbox_send, outbox_recv = trio.open_memory_channel[Outgoing](limits.outbox_depth)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_cancel_on_disconnect, receive, nursery.cancel_scope)
        nursery.start_soon(_work, server, call, outbox_send, limits, deadline, asks)
        async with outbox_recv:
            async for item in outbox_recv:
                data = item.take() if isinstance(item, ProgressSlot) else item
                if data is not None:
                    await send(
                        {"type": "http.response.body", "body": sse_event(data), "more_body": True}
                    )
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        nursery.cancel_scope.cancel()


async def _work(
    server: McpServer,
    call: ToolCall,
    outbox: trio.MemorySendChannel[Outgoing],
    limits: Limits,
    deadline: float,
    asks: PendingAsks | None,
) -> None:
    async with outbox:
        reply: Reply | None = None
        round_trip = asks.asker(outbox.send) if asks is not None else None
        with trio.CancelScope(deadline=deadline) as scope:
            token = call.progress_token
            reporter = None if token is None else ProgressReporter(token, outbox, scope, limits)
            with reporting_to(reporter):
                reply = await server.call_tool(call, round_trip)
            if reporter is not None:
                reporter.close()
        if reply is None:
            seconds = limits.http_request_seconds
            text = f"Internal error: the tool call did not finish within {seconds:g} s"
            reply = Reply(error_response(call.request_id, INTERNAL_ERROR, text))
        for line in Session(server, limits).encode_reply(call.request_id, "tools/call", reply):
            await outbox.send(line)


async def _cancel_on_disconnect(receive: Receive, everything: trio.CancelScope) -> None:
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            log.info("client closed the stream: the call is cancelled")
            everything.cancel()
            return
