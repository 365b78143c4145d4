"""The one protocol stream over fd 0 and fd 1, and the guarantee that nothing else uses them.

``claim_stdio`` moves the protocol to private duplicates of fd 0 and 1, then points fd 1
(and ``sys.stdout``) at stderr and fd 0 at the null device. After that a stray ``print``,
a library banner or a C extension writing to fd 1 lands on stderr, and nothing but the
runtime can read the client's input. On Windows the C runtime's ``dup2`` also repoints
the process's standard handles (for a console program such as ``python.exe``), and the
private descriptors are put in binary mode so no ``\\r\\n`` translation touches the bytes.

Two stream pairs carry the protocol over the private descriptors: trio's ``FdStream``
(non-blocking I/O on the event loop; Unix only) and the thread stream of
``mfconnector.stdio_thread`` (blocking I/O in worker threads; everywhere). Windows gets the
thread stream; ``MFC_STDIO=fd`` or ``MFC_STDIO=thread`` forces one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import trio

__all__ = [
    "STDIO_ENV",
    "ProtocolFds",
    "StdioChoiceError",
    "StdioKind",
    "choose_stdio",
    "claim_stdio",
    "open_protocol_streams",
]

STDIO_ENV = "MFC_STDIO"
"""Environment variable that forces a stream: ``fd`` or ``thread`` (unset or empty: automatic)."""

StdioKind = Literal["fd", "thread"]


class StdioChoiceError(ValueError):
    """``MFC_STDIO`` names a stream that does not exist, or not on this platform."""


@dataclass(frozen=True)
class ProtocolFds:
    read_fd: int
    write_fd: int


def fd_stream_available() -> bool:
    """trio's ``FdStream`` is defined on Unix only."""
    return hasattr(trio.lowlevel, "FdStream")


def choose_stdio(
    environ: Mapping[str, str] = os.environ, platform: str = sys.platform
) -> StdioKind:
    """The stream this process will use: ``MFC_STDIO`` if set, else ``thread`` on Windows."""
    value = environ.get(STDIO_ENV, "")
    if value == "":
        return "thread" if platform == "win32" or not fd_stream_available() else "fd"
    if value == "thread":
        return "thread"
    if value == "fd":
        if platform == "win32" or not fd_stream_available():
            raise StdioChoiceError(
                f"{STDIO_ENV}=fd needs trio's FdStream, which exists only on Unix; "
                f"use {STDIO_ENV}=thread or leave it unset"
            )
        return "fd"
    raise StdioChoiceError(
        f"{STDIO_ENV}={value[:40]!r} is not a stdio stream; use 'fd' (Unix), 'thread', "
        "or leave it unset for the platform's default"
    )


def _grow_pipe(fd: int, size: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, not a pipe, or over pipe-max-size: the default size works too


def _binary_mode(*fds: int) -> None:
    """Windows only: no newline translation on the protocol descriptors."""
    if sys.platform == "win32":
        import msvcrt

        for fd in fds:
            msvcrt.setmode(fd, os.O_BINARY)


def claim_stdio(*, pipe_bytes: int) -> ProtocolFds:
    """Take stdin/stdout for the protocol and make every other writer go to stderr; a stdin
    pipe is grown to ``pipe_bytes`` (the ``stdin_pipe_bytes`` limit) where Linux allows.

    Raises ``OSError`` when fd 0 or 1 is not open (checked first: with fd 1 closed, the
    duplicate of fd 0 would take number 1 and replies would go back into stdin).
    """
    os.fstat(0)
    os.fstat(1)
    read_fd = os.dup(0)
    write_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _binary_mode(read_fd, write_fd)
    _grow_pipe(read_fd, pipe_bytes)
    return ProtocolFds(read_fd, write_fd)


def open_protocol_streams(
    fds: ProtocolFds, kind: StdioKind = "fd"
) -> tuple[trio.abc.ReceiveStream, trio.abc.SendStream]:
    """The (receive, send) pair over the claimed descriptors, closed by the caller."""
    if kind == "thread":
        from mfconnector.stdio_thread import ThreadReceiveStream, ThreadSendStream

        return ThreadReceiveStream(fds.read_fd), ThreadSendStream(fds.write_fd)
    # Non-blocking on the event loop; FdStream restores blocking mode when closed.
    return trio.lowlevel.FdStream(fds.read_fd), trio.lowlevel.FdStream(fds.write_fd)
