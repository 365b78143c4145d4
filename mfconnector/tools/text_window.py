"""One window of a text file's bytes as text: where it starts and ends, in bytes.

``files_read`` asks the download host for a byte range (RFC 9110 §14), so a call costs one
window whatever the file's size and the end of a 2.6 MB log is as near as its start. A
window that starts inside a UTF-8 sequence begins at the next character; one that ends
inside a sequence stops before it, so the next window (from ``end``) loses nothing.
Undecodable bytes show as U+FFFD and are counted.

Windows also end and begin between words, never inside one: a pre-authenticated link or a
token cut in two would leave each half unrecognisable to ``shaping.redact_text``, and the
half after the cut (a credential's tail) would be shown. So a window that would end inside
a run of non-blank characters ends before that run (the next window begins with it), and
an offset that falls inside a run is moved back to the run's first byte (``word_start``),
so nothing is lost either way. Only a run longer than ``TOKEN_EDGE_BYTES`` is cut.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["TOKEN_EDGE_BYTES", "TextWindow", "decode_window", "window_start", "word_start"]

BOM = b"\xef\xbb\xbf"
MAX_CONTINUATION_BYTES = 3
"""A UTF-8 character has at most three bytes after its first."""
TOKEN_EDGE_BYTES = 4_096
"""How far a window's edge moves to fall between words (a SharePoint link is ~1-2 KB)."""
BLANK_BYTES = frozenset(b" \t\r\n\f\v")


@dataclass(frozen=True, slots=True)
class TextWindow:
    """Text from byte ``start`` up to (not including) byte ``end`` of the file."""

    text: str
    start: int
    end: int
    undecodable_chars: int


def window_start(offset: int, total: int | None) -> int:
    """The first byte an ``offset`` names: from the start, or from the end when negative."""
    if offset >= 0:
        return offset
    if total is None:
        raise ValueError("the file's size is unknown")
    return max(0, total + offset)


def word_start(before: bytes) -> int:
    """How many of the bytes just before a window belong to the word it starts in.

    ``before`` holds up to ``TOKEN_EDGE_BYTES`` bytes that precede the window's first byte;
    blanks are ASCII, so a blank is always a character boundary.
    """
    for index in range(len(before) - 1, -1, -1):
        if before[index] in BLANK_BYTES:
            return len(before) - index - 1
    return 0 if len(before) >= TOKEN_EDGE_BYTES else len(before)


def decode_window(data: bytes, *, start: int, at_end: bool, max_chars: int) -> TextWindow:
    """At most ``max_chars`` characters of ``data`` (the bytes from ``start``), ending
    between words unless the file ends there."""
    skip = 0
    if start == 0 and data.startswith(BOM):
        skip = len(BOM)
    elif start > 0:
        while skip < min(MAX_CONTINUATION_BYTES, len(data)) and 0x80 <= data[skip] < 0xC0:
            skip += 1
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    decoded = decoder.decode(data[skip:], final=at_end)
    cut_at_limit = len(decoded) > max_chars
    raw_text = decoded[:max_chars]
    if (cut_at_limit or not at_end) and raw_text and not raw_text[-1].isspace():
        tail = _after_last_blank(raw_text)
        if tail is not None:
            raw_text = raw_text[:tail]
    used = len(raw_text.encode("utf-8", errors="surrogateescape"))
    undecodable = sum(1 for char in raw_text if "\udc80" <= char <= "\udcff")
    if undecodable:
        raw_text = "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in raw_text)
    return TextWindow(raw_text, start + skip, start + skip + used, undecodable)


def _after_last_blank(text: str) -> int | None:
    """Just after the last blank near the end (within ``TOKEN_EDGE_BYTES`` characters)."""
    floor = max(0, len(text) - TOKEN_EDGE_BYTES)
    for index in range(len(text) - 1, floor - 1, -1):
        if text[index].isspace():
            return index + 1 if index + 1 < len(text) else None
    return None
