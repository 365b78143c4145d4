"""The trio pipeline: one reader, a fixed pool of workers, one writer.

    stdin ─► reader ─► queue ─► worker × workers ─► outbox[outbox_depth] ─► writer ─► stdout
               └─────────────── replies it makes itself ──────┘

Tasks and channels only; what each line means is ``mfconnector.session``'s policy. The
reader answers everything that needs no I/O itself and never waits for a worker: a tool
call is queued if there is room and answered "busy" if not. So cancels, pings, discovery
and protocol errors are handled at once however busy the workers are. Backpressure still
runs end to end: a stalled stdout fills the outbox, the workers and then the reader block
on it, and the reader stops reading stdin.

End of input stops reading, and so does cancelling the ``reading`` scope the caller may
pass (the CLI does that on the first SIGTERM or SIGINT); requests already taken get
``eof_grace_seconds`` to finish and their replies are written; then ``serve`` returns. A
closed stdout ends everything at once, quietly. Any other stop is the caller's: cancel the
scope around ``serve``. A Runtime keeps no state between sessions, so it is not single-use.

A call that carried a ``progressToken`` reports through a ``ProgressReporter``
(``mfconnector.progress``): its notifications take the same outbox and the same writer,
coalesced so they never pile up, and stop when the call returns or is cancelled.
"""

from __future__ import annotations

import logging

import trio

from mfconnector.framing import LineFramer
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.progress import Outgoing, ProgressReporter, ProgressSlot
from mfconnector.server import McpServer
from mfconnector.session import Running, Session
from mfconnector.tools.progress import reporting_to

__all__ = ["Runtime", "StdoutClosed"]

log = logging.getLogger("mfconnector.runtime")


class StdoutClosed(Exception):
    """The client stopped reading our replies: nothing more can be said, so stop."""


class Runtime:
    """Runs MCP sessions over byte stream pairs, one ``serve`` call per session."""

    def __init__(self, server: McpServer, limits: Limits = DEFAULT_LIMITS) -> None:
        self._server = server
        self._limits = limits

    async def serve(
        self,
        receive: trio.abc.ReceiveStream,
        send: trio.abc.SendStream,
        *,
        reading: trio.CancelScope | None = None,
    ) -> None:
        """Serve until end of input and every reply is written, or until stdout closes.

        ``reading``: a scope the caller may cancel to stop reading input, with the same
        orderly end as end of input. It is entered here, so it serves one call only.
        """
        session = Session(self._server, self._limits)
        work_ready = trio.lowlevel.ParkingLot()
        outbox_send, outbox_recv = trio.open_memory_channel[Outgoing](self._limits.outbox_depth)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    self._read,
                    session,
                    work_ready,
                    receive,
                    outbox_send.clone(),
                    reading or trio.CancelScope(),
                    nursery.cancel_scope,
                )
                for _ in range(self._limits.workers):
                    nursery.start_soon(self._work, session, work_ready, outbox_send.clone())
                await outbox_send.aclose()
                await self._write(outbox_recv, send)
                nursery.cancel_scope.cancel()
        except* StdoutClosed:
            log.info("stdout closed by the client; stopping")

    # --- reader ------------------------------------------------------------------------

    async def _read(
        self,
        session: Session,
        work_ready: trio.lowlevel.ParkingLot,
        receive: trio.abc.ReceiveStream,
        outbox: trio.MemorySendChannel[Outgoing],
        reading: trio.CancelScope,
        whole_session: trio.CancelScope,
    ) -> None:
        framer = LineFramer(self._limits.line_bytes)
        async with outbox:
            with reading:
                try:
                    while True:
                        data = await self._receive(receive)
                        for event in framer.feed(data) if data else framer.close():
                            queued = session.queued
                            replies = session.on_line(event)
                            if session.queued > queued:
                                work_ready.unpark()
                            for reply in replies:
                                await outbox.send(reply)
                        if not data:
                            break
                except trio.BrokenResourceError:
                    return  # the writer is gone (stdout closed): nothing more can be said
            whole_session.deadline = session.end_of_input()
            work_ready.unpark_all()

    async def _receive(self, receive: trio.abc.ReceiveStream) -> bytes | bytearray:
        """The next chunk of input; an input stream that breaks counts as its end."""
        try:
            return await receive.receive_some(self._limits.read_chunk_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            log.info("stdin failed; treating it as end of input")
            return b""

    # --- workers -----------------------------------------------------------------------

    async def _work(
        self,
        session: Session,
        work_ready: trio.lowlevel.ParkingLot,
        outbox: trio.MemorySendChannel[Outgoing],
    ) -> None:
        """Take queued calls until input has ended and none is left.

        The reply is sent inside the request's cancel scope, so a cancel that arrives
        while the writer is stalled still means nothing more is said for it.
        """
        async with outbox:
            while True:
                running = session.next_call()
                if running is None:
                    if session.input_ended:
                        return
                    await work_ready.park()
                    continue
                reporter = self._reporter(running, outbox)
                try:
                    with running.scope:
                        with reporting_to(reporter):
                            replies = await session.answer(running, outbox.send)
                        if reporter is not None:
                            reporter.close()
                        for reply in replies:
                            await outbox.send(reply)
                except trio.BrokenResourceError:
                    return  # the writer is gone (stdout closed): nothing more can be said
                finally:
                    session.finished(running)

    def _reporter(
        self, running: Running, outbox: trio.MemorySendChannel[Outgoing]
    ) -> ProgressReporter | None:
        """Progress notifications for a call that asked for them (a ``progressToken``)."""
        token = running.call.progress_token
        if token is None:
            return None
        return ProgressReporter(token, outbox, running.scope, self._limits)

    # --- writer ------------------------------------------------------------------------

    async def _write(
        self, outbox: trio.MemoryReceiveChannel[Outgoing], send: trio.abc.SendStream
    ) -> None:
        async with outbox:
            async for item in outbox:
                data = _line(item)
                if data is None:
                    continue
                batch = [data]
                size = len(data)
                while size < self._limits.write_batch_bytes:
                    try:
                        data = _line(outbox.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                    if data is not None:
                        batch.append(data)
                        size += len(data)
                try:
                    await send.send_all(b"".join(batch) if len(batch) > 1 else batch[0])
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    raise StdoutClosed from exc


def _line(item: Outgoing) -> bytes | None:
    """The bytes to write for an outbox entry (None: a progress slot with nothing to say)."""
    return item.take() if isinstance(item, ProgressSlot) else item
