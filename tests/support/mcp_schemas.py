"""Validators for the official MCP schemas, one named definition at a time."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "mcp_schema"


@cache
def _schema(version: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / f"{version}.schema.json").read_text())
    return data


@cache
def validator(version: str, definition: str) -> Any:
    full = _schema(version)
    if "$defs" in full:
        return Draft202012Validator(
            {"$schema": full["$schema"], "$defs": full["$defs"], "$ref": f"#/$defs/{definition}"}
        )
    return Draft7Validator(
        {"definitions": full["definitions"], "allOf": [{"$ref": f"#/definitions/{definition}"}]}
    )


def schema_errors(version: str, definition: str, instance: Any) -> list[str]:
    return [error.message for error in validator(version, definition).iter_errors(instance)]


def assert_valid(version: str, definition: str, instance: Any) -> None:
    errors = schema_errors(version, definition, instance)
    assert not errors, f"{definition} ({version}): {errors[:3]}\n{json.dumps(instance)[:2000]}"
