"""A small bounded pool of IMAP connections for one account.

At most ``imap_connections`` connections exist at once (servers cap connections per user);
a caller past that waits. A connection comes back to the pool only when its last command
left it sound: one that timed out, was cancelled, dropped or broke the protocol is closed
and the next caller gets a fresh one. An idle connection is checked with NOOP before reuse
when it has sat longer than ``_PROBE_IDLE_SECONDS`` (servers drop idle sessions after
30 minutes, RFC 9051 section 5.4), and replaced if the server has dropped it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.errors import ImapError
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import Limits

__all__ = ["ImapPool"]

_PROBE_IDLE_SECONDS = 60.0


class ImapPool:
    def __init__(self, settings: ServerSettings, limits: Limits) -> None:
        self._settings = settings
        self._limits = limits
        self._slots = trio.Semaphore(limits.imap_connections)
        self._idle: list[ImapConnection] = []
        self.opened = 0
        """Connections opened so far (for tests and ``account_status``)."""

    @property
    def idle(self) -> int:
        """Connections waiting for the next caller."""
        return len(self._idle)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[ImapConnection]:
        async with self._slots:
            connection = await self._take()
            try:
                yield connection
            finally:
                if connection.broken:
                    await connection.discard()
                else:
                    self._idle.append(connection)

    async def _take(self) -> ImapConnection:
        while self._idle:
            connection = self._idle.pop()
            if connection.broken:
                continue
            if trio.current_time() - connection.last_used < _PROBE_IDLE_SECONDS:
                return connection
            try:
                await connection.command("NOOP")
                return connection
            except ImapError:
                await connection.discard()
        connection = await ImapConnection.open(self._settings, self._limits)
        self.opened += 1
        await _enable_extensions(connection)
        return connection

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.logout()


async def _enable_extensions(connection: ImapConnection) -> None:
    from mfconnector.imap.commands import enable

    await enable(connection, "CONDSTORE", "QRESYNC")
