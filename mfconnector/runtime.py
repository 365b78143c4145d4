"""The trio pipeline: one reader, a fixed pool of workers, one writer.

    stdin ─► reader ─inbox[inbox_depth]─► worker × workers ─outbox[outbox_depth]─► writer ─► stdout

Backpressure runs end to end: a stalled stdout fills the outbox, blocks the workers,
fills the inbox and stops the reader, so memory stays within the budget written in
``mfconnector.limits``. End of input (or the first SIGTERM/SIGINT) stops reading; requests
already taken get ``eof_grace_seconds`` to finish and their replies are written; then the
process ends. A closed stdout ends everything at once, quietly.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import trio

from mfconnector.errors import INTERNAL_ERROR, INVALID_REQUEST
from mfconnector.framing import Line, LineFramer, Oversized
from mfconnector.jsonrpc import (
    ClientResponse,
    Invalid,
    Notification,
    Request,
    encode,
    error_response,
    parse_line,
)
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.server import McpServer, Reply, ToolCall
from mfconnector.shutdown import shutdown_signals

__all__ = ["Runtime", "StdoutClosed"]

log = logging.getLogger("mfconnector.runtime")

WRITE_BATCH_BYTES = 256 * 1024
"""Replies already waiting are written together, up to this much, in one system call."""


class StdoutClosed(Exception):
    """The client stopped reading our replies: nothing more can be said, so stop."""


@dataclass
class _InFlight:
    scope: trio.CancelScope | None = None
    """The whole request, work and reply: what a client's cancel stops."""
    work: trio.CancelScope | None = None
    """The tool call alone: what the shutdown grace period stops."""
    cancelled: bool = False


def _key(request_id: Any) -> tuple[str, Any]:
    """``1`` and ``"1"`` are different ids."""
    return (type(request_id).__name__, request_id)


