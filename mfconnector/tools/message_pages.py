"""A page of messages or folders as a result: bounded, encoded once, with its cursor.

Each item is shaped from the model; the page's text gives its cost on the wire
(``tools.encoding``), so the page stops at ``result_bytes`` (at least one item is always
shown) and the result's text block is that text, never a second encoding of the whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from mfconnector.mail.model import Folder, MessageSummary, Page
from mfconnector.shaping import Skipped
from mfconnector.tools.encoding import Encoded, encoded, text_of, wire_cost
from mfconnector.tools.mail_call import MailCall
from mfconnector.tools.mail_view import (
    COMPACT_LIST_OMITS,
    FOLDER_COLUMNS,
    FOLDER_SHARED,
    GET_FULL,
    Bounds,
    folder_row,
    full_folder,
    full_summary,
    message_row,
    omitted_record,
    table_columns,
)
from mfconnector.tools.paging import Listing

__all__ = ["folder_result", "message_result", "page_counts"]

T = TypeVar("T")
Encode = Callable[[T, str], Any]


def _fill(
    listing: Listing,
    page: Page[T],
    key: str,
    shape: Encode[T],
    skipped: Skipped,
) -> tuple[list[T], list[Any], list[str]]:
    """Shape the items and keep them, in order, while the result stays within
    ``result_bytes``: the items kept, their shaped values and the texts to join.

    A page that fits (nearly every page) is encoded in one piece and its cost read from
    that text (the sum of the items' costs plus their commas); only a page over the
    budget is encoded item by item to find the longest prefix that fits, at least one.
    """
    budget = listing.ctx.limits.result_bytes
    items = page.items
    first = len(skipped.fields)
    values: list[Any] = []
    ends: list[int] = []
    """``skipped.fields`` length after each item: the records that item added."""
    for index, item in enumerate(items):
        values.append(shape(item, f"{key}[{index}]"))
        ends.append(len(skipped.fields))
    records = sum(wire_cost(text_of(r)) + 2 for r in skipped.fields[first:])
    if values:
        whole = text_of(values)
        if wire_cost(whole) - 2 + records <= budget:
            skipped.items = listing.continuation(page, len(values), size_limited=False)
            return list(items), values, [whole[1:-1]]
    texts: list[str] = []
    size = 0
    for index, value in enumerate(values):
        text = text_of(value)
        since = ends[index - 1] if index else first
        size += wire_cost(text) + 2
        size += sum(wire_cost(text_of(r)) + 2 for r in skipped.fields[since : ends[index]])
        if texts and size > budget:
            del skipped.fields[since:]
            break
        texts.append(text)
    kept = len(texts)
    skipped.items = listing.continuation(page, kept, size_limited=kept < len(items))
    return list(items[:kept]), values[:kept], texts


def page_counts(messages: Sequence[MessageSummary]) -> dict[str, Any]:
    """Counts over the messages of this page only (triage)."""
    flagged = [m.flag == "flagged" for m in messages]
    return {
        "messages": len(messages),
        "unread": sum(1 for m in messages if m.unread),
        "flagged": sum(flagged),
        "unread_and_flagged": sum(
            1 for m, f in zip(messages, flagged, strict=True) if m.unread and f
        ),
        "covers": "this page only",
    }


def message_result(
    call: MailCall,
    listing: Listing,
    page: Page[MessageSummary],
    *,
    echo: Mapping[str, Any],
    full: bool,
    spans_folders: bool,
    counts: bool = False,
) -> Encoded:
    """``mail_list`` / ``mail_search`` results: a compact table, or full messages."""
    limits = listing.ctx.limits
    skipped = Skipped(limits.skipped_paths_listed)
    bounds = Bounds(limits, skipped)
    zone = call.zone
    head: dict[str, Any] = dict(echo) if listing.context_known else {}
    call.labelled(head)
    head["time_zone"] = zone.name
    subject_chars = limits.compact_subject_chars
    if full:
        kept, values, texts = _fill(
            listing,
            page,
            "messages",
            lambda m, path: full_summary(m, zone, bounds, path),
            skipped,
        )
        if counts:
            head["page_counts"] = page_counts(kept)
        head["messages"] = values
        return _finish(head, "messages", texts, skipped)
    columns = table_columns(page.items, spans_folders=spans_folders)

    def row(message: MessageSummary, path: str) -> list[Any]:
        return message_row(
            message, zone, bounds, path, subject_chars=subject_chars, columns=columns
        )

    kept, values, texts = _fill(listing, page, "messages", row, skipped)
    cut = sum(1 for m in kept if m.subject is not None and len(m.subject) > subject_chars)
    if counts:
        head["page_counts"] = page_counts(kept)
    head["columns"] = columns
    head["messages"] = values
    omits = [n for n in COMPACT_LIST_OMITS if not (spans_folders and n == "folder")]
    omitted = omitted_record(omits, kept) if kept else None
    if cut:
        omitted = omitted or {"fields": [], "get": GET_FULL}
        omitted["subjects_cut"] = {"count": cut, "kept_chars": subject_chars}
    if omitted:
        head["omitted"] = omitted
    return _finish(head, "messages", texts, skipped)


def _finish(head: dict[str, Any], key: str, texts: list[str], skipped: Skipped) -> Encoded:
    """The result (its ``key`` holds the shaped values) and its text from ``texts``."""
    skipped.apply(head)
    return encoded(head, key, texts)


def folder_result(
    call: MailCall,
    listing: Listing,
    page: Page[Folder],
    *,
    echo: Mapping[str, Any],
    full: bool,
) -> Encoded:
    """``mail_folders``: compact (a table; a value every row shares stated once) or full."""
    skipped = Skipped(listing.ctx.limits.skipped_paths_listed)
    bounds = Bounds(listing.ctx.limits, skipped)
    head: dict[str, Any] = dict(echo) if listing.context_known else {}
    call.labelled(head)
    if full:
        _, values, texts = _fill(
            listing, page, "folders", lambda f, p: full_folder(f, bounds, p), skipped
        )
        head["folders"] = values
        return _finish(head, "folders", texts, skipped)
    rows = [
        folder_row(
            f, Bounds(listing.ctx.limits, Skipped(listing.ctx.limits.skipped_paths_listed)), ""
        )
        for f in page.items
    ]
    columns = list(FOLDER_COLUMNS)
    common: dict[str, Any] = {}
    for name in FOLDER_SHARED:
        values = [r.get(name) for r in rows]
        if all(v is None for v in values):
            continue
        if len(rows) > 1 and all(v == values[0] for v in values):
            common[name] = values[0]
        else:
            columns.append(name)

    def row(folder: Folder, path: str) -> list[Any]:
        values = folder_row(folder, bounds, path)
        line = [values.get(c) for c in columns]
        while line and line[-1] is None:
            line.pop()
        return line

    _, values, texts = _fill(listing, page, "folders", row, skipped)
    head["columns"] = columns
    head["folders"] = values
    if common:
        head["common"] = common
    return _finish(head, "folders", texts, skipped)


def item_result(
    call: MailCall,
    listing: Listing,
    page: Page[T],
    *,
    key: str,
    echo: Mapping[str, Any],
    shape: Callable[[T, Bounds, str], Any],
) -> Encoded:
    """A plain list of items (a message's attachments), each shaped in full."""
    skipped = Skipped(listing.ctx.limits.skipped_paths_listed)
    bounds = Bounds(listing.ctx.limits, skipped)
    head: dict[str, Any] = dict(echo) if listing.context_known else {}
    call.labelled(head)
    _, values, texts = _fill(listing, page, key, lambda item, p: shape(item, bounds, p), skipped)
    head[key] = values
    return _finish(head, key, texts, skipped)
