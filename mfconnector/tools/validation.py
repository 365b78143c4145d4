"""Arguments are checked against the tool's own published schema, by a real validator.

One schema serves as documentation and as enforcement, so they cannot drift. The
validator is the strict one (``strict_schema``), built on first use.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.strict_schema import strict_validator

__all__ = ["argument_errors"]


@cache
def _validator(schema_json: str) -> Any:
    return strict_validator(json.loads(schema_json))


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error.absolute_path)
    message = str(error.message)
    if error.validator in ("anyOf", "oneOf") and isinstance(error.validator_value, list):
        shapes = [" + ".join(s.get("required", [])) for s in error.validator_value]
        message = f"must have one of these sets of keys: {' | '.join(shapes)}"
    if len(message) > 200:
        message = message[:200] + "…"
    return f"argument `{where}`: {message}" if where else message


def argument_errors(
    schema_json: str,
    arguments: dict[str, Any],
    listed: int = DEFAULT_LIMITS.argument_errors_listed,
) -> list[str]:
    """Human-readable problems with ``arguments`` (at most ``listed``); empty when valid."""
    validator = _validator(schema_json)
    if validator.is_valid(arguments):  # nearly every call: half the cost of collecting none
        return []
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [_describe(error) for error in errors[:listed]]