class Runtime:
    """Runs one MCP session over a byte stream pair."""

    def __init__(self, server: McpServer, limits: Limits = DEFAULT_LIMITS) -> None:
        self._server = server
        self._limits = limits
        self._pending: dict[tuple[str, Any], _InFlight] = {}
        self._shutdown_deadline = math.inf
        self._reader_scope = trio.CancelScope()
        self._session_scope: trio.CancelScope | None = None

    async def serve(
        self,
        receive: trio.abc.ReceiveStream,
        send: trio.abc.SendStream,
        *,
        handle_signals: bool = False,
    ) -> None:
        """Serve until end of input and every reply is written, or until stdout closes."""
        inbox_send, inbox_recv = trio.open_memory_channel[ToolCall](self._limits.inbox_depth)
        outbox_send, outbox_recv = trio.open_memory_channel[bytes](self._limits.outbox_depth)
        try:
            async with trio.open_nursery() as nursery:
                self._session_scope = nursery.cancel_scope
                if handle_signals:
                    await nursery.start(self._watch_signals)
                nursery.start_soon(self._read, receive, inbox_send, outbox_send.clone())
                async with inbox_recv:
                    for _ in range(self._limits.workers):
                        nursery.start_soon(self._work, inbox_recv.clone(), outbox_send.clone())
                await outbox_send.aclose()
                await self._write(outbox_recv, send)
                nursery.cancel_scope.cancel()
        except* StdoutClosed:
            log.info("stdout closed by the client; stopping")

    # --- reader ------------------------------------------------------------------------

    async def _read(
        self,
        receive: trio.abc.ReceiveStream,
        inbox: trio.MemorySendChannel[ToolCall],
        outbox: trio.MemorySendChannel[bytes],
    ) -> None:
        framer = LineFramer(self._limits.line_bytes)
        async with inbox, outbox:
            with self._reader_scope:
                try:
                    while True:
                        data = await self._receive(receive)
                        if not data:
                            for event in framer.close():
                                await self._route(event, inbox, outbox)
                            break
                        for event in framer.feed(data):
                            await self._route(event, inbox, outbox)
                except trio.BrokenResourceError:
                    return  # the writer is gone (stdout closed): nothing more can be said
            self._begin_shutdown()

    async def _receive(self, receive: trio.abc.ReceiveStream) -> bytes | bytearray:
        """The next chunk of input; an input stream that breaks counts as its end."""
        try:
            return await receive.receive_some(self._limits.read_chunk_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            log.info("stdin failed; treating it as end of input")
            return b""

    async def _route(
        self,
        event: Line | Oversized,
        inbox: trio.MemorySendChannel[ToolCall],
        outbox: trio.MemorySendChannel[bytes],
    ) -> None:
        if isinstance(event, Oversized):
            text = (
                f"Invalid Request: line of {event.size:,} bytes is longer than the "
                f"{event.limit:,}-byte limit (newline included); it was discarded"
            )
            await outbox.send(encode(error_response(None, INVALID_REQUEST, text)))
            return
        message = parse_line(event.data)
        if message is None:
            return
        if isinstance(message, Invalid):
            await outbox.send(encode(message.reply))
        elif isinstance(message, Request):
            key = _key(message.id)
            if key in self._pending:
                duplicate = error_response(
                    message.id,
                    INVALID_REQUEST,
                    "Invalid Request: this id is already in use by a request in flight",
                )
                await outbox.send(encode(duplicate))
                return
            routed = self._server.answer_now(message)
            if isinstance(routed, Reply):
                for data in self._encode_reply(message, routed):
                    await outbox.send(data)
                return
            self._pending[key] = _InFlight()
            await inbox.send(routed)
        elif isinstance(message, Notification):
            if message.method == "notifications/cancelled":
                self._cancel(message.params)
            else:
                self._server.notify(message)
        elif isinstance(message, ClientResponse):
            log.debug("ignored a response from the client; this server sends no requests")

    def _cancel(self, params: Any) -> None:
        """Stop that request and say nothing more about it; unknown ids are ignored."""
        if not isinstance(params, dict):
            return
        request_id = params.get("requestId")
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return
        state = self._pending.get(_key(request_id))
        if state is None:
            return
        state.cancelled = True
        if state.scope is not None:
            state.scope.cancel()

    def _begin_shutdown(self) -> None:
        now = trio.current_time()
        self._shutdown_deadline = now + self._limits.eof_grace_seconds
        for state in self._pending.values():
            if state.work is not None:
                state.work.deadline = min(state.work.deadline, self._shutdown_deadline)
        if self._session_scope is not None:
            self._session_scope.deadline = (
                self._shutdown_deadline + self._limits.shutdown_flush_seconds
            )

    async def _watch_signals(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with trio.open_signal_receiver(*shutdown_signals()) as signals:
            task_status.started()
            count = 0
            async for signum in signals:
                count += 1
                log.info(
                    "signal %d: %s",
                    signum,
                    "finishing in-flight requests" if count == 1 else "stopping now",
                )
                if count == 1:
                    self._reader_scope.cancel()
                elif self._session_scope is not None:
                    self._session_scope.cancel()

    # --- workers -----------------------------------------------------------------------

    async def _work(
        self, inbox: trio.MemoryReceiveChannel[ToolCall], outbox: trio.MemorySendChannel[bytes]
    ) -> None:
        async with inbox, outbox:
            async for call in inbox:
                try:
                    await self._run_one(call, outbox)
                except trio.BrokenResourceError:
                    return  # the writer is gone (stdout closed): nothing more can be said

    async def _run_one(self, call: ToolCall, outbox: trio.MemorySendChannel[bytes]) -> None:
        """Run one tool call and send its reply, both inside the request's cancel scope.

        The request stays registered until its reply is handed to the writer, so a
        ``notifications/cancelled`` that arrives while the writer is stalled still means
        nothing more is said for it. The grace period at shutdown bounds only the work: a
        reply that is ready is still delivered.
        """
        request = call.request
        key = _key(request.id)
        state = self._pending.get(key)
        if state is None or state.cancelled:
            self._pending.pop(key, None)
            return
        state.scope = trio.CancelScope()
        state.work = trio.CancelScope(deadline=self._shutdown_deadline)
        try:
            with state.scope:
                reply: Reply | None = None
                with state.work:
                    try:
                        reply = await self._server.call_tool(call)
                    except Exception:
                        log.exception("unexpected failure in %s", request.method[:100])
                        reply = Reply(error_response(request.id, INTERNAL_ERROR, "Internal error"))
                if reply is None:
                    message = (
                        "Internal error: the server is shutting down and the request did not "
                        f"finish within the {self._limits.eof_grace_seconds:g} s grace period"
                    )
                    reply = Reply(error_response(request.id, INTERNAL_ERROR, message))
                for data in self._encode_reply(request, reply):
                    await outbox.send(data)
        finally:
            self._pending.pop(key, None)

    def _encode_reply(self, request: Request, reply: Reply) -> list[bytes]:
        out = [encode(notification) for notification in reply.notifications]
        if reply.encoded is not None:
            out.append(reply.encoded)
        elif reply.response is not None:
            out.append(self._encode_bounded(request, reply.response))
        return out

    def _encode_bounded(self, request: Request, response: dict[str, Any]) -> bytes:
        try:
            data = encode(response)
        except (TypeError, ValueError):
            log.exception("reply to %s could not be encoded", request.method[:100])
            return encode(error_response(request.id, INTERNAL_ERROR, "Internal error"))
        if len(data) > self._limits.response_bytes:
            log.error("reply to %s was %d bytes, over the limit", request.method[:100], len(data))
            limit = self._limits.response_bytes
            message = f"Internal error: the reply would exceed the {limit:,}-byte limit"
            data = encode(error_response(request.id, INTERNAL_ERROR, message))
        return data

    # --- writer ------------------------------------------------------------------------

    async def _write(
        self, outbox: trio.MemoryReceiveChannel[bytes], send: trio.abc.SendStream
    ) -> None:
        async with outbox:
            async for data in outbox:
                batch = [data]
                size = len(data)
                while size < WRITE_BATCH_BYTES:
                    try:
                        data = outbox.receive_nowait()
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    batch.append(data)
                    size += len(data)
                try:
                    await send.send_all(b"".join(batch) if len(batch) > 1 else batch[0])
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    raise StdoutClosed from exc
