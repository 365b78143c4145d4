"""JSON values in the words of a fixture error: quoted, shortened and printable.

Shared by the fixture loader (``fixtures``), its schema's messages (``fixture_schema``) and
the transport's "no canned response" error (``fixture_transport``), so none of them needs
another for its wording.
"""

from __future__ import annotations

import json
import re

__all__ = ["escape_controls", "show_value", "type_name"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def escape_controls(text: str) -> str:
    """One printable line: control characters and lone surrogates escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def show_value(value: object, limit: int = 80) -> str:
    """A JSON value quoted for an error message, shortened and made printable."""
    if isinstance(value, str):
        shown = json.dumps(
            value[:limit] + ("..." if len(value) > limit else ""), ensure_ascii=False
        )
    elif isinstance(value, bool) or value is None:
        shown = json.dumps(value)
    elif isinstance(value, int | float):
        shown = str(value)[:limit]
    elif isinstance(value, list):
        shown = "an array"
    else:
        shown = "an object"
    return escape_controls(shown)


def type_name(value: object) -> str:
    """What kind of JSON value ``value`` is, for "must be X, not Y" messages."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    return "an object"
