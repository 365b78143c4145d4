"""One shape for every error the server writes, pinned over every error class.

Each class is found by walking ``ToolError``'s subclasses after importing every module,
so a new error class that is not listed here fails until its example is added. The
snapshot (tests/snapshots/error_shapes.json) holds each class's payload; regenerate it
deliberately with ``MFC_WRITE_SNAPSHOTS=1 pytest tests/test_error_shape.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
from pathlib import Path
from typing import Any

import mfconnector
from mfconnector.errors import (
    AuthError,
    BusyError,
    DocumentError,
    GraphError,
    GraphThrottledError,
    GraphTimeoutError,
    ResponseTooLargeError,
    ToolError,
    ToolInputError,
)

SNAPSHOT = Path(__file__).parent / "snapshots" / "error_shapes.json"
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _all_modules() -> None:
    for info in pkgutil.walk_packages(mfconnector.__path__, "mfconnector."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_subclasses(sub)}
    return found


def _examples() -> dict[str, ToolError]:
    from mfconnector.auth.config import AuthConfigError
    from mfconnector.gmail.errors import GmailUnreachable
    from mfconnector.graph.errors import AmbiguousWriteError
    from mfconnector.mail import failures
    from mfconnector.net.settings import NetworkSettingsError
    from mfconnector.writes.errors import WriteError
    from mfconnector.writes.gates import GateConfigError

    graph = {"status": 404, "code": "ErrorItemNotFound", "request_id": "rid-1"}
    examples: list[ToolError] = [
        ToolError("m", hint="h"),
        ToolInputError("m", hint="h"),
        BusyError("m"),
        AuthError("m", hint="h", code="signin_timeout"),
        AuthConfigError("m"),
        NetworkSettingsError("m"),
        GateConfigError("m"),
        GraphError("m", **graph, extra={"inner_code": "x"}),
        GraphTimeoutError("m", retry_safe=True),
        GraphThrottledError("m", status=429, retry_after_seconds=2.5, retry_safe=True),
        ResponseTooLargeError("m"),
        AmbiguousWriteError("m", status=504),
        DocumentError("m", code="protected", hint="h"),
        WriteError("conflict", "m", retry_safe=True, outcome={"done": []}),
        failures.ActionFailure("m"),
        failures.NotFound("m"),
        failures.Conflict("m"),
        failures.StaleReference("m"),
        failures.Throttled("m", retry_after_seconds=3.0),
        failures.Ambiguous("m", outcome={"done": ["a"], "pending": ["b"]}),
        failures.Unsupported("m"),
        failures.InsufficientScope("m", hint="run the login command"),
        GmailUnreachable("m", hint="h", details={"provider": "gmail"}),
    ]
    return {f"{type(e).__module__}.{type(e).__qualname__}": e for e in examples}


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [k for key, item in value.items() for k in (key, *_keys(item))]
    if isinstance(value, list):
        return [k for item in value for k in _keys(item)]
    return []


def test_every_error_class_has_an_example() -> None:
    _all_modules()
    classes = {f"{c.__module__}.{c.__qualname__}" for c in _subclasses(ToolError) | {ToolError}}
    missing = classes - set(_examples())
    assert not missing, f"add an example of each new error class: {sorted(missing)}"


def test_every_payload_has_the_one_shape() -> None:
    for name, error in _examples().items():
        payload = error.to_payload()
        assert isinstance(payload["error_code"], str) and SNAKE.match(payload["error_code"])
        assert isinstance(payload["message"], str)
        assert isinstance(payload["retry_safe"], bool), name
        bad = [key for key in _keys(payload) if not SNAKE.match(key)]
        assert not bad, f"{name} writes keys outside the one style: {bad}"


def test_payloads_match_the_snapshot() -> None:
    payloads = {name: error.to_payload() for name, error in sorted(_examples().items())}
    text = json.dumps(payloads, indent=1, sort_keys=True) + "\n"
    if os.environ.get("MFC_WRITE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.read_text(encoding="utf-8") == text
