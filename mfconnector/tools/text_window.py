"""One window of a text file's bytes as text: where it starts and ends, in bytes.

``files_read`` asks the download host for a byte range (RFC 9110 §14), so a call costs one
window whatever the file's size and the end of a 2.6 MB log is as near as its start. A
window that starts inside a UTF-8 sequence begins at the next character; one that ends
inside a sequence stops before it, so the next window (from ``end``) loses nothing.
Undecodable bytes show as U+FFFD and are counted.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["TextWindow", "decode_window", "window_start"]

BOM = b"\xef\xbb\xbf"
MAX_CONTINUATION_BYTES = 3
"""A UTF-8 character has at most three bytes after its first."""


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


def decode_window(data: bytes, *, start: int, at_end: bool, max_chars: int) -> TextWindow:
    """At most ``max_chars`` characters of ``data`` (the bytes from ``start``)."""
    skip = 0
    if start == 0 and data.startswith(BOM):
        skip = len(BOM)
    elif start > 0:
        while skip < min(MAX_CONTINUATION_BYTES, len(data)) and 0x80 <= data[skip] < 0xC0:
            skip += 1
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    raw_text = decoder.decode(data[skip:], final=at_end)[:max_chars]
    used = len(raw_text.encode("utf-8", errors="surrogateescape"))
    undecodable = sum(1 for char in raw_text if "\udc80" <= char <= "\udcff")
    if undecodable:
        raw_text = "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in raw_text)
    return TextWindow(raw_text, start + skip, start + skip + used, undecodable)
