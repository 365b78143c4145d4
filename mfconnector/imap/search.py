"""Filters and text searches as IMAP SEARCH criteria (pure).

SEARCH compares dates by day only, "disregarding time and timezone" (RFC 3501 section
6.4.4), so an instant bound is widened by a day on each side for the server and then held
exactly against each message's INTERNALDATE (``exact``). "Has attachments" has no SEARCH
key: the server is asked for multipart messages (every message with an attachment is one)
and BODYSTRUCTURE decides.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from mfconnector.imap.encode import Piece, astring
from mfconnector.mail.model import MessageSummary
from mfconnector.mail.query import MessageFilter

__all__ = ["TEXT_SEARCHED", "exact", "filter_criteria", "imap_date", "text_criteria"]

TEXT_SEARCHED = (
    "every header and the body text of each message (IMAP SEARCH TEXT, as this server "
    "matches it: a substring, case-insensitive)"
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def imap_date(moment: datetime) -> bytes:
    return f"{moment.day}-{_MONTHS[moment.month - 1]}-{moment.year}".encode("ascii")


def filter_criteria(where: MessageFilter) -> list[Piece]:
    criteria: list[Piece] = []
    if where.unread_only:
        criteria.append(b"UNSEEN")
    if where.flagged:
        criteria.append(b"FLAGGED")
    if where.triage:
        criteria.append(b"OR UNSEEN FLAGGED")
    if where.sender:
        criteria.extend((b"FROM", astring(where.sender)))
    if where.since is not None:
        criteria.extend((b"SINCE", imap_date(where.since - timedelta(days=1))))
    if where.before is not None:
        criteria.extend((b"BEFORE", imap_date(where.before + timedelta(days=2))))
    if where.has_attachments:
        criteria.extend((b"HEADER", b"Content-Type", b"multipart/"))
    return criteria or [b"ALL"]


def text_criteria(text: str) -> list[Piece]:
    return [b"TEXT", astring(text)]


def exact(where: MessageFilter) -> Callable[[MessageSummary], bool] | None:
    """What SEARCH cannot say exactly, checked on each fetched summary; None: nothing."""
    if where.since is None and where.before is None and not where.has_attachments:
        return None

    def keep(summary: MessageSummary) -> bool:
        received = summary.received
        if where.since is not None and (received is None or received < where.since):
            return False
        if where.before is not None and (received is None or received >= where.before):
            return False
        return not where.has_attachments or summary.has_attachments

    return keep
