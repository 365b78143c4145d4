"""The throttling retry budget of one logical Graph call.

429, 503 and 504 are retried after ``Retry-After`` (or 1, 2, 4 s) while four bounds all hold:
the number of retries, the longest single wait, the total wait, and the call's own deadline.
Past any of them the call fails fast with Graph's error and "retry in N s", instead of
sleeping into its deadline. Other statuses are never retried here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx
import trio

from mfconnector.graph.errors import graph_error_from_response, header, parse_retry_after
from mfconnector.limits import Limits

__all__ = ["RETRIED", "Answer", "RetryBudget"]

_log = logging.getLogger("mfconnector.graph")

RETRIED = frozenset({429, 503, 504})


@dataclass(frozen=True, slots=True)
class Answer:
    """A non-success answer, its body already read under the cap (or empty)."""

    status: int
    headers: httpx.Headers
    body: bytes


class RetryBudget:
    """Throttling retries of one logical call: count, single wait, total wait, deadline."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._retries = 0
        self._waited = 0.0

    async def pause(self, answer: Answer) -> None:
        """Sleep before the next attempt, or raise the mapped error when over budget."""
        limits = self._limits
        wait = parse_retry_after(header(answer.headers, "retry-after"), limits=limits)
        if wait is None:
            wait = float(2**self._retries)
        over = (
            self._retries >= limits.graph_retries
            or wait > limits.graph_retry_after_max_seconds
            or self._waited + wait > limits.graph_retry_total_seconds
            or trio.current_time() + wait >= trio.current_effective_deadline()
        )
        if over:
            raise graph_error_from_response(
                answer.status, answer.headers, answer.body, limits=limits, retry_after_seconds=wait
            )
        self._retries += 1
        self._waited += wait
        _log.debug("throttled (%s): retry %d in %.3f s", answer.status, self._retries, wait)
        await trio.sleep(wait)
