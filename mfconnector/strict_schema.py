"""The one JSON Schema validator: Draft 2020-12, with an integer meaning a whole number.

JSON Schema counts ``5.0`` as an integer; Python cannot slice with it, send it as ``$top``
or take it as a status code, so here an integer is an ``int`` (and never a ``bool``). Used
for the tools' arguments and for fixture files. Pure code; jsonschema is imported on the
first validator built, keeping it off the start-up path.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["strict_validator"]


@cache
def _strict_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    whole_numbers = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    return validators.extend(Draft202012Validator, type_checker=whole_numbers)


def strict_validator(schema: dict[str, Any]) -> Any:
    """A validator for ``schema``, which is first checked against the 2020-12 metaschema
    (a schema we publish or enforce must be one)."""
    strict = _strict_class()
    strict.check_schema(schema)
    return strict(schema)
