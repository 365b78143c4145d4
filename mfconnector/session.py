"""One client session's request policy: what each input line means for the requests in flight.

No tasks and no channels (``mfconnector.runtime`` owns those). This module decides:

- which tool calls are in flight, queued or running, and when one more is turned away
  with a "busy, retry" result instead of waiting (``workers + inbox_depth`` at most);
- what ``notifications/cancelled`` does: a queued call is withdrawn (it never runs and is
  never answered), a running one has its scope cancelled (nothing more is said for it);
- what a request that reuses the id of one still in flight gets: ``-32600`` without an
  id (``null`` in 2025-06-18, ``protocol.unpaired_reply``), so it cannot be taken for the
  original's reply, and a warning in the log;
- where a client's response goes: to the ``elicitation/create`` a 2025-era call is waiting
  on (``mfconnector.asking``; the reader only hands it over), else ignored and logged;
- how replies are encoded, within ``response_bytes``;
- the shutdown grace period: after end of input, running and queued calls get
  ``eof_grace_seconds`` of work, then an error that says so; a reply that is ready is
  still delivered, within ``shutdown_flush_seconds`` more.
"""

from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from mfconnector.asking import PendingAsks
from mfconnector.errors import INTERNAL_ERROR, INVALID_REQUEST
from mfconnector.framing import Line, Oversized
from mfconnector.jsonrpc import (
    ClientResponse,
    Invalid,
    Notification,
    Request,
    RequestId,
    encode,
    error_response,
    parse_line,
)
from mfconnector.limits import Limits
from mfconnector.protocol import unpaired_reply
from mfconnector.server import McpServer, Reply, ToolCall

__all__ = ["Running", "Session"]

log = logging.getLogger("mfconnector.session")

_Key = tuple[str, Any]


def _key(request_id: RequestId) -> _Key:
    """``1`` and ``"1"`` are different ids."""
    return (type(request_id).__name__, request_id)


@dataclass
class Running:
    """A tool call a worker has taken, with the two scopes that can stop it."""

    call: ToolCall
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    """The whole request, work and reply: what a client's cancel stops."""
    work: trio.CancelScope = field(default_factory=trio.CancelScope)
    """The tool call alone: what the shutdown grace period stops."""


