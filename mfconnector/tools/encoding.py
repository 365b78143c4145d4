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
    The pieces are joined once: a chain of ``+`` would copy the rows' text at each step."""
    pieces = ["{"]
    for key, value in result.items():
        if len(pieces) > 1:
            pieces.append(",")
        pieces += (_dumps(key), ":")
        if key == rows_key:
            pieces += ("[", ",".join(row_texts), "]")
        else:
            pieces.append(_dumps(value))
    pieces.append("}")
    out = Encoded(result)
    out.text = "".join(pieces)
    return out
