"""Every third-party package the connector imports is declared in pyproject.toml.

A package that arrives only as another's dependency (``requests`` through msal,
``cryptography`` through PyJWT[crypto]) can vanish or change major version when that other
package changes, so what the code imports is declared directly. Counted: every import at
module level or inside a function; not counted: imports under ``if TYPE_CHECKING:``, which
only the type checker runs.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

import mfconnector

PACKAGE = Path(mfconnector.__file__).resolve().parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(tree: ast.AST) -> set[str]:
    """Top-level names of absolute imports, skipping ``if TYPE_CHECKING:`` bodies."""
    found: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        if _is_type_checking(node):
            assert isinstance(node, ast.If)
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def third_party_imports() -> dict[str, set[str]]:
    """Imported top-level name → the modules that import it (stdlib and ourselves left out)."""
    users: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if name in sys.stdlib_module_names or name in ("mfconnector", "__future__"):
                continue
            users.setdefault(name, set()).add(str(path.relative_to(PACKAGE.parent)))
    return users


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return {
        _normalized(re.match(r"[A-Za-z0-9_.-]+", spec).group())  # type: ignore[union-attr]
        for spec in project["dependencies"]
    }


@functools.cache
def distributions() -> dict[str, list[str]]:
    """Import name → the installed distributions that provide it."""
    return dict(importlib.metadata.packages_distributions())


@pytest.mark.slow
def test_every_imported_package_is_a_declared_dependency() -> None:
    missing = {}
    for name, users in third_party_imports().items():
        owners = {_normalized(owner) for owner in distributions().get(name, [])}
        if not owners & declared():
            missing[name] = sorted(users)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


@pytest.mark.slow
def test_every_declared_dependency_is_imported() -> None:
    imported = {
        _normalized(owner)
        for name in third_party_imports()
        for owner in distributions().get(name, [])
    }
    assert declared() - imported == set()


def test_requests_and_cryptography_are_counted() -> None:
    """The two that arrived unannounced are seen by the scan (so the check above is live)."""
    users = third_party_imports()
    assert "mfconnector/net/signin_session.py" in users["requests"]
    assert "mfconnector/auth/pem.py" in users["cryptography"]
    assert "outcome" not in users  # stdio_thread imports it under TYPE_CHECKING only
