"""The one protocol stream over fd 0 and fd 1, and the guarantee that nothing else uses them.

``claim_stdio`` moves the protocol to private duplicates of fd 0 and 1, then points fd 1
(and ``sys.stdout``) at stderr and fd 0 at /dev/null. After that a stray ``print``, a
library banner or a C extension writing to fd 1 lands on stderr, and nothing but the
runtime can read the client's input.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import trio

__all__ = ["ProtocolFds", "claim_stdio", "open_protocol_streams"]

PIPE_BYTES = 1 << 20
"""Ask the kernel for a 1 MiB stdin pipe so each read can return more (best effort)."""


@dataclass(frozen=True)
class ProtocolFds:
    read_fd: int
    write_fd: int


def _grow_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, not a pipe, or over pipe-max-size: the default size works too


def claim_stdio() -> ProtocolFds:
    """Take stdin/stdout for the protocol and make every other writer go to stderr."""
    read_fd = os.dup(0)
    write_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _grow_pipe(read_fd)
    return ProtocolFds(read_fd, write_fd)


def open_protocol_streams(
    fds: ProtocolFds,
) -> tuple[trio.lowlevel.FdStream, trio.lowlevel.FdStream]:
    """Non-blocking trio streams over the claimed descriptors (restored to blocking on close)."""
    return trio.lowlevel.FdStream(fds.read_fd), trio.lowlevel.FdStream(fds.write_fd)
