"""``notifications/progress`` for one request, through the one writer, never piling up.

A request whose ``params._meta`` carries a ``progressToken`` gets a :class:`ProgressReporter`
for the life of its tool call; the tool's reports (``ToolContext.report_progress``) become
notifications with that token. The rules (MCP "Progress", the same in 2025-06-18, 2025-11-25
and 2026-07-28; in 2026-07-28 progress is scoped to the request and sent before its final
response):

- ``progress`` increases with every notification: a report that does not is dropped.
- At most one notification per ``progress_interval_seconds``; reports in between are
  dropped (the next one carries the newer figure anyway).
- Each request has one :class:`ProgressSlot`, and at most one place in the outbox. While
  the slot waits there, a newer report replaces its bytes (coalesced): a client that reads
  slowly gets the latest figure, never a backlog. A full outbox drops the report; the
  final response is never dropped, it waits for room like every response.
- Nothing is sent once the tool has returned (the slot may still be waiting in the outbox,
  ahead of the response: it is written first, since the outbox keeps order), and nothing at
  all once the client cancelled the request: a slot that reaches the writer after a cancel
  is skipped.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import trio

from mfconnector.jsonrpc import RequestId, encode
from mfconnector.limits import Limits

__all__ = ["Outgoing", "ProgressReporter", "ProgressSlot"]

log = logging.getLogger("mfconnector.progress")


class ProgressSlot:
    """One request's place in the outbox: its bytes are read when the writer reaches it."""

    def __init__(self, scope: trio.CancelScope) -> None:
        self._scope = scope
        self.data: bytes | None = None
        self.queued = False

    def take(self) -> bytes | None:
        """The latest notification, or None when the request was cancelled meanwhile."""
        data, self.data, self.queued = self.data, None, False
        return None if self._scope.cancel_called else data


Outgoing = bytes | ProgressSlot
"""What the outbox carries: encoded lines, and progress slots read as they are written."""


class ProgressReporter:
    """Turns one request's progress reports into rate-limited, coalesced notifications."""

    def __init__(
        self,
        token: RequestId,
        outbox: trio.MemorySendChannel[Outgoing],
        scope: trio.CancelScope,
        limits: Limits,
    ) -> None:
        self._token = token
        self._outbox = outbox
        self._scope = scope
        self._slot = ProgressSlot(scope)
        self._interval = limits.progress_interval_seconds
        self._message_chars = limits.progress_message_chars
        self._last_progress = -math.inf
        self._last_sent = -math.inf
        self._closed = False
        self.sent = 0
        """Notifications handed to the outbox (a coalesced one counts once)."""

    def close(self) -> None:
        """The tool has returned: nothing more is reported for this request."""
        self._closed = True

    def __call__(self, done: float, total: float | None, message: str | None) -> None:
        if self._closed or self._scope.cancel_called:
            return
        if not _finite(done) or done <= self._last_progress:
            return
        data = self._encode(done, total, message)
        self._last_progress = done
        if self._slot.queued:
            self._slot.data = data  # the writer has not reached it yet: say the newer figure
            return
        now = trio.current_time()
        if now - self._last_sent < self._interval:
            return
        self._slot.data = data
        try:
            self._outbox.send_nowait(self._slot)
        except trio.WouldBlock:
            self._slot.data = None  # a slow client: this one is dropped, the reply is not
            return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._closed = True
            return
        self._slot.queued = True
        self._last_sent = now
        self.sent += 1

    def _encode(self, done: float, total: float | None, message: str | None) -> bytes:
        params: dict[str, Any] = {"progressToken": self._token, "progress": _number(done)}
        if total is not None and _finite(total) and total >= done:
            params["total"] = _number(total)
        if message:
            params["message"] = message[: self._message_chars]
        return encode({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(value: float) -> float | int:
    """Whole numbers as integers on the wire (``5`` rather than ``5.0``)."""
    return int(value) if float(value).is_integer() else value
