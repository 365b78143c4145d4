"""A result encoded once: ``structuredContent`` given as an ``EncodedObject`` is spliced
into the reply line from its text. The line must be what encoding the dict gives: the same
JSON, ASCII only, whatever the strings hold (accents, astral characters, U+2028, controls,
quotes and backslashes)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mfconnector.jsonrpc import EncodedObject, ascii_json, encode, result_response

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def compact(value: Any, *, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))


@given(VALUES)
def test_ascii_json_is_what_ensure_ascii_writes(value: Any) -> None:
    assert ascii_json(compact(value, ascii_only=False)) == compact(value, ascii_only=True)


@given(st.dictionaries(TEXT, VALUES, max_size=6), st.integers(0, 10**6) | TEXT)
def test_a_spliced_reply_is_the_reply_of_the_dict(structured: dict[str, Any], rid: Any) -> None:
    encoded = EncodedObject(structured)
    encoded.text = compact(structured, ascii_only=False)
    result = {"content": [{"type": "text", "text": encoded.text}], "isError": False}
    line = encode(result_response(rid, {**result, "structuredContent": encoded}))
    plain = encode(result_response(rid, {**result, "structuredContent": dict(structured)}))
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    assert json.loads(line) == json.loads(plain)
    assert len(line) == len(plain)


def test_a_plain_dict_is_encoded_as_before() -> None:
    reply = result_response(7, {"structuredContent": {"é": "𝄞"}, "isError": False})
    assert encode(reply) == (compact(reply, ascii_only=True) + "\n").encode("ascii")
