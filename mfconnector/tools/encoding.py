"""Each result encoded once: the JSON text of its rows, reused for the text block and for
the size accounting.

A listing encodes each item as it is added (``text_of``) and counts what it will cost on
the wire from that same text (``wire_cost``: the structured copy, ASCII-escaped, and the
text copy inside a JSON string), so stopping at ``result_bytes`` needs no second
encoding. ``encoded`` then joins the pieces into the result's text, byte for byte what
``json.dumps`` of the whole result would give; ``success_result`` sends that text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Encoded", "encoded", "text_of", "wire_cost"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""NaN is refused here as on the reply line, which carries this text."""


def text_of(value: Any) -> str:
    """Compact JSON, non-ASCII kept as it is (the text block's form)."""
    return _dumps(value)


def wire_cost(text: str) -> int:
    """What a value whose ``text_of`` is ``text`` costs in a reply: once as structured
    content (non-ASCII escaped as ``\\uXXXX``, a surrogate pair past the BMP) and once
    inside the text block's JSON string (its quotes and backslashes escaped again)."""
    again = text.count('"') + text.count("\\")
    if text.isascii():
        return 2 * len(text) + again
    ascii_chars = len(text.encode("ascii", "ignore"))
    units = len(text.encode("utf-16-le")) // 2
    escaped = ascii_chars + 6 * (units - ascii_chars)
    return 2 * escaped + again


class Encoded(dict[str, Any]):
    """A result and its text, written once while it was built. Changing the dict after
    that would leave the text behind: callers make a plain copy to change it.

    (The reply line encodes the structured copy again, ASCII-escaped: splicing it from this
    text, by undoing the text block's string escapes, measured slower than the encoder.)"""

    text: str


def encoded(result: Mapping[str, Any], rows_key: str, row_texts: Sequence[str]) -> Encoded:
    """``result`` with its ``rows_key`` value encoded from ``row_texts`` (one per row).
    The keys before the rows and those after are encoded as two objects whose braces are
    trimmed (two encoder calls, not two per key), and the pieces are joined once."""
    keys = list(result)
    at = keys.index(rows_key)
    before = _dumps({k: result[k] for k in keys[:at]})[:-1]
    after = _dumps({k: result[k] for k in keys[at + 1 :]})[1:]
    pieces = [before, "," if at else "", _dumps(rows_key), ":[", ",".join(row_texts), "]"]
    pieces += ("," if len(after) > 1 else "", after)
    out = Encoded(result)
    out.text = "".join(pieces)
    return out
