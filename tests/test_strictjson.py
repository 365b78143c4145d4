"""The one strict JSON parser: what is refused always, and what each policy does."""

from __future__ import annotations

import math
import sys

import pytest

from mfconnector.strictjson import (
    REFUSED_NUMBER,
    RepeatedKeys,
    StrictJsonError,
    Strictness,
    parse_strict,
)

NOTE = Strictness(numbers="note", integer_digits=3, repeated_keys="flag")
PYTHON_WORDING = ("Exceeds the limit", "int_max_str_digits", "Expecting", "Traceback")


@pytest.mark.parametrize("strictness", [Strictness(), NOTE], ids=["raise", "note"])
@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "-Infinity"])
def test_nan_and_infinity_are_never_json(text: str, strictness: Strictness) -> None:
    with pytest.raises(StrictJsonError, match="is not JSON") as caught:
        parse_strict(text, strictness)
    assert caught.value.kind == "constant"


def test_raise_refuses_an_overflowing_number_at_once() -> None:
    with pytest.raises(StrictJsonError, match="1e999 overflows to infinity") as caught:
        parse_strict('{"a": [1, -1e999]}')
    assert caught.value.kind == "overflow"


def test_note_parses_on_and_keeps_the_first_problem() -> None:
    parsed = parse_strict('{"id": 7, "a": 1e999, "b": 12345}', NOTE)
    assert parsed.value["id"] == 7  # the rest of the text is still read
    assert math.isinf(parsed.value["a"]) and parsed.value["b"] is REFUSED_NUMBER
    assert parsed.problem is not None and parsed.problem.kind == "overflow"


@pytest.mark.parametrize(("digits", "refused"), [(2, False), (3, False), (4, True)])
def test_integer_digits_at_l_minus_1_l_and_l_plus_1(digits: int, refused: bool) -> None:
    text = "-" + "7" * digits  # the sign is not a digit
    if refused:
        with pytest.raises(StrictJsonError, match=f"{digits:,} digits, more than the 3"):
            parse_strict(text, Strictness(integer_digits=3))
        assert parse_strict(text, NOTE).value is REFUSED_NUMBER
    else:
        assert parse_strict(text, Strictness(integer_digits=3)).value == int(text)


def test_pythons_own_integer_limit_is_refused_in_our_words() -> None:
    with pytest.raises(StrictJsonError) as caught:
        parse_strict("9" * 5_000)
    assert caught.value.kind == "long_integer" and "5,000 digits" in str(caught.value)
    assert not any(words in str(caught.value) for words in PYTHON_WORDING)


def test_repeated_keys_keep_the_last_unless_flagged() -> None:
    text = '{"name": "a", "x": {"k": 1, "k": 2}, "name": "b"}'
    kept = parse_strict(text)
    assert kept.value == {"name": "b", "x": {"k": 2}} and kept.problem is None
    assert not isinstance(kept.value, RepeatedKeys)
    flagged = parse_strict(text, Strictness(repeated_keys="flag"))  # numbers still raise
    assert isinstance(flagged.value, RepeatedKeys) and flagged.value.repeated == "name"
    assert isinstance(flagged.value["x"], RepeatedKeys) and flagged.value["x"].repeated == "k"
    assert flagged.problem is not None and flagged.problem.kind == "repeated_key"
    assert flagged.problem.message == 'the key "k" appears twice in one object'  # inner first


def test_nesting_past_the_parser_and_bad_syntax_say_so() -> None:
    with pytest.raises(StrictJsonError) as deep:
        parse_strict("[" * 100_000 + "]" * 100_000)
    assert deep.value.kind == "too_deep"
    with pytest.raises(StrictJsonError) as bad:
        parse_strict('{\n  "a": 1,\n  3}')
    assert bad.value.kind == "syntax" and (bad.value.line, bad.value.column) == (3, 3)
    assert str(bad.value) == "a key must be a string in quotes"


@pytest.mark.parametrize(
    ("text", "before_3_13", "from_3_13"),
    [
        ('{"a": 1,}', "a key must be a string in quotes", "a comma ends an object"),
        ("[1, 2,]", "a value is missing", "a comma ends an array"),
    ],
)
def test_a_trailing_comma_is_said_in_our_words(text: str, before_3_13: str, from_3_13: str) -> None:
    """Python 3.13's parser names the trailing comma; earlier ones the missing key or value."""
    with pytest.raises(StrictJsonError) as bad:
        parse_strict(text)
    expected = from_3_13 if sys.version_info >= (3, 13) else before_3_13
    assert bad.value.kind == "syntax" and str(bad.value).startswith(expected)


@pytest.mark.parametrize(
    "text", ["", "{", '{"a" 1}', '{"a": 1 "b": 2}', '"open', '"\\q"', '"\\u12"', "1 2", '"\x01"']
)
def test_syntax_errors_are_in_our_words(text: str) -> None:
    with pytest.raises(StrictJsonError) as caught:
        parse_strict(text)
    assert caught.value.kind == "syntax" and str(caught.value) != "this is not JSON"
    assert not any(words in str(caught.value) for words in PYTHON_WORDING)
