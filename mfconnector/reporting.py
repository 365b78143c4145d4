"""How a tool or a backend says how far along it is, without knowing who listens.

A tool calls ``ctx.report_progress(done, total, message)`` (bytes downloaded of the file's
size, pages parsed, messages fetched). The runtime installs a listener for each request
that carried a ``progressToken`` and turns the reports into ``notifications/progress``;
for any other request a report costs a lookup and nothing is sent. The listener lives in a
context variable, so tasks a tool starts in its own nursery report for the same request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

__all__ = ["ReportProgress", "report_progress", "reporting_to"]

ReportProgress = Callable[[float, "float | None", "str | None"], None]
"""``(done, total or None, message or None)``: never blocks, never raises."""

_LISTENER: ContextVar[ReportProgress | None] = ContextVar("mfc_progress", default=None)


def report_progress(done: float, total: float | None = None, message: str | None = None) -> None:
    """Tell this request's listener, if it has one, how far the work is."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(done, total, message)


@contextlib.contextmanager
def reporting_to(listener: ReportProgress | None) -> Iterator[None]:
    """Within this block (and tasks started from it), reports go to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
