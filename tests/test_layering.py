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


READ_TOOLS = ("mail", "mail_read", "batch_read", "attachments", "account")
"""The read tools (issue 18): they speak the mail model, never a provider."""
PROVIDERS = ("mfconnector.graph", "mfconnector.imap", "mfconnector.gmail", "httpx", "msal")


def runtime_imports(path: Path) -> set[str]:
    """What a module imports when it runs: ``if TYPE_CHECKING:`` blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def reached_from(module: str) -> dict[str, str]:
    """Every mfconnector module ``module`` imports at run time, directly or through others,
    each with the module that imports it."""
    seen: dict[str, str] = {}
    pending = [module]
    while pending:
        current = pending.pop()
        relative = current.removeprefix("mfconnector.").replace(".", "/")
        path = PACKAGE / f"{relative}.py"
        if not path.exists():
            path = PACKAGE / relative / "__init__.py"
        if not path.exists():
            continue
        for name in runtime_imports(path):
            if name not in seen and (name.startswith("mfconnector") or name in PROVIDERS):
                seen[name] = current
                if name.startswith("mfconnector"):
                    pending.append(name)
    return seen


@pytest.mark.parametrize("tool", READ_TOOLS)
def test_the_read_tools_reach_no_provider(tool: str) -> None:
    reached = reached_from(f"mfconnector.tools.{tool}")
    providers = {name: by for name, by in reached.items() if name.startswith(PROVIDERS)}
    assert providers == {}, providers
    assert "mfconnector.mail.model" in reached
