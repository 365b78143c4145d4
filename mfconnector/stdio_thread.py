"""A portable stdio stream pair: blocking reads and writes in worker threads.

trio's ``FdStream`` exists only on Unix, so on Windows (and anywhere with
``MFC_STDIO=thread``) the protocol runs over these streams instead. Each one does at most
one blocking ``os.read`` / ``os.write`` at a time, in one of trio's worker threads
(``trio.lowlevel.start_thread_soon``), and only when its consumer asks: input is never
read more than one chunk ahead, so a stalled stdout stops the reading exactly as with
``FdStream``, and framing (line limits, oversized-line draining) stays in the runtime.

Cancellation never loses bytes. A cancelled ``receive_some`` leaves its read running and
the next call takes its result; a cancelled ``send_all`` leaves its write running and the
next call first waits for it, so replies are never interleaved. A thread blocked in a
read or write cannot be interrupted portably, so it is left behind: trio's worker threads
are daemon threads and raw ``os.read`` takes no Python-level lock, so neither stops the
process from exiting. Closing a stream while its thread is blocked hands the descriptor
to that thread, which closes it when the call returns; the number is never released
(and reused by something else) while a thread may still use it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

import trio

if TYPE_CHECKING:
    import outcome

__all__ = ["ThreadReceiveStream", "ThreadSendStream"]

T = TypeVar("T")

DEFAULT_RECEIVE_BYTES = 65_536
"""Bytes asked of the descriptor when the caller does not say (trio's own default)."""


class _Call(Generic[T]):
    """One blocking call in a worker thread whose outcome outlives a cancelled waiter."""

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self.done = trio.Event()
        self.outcome: outcome.Outcome[T] | None = None
        token = trio.lowlevel.current_trio_token()

        def deliver(result: outcome.Outcome[T]) -> None:
            self.outcome = result
            # After the event loop has ended nobody is waiting any more.
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self.done.set)

        trio.lowlevel.start_thread_soon(fn, deliver, name=name)


class _Descriptor:
    """A descriptor that is closed by whoever lets go of it last: the stream or its thread."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self._busy = False
        self._lock = threading.Lock()
        if sys.platform != "win32":
            # FdStream (or the client) may have left the open file non-blocking; a
            # thread that blocks is the whole point here. Windows pipes are blocking.
            # A bad descriptor shows up as an error on first use instead.
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)

    def run(self, fn: Callable[[int], T]) -> Callable[[], T]:
        """Wrap ``fn(fd)`` for a worker thread; the descriptor stays open until it returns."""
        with self._lock:
            self._busy = True

        def call() -> T:
            try:
                return fn(self.fd)
            finally:
                with self._lock:
                    self._busy = False
                    release = self.closed
                if release:
                    _close_quietly(self.fd)

        return call

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            release = not self._busy
        if release:
            _close_quietly(self.fd)


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):  # already gone: nothing is lost
        os.close(fd)


class ThreadReceiveStream(trio.abc.ReceiveStream):
    """Reads a descriptor in a worker thread, one chunk at a time, only when asked."""

    def __init__(self, fd: int) -> None:
        self._fd = _Descriptor(fd)
        self._reading: _Call[bytes] | None = None
        self._leftover = b""
        self._eof = False
        self._receiving = False

    def fileno(self) -> int:
        return self._fd.fd

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be an integer >= 1")
        if self._fd.closed:
            raise trio.ClosedResourceError("the stream was closed")
        if self._receiving:
            raise trio.BusyResourceError("another task is receiving from this stream")
        self._receiving = True
        try:
            if not self._leftover and not self._eof:
                self._leftover = await self._read(max_bytes or DEFAULT_RECEIVE_BYTES)
                self._eof = not self._leftover
            else:
                await trio.lowlevel.checkpoint()
            return self._take(max_bytes)
        finally:
            self._receiving = False

    async def _read(self, size: int) -> bytes:
        if self._reading is None:
            self._reading = _Call(self._fd.run(lambda fd: os.read(fd, size)), "mfconnector stdin")
        reading = self._reading
        await reading.done.wait()  # a cancel here leaves the read for the next call
        if self._fd.closed:  # woken by aclose: what the read returns is nobody's
            raise trio.ClosedResourceError("the stream was closed while receiving")
        self._reading = None
        result = reading.outcome
        assert result is not None, "only the thread's delivery or aclose wakes a reader"
        try:
            return result.unwrap()
        except OSError as error:
            raise trio.BrokenResourceError(f"reading failed: {error}") from error

    def _take(self, max_bytes: int | None) -> bytes:
        data = self._leftover
        if max_bytes is None or len(data) <= max_bytes:
            self._leftover = b""
            return data
        self._leftover = data[max_bytes:]
        return data[:max_bytes]

    async def aclose(self) -> None:
        self._fd.close()
        if self._reading is not None:
            self._reading.done.set()  # wake a receiver blocked on the abandoned read
        await trio.lowlevel.checkpoint()


class ThreadSendStream(trio.abc.SendStream):
    """Writes a descriptor in a worker thread; one write at a time, always whole."""

    def __init__(self, fd: int) -> None:
        self._fd = _Descriptor(fd)
        self._writing: _Call[None] | None = None
        self._failure: OSError | None = None
        self._sending = False

    def fileno(self) -> int:
        return self._fd.fd

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._fd.closed:
            raise trio.ClosedResourceError("the stream was closed")
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this stream")
        self._sending = True
        try:
            await self._finish_previous()
            if not data:
                await trio.lowlevel.checkpoint()
                return
            # The thread may outlive a cancelled caller, so it must own its bytes.
            payload = data if isinstance(data, bytes) else bytes(data)
            self._writing = _Call(
                self._fd.run(lambda fd: _write_all(fd, payload)), "mfconnector stdout"
            )
            await self._finish_previous()
        finally:
            self._sending = False

    async def wait_send_all_might_not_block(self) -> None:
        if self._fd.closed:
            raise trio.ClosedResourceError("the stream was closed")
        await self._finish_previous()

    async def _finish_previous(self) -> None:
        """Wait for the write in flight (a cancelled caller's included) and report it."""
        writing = self._writing
        if writing is not None:
            await writing.done.wait()
            if writing.outcome is None:  # woken by aclose, the write still blocked
                raise trio.ClosedResourceError("the stream was closed while sending")
            self._writing = None
            try:
                writing.outcome.unwrap()
            except OSError as error:
                self._failure = error
        if self._failure is not None:
            # Every later send reports the same broken pipe.
            raise trio.BrokenResourceError(f"writing failed: {self._failure}") from self._failure

    async def aclose(self) -> None:
        self._fd.close()
        if self._writing is not None:
            self._writing.done.set()
        await trio.lowlevel.checkpoint()


def _write_all(fd: int, data: bytes) -> None:
    with memoryview(data) as view:
        sent = 0
        while sent < len(view):
            sent += os.write(fd, view[sent:])
