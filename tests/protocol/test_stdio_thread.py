"""The thread stream over real pipes: backpressure, end of input, broken pipe, cancellation.

Process-level behaviour over both streams (signals, EOF, a closed stdout, a stalled
client) is in test_process.py; this file checks the stream's own contract.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import pytest
import trio
import trio.testing

from mfconnector.shutdown import shutdown_signals
from mfconnector.stdio import StdioChoiceError, choose_stdio
from mfconnector.stdio_thread import ThreadReceiveStream, ThreadSendStream

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs F_GETPIPE_SZ (Linux)"
)


@pytest.fixture
def pipe() -> tuple[int, int]:
    """A real pipe (read fd, write fd). Each test closes its ends itself: a stream may hand
    its descriptor to a worker thread, so closing numbers here could close a reused one."""
    return os.pipe()


def write_nonblocking(fd: int, data: bytes) -> int:
    """Write what the pipe takes now; 0 when it is full."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


async def test_delivers_bytes_in_order_then_end_of_input(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, b"first line\nsecond")
    os.close(write_fd)
    stream = ThreadReceiveStream(read_fd)
    received = b""
    with trio.fail_after(10):
        while chunk := await stream.receive_some(5):
            assert len(chunk) <= 5
            received += chunk
        assert await stream.receive_some() == b"", "end of input must stay the end"
        await stream.aclose()
    assert received == b"first line\nsecond"


@linux_only
async def test_never_reads_more_than_one_chunk_ahead_of_the_consumer(
    pipe: tuple[int, int],
) -> None:
    """A consumer that takes one chunk lets the producer write at most one chunk more."""
    import fcntl

    read_fd, write_fd = pipe
    capacity = fcntl.fcntl(write_fd, fcntl.F_GETPIPE_SZ)
    chunk = capacity // 4
    os.set_blocking(write_fd, False)
    block = b"z" * 65_536
    stream = ThreadReceiveStream(read_fd)
    with trio.fail_after(20):
        written = 0
        while n := write_nonblocking(write_fd, block):
            written += n
        assert written == capacity
        first = await stream.receive_some(chunk)
        assert len(first) == chunk
        # A stream that read ahead in the background would keep emptying the pipe.
        for _ in range(20):
            while n := write_nonblocking(write_fd, block):
                written += n
            await trio.sleep(0.01)
        assert written <= capacity + chunk
        os.close(write_fd)
        drained = len(first)
        while data := await stream.receive_some(chunk):
            drained += len(data)
        await stream.aclose()
    assert drained == written


