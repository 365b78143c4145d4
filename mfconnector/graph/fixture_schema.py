"""The fixture file format as a JSON Schema, and its errors as one-line problems.

The structure of a fixture file (which keys, which types, which ranges) is
:data:`FIXTURE_SCHEMA`, checked by jsonschema; ``fixtures.py`` keeps only the checks a
schema cannot say well (URLs, base64, duplicate entries, Graph collections and message
bodies, lone surrogates). Each schema node that can fail carries the words for its
problem (``x-must``, ``x-problem``), so a refusal still names the entry and the problem
in plain words, like ``request.query["$top"] must be a string, not a number``.
jsonschema is imported when a fixture file is loaded, never at module import.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from mfconnector.graph.fixture_words import show_value, type_name
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.strict_schema import strict_validator

__all__ = [
    "FIXTURE_SCHEMA",
    "Problem",
    "entry_problems",
    "fixture_schema",
    "top_problems",
]


_STRING_MAP = {
    "type": "object",
    "x-must": "an object of strings",
    "propertyNames": {"minLength": 1, "x-problem": "has an empty key"},
    "additionalProperties": {"type": "string", "x-must": "a string"},
}


def fixture_schema(limits: Limits) -> dict[str, Any]:
    """The fixture file format under ``limits`` (its delay and repeated-body bounds)."""
    delay_max_ms = limits.fixture_delay_max_ms
    repeat_max_bytes = limits.fixture_repeat_bytes
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "mfconnector fixture file",
        "type": "object",
        "x-must": "an object",
        "properties": {
            "graphRoot": {"type": "string", "x-must": "a string URL"},
            "responses": {
                "type": "array",
                "x-must": "an array",
                "items": {"$ref": "#/$defs/entry"},
            },
        },
        "required": ["responses"],
        "additionalProperties": False,
        "$defs": {
            "entry": {
                "type": "object",
                "x-must": "an object",
                "properties": {
                    "request": {"$ref": "#/$defs/request"},
                    "response": {"$ref": "#/$defs/response"},
                },
                "required": ["request", "response"],
                "additionalProperties": False,
            },
            "request": {
                "type": "object",
                "x-must": "an object",
                "properties": {
                    "method": {"const": "GET", "x-must": '"GET" (the server is read-only)'},
                    "path": {
                        "type": "string",
                        "x-must": "a string",
                        "allOf": [
                            {"pattern": "^/", "x-problem": 'must start with "/"'},
                            {
                                "pattern": r"^[^?]*$",
                                "x-problem": "must not hold a query; use request.query",
                            },
                        ],
                    },
                    "url": {"type": "string", "x-must": "a string"},
                    "query": _STRING_MAP,
                },
                "required": ["method"],
                "additionalProperties": False,
                "oneOf": [{"required": ["path"]}, {"required": ["url"]}],
                "x-oneOf": 'request needs exactly one of "path" or "url"',
            },
            "response": {
                "type": "object",
                "x-must": "an object",
                "properties": {
                    "status": {
                        "type": "integer",
                        "minimum": 100,
                        "maximum": 599,
                        "x-must": "an integer 100-599",
                    },
                    "headers": {
                        **_STRING_MAP,
                        "propertyNames": {
                            "pattern": r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$",
                            "x-problem": "has an invalid header name",
                        },
                        "additionalProperties": {
                            "type": "string",
                            "pattern": r"^[\t\x20-\x7e]*$",
                            "x-must": "a string",
                            "x-problem": "must be printable ASCII (no line breaks)",
                            "x-show-value": False,
                        },
                    },
                    "delayMs": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": delay_max_ms,
                        "x-must": f"an integer 0-{delay_max_ms:,}",
                    },
                    "json": {},
                    "text": {"type": "string", "x-must": "a string"},
                    "base64": {"type": "string", "x-must": "a string"},
                    "repeat": {
                        "type": "object",
                        "x-must": "an object",
                        "properties": {
                            "text": {
                                "type": "string",
                                "minLength": 1,
                                "x-must": "a non-empty UTF-8 string",
                            },
                            "bytes": {
                                "type": "integer",
                                "minimum": 0,
                                "maximum": repeat_max_bytes,
                                "x-must": f"an integer 0-{repeat_max_bytes:,}",
                            },
                        },
                        "required": ["text", "bytes"],
                        "additionalProperties": False,
                    },
                },
                "additionalProperties": False,
            },
        },
    }


FIXTURE_SCHEMA: dict[str, Any] = fixture_schema(DEFAULT_LIMITS)
"""The format as published (the default limits): what a fixture file's author writes to."""
"""The fixture file format (docs/FIXTURES.md). ``x-must`` / ``x-problem`` word the errors."""

