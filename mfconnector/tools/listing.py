"""One page of a Graph collection, at most ``limit`` items, and a cursor for the rest.

No extra page is ever fetched on the caller's behalf. When Graph says there is more
(``@odata.nextLink``), or its page held more than the caller asked for, or the items
would not fit the result size limit, the result says so and carries an opaque cursor;
the cursor is checked before the token goes anywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import GraphError
from mfconnector.graph.cursor import decode_cursor, encode_cursor
from mfconnector.graph.urls import build_url, is_graph_url
from mfconnector.shaping import Skipped
from mfconnector.tools.base import ToolContext, wire_bytes

__all__ = ["Page", "fetch_page", "list_result"]

ItemShaper = Callable[[Any, Skipped, str], dict[str, Any]]
PageShaper = Callable[[list[Any]], Awaitable[ItemShaper]]
"""Makes the item shaper once the page is in (it may look things up for the page first)."""


@dataclass(frozen=True)
class Page:
    """The items of one Graph page the caller may see, and where the page came from."""

    scope: str
    url: str
    skip: int
    items: list[Any]
    remaining: int
    next_link: str | None
    foreign_link: bool = False

    def continuation(self, shown: int, *, size_limited: bool = False) -> dict[str, Any] | None:
        """``skipped.items`` after showing ``shown`` of ``items``; None when nothing is left."""
        if shown < self.remaining:
            record = {
                **self._cursor(self.url, self.skip + shown),
                "morePages": bool(self.next_link),
            }
            if not self.next_link:
                record["count"] = self.remaining - shown
            if size_limited:
                record["why"] = "the result size limit"
            return record
        if self.foreign_link:
            note = "Graph's continuation link points outside the Graph root; it was not followed"
            return {"cursor": None, "morePages": True, "note": note}
        if self.next_link is None:
            return None
        return {**self._cursor(self.next_link, 0), "morePages": True}

    def _cursor(self, url: str, skip: int) -> dict[str, Any]:
        try:
            return {"cursor": encode_cursor(scope=self.scope, url=url, skip=skip)}
        except ValueError:
            return {"cursor": None, "note": "the continuation is too long to carry in a cursor"}


def _graph_value(body: Any) -> list[Any]:
    if not isinstance(body, dict) or not isinstance(body.get("value"), list):
        raise GraphError("Graph answered without a list of items", retry_safe=True)
    items: list[Any] = body["value"]
    return items


async def fetch_page(
    ctx: ToolContext,
    *,
    scope: str,
    path: str,
    query: Mapping[str, str],
    limit: int,
    cursor: str | None,
    path_prefixes: Sequence[str],
    headers: Mapping[str, str] | None = None,
) -> Page:
    """Fetch the first page (or the page a cursor names) and keep at most ``limit`` items."""
    graph = await ctx.graph()
    if cursor is not None:
        continuation = decode_cursor(
            cursor, scope=scope, root=graph.root, path_prefixes=path_prefixes
        )
        url, skip = continuation.url, continuation.skip
        answer = await graph.get_json_url(url, headers=headers)
    else:
        url, skip = build_url(graph.root, path, query), 0
        answer = await graph.get_json(path, query=query, headers=headers)
    remaining = _graph_value(answer.body)[skip:]
    link = answer.body.get("@odata.nextLink")
    next_link = link if isinstance(link, str) and is_graph_url(link, graph.root) else None
    foreign = isinstance(link, str) and next_link is None
    return Page(scope, url, skip, remaining[:limit], len(remaining), next_link, foreign)


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
    cursor = arguments.get("cursor")
    page = await fetch_page(
        ctx, limit=arguments.get("limit", ctx.limits.list_items), cursor=cursor, **page_args
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
    result = {} if cursor is not None else dict(echo)
    result[key] = kept
    return skipped.apply(result)
