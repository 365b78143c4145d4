"""Server-initiated ``elicitation/create`` in a 2025 session: send, wait, route the answer.

A worker that must ask the person writes the request through its own outbox (so the one
writer still writes every line) and waits, under ``Limits.confirm_wait_seconds``, for the
response the reader routes here by id. The reader never waits: ``deliver`` only sets an
event. At most ``limit`` requests wait at once (one per worker); a response to an id that
is not waiting (unsolicited, late or a duplicate) is ignored and logged. A request whose
tool call is cancelled stops waiting and is forgotten; one not answered in time is
withdrawn with ``notifications/cancelled`` (in the 2025 revisions either side may cancel a
request it issued), so the client can close the question it may still be showing.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from mfconnector.elicitation import AskFailed
from mfconnector.jsonrpc import encode

__all__ = ["PendingAsks"]

log = logging.getLogger("mfconnector.asking")

ID_PREFIX = "mfc-elicit-"


@dataclass
class _Waiter:
    event: trio.Event = field(default_factory=trio.Event)
    answer: tuple[Any, Any] | None = None


class PendingAsks:
    """The ``elicitation/create`` requests of one session that wait for the client."""

    def __init__(self, limit: int, wait_seconds: float) -> None:
        self._limit = limit
        self._wait_seconds = wait_seconds
        self._pending: dict[str, _Waiter] = {}
        self._ids = itertools.count(1)

    @property
    def waiting(self) -> int:
        return len(self._pending)

    def deliver(self, response_id: Any, result: Any, error: Any) -> None:
        """The reader's half: hand a client response to the request waiting for it."""
        waiter = self._pending.pop(response_id, None) if isinstance(response_id, str) else None
        if waiter is None:
            log.warning(
                "ignored a client response with id %.80r: no request of ours is waiting for "
                "it (unsolicited, late or a duplicate)",
                response_id,
            )
            return
        waiter.answer = (result, error)
        waiter.event.set()

    def asker(
        self, send: Callable[[bytes], Awaitable[None]]
    ) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        """A round trip for one worker: ``send`` is that worker's outbox."""

        async def round_trip(params: dict[str, Any]) -> Any:
            return await self._round_trip(send, params)

        return round_trip

    async def _round_trip(self, send: Callable[[bytes], Awaitable[None]], params: Any) -> Any:
        if len(self._pending) >= self._limit:
            raise AskFailed(f"{self._limit} questions are already waiting for the client")
        request_id = f"{ID_PREFIX}{next(self._ids)}"
        waiter = _Waiter()
        self._pending[request_id] = waiter
        try:
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "elicitation/create",
                "params": params,
            }
            await send(encode(message))
            with trio.move_on_after(self._wait_seconds):
                await waiter.event.wait()
        finally:
            self._pending.pop(request_id, None)
        if waiter.answer is None:
            # The client may still show the question: tell it the question is withdrawn.
            withdrawn = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": "no answer in time"},
            }
            await send(encode(withdrawn))
            raise AskFailed(f"no answer within {self._wait_seconds:g} s")
        result, error = waiter.answer
        if error is not None:
            text = error.get("message") if isinstance(error, dict) else None
            raise AskFailed(f"the client answered with an error ({str(text)[:120]!r})")
        return result
