"""Dependencies point one way (shared/DESIGN.md "Layering"): checked on the source itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mfconnector

PACKAGE = Path(mfconnector.__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, top level or inside functions and TYPE_CHECKING."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


GRAPH_FILES = sorted((PACKAGE / "graph").glob("*.py"))
CORE_FILES = [PACKAGE / f"{name}.py" for name in ("limits", "errors", "shaping", "textconv")]


@pytest.mark.parametrize("path", GRAPH_FILES, ids=lambda p: p.name)
def test_the_graph_layer_sees_only_the_token_provider_interface(path: Path) -> None:
    """``mfconnector.auth`` (the interface) at most; never its msal, cache or error modules."""
    auth = {name for name in imported_modules(path) if name.startswith("mfconnector.auth")}
    assert auth <= {"mfconnector.auth"}, (path.name, auth)


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: p.name)
def test_the_core_imports_no_outer_layer(path: Path) -> None:
    outer = ("mfconnector.auth", "mfconnector.graph", "mfconnector.tools", "mfconnector.runtime")
    names = imported_modules(path)
    assert not {name for name in names if name.startswith(outer)}, path.name
    assert not names & {"trio", "httpx", "msal"}, path.name
