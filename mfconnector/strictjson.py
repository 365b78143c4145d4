"""Strict JSON, parsed one way for every reader: the policies are parameters. Pure code.

RFC 8259 text that the rest of the connector could not carry on is refused or noted, never
silently turned into something else: ``NaN`` and ``Infinity`` (not JSON at all, always
refused), a number that overflows to infinity, an integer longer than the reader allows
(refused before Python converts it: Python's own limit is process-wide and its wording is
Python's), nesting deeper than Python's parser can follow, and a key repeated in one object
(RFC 7493 section 2.3: a gateway that reads the first ``name`` and a server that keeps the
last would see different tools).

Each reader picks what a problem does: a request line is parsed to the end so its reply
keeps the request's id (``numbers="note"``, ``repeated_keys="flag"``), a Graph body is
refused at once, a fixture file is refused with the place of the repeated key.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "REFUSED_NUMBER",
    "Parsed",
    "Problem",
    "RepeatedKeys",
    "StrictJsonError",
    "Strictness",
    "parse_strict",
]

ProblemKind = Literal["syntax", "constant", "too_deep", "overflow", "long_integer", "repeated_key"]

_SYNTAX = {
    "Expecting value": "a value is missing",
    "Expecting ',' delimiter": "a comma is missing",
    "Expecting ':' delimiter": "a colon is missing after a key",
    "Expecting property name enclosed in double quotes": "a key must be a string in quotes",
    "Unterminated string starting at": "a string is not closed",
    "Invalid control character at": "a string holds an unescaped control character",
    "Invalid \\escape": "a string holds an invalid backslash escape",
    "Invalid \\uXXXX escape": "a string holds an invalid \\u escape",
    "Extra data": "more text follows the JSON value",
    "Illegal trailing comma before end of object": "a comma ends an object (nothing follows it)",
    "Illegal trailing comma before end of array": "a comma ends an array (nothing follows it)",
}
"""Python's parser's messages, said in our words (and its wording never reaches a user).
Python 3.13 names a trailing comma itself; earlier versions report the key or value that
should follow it."""

REFUSED_NUMBER: Any = object()
"""What a noted over-long integer parses as: a value that no id or argument check accepts."""


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong, in our words (never Python's), and which rule it broke."""

    kind: ProblemKind
    message: str


class StrictJsonError(ValueError):
    """Text refused under the reader's policy; ``column`` and ``line`` for syntax errors."""

    def __init__(self, problem: Problem, *, line: int | None = None, column: int | None = None):
        super().__init__(problem.message)
        self.problem = problem
        self.line = line
        self.column = column

    @property
    def kind(self) -> ProblemKind:
        return self.problem.kind


class RepeatedKeys(dict[str, Any]):
    """An object that repeated a key (``repeated_keys="flag"``); ``repeated`` is the first."""

    repeated: str = ""


@dataclass(frozen=True, slots=True)
class Strictness:
    """One reader's policy."""

    numbers: Literal["raise", "note"] = "raise"
    """An overflowing number or an over-long integer: raise at once, or note the problem and
    go on (the value parses as ``inf`` or :data:`REFUSED_NUMBER`)."""
    integer_digits: int | None = None
    """Most digits an integer may have (sign not counted); None: Python's own limit."""
    repeated_keys: Literal["keep_last", "flag"] = "keep_last"
    """``flag``: such an object is a :class:`RepeatedKeys` and the problem is noted."""


@dataclass(frozen=True, slots=True)
class Parsed:
    value: Any
    problem: Problem | None
    """The first problem noted; None when the text is clean."""


class _Hooks:
    """The ``json.loads`` hooks for one parse under one policy."""

    def __init__(self, strictness: Strictness) -> None:
        self.strictness = strictness
        self.problem: Problem | None = None

    def _refuse(self, problem: Problem) -> None:
        if self.strictness.numbers == "raise" and problem.kind != "repeated_key":
            raise StrictJsonError(problem)
        if self.problem is None:
            self.problem = problem

    def constant(self, name: str) -> Any:
        raise StrictJsonError(
            Problem("constant", f"{name} is not JSON (NaN and Infinity are not allowed)")
        )

    def number(self, text: str) -> float:
        value = float(text)
        if math.isinf(value):
            self._refuse(Problem("overflow", f"the number {text[:40]} overflows to infinity"))
        return value

    def integer(self, text: str) -> Any:
        digits = len(text) - text.startswith("-")
        limit = self.strictness.integer_digits
        if limit is not None and digits > limit:
            self._refuse(_long_integer(digits, limit))
            return REFUSED_NUMBER
        try:
            return int(text)
        except ValueError:  # past Python's own limit (sys.get_int_max_str_digits)
            self._refuse(_long_integer(digits, None))
            return REFUSED_NUMBER

    def object_pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        flagged = RepeatedKeys(obj)
        flagged.repeated = _first_repeated(key for key, _ in pairs)
        shown = json.dumps(flagged.repeated[:64])
        self._refuse(Problem("repeated_key", f"the key {shown} appears twice in one object"))
        return flagged


def _long_integer(digits: int, limit: int | None) -> Problem:
    most = f", more than the {limit:,} this server reads" if limit is not None else ""
    return Problem("long_integer", f"an integer has {digits:,} digits{most}")


def _first_repeated(keys: Any) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return str(key)
        seen.add(key)
    raise ValueError("no key is repeated")


def _decoder(hooks: _Hooks) -> json.JSONDecoder:
    strictness = hooks.strictness
    # Keeping the last of a repeated key is what ``json`` does by itself; a Python hook
    # per object would cost a third of a 50-message Graph page's parse.
    pairs = hooks.object_pairs if strictness.repeated_keys == "flag" else None
    return json.JSONDecoder(
        parse_constant=hooks.constant,
        parse_float=hooks.number,
        parse_int=hooks.integer,
        object_pairs_hook=pairs,
    )


@functools.lru_cache(maxsize=8)
def _shared_decoder(strictness: Strictness) -> tuple[_Hooks, json.JSONDecoder]:
    """One decoder for a policy that notes nothing (every problem raises at once): its
    hooks keep no state, so every parse can share them instead of building a decoder."""
    hooks = _Hooks(strictness)
    return hooks, _decoder(hooks)


def parse_strict(text: str, strictness: Strictness = Strictness()) -> Parsed:
    """``text`` parsed under ``strictness``; :class:`StrictJsonError` when it is refused."""
    if strictness.numbers == "raise" and strictness.repeated_keys == "keep_last":
        hooks, decoder = _shared_decoder(strictness)
    else:
        hooks = _Hooks(strictness)
        decoder = _decoder(hooks)
    try:
        if text.startswith("\ufeff"):  # as ``json.loads`` refuses it (``decode`` would not)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM", text, 0)
        value = decoder.decode(text)
    except RecursionError:
        raise StrictJsonError(Problem("too_deep", "nested too deeply")) from None
    except json.JSONDecodeError as exc:
        raise StrictJsonError(
            Problem("syntax", _SYNTAX.get(exc.msg, "this is not JSON")),
            line=exc.lineno,
            column=exc.colno,
        ) from None
    return Parsed(value, hooks.problem)
