"""One page of a Graph collection, at most ``limit`` items, and a cursor for the rest.

Used by the files tools, which still speak Graph (the mail tools page through their
account's backend: ``tools.paging``).

No extra page is ever fetched on the caller's behalf. When Graph says there is more
(``@odata.nextLink``), or its page held more than the caller asked for, or the items
would not fit the result size limit, the result says so and carries an opaque cursor;
the cursor is checked before the token goes anywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import GraphError, ToolInputError
from mfconnector.graph.cursor import canonical_link
from mfconnector.graph.urls import build_url, is_graph_url, with_select
from mfconnector.shaping import Skipped
from mfconnector.tools.base import ToolContext, wire_bytes
from mfconnector.tools.common import ItemShaper
from mfconnector.tools.cursors import CURSOR_HINT
from mfconnector.tools.paging import UNBOUND_ARGUMENTS, continued_arguments

__all__ = [
    "UNBOUND_ARGUMENTS",
    "Page",
    "continued_arguments",
    "cursor_scope",
    "fetch_page",
    "list_result",
]

PageShaper = Callable[[list[Any]], Awaitable[ItemShaper]]
"""Makes the item shaper once the page is in (it may look things up for the page first)."""
CursorFor = Callable[[str, int], str]
"""Signs a cursor for (url, items already shown) with the listing's binding."""


@dataclass(frozen=True)
class Page:
    """The items of one Graph page the caller may see, and where the page came from."""

    url: str
    skip: int
    items: list[Any]
    remaining: int
    next_link: str | None
    cursor_for: CursorFor
    foreign_link: bool = False
    context_known: bool = True
    """False for a page a cursor alone named, when that cursor did not carry its listing's
    arguments: the call's defaults would then misstate the folder or query."""

    def continuation(self, shown: int, *, size_limited: bool = False) -> dict[str, Any] | None:
        """``skipped.items`` after showing ``shown`` of ``items``; None when nothing is left."""
        if shown < self.remaining:
            record = {
                **self._cursor(self.url, self.skip + shown),
                "more_pages": bool(self.next_link),
            }
            if not self.next_link:
                record["count"] = self.remaining - shown
            if size_limited:
                record["why"] = "the result size limit"
            return record
        if self.foreign_link:
            note = "Graph's continuation link points outside the Graph root; it was not followed"
            return {"cursor": None, "more_pages": True, "note": note}
        if self.next_link is None:
            return None
        return {**self._cursor(self.next_link, 0), "more_pages": True}

    def _cursor(self, url: str, skip: int) -> dict[str, Any]:
        try:
            return {"cursor": self.cursor_for(url, skip)}
        except ValueError:
            return {"cursor": None, "note": "the continuation is too long to carry in a cursor"}


def _graph_value(body: Any) -> list[Any]:
    if not isinstance(body, dict) or not isinstance(body.get("value"), list):
        raise GraphError("Graph answered without a list of items", retry_safe=True)
    items: list[Any] = body["value"]
    return items


def cursor_scope(
    ctx: ToolContext, root: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What every cursor of this server is bound to: the account (mode, fixture source,
    Graph root, user path) plus the mailbox or drive a tool names in ``extra``."""
    scope = {
        "mode": ctx.mode,
        "source": ctx.source,
        "root": root,
        "user": ctx.user_path,
        **(extra or {}),
    }
    if ctx.account_name is not None:  # several accounts: one account's cursor is its own
        scope["account"] = ctx.account_name
    return scope


async def fetch_page(
    ctx: ToolContext,
    *,
    tool: str,
    path: str,
    query: Mapping[str, str],
    limit: int,
    arguments: Mapping[str, Any],
    scope: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Page:
    """Fetch the first page (or the page ``arguments["cursor"]`` names), keep ``limit`` items.

    Cursors are bound to ``tool``, to the account and mailbox or drive (``ctx`` plus any
    ``scope`` the tool adds), and to the call's ``arguments`` other than cursor and limit.
    """
    graph = await ctx.graph()
    bound_scope = cursor_scope(ctx, graph.root, scope)
    bound_arguments = {k: v for k, v in arguments.items() if k not in UNBOUND_ARGUMENTS}
    cursor = arguments.get("cursor")
    cursor_for: CursorFor
    context_known = True
    if cursor is not None:
        where = ctx.cursors.redeem(
            cursor,
            tool=tool,
            scope=bound_scope,
            arguments=bound_arguments or None,
        )
        link = where.position.get("link")
        if not isinstance(link, str) or not is_graph_url(link, graph.root):
            raise ToolInputError(
                "this cursor is not one this server issued (its link does not point into "
                "Microsoft Graph)",
                hint=CURSOR_HINT,
            )
        url, skip = link, where.skip
        context_known = bool(bound_arguments) or where.arguments is not None
        answer = await graph.get_json_url(url, headers=headers)

        def cursor_for(link: str, shown: int) -> str:
            return ctx.cursors.reissue(where, position={"link": canonical_link(link)}, skip=shown)
    else:
        url, skip = build_url(graph.root, path, query), 0
        answer = await graph.get_json(path, query=query, headers=headers)

        def cursor_for(link: str, shown: int) -> str:
            return ctx.cursors.issue(
                tool=tool,
                scope=bound_scope,
                arguments=bound_arguments,
                position={"link": canonical_link(link)},
                skip=shown,
                carry=True,
            )

    remaining = _graph_value(answer.body)[skip:]
    link = answer.body.get("@odata.nextLink")
    link = canonical_link(link) if isinstance(link, str) else None
    if link is not None and "$select" in query:
        link = with_select(link, query["$select"])
    next_link = link if link is not None and is_graph_url(link, graph.root) else None
    foreign = link is not None and next_link is None
    return Page(
        url, skip, remaining[:limit], len(remaining), next_link, cursor_for, foreign, context_known
    )


async def list_result(
    ctx: ToolContext,
    arguments: dict[str, Any],
    *,
    key: str,
    echo: dict[str, Any],
    shape: ItemShaper | None = None,
    prepare: PageShaper | None = None,
    **page_args: Any,
) -> dict[str, Any]:
    """Fetch a page, shape each item, stop at the result size limit, report what was left.

    Give ``shape``, or ``prepare`` to build the shaper once the page's items are known.
    """
    page = await fetch_page(
        ctx, limit=arguments.get("limit", ctx.limits.list_items), arguments=arguments, **page_args
    )
    if prepare is not None:
        shape = await prepare(page.items)
    if shape is None:
        raise TypeError("list_result needs `shape` or `prepare`")
    skipped = Skipped()
    kept: list[dict[str, Any]] = []
    size = 0
    for index, item in enumerate(page.items):
        item_skipped = Skipped()
        shaped = shape(item, item_skipped, f"{key}[{index}]")
        size += wire_bytes(shaped) + wire_bytes(item_skipped.fields) + 2
        if kept and size > ctx.limits.result_bytes:
            break
        kept.append(shaped)
        skipped.merge(item_skipped)
    skipped.items = page.continuation(len(kept), size_limited=len(kept) < len(page.items))
    result = dict(echo) if page.context_known else {}
    result[key] = kept
    return skipped.apply(result)
