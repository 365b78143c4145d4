"""``MessageFilter`` and search text as Gmail's ``q`` (its "Search operators" page).

Filters compile to operators Gmail documents: ``is:unread``, ``is:starred``, ``{is:unread
is:starred}`` (either), ``from:"…"``, ``after:``/``before:`` with Unix seconds (exact
instants: Gmail reads a bare date as midnight Pacific time), ``has:attachment``. Search
text is Gmail syntax, passed through as the person wrote it, bounded by ``query_chars``
and stripped of line breaks (one query, one line).
"""

from __future__ import annotations

from mfconnector.errors import ToolInputError
from mfconnector.mail.query import MessageFilter

__all__ = ["filter_query", "search_query"]


def _quoted(value: str) -> str:
    """A value as one quoted Gmail term: quotes and braces cannot end it early."""
    cleaned = " ".join(value.replace('"', " ").split())
    return f'"{cleaned}"'


def filter_query(where: MessageFilter) -> str:
    terms: list[str] = []
    if where.unread_only:
        terms.append("is:unread")
    if where.flagged:
        terms.append("is:starred")
    if where.triage:
        terms.append("{is:unread is:starred}")
    if where.sender:
        terms.append("from:" + _quoted(where.sender))
    if where.since is not None:
        terms.append(f"after:{int(where.since.timestamp())}")
    if where.before is not None:
        terms.append(f"before:{int(where.before.timestamp())}")
    if where.has_attachments:
        terms.append("has:attachment")
    return " ".join(terms)


def search_query(text: str, max_chars: int) -> str:
    """Gmail search syntax as given, on one line, at most ``max_chars``."""
    query = " ".join(text.split())
    if not query:
        raise ToolInputError("`query` is empty: give Gmail search words or operators")
    if len(query) > max_chars:
        raise ToolInputError(f"`query` is longer than {max_chars} characters (query_chars)")
    return query
