"""A batch read (``mail_read`` with ``message_ids``) under a response byte budget.

Up to four messages are read at a time (Outlook's concurrency limit per mailbox) and added
in order while the whole result, counted as sent (the structured copy and its text copy,
escaped, plus room for the reply around them), stays within ``max_response_bytes``. Every
requested id comes back exactly once with a status: ``ok``, ``error`` (that message failed;
the batch goes on), ``not_returned`` (read, but it did not fit) or ``not_read`` (after the
stop). ``next_index`` and ``stop_reason`` say where to continue. A first message that does
not fit is shrunk (a shorter body window, down to none); when even its headers do not
fit, the result says so and how to get it.
"""

from __future__ import annotations

from typing import Any

import trio

from mfconnector.errors import ToolError, ToolInputError
from mfconnector.mail.model import Message
from mfconnector.mail.refs import Reference
from mfconnector.tools.base import ToolContext, wire_bytes
from mfconnector.tools.mail_call import MailCall
from mfconnector.tools.mail_view import COMPACT_READ_OMITS, GET_FULL
from mfconnector.tools.reading import read_request, shape_message

__all__ = ["BatchRead"]

ENVELOPE_BYTES = 512
"""Room kept in ``max_response_bytes`` for the reply around the result (ids, _meta, isError)."""
MIN_WINDOW_CHARS = 0
"""A first message that does not fit is retried with ever smaller body windows, down to
this (an empty window still returns its headers and says where the body continues)."""
HOW = "call again with the ids from next_index on"
HOW_NONE_FIT = (
    "not even the first message fits: raise max_response_bytes, or ask for fewer ids, or "
    "read it alone with mail_read message_id"
)

Outcome = Message | ToolError | None


