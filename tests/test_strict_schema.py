"""The one strict JSON Schema validator, used by the tools' arguments and fixture files."""

from __future__ import annotations

import pytest
from jsonschema.exceptions import SchemaError

from mfconnector.errors import FixtureError
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.strict_schema import strict_validator
from mfconnector.tools.validation import argument_errors


@pytest.mark.parametrize(("value", "valid"), [(5, True), (5.0, False), (True, False), ("5", False)])
def test_an_integer_is_a_whole_number_and_never_a_bool(value: object, valid: bool) -> None:
    validator = strict_validator({"type": "integer"})
    assert validator.is_valid(value) is valid


def test_a_schema_that_is_not_one_is_refused() -> None:
    with pytest.raises(SchemaError):
        strict_validator({"type": "whole number"})


def test_both_users_get_the_strict_integer() -> None:
    """A tool argument of 5.0 and a fixture status of 200.0 are refused alike."""
    schema = '{"type": "object", "properties": {"n": {"type": "integer"}}}'
    assert argument_errors(schema, {"n": 5}) == []
    assert argument_errors(schema, {"n": 5.0})
    document = (
        b'{"responses": [{"request": {"method": "GET", "path": "/me"},'
        b' "response": {"status": 200.0, "json": {}}}]}'
    )
    with pytest.raises(FixtureError, match="status"):
        parse_fixtures(document)
    parse_fixtures(document.replace(b"200.0", b"200"))