_MAP_KEYS = frozenset({"query", "headers"})
"""Objects whose keys are data: their members are named ``query["$top"]``, not ``query.$top``."""
_ORDER = {"type": 0, "additionalProperties": 1, "required": 2, "oneOf": 5}
"""Which problem of an object is told first: its own type and keys, then its members."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One schema failure: where (a path in the checked value) and what, in words."""

    path: tuple[str | int, ...]
    text: str
    object_level: bool
    """``text`` is about the object at ``path`` (unknown or missing keys), not a value."""

    def name(self) -> str:
        """``request.query["$top"]``, ``response.repeat.bytes``, ``[3]``."""
        out = ""
        parent: str | int | None = None
        for part in self.path:
            if isinstance(part, int):
                out += f"[{part}]"
            elif parent in _MAP_KEYS:
                out += f"[{show_value(part)}]"
            else:
                out += f".{part}" if out else part
            parent = part
        return out


@cache
def _validator(part: str, limits: Limits) -> Any:
    # A status or a byte count must be a whole number: the strict validator says 200.0 is not.
    schema = copy.deepcopy(fixture_schema(limits))  # _STRING_MAP is shared
    if part == "top":
        del schema["properties"]["responses"]["items"]  # entries are checked one by one
        return strict_validator(schema)
    # References resolved up front: resolving them per entry doubles the cost of a check.
    return strict_validator(_inline(schema["$defs"][part], schema["$defs"]))


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/x"}`` replaced by the definition itself."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(definitions[ref.removeprefix("#/$defs/")], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node


def _problem(error: Any) -> Problem:
    path = tuple(error.absolute_path)
    node = error.schema if isinstance(error.schema, dict) else {}
    kind = error.validator
    value = error.instance
    if "propertyNames" in error.relative_schema_path:
        problem = str(node.get("x-problem", "has an invalid key"))
        return Problem(path, f"{problem} {show_value(value)}" if value else problem, False)
    if kind == "required":
        missing = next(key for key in error.validator_value if key not in value)
        return Problem(path, f"missing required key {show_value(missing)}", True)
    if kind == "additionalProperties":
        allowed = sorted(node.get("properties", {}))
        unknown = sorted(set(value) - set(allowed))
        names = ", ".join(show_value(key) for key in unknown[:5])
        return Problem(path, f"unknown key {names} (allowed: {', '.join(allowed)})", True)
    if kind == "oneOf":
        return Problem((), str(node.get("x-oneOf", "must match exactly one form")), True)
    if "x-problem" in node and kind == "pattern":
        shown = f"{show_value(value)} " if node.get("x-show-value", True) else ""
        return Problem(path, f"{shown}{node['x-problem']}", False)
    must = node.get("x-must", "valid")
    ranged = "minimum" in node or "maximum" in node or kind == "const"
    shown = show_value(value) if ranged else type_name(value)
    return Problem(path, f"must be {must}, not {shown}", False)


def _first(problems: list[Any]) -> Problem | None:
    if not problems:
        return None
    error = min(
        problems,
        key=lambda e: (
            len(e.absolute_path),
            _ORDER.get(e.validator, 4),
            json.dumps(list(e.absolute_path), default=str),
        ),
    )
    return _problem(error)


def top_problems(document: Any, limits: Limits) -> Problem | None:
    """The first problem of the document's own structure (entries are checked apart)."""
    return _first(list(_validator("top", limits).iter_errors(document)))


def entry_problems(entry: Any, limits: Limits) -> tuple[Problem | None, Problem | None]:
    """The first problem of an entry outside its response, and the first inside it.

    Told apart so that a response problem can be labelled with the request it answers.
    """
    errors = list(_validator("entry", limits).iter_errors(entry))
    outside = [e for e in errors if list(e.absolute_path)[:1] != ["response"]]
    inside = [e for e in errors if list(e.absolute_path)[:1] == ["response"]]
    return _first(outside), _first(inside)