async def test_a_cancelled_receive_loses_nothing(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = ThreadReceiveStream(read_fd)
    with trio.fail_after(10):
        with trio.move_on_after(0.05) as scope:
            await stream.receive_some(100)  # blocks in a thread: the pipe is empty
        assert scope.cancelled_caught
        os.write(write_fd, b"hello")
        # The abandoned read takes these bytes; the next calls must still see them,
        # cut to what each call asks for.
        assert await stream.receive_some(2) == b"he"
        assert await stream.receive_some() == b"llo"
        await stream.aclose()
    os.close(write_fd)


async def test_two_receivers_at_once_is_an_error(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = ThreadReceiveStream(read_fd)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream.receive_some)
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(trio.BusyResourceError):
                await stream.receive_some()
            os.write(write_fd, b"x")
        await stream.aclose()
    os.close(write_fd)


async def test_closing_while_a_read_is_blocked_keeps_the_fd_until_the_thread_lets_go(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    stream = ThreadReceiveStream(read_fd)
    failure: list[BaseException] = []

    async def receiver() -> None:
        try:
            await stream.receive_some()
        except trio.ClosedResourceError as error:
            failure.append(error)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(receiver)
            await trio.testing.wait_all_tasks_blocked()
            await stream.aclose()
        assert len(failure) == 1, "a receiver blocked in the read must hear of the close"
        # The worker thread is still inside os.read: the number must stay ours, or a
        # file opened meanwhile could take it and be read by that thread.
        os.fstat(read_fd)
        with pytest.raises(trio.ClosedResourceError):
            await stream.receive_some()
        # Wake the read: the thread then closes the pipe's only read end.
        os.write(write_fd, b"x")
        os.set_blocking(write_fd, False)
        while True:
            try:
                os.write(write_fd, b"x")
            except BrokenPipeError:
                break
            await trio.sleep(0.001)
    os.close(write_fd)


async def test_a_closed_reader_makes_every_send_a_broken_resource(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    stream = ThreadSendStream(write_fd)
    with trio.fail_after(10):
        with pytest.raises(trio.BrokenResourceError) as first:
            await stream.send_all(b"reply\n")
        assert isinstance(first.value.__cause__, BrokenPipeError)
        with pytest.raises(trio.BrokenResourceError):
            await stream.send_all(b"another\n")
        await stream.aclose()
        with pytest.raises(trio.ClosedResourceError):
            await stream.send_all(b"after close\n")


async def test_a_cancelled_send_is_still_written_whole_and_before_the_next(
    pipe: tuple[int, int],
) -> None:
    """A cancelled send_all keeps writing in its thread; the next one waits its turn."""
    read_fd, write_fd = pipe
    big = b"a" * 1_000_000  # far more than the pipe holds: the write blocks
    stream = ThreadSendStream(write_fd)
    reader = ThreadReceiveStream(read_fd)
    received = bytearray()

    async def drain() -> None:
        while data := await reader.receive_some(65_536):
            received.extend(data)

    with trio.fail_after(20):
        with trio.move_on_after(0.05) as scope:
            await stream.send_all(big)
        assert scope.cancelled_caught
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain)
            await stream.send_all(b"b" * 10)
            await stream.aclose()
        await reader.aclose()
    assert bytes(received) == big + b"b" * 10


async def test_send_all_writes_everything_through_a_slow_reader(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    stream = ThreadSendStream(write_fd)
    reader = ThreadReceiveStream(read_fd)
    lines = [f'{{"id":{i},"pad":"{"p" * (i * 997 % 70_000)}"}}\n'.encode() for i in range(200)]
    received = bytearray()

    async def slow_drain() -> None:
        while data := await reader.receive_some(4096):
            received.extend(data)
            await trio.lowlevel.checkpoint()

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_drain)
            for line in lines:
                await stream.wait_send_all_might_not_block()
                await stream.send_all(bytearray(line))
            await stream.aclose()
        await reader.aclose()
    assert bytes(received) == b"".join(lines)


# --- choosing the stream and the shutdown signals -----------------------------------------


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({}, "linux", "fd"),
        ({}, "darwin", "fd"),
        ({}, "win32", "thread"),
        ({"MFC_STDIO": ""}, "win32", "thread"),
        ({"MFC_STDIO": "thread"}, "linux", "thread"),
        ({"MFC_STDIO": "fd"}, "linux", "fd"),
        ({"MFC_STDIO": "thread"}, "win32", "thread"),
    ],
)
def test_the_stream_is_chosen_by_platform_unless_forced(
    environ: dict[str, str], platform: str, expected: str
) -> None:
    if expected == "fd" and not hasattr(trio.lowlevel, "FdStream"):
        pytest.skip("FdStream does not exist on this platform")
    assert choose_stdio(environ, platform) == expected


@pytest.mark.parametrize(
    ("value", "platform", "fragment"),
    [
        ("fd", "win32", "exists only on Unix"),
        ("threads", "linux", "'threads' is not a stdio stream"),
        ("FD", "linux", "'FD' is not a stdio stream"),
        ("auto", "linux", "'auto' is not a stdio stream"),
    ],
)
def test_a_stream_that_cannot_be_used_is_refused_by_name(
    value: str, platform: str, fragment: str
) -> None:
    with pytest.raises(StdioChoiceError, match=fragment):
        choose_stdio({"MFC_STDIO": value}, platform)


def test_shutdown_signals_for_this_platform() -> None:
    expected: set[Any] = {signal.SIGTERM, signal.SIGINT}
    if sys.platform == "win32":
        expected.add(signal.SIGBREAK)
    assert set(shutdown_signals()) == expected
