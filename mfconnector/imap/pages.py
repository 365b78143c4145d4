"""A page of a list the IMAP backend already holds whole (folders, attachments, a thread):
an offset into it, kept in the cursor's position. Pure code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from mfconnector.mail.model import Page
from mfconnector.mail.query import PageRequest

__all__ = ["offset_page"]

T = TypeVar("T")


def offset_page(every: Sequence[T], page: PageRequest, *, note: str | None = None) -> Page[T]:
    """``page.limit`` items of ``every`` from the position's offset (plus ``page.skip``)."""
    offset = int((page.position or {}).get("offset", 0)) + page.skip
    more = len(every) > offset + page.limit
    return Page(
        items=every[offset : offset + page.limit],
        here=page.position or {"offset": 0},
        next={"offset": offset + page.limit} if more else None,
        more_pages=more,
        total=len(every),
        note=note,
    )