class Session:
    """The requests of one session, from the line that brings them to the reply that ends them."""

    def __init__(self, server: McpServer, limits: Limits) -> None:
        self._server = server
        self._limits = limits
        self._capacity = limits.workers + limits.inbox_depth
        self._queued: OrderedDict[_Key, ToolCall] = OrderedDict()
        self._running: dict[_Key, Running] = {}
        self._work_deadline = math.inf
        self.input_ended = False
        self.asks = PendingAsks(limits.workers, limits.confirm_wait_seconds)
        """``elicitation/create`` requests (2025 eras) waiting for the client's answer."""

    @property
    def in_flight(self) -> int:
        return len(self._queued) + len(self._running)

    @property
    def queued(self) -> int:
        return len(self._queued)

    # --- lines in ----------------------------------------------------------------------

    def on_line(self, event: Line | Oversized) -> list[bytes]:
        """Handle one input event; returns the reply lines to write now (maybe none).

        A tool call that is accepted is queued here, for :meth:`next_call`.
        """
        if isinstance(event, Oversized):
            text = (
                f"Invalid Request: line of {event.size:,} bytes is longer than the "
                f"{event.limit:,}-byte limit (newline included); it was discarded"
            )
            return [self._unpaired(error_response(None, INVALID_REQUEST, text))]
        limits = self._limits
        message = parse_line(event.data, limits.request_values, limits.request_integer_digits)
        if message is None:
            return []
        if isinstance(message, Invalid):
            return [self._unpaired(message.reply)]
        if isinstance(message, Request):
            return self._on_request(message)
        if isinstance(message, Notification):
            if message.method == "notifications/cancelled":
                self._cancel(message.params)
            else:
                self._server.notify(message)
        elif isinstance(message, ClientResponse):
            self.asks.deliver(message.id, message.result, message.error)
        return []

    def _on_request(self, request: Request) -> list[bytes]:
        key = _key(request.id)
        if key in self._queued or key in self._running:
            log.warning(
                "request id %s reused while the first request with it is in flight; "
                "answered without its id",
                _shown(request.id),
            )
            text = (
                f"Invalid Request: id {_shown(request.id)} is already in use by a request in "
                "flight; this request was not run (its reply carries no id so that it cannot "
                "be taken for the first one's)"
            )
            return [self._unpaired(error_response(None, INVALID_REQUEST, text))]
        routed = self._server.answer_now(request)
        if isinstance(routed, Reply):
            return self.encode_reply(request.id, request.method, routed)
        if self.in_flight >= self._capacity:
            busy = self._server.busy_reply(routed, self.in_flight)
            return self.encode_reply(request.id, request.method, busy)
        self._queued[key] = routed
        return []

    def _cancel(self, params: Any) -> None:
        """Stop that request and say nothing more about it; unknown ids are ignored."""
        if not isinstance(params, dict):
            return
        request_id = params.get("requestId")
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return
        key = _key(request_id)
        if self._queued.pop(key, None) is not None:
            return
        running = self._running.get(key)
        if running is not None:
            running.scope.cancel()

    # --- work --------------------------------------------------------------------------

    def next_call(self) -> Running | None:
        """The oldest queued call, now running; None when nothing is queued."""
        if not self._queued:
            return None
        key, call = self._queued.popitem(last=False)
        running = Running(call)
        running.work.deadline = self._work_deadline
        self._running[key] = running
        return running

    async def answer(
        self, running: Running, send: Callable[[bytes], Awaitable[None]] | None = None
    ) -> list[bytes]:
        """Run the call (its work under the grace deadline) and encode its reply lines.

        ``send``: the worker's outbox, through which a 2025-era call may ask the person.
        """
        call = running.call
        reply: Reply | None = None
        round_trip = self.asks.asker(send) if send is not None and not call.era.modern else None
        with running.work:
            try:
                reply = await self._server.call_tool(call, round_trip)
            except Exception:
                log.exception("unexpected failure in tools/call %s", call.name[:100])
                reply = Reply(error_response(call.request_id, INTERNAL_ERROR, "Internal error"))
        if reply is None:
            message = (
                "Internal error: the server is shutting down and the request did not "
                f"finish within the {self._limits.eof_grace_seconds:g} s grace period"
            )
            reply = Reply(error_response(call.request_id, INTERNAL_ERROR, message))
        return self.encode_reply(call.request_id, "tools/call", reply)

    def finished(self, running: Running) -> None:
        """The reply was handed to the writer, or the request was cancelled: forget it.

        Until then the request stays registered, so a cancel that arrives while stdout is
        stalled still means nothing more is said for it.
        """
        self._running.pop(_key(running.call.request_id), None)

    def end_of_input(self) -> float:
        """No more lines: start the grace period. Returns the deadline for the whole session."""
        self.input_ended = True
        self._work_deadline = trio.current_time() + self._limits.eof_grace_seconds
        for running in self._running.values():
            running.work.deadline = min(running.work.deadline, self._work_deadline)
        return self._work_deadline + self._limits.shutdown_flush_seconds

    # --- replies out -------------------------------------------------------------------

    def _unpaired(self, reply: dict[str, Any]) -> bytes:
        return encode(unpaired_reply(reply, self._server.legacy_version))

    def encode_reply(self, request_id: RequestId, method: str, reply: Reply) -> list[bytes]:
        out = [encode(notification) for notification in reply.notifications]
        if reply.encoded is not None:
            out.append(reply.encoded)
        elif reply.response is not None:
            out.append(self._encode_bounded(request_id, method, reply.response))
        return out

    def _encode_bounded(
        self, request_id: RequestId, method: str, response: dict[str, Any]
    ) -> bytes:
        try:
            data = encode(response)
        except (TypeError, ValueError):
            log.exception("reply to %s could not be encoded", method[:100])
            return encode(error_response(request_id, INTERNAL_ERROR, "Internal error"))
        if len(data) > self._limits.response_bytes:
            log.error("reply to %s was %d bytes, over the limit", method[:100], len(data))
            limit = self._limits.response_bytes
            message = f"Internal error: the reply would exceed the {limit:,}-byte limit"
            data = encode(error_response(request_id, INTERNAL_ERROR, message))
        return data


def _shown(request_id: RequestId) -> str:
    """An id as it appears on the wire, shortened for a message."""
    text = json.dumps(request_id)
    return text if len(text) <= 80 else text[:77] + "..."
