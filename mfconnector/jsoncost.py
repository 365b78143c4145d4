"""What a JSON line costs once parsed, counted before it is parsed. Pure code.

A line's bytes say little about its parsed size: 1 MB of ``[{},{},...]`` is 333,000
dicts, about 24 MB of Python objects. So the reader counts values first, with C-speed
``bytes.count`` (and one regex pass that blanks strings, only when the quick count is
already over the limit), and refuses a line past ``Limits.request_values`` without
parsing it. The top-level members (the request id) are then recovered from a copy in
which every nested container is collapsed, so the refusal can still be paired with its
request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["OverLimit", "values_over_limit"]

_STRUCTURE = (b"{", b"[", b",", b":")
"""Every value or key after the first opens with one of these, outside strings."""
_STRING_BODY = rb'[^"\\]*(?:\\.[^"\\]*)*"'
"""A string's rest after its opening quote, as an unrolled loop: at every byte exactly one
branch can match (a plain byte, a backslash pair or the closing quote), so a failed match
gives bytes back one at a time without retrying anything. That keeps each pass linear
without possessive quantifiers, which CPython before 3.11.5 gets wrong."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
"""A string, or an unterminated one up to the end of the line: this pattern matches at
every quote it is tried at, so ``sub`` never rescans the rest of the line from each quote
inside an unterminated string (``"\\"\\"\\"...`` would otherwise cost quadratic time)."""
_STRING_HEAD = re.compile(rb"(?:[^\\]|\\u[0-9A-Fa-f]{4}|\\.){0,64}", re.DOTALL)
"""The first 64 characters of a string's content (escapes whole); nothing follows it in the
pattern, so the greedy repeat never backtracks."""
_FLAT = rb'[^{}\[\]"]*(?:"' + _STRING_BODY + rb'[^{}\[\]"]*)*'
_INNERMOST = rb"(?:\{" + _FLAT + rb"\}|\[" + _FLAT + rb"\])"
_INNERMOST_RUN = re.compile(_INNERMOST + rb"(?:\s*,\s*" + _INNERMOST + rb")*", re.DOTALL)
"""Innermost containers (no container inside), with their neighbours in the same array."""
_FLAT_OBJECT = re.compile(rb"\s*\{" + _FLAT + rb"\}\s*", re.DOTALL)
COLLAPSE_PASSES = 16
"""Nesting levels collapsed while looking for the top level (JSON-RPC needs about 5)."""
SHALLOW_BYTES = 65_536
"""Largest collapsed top level parsed; a real request's top level is well under 1 KB."""
SHALLOW_STRINGS = 1_000
"""Most quote marks in a large top level before its strings are cut short for the parse."""


@dataclass(frozen=True, slots=True)
class OverLimit:
    """A line with more values than the limit; ``top`` is its shallow top level, if known."""

    values: int
    top: dict[str, Any] | None


def values_over_limit(data: bytes, limit: int, *, find_top: bool = True) -> OverLimit | None:
    """None when ``data`` holds at most ``limit`` values (keys included), else the count.

    The count is one plus each ``{``, ``[``, ``,`` and ``:`` outside strings (an empty
    container counts one more than it holds). The quick count includes string contents;
    only when that is over the limit are strings blanked and the count taken again.
    """
    if len(data) < limit:
        return None  # the count below is at most one more than the bytes: no need to count
    quick = 1 + sum(data.count(mark) for mark in _STRUCTURE)
    if quick <= limit:
        return None
    blanked = _STRING.sub(b'""', data)
    exact = 1 + sum(blanked.count(mark) for mark in _STRUCTURE)
    if exact <= limit:
        return None
    openers_in_strings = any(data.count(mark) != blanked.count(mark) for mark in (b"{", b"["))
    if openers_in_strings or not find_top:
        return OverLimit(exact, None)
    return OverLimit(exact, _shallow_top(data))


def _shallow_top(data: bytes) -> dict[str, Any] | None:
    """The top-level object of ``data``, each nested container replaced by ``0``.

    Only for a line whose strings hold no ``{`` or ``[``, so that every container the
    regex finds is a real one. None when the line is not a JSON object, is nested past
    ``COLLAPSE_PASSES`` levels, or its top level is itself too large. Long strings in a
    large top level are cut to 64 characters. Bounded: a few linear regex passes and one
    small parse.
    """
    shallow = data
    for _ in range(COLLAPSE_PASSES):
        if _FLAT_OBJECT.fullmatch(shallow):
            break
        shallow, count = _INNERMOST_RUN.subn(b"0", shallow)
        if count == 0:
            return None
    else:
        if not _FLAT_OBJECT.fullmatch(shallow):
            return None
    if len(shallow) > SHALLOW_BYTES:
        if shallow.count(b'"') > SHALLOW_STRINGS:
            return None
        shallow = _STRING.sub(_shortened, shallow)
        if len(shallow) > SHALLOW_BYTES:
            return None
    try:
        top = json.loads(shallow)
    except (ValueError, RecursionError):
        return None
    return top if isinstance(top, dict) else None


def _shortened(match: re.Match[bytes]) -> bytes:
    """A string cut to its first 64 characters, escapes kept whole."""
    content = match.group()[1:-1]
    head = _STRING_HEAD.match(content)
    assert head is not None  # the pattern matches the empty string
    return b'"' + head.group() + b'"'