class BatchRead:
    """One batch: the result being built, and the budget it must stay within."""

    def __init__(
        self,
        ctx: ToolContext,
        call: MailCall,
        *,
        full: bool,
        unique: bool,
        budget: int,
    ) -> None:
        self.ctx, self.call, self.zone = ctx, call, call.zone
        self.full, self.unique, self.budget = full, unique, budget
        self.items: list[dict[str, Any]] = []
        self.result: dict[str, Any] = {}
        self.returned = 0
        self.fetched = 0
        self.wanted = 0

    async def read(self, refs: list[Reference]) -> dict[str, Any]:
        ids = [str(ref) for ref in refs]
        self.refs = refs
        self._start(ids)
        self.wanted = len(ids)
        stop: int | None = None
        # Messages fetched at once: as many as Graph requests may be in flight.
        width = self.ctx.limits.graph_concurrency
        for start in range(0, len(ids), width):
            outcomes = await self._fetch(refs[start : start + width])
            for slot, outcome in enumerate(outcomes):
                index = start + slot
                item = None if stop is not None else self._fit(index, outcome)
                if item is None:
                    stop = index if stop is None else stop
                    item = {"id": ids[index], "status": "not_returned"}
                else:
                    self.returned += 1
                self.items[index] = item
            if stop is not None:
                break
        return self._finish(stop)

    def _start(self, ids: list[str]) -> None:
        """Every id as ``not_read``, and the largest stop record the batch could end with,
        so what fits while items are added still fits once the real record replaces it."""
        self.items = [{"id": mid, "status": "not_read"} for mid in ids]
        self.result = {
            "items": self.items,
            "max_response_bytes": self.budget,
            "response_bytes": self.budget,
        }
        if not self.full:  # named once for the whole batch, not per message
            self.result["omitted"] = {"fields": list(COMPACT_READ_OMITS), "get": GET_FULL}
        self.result["time_zone"] = self.zone.name
        self.call.labelled(self.result)
        self.result.update(_worst_case_tail(len(ids), self.budget))
        if self._size() > self.budget:
            raise ToolInputError(
                f"`max_response_bytes` {self.budget:,} cannot hold even the item list of this "
                f"batch ({len(ids)} ids, counted as sent)",
                hint="raise max_response_bytes or ask for fewer messages",
            )

    def _size(self) -> int:
        return wire_bytes(self.result) + ENVELOPE_BYTES

    async def _fetch(self, ids: list[Reference]) -> list[Outcome]:
        """Read ``ids`` at once (the client's limiter keeps Graph at 4 in flight); one failing
        read is that message's error, never the batch's."""
        outcomes: list[Outcome] = [None] * len(ids)

        request = read_request(full=self.full, unique=self.unique)

        async def read(slot: int, message: Reference) -> None:
            try:
                outcomes[slot] = await self.call.backend.read(message, request)
            except ToolError as error:
                outcomes[slot] = error
            self.fetched += 1
            self.ctx.report_progress(
                self.fetched, self.wanted, f"fetched {self.fetched} of {self.wanted} messages"
            )

        async with trio.open_nursery() as nursery:
            for slot, message_id in enumerate(ids):
                nursery.start_soon(read, slot, message_id)
        return outcomes

    def _fit(self, index: int, outcome: Outcome) -> dict[str, Any] | None:
        """The item for ``outcome`` if it fits the budget (a lone first message is shrunk)."""
        window = self.ctx.limits.body_chars
        while True:
            item = self._item(self.items[index]["id"], outcome, window)
            self.items[index] = item
            fits = self._size() <= self.budget
            self.items[index] = {"id": item["id"], "status": "not_read"}
            if fits:
                return item
            if self.returned or not isinstance(outcome, Message) or window <= MIN_WINDOW_CHARS:
                return None
            window = max(MIN_WINDOW_CHARS, window // 2 if window > 1 else 0)

    def _item(self, message_id: str, outcome: Outcome, window: int) -> dict[str, Any]:
        if not isinstance(outcome, Message):
            error = outcome if outcome is not None else ToolError("the read did not finish")
            return {"id": message_id, "status": "error", "error": error.to_payload()}
        payload, skipped = shape_message(
            self.ctx.limits,
            outcome,
            self.zone,
            full=self.full,
            offset=0,
            window_chars=window,
            with_omitted=False,  # named once for the whole batch instead
        )
        if payload["message"].get("id") == message_id:
            del payload["message"]["id"]  # the item's id says it once
        item: dict[str, Any] = {"id": message_id, "status": "ok", **payload}
        if skipped:
            item["skipped"] = skipped.to_json()
        return item

    def _finish(self, stop: int | None) -> dict[str, Any]:
        result, items = self.result, self.items
        for key in ("next_index", "stop_reason", "incomplete", "skipped"):
            result.pop(key, None)
        if stop is None:
            stop = next((i for i, item in enumerate(items) if item["status"] == "not_read"), None)
        skipped: dict[str, Any] = {}
        if stop is not None:
            result["next_index"] = stop
            result["stop_reason"] = "response_limit"
            skipped["items"] = {
                "next_index": stop,
                "not_returned": sum(1 for item in items if item["status"] == "not_returned"),
                "not_read": sum(1 for item in items if item["status"] == "not_read"),
                "why": f"the max_response_bytes budget ({self.budget:,} bytes)",
                "how": HOW if self.returned else HOW_NONE_FIT,
            }
        with_skipped = [i for i, item in enumerate(items) if "skipped" in item]
        if with_skipped:
            skipped["per_item"] = {"indexes": with_skipped, "see": "items[i].skipped"}
        if skipped:
            result["incomplete"] = True
            result["skipped"] = skipped
        result["response_bytes"] = wire_bytes(result)
        return result


def _worst_case_tail(count: int, budget: int) -> dict[str, Any]:
    """The stop record at its largest for ``count`` items (see ``BatchRead._finish``)."""
    last = max(count - 1, 0)
    return {
        "next_index": last,
        "stop_reason": "response_limit",
        "incomplete": True,
        "skipped": {
            "items": {
                "next_index": last,
                "not_returned": count,
                "not_read": count,
                "why": f"the max_response_bytes budget ({budget:,} bytes)",
                "how": HOW,
            },
            "per_item": {"indexes": list(range(count)), "see": "items[i].skipped"},
        },
    }
