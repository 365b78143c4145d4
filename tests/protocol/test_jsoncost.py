"""Counting a line's JSON values before parsing it, and finding its id without parsing it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfconnector.jsoncost import values_over_limit

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=40,
)
ids = st.integers() | st.text(max_size=20)


def marks(value: Any) -> int:
    """``{``, ``[``, ``,`` and ``:`` outside strings, counted from the value itself."""
    if isinstance(value, list):
        return 1 + max(len(value) - 1, 0) + sum(marks(item) for item in value)
    if isinstance(value, dict):
        return 1 + max(len(value) - 1, 0) + len(value) + sum(marks(v) for v in value.values())
    return 0


@pytest.mark.slow
@given(json_values, st.sampled_from([None, (",", ":"), (", ", ": ")]))
def test_the_count_is_exact_outside_strings_whatever_the_strings_hold(
    value: Any, separators: tuple[str, str] | None
) -> None:
    line = json.dumps(value, separators=separators).encode()
    count = 1 + marks(value)
    assert values_over_limit(line, count) is None
    over = values_over_limit(line, count - 1)
    assert over is not None and over.values == count


@pytest.mark.slow
@given(ids, json_values, st.booleans())
def test_the_id_of_a_refused_line_is_recovered_wherever_it_sits(
    request_id: Any, params: Any, id_last: bool
) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    if id_last:  # the TypeScript SDK's order
        message = {"method": "tools/call", "params": params, "jsonrpc": "2.0", "id": request_id}
    line = json.dumps(message).encode()
    over = values_over_limit(line, 0)
    assert over is not None
    brackets_in_strings = any(mark in text for text in _strings(message) for mark in ("{", "["))
    if brackets_in_strings:
        assert over.top is None  # refused without an id rather than with a wrong one
    else:
        assert over.top is not None and over.top["id"] == request_id
        assert over.top["jsonrpc"] == "2.0" and over.top["method"] == "tools/call"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    return []


def test_a_line_that_is_not_an_object_has_no_top() -> None:
    for line in (b"[" * 50, b"[" + b"{}," * 100 + b"{}]", b'"' + b"," * 100 + b'"' + b",1" * 20):
        over = values_over_limit(line, 10)
        assert over is not None and over.top is None


def test_an_unterminated_string_counts_as_one_value_and_is_left_to_the_parser() -> None:
    """Its commas are not values; the parser then refuses the line in one linear pass."""
    from mfconnector.jsonrpc import Invalid, parse_line

    line = b'{"id":1,"p":"' + b'\\",' * 1000
    assert values_over_limit(line, 10) is None
    message = parse_line(line, 10)
    assert isinstance(message, Invalid) and message.reply["error"]["code"] == -32700


def test_a_run_of_empty_arrays_keeps_the_comma_after_it() -> None:
    """CPython before 3.11.5 ate the comma with the old possessive pattern (Debian 12's 3.11.2)."""
    from mfconnector.jsoncost import _INNERMOST_RUN

    assert _INNERMOST_RUN.sub(b"0", b"[], 1") == b"0, 1"
    assert _INNERMOST_RUN.sub(b"0", b'[[], {"a": "]"} , [1] ,2]') == b"[0 ,2]"
    line = b'{"jsonrpc":"2.0","method":"tools/call","params":{"a":[[],[{}, {}], 1]},"id":9}'
    over = values_over_limit(line, 3)
    assert over is not None and over.top is not None and over.top["id"] == 9


def _reference_top(value: dict[str, Any]) -> dict[str, Any]:
    """What ``top`` must be: the object with each nested container replaced by 0."""
    return {k: 0 if isinstance(v, (list, dict)) else v for k, v in value.items()}


bracket_free_text = st.text(
    st.characters(blacklist_characters="{}[]", blacklist_categories=("Cs",)), max_size=80
)
plain_json = st.recursive(
    st.none() | st.booleans() | st.integers() | bracket_free_text,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(bracket_free_text, inner, max_size=4)
    ),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=50)
@given(
    st.dictionaries(bracket_free_text, plain_json, min_size=1, max_size=6),
    st.sampled_from([None, (",", ":"), (" , ", " : ")]),
    st.booleans(),
)
def test_the_top_level_matches_a_plain_reference_implementation(
    value: dict[str, Any], separators: tuple[str, str] | None, ascii_only: bool
) -> None:
    line = json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()
    over = values_over_limit(line, 0)
    assert over is not None and over.top is not None
    assert over.top == _reference_top(value)


@pytest.mark.parametrize("size", [3, 4, 5])
def test_a_line_shorter_than_the_limit_is_never_counted_over_it(size: int) -> None:
    """A line of N bytes holds at most N + 1 values by the count (every byte a comma), so a
    line shorter than the limit passes uncounted; at and past it the count decides."""
    line = b"[" + b"," * (size - 2) + b"]"
    assert len(line) == size
    over = values_over_limit(line, 4, find_top=False)
    assert (over is None) == (size < 4 or 1 + size - 2 + 1 <= 4)
    if over is not None:
        assert over.values == size
