"""A result encoded once: ``structuredContent`` given as an ``EncodedObject`` (sent beside
its own text as the text block) goes on the reply line from that text. The line must be
byte for byte what encoding the plain dict gives, whatever the strings hold: accents,
astral characters, U+2028, DEL, controls, quotes, backslashes and escape look-alikes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.jsonrpc import EncodedObject, encode, result_response

TRICKY = st.sampled_from(["\\", '"', '\\"', "\\\\", "\\u00e9", "\x7f", "\u2028", "\n", "é", "𝄞"])
TEXT = st.lists(
    TRICKY | st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=8), max_size=6
).map("".join)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
TAIL = st.fixed_dictionaries(
    {}, optional={"isError": st.booleans(), "resultType": st.just("complete"), "_meta": VALUES}
)


def encoded_object(value: dict[str, Any]) -> EncodedObject:
    out = EncodedObject(value)
    out.text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return out


@pytest.mark.slow  # a hundred generated results: over 1 s
@given(st.dictionaries(TEXT, VALUES, max_size=6), st.integers(0, 10**6) | TEXT, TAIL)
def test_a_spliced_reply_is_byte_for_byte_the_reply_of_the_dict(
    structured: dict[str, Any], request_id: Any, tail: dict[str, Any]
) -> None:
    encoded = encoded_object(structured)
    content = [{"type": "text", "text": encoded.text}]
    spliced = encode(
        result_response(request_id, {"content": content, "structuredContent": encoded, **tail})
    )
    plain = encode(
        result_response(
            request_id, {"content": content, "structuredContent": dict(structured), **tail}
        )
    )
    assert spliced == plain
    assert spliced.isascii() and spliced.endswith(b"\n") and spliced.count(b"\n") == 1


def test_another_text_block_or_order_falls_back_to_encoding_the_dict() -> None:
    encoded = encoded_object({"subject": 'Grüße "quoted" \\ back'})
    other = {"content": [{"type": "text", "text": "something else"}], "structuredContent": encoded}
    reordered = {"structuredContent": encoded, "content": [{"type": "text", "text": encoded.text}]}
    for result in (other, reordered):
        plain = {**result, "structuredContent": dict(encoded)}
        assert encode(result_response(3, result)) == encode(result_response(3, plain))
