"""One page of a Graph collection, and the positions that say where the next one starts.

A position is ``{"link": url}``: the first page's request URL, or Graph's
``@odata.nextLink``. The tools sign it into a cursor and hand it back unread; before a
request goes to a link from a position (with the bearer token on it), the link must be
https on the Graph root's host and port, under its path, without dot segments
(``graph.urls.is_graph_url``). A next link that points anywhere else is never kept: the
page says more exists (``more_pages``) without a position to reach it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from mfconnector.errors import GraphError, ToolInputError
from mfconnector.graph.cursor import canonical_link
from mfconnector.graph.urls import build_url, is_graph_url, with_select
from mfconnector.mail.model import Page, Position
from mfconnector.mail.query import PageRequest

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import ClientFactory

__all__ = ["RawPage", "fetch_page", "link_of"]

T = TypeVar("T")
U = TypeVar("U")

FOREIGN_LINK_NOTE = "Graph's continuation link points outside the Graph root; it was not followed"
POSITION_HINT = (
    "pass skipped.items.cursor from this tool's previous result unchanged, "
    "or call without a cursor to start from the first page"
)


class HasClient(Protocol):
    """What paging needs of a Graph backend (a mailbox, a drive): its client."""

    @property
    def client(self) -> ClientFactory: ...


@dataclass(frozen=True, slots=True)
class RawPage(Generic[T]):
    """A page whose items are still Graph's JSON (``with_items`` makes the model page)."""

    items: Sequence[T]
    here: Position
    next: Position | None
    more_pages: bool
    left_on_page: int
    note: str | None = None

    def with_items(self, items: Sequence[U]) -> Page[U]:
        return Page(
            items=items,
            here=self.here,
            next=self.next,
            more_pages=self.more_pages,
            left_on_page=self.left_on_page,
            note=self.note,
        )

    def replace_items(self, items: Sequence[T]) -> RawPage[T]:
        return replace(self, items=items)


def link_of(position: Position, root: str) -> str:
    """The link a position names, refused unless it is a Graph URL under ``root``."""
    link = position.get("link") if isinstance(position, Mapping) else None
    if not isinstance(link, str) or not is_graph_url(link, root):
        raise ToolInputError(
            "this cursor is not one this server issued (its link does not point into "
            "Microsoft Graph)",
            hint=POSITION_HINT,
        )
    return link


async def fetch_page(
    mailbox: HasClient,
    path: str,
    query: Mapping[str, str],
    page: PageRequest,
    *,
    headers: Mapping[str, str] | None = None,
) -> RawPage[Any]:
    """The first page (``path`` and ``query``) or the page ``page.position`` names, from
    ``page.skip`` on, at most ``page.limit`` items. No further page is ever fetched."""
    graph = await mailbox.client()
    if page.position is not None:
        url = link_of(page.position, graph.root)
        answer = await graph.get_json_url(url, headers=headers)
    else:
        url = build_url(graph.root, path, query)  # built once: the request and ``here``
        answer = await graph.get_json_url(url, headers=headers)
    body = answer.body
    if not isinstance(body, dict) or not isinstance(body.get("value"), list):
        raise GraphError("Graph answered without a list of items", retry_safe=True)
    remaining = body["value"][page.skip :]
    link = body.get("@odata.nextLink")
    link = canonical_link(link) if isinstance(link, str) else None
    if link is not None and "$select" in query:
        link = with_select(link, query["$select"])
    next_position: Position | None = None
    note = None
    if link is not None and is_graph_url(link, graph.root):
        next_position = {"link": link}
    elif link is not None:
        note = FOREIGN_LINK_NOTE
    kept = remaining[: page.limit]
    return RawPage(
        items=kept,
        here={"link": canonical_link(url)},
        next=next_position,
        more_pages=link is not None,
        left_on_page=len(remaining) - len(kept),
        note=note,
    )
