"""Legacy (2025-11-25, 2025-06-18) Streamable HTTP sessions: ids, owners, expiry.

A session id is 32 random bytes (``secrets``), handed out by ``initialize`` in the
``Mcp-Session-Id`` header. It names the router that holds that session's handshake, and it
is bound to the user who created it: presented with another user's token it is as unknown
as a made-up id (404), so an id that leaks is no way into someone else's mail. At most
``http_sessions`` are kept (least recently used dropped first) and one idle for
``http_session_idle_seconds`` is expired.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from mfconnector.asking import PendingAsks
from mfconnector.limits import Limits
from mfconnector.server import McpServer

__all__ = ["SESSION_ID_CHARS", "LegacySession", "LegacySessions"]

SESSION_ID_CHARS = 128
"""A longer ``Mcp-Session-Id`` is not one of ours: refused without a look-up."""


@dataclass
class _Entry:
    owner: str
    server: McpServer
    version: str
    asks: PendingAsks
    last_used: float


@dataclass(frozen=True)
class LegacySession:
    server: McpServer
    version: str
    """The revision ``initialize`` settled on: what ``MCP-Protocol-Version`` must say."""
    asks: PendingAsks
    """Its ``elicitation/create`` requests waiting for the client's answering POST."""


class LegacySessions:
    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def create(self, owner: str, server: McpServer, version: str) -> str:
        self._expire()
        session_id = secrets.token_urlsafe(32)
        asks = PendingAsks(self._limits.workers, self._limits.confirm_wait_seconds)
        self._entries[session_id] = _Entry(owner, server, version, asks, self._clock())
        while len(self._entries) > self._limits.http_sessions:
            self._entries.popitem(last=False)
        return session_id

    def get(self, session_id: str, owner: str) -> LegacySession | None:
        """The session; None for an unknown, expired or another user's id."""
        entry = self._entry(session_id, owner)
        if entry is None:
            return None
        entry.last_used = self._clock()
        self._entries.move_to_end(session_id)
        return LegacySession(entry.server, entry.version, entry.asks)

    def end(self, session_id: str, owner: str) -> bool:
        if self._entry(session_id, owner) is None:
            return False
        del self._entries[session_id]
        return True

    def end_all(self, owner: str) -> int:
        """End every session of this user (their server state is gone); returns how many."""
        ended = [sid for sid, entry in self._entries.items() if entry.owner == owner]
        for session_id in ended:
            del self._entries[session_id]
        return len(ended)

    def _entry(self, session_id: str, owner: str) -> _Entry | None:
        if len(session_id) > SESSION_ID_CHARS:
            return None
        entry = self._entries.get(session_id)
        if entry is None or not secrets.compare_digest(entry.owner, owner):
            return None
        if self._clock() - entry.last_used >= self._limits.http_session_idle_seconds:
            del self._entries[session_id]
            return None
        return entry

    def _expire(self) -> None:
        """Drop idle sessions from the old end; stops at the first one still in use."""
        now = self._clock()
        while self._entries:
            oldest = next(iter(self._entries.values()))
            if now - oldest.last_used < self._limits.http_session_idle_seconds:
                break
            self._entries.popitem(last=False)
