"""One page of a Graph collection, at most ``limit`` items, and a cursor for the rest.

No extra page is ever fetched on the caller's behalf. When Graph says there is more
(``@odata.nextLink``), or its page held more than the caller asked for, the result says
so and carries an opaque cursor; the cursor is checked before the token goes anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import GraphError
from mfconnector.graph.cursor import decode_cursor, encode_cursor
from mfconnector.graph.urls import build_url, is_graph_url
from mfconnector.tools.base import ToolContext

__all__ = ["Page", "fetch_page"]


@dataclass(frozen=True)
class Page:
    items: list[Any]
    skipped_items: dict[str, Any] | None


def _cursor(scope: str, url: str, skip: int = 0) -> dict[str, Any]:
    """A cursor, or a note when the continuation cannot be carried in one (over its size limit)."""
    try:
        return {"cursor": encode_cursor(scope=scope, url=url, skip=skip)}
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
        answer = await graph.get_json_url(url)
    else:
        url, skip = build_url(graph.root, path, query), 0
        answer = await graph.get_json(path, query=query, headers=headers)
    values = _graph_value(answer.body)
    remaining = values[skip:]
    shown = remaining[:limit]
    next_link = answer.body.get("@odata.nextLink")
    more_pages = isinstance(next_link, str)
    if len(remaining) > limit:
        skipped: dict[str, Any] = {**_cursor(scope, url, skip + limit), "morePages": more_pages}
        if not more_pages:
            skipped["count"] = len(remaining) - limit
        return Page(shown, skipped)
    if more_pages:
        if not is_graph_url(str(next_link), graph.root):
            note = "Graph's continuation link points outside the Graph root; it was not followed"
            return Page(shown, {"morePages": True, "cursor": None, "note": note})
        return Page(shown, {"morePages": True, **_cursor(scope, str(next_link))})
    return Page(shown, None)
