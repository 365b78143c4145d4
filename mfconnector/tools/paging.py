"""Paging through a backend: the page a call asks for, and the cursor for the rest.

No extra page is ever fetched on the caller's behalf. When the backend says more exists
(``Page.next``), or its page held more than the caller was shown (``left_on_page``, or the
result size limit stopped early), the result says so and carries a signed cursor bound to
the tool, the account and mailbox (``scope``) and the call's arguments other than
``cursor`` and ``limit``. The backend's position inside is never read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mfconnector.mail.model import Page, Position
from mfconnector.mail.query import PageRequest, View
from mfconnector.tools.base import ToolContext
from mfconnector.tools.cursors import Continuation

__all__ = [
    "SCOPE_ARGUMENTS",
    "UNBOUND_ARGUMENTS",
    "Listing",
    "continued_arguments",
    "start_listing",
]

UNBOUND_ARGUMENTS = frozenset({"cursor", "limit"})
"""Arguments a cursor is not bound to: the page size may change from page to page."""
SCOPE_ARGUMENTS = frozenset({"mailbox", "drive_id", "site", "account"})
"""Arguments that choose whose mail or drive a call reads: never taken from a cursor, so a
call that leaves them out reads its own default, and another's cursor is refused."""
SIZE_LIMITED = "the result size limit"
TOO_LONG = "the continuation is too long to carry in a cursor"


def continued_arguments(ctx: ToolContext, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call that passes only a cursor (and perhaps the account, mailbox or drive) continues
    with the arguments its listing was made with (folder, filters, query, view), so the
    next page keeps its context; any other call is as given. The account, mailbox or drive
    is never taken from the cursor (``SCOPE_ARGUMENTS``)."""
    if "cursor" not in arguments or set(arguments) - UNBOUND_ARGUMENTS - SCOPE_ARGUMENTS:
        return arguments
    carried = ctx.cursors.carried_arguments(arguments["cursor"], tool=tool)
    if carried is None:
        return arguments
    kept = {key: value for key, value in carried.items() if key not in SCOPE_ARGUMENTS}
    return {**kept, **arguments}


@dataclass
class Listing:
    """One call of a listing tool: the page it asks its backend for, and its cursor binding."""

    ctx: ToolContext
    tool: str
    scope: Mapping[str, Any]
    bound: dict[str, Any]
    request: PageRequest
    redeemed: Continuation | None = None
    context_known: bool = True
    """False for a page a cursor alone named, when that cursor did not carry its listing's
    arguments: the call's defaults would then misstate the folder or query."""

    def continuation(
        self, page: Page[Any], shown: int, *, size_limited: bool = False
    ) -> dict[str, Any] | None:
        """``skipped.items`` after showing ``shown`` of ``page.items``; None when nothing is
        left."""
        left = len(page.items) - shown + page.left_on_page
        if left > 0:
            record = {
                **self._cursor(page.here, self.request.skip + shown),
                "more_pages": page.next is not None or page.more_pages,
            }
            if page.next is None and not page.more_pages:
                record["count"] = left
            if size_limited:
                record["why"] = SIZE_LIMITED
            return record
        if page.next is None:
            if page.more_pages:
                return {"cursor": None, "more_pages": True, "note": page.note or TOO_LONG}
            return None
        return {**self._cursor(page.next, 0), "more_pages": True}

    def _cursor(self, position: Position, skip: int) -> dict[str, Any]:
        try:
            if self.redeemed is not None:
                cursor = self.ctx.cursors.reissue(self.redeemed, position=position, skip=skip)
            else:
                cursor = self.ctx.cursors.issue(
                    tool=self.tool,
                    scope=self.scope,
                    arguments=self.bound,
                    position=position,
                    skip=skip,
                    carry=True,
                )
        except ValueError:
            return {"cursor": None, "note": TOO_LONG}
        return {"cursor": cursor}


def start_listing(
    ctx: ToolContext,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    scope: Mapping[str, Any],
    view: View = "compact",
) -> Listing:
    """The page ``arguments`` ask for: the first, or the one their ``cursor`` names (checked
    against this tool, ``scope`` and the arguments before anything is asked for)."""
    limit = arguments.get("limit", ctx.limits.list_items)
    bound = {k: v for k, v in arguments.items() if k not in UNBOUND_ARGUMENTS}
    cursor = arguments.get("cursor")
    if cursor is None:
        return Listing(ctx, tool, scope, bound, PageRequest(limit, view=view))
    where = ctx.cursors.redeem(cursor, tool=tool, scope=scope, arguments=bound or None)
    request = PageRequest(limit, where.position, where.skip, view)
    known = bool(bound) or where.arguments is not None
    return Listing(ctx, tool, scope, bound, request, where, known)
