"""Both emulators' and the Graph layer's (fixture loader included) imports point one way
(shared/DESIGN.md "Layering"): no module imports one that imports it back, and the Graph
emulator imports nothing of the connector but the shared, stdlib-only document builder
(the Gmail emulator's own test says the same of it).

Read from the source (every import, at top level, inside functions and under
TYPE_CHECKING, so a cycle cannot hide in a lazy import), and checked on a fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mfconnector

ROOT = Path(mfconnector.__file__).resolve().parent
SHARED = "mfconnector.demo_documents"
"""The stdlib-only document builder both emulators use for their demo attachments."""


class ImportGraph:
    """Which modules of one package tree import which (``from pkg import mod`` counts as
    importing ``pkg.mod``), read from the source."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules = {self._name(path): path for path in root.rglob("*.py")}

    def _name(self, path: Path) -> str:
        parts = list(path.relative_to(self.root.parent).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def imports_of(self, name: str) -> set[str]:
        path = self.modules[name]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.add(full if full in self.modules else base)
        known = {self._known(item) for item in found}
        return {item for item in known if item is not None and item != name}

    def _known(self, name: str) -> str | None:
        while name and name not in self.modules:
            name = name.rpartition(".")[0]
        return name or None

    def cycles_within(self, prefix: str) -> list[list[str]]:
        """Every strongly connected group of more than one module under ``prefix``."""
        nodes = [m for m in self.modules if m == prefix or m.startswith(prefix + ".")]
        edges = {m: {d for d in self.imports_of(m) if d in nodes} for m in nodes}
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        groups: list[list[str]] = []

        def visit(node: str) -> None:  # Tarjan's algorithm
            index[node] = low[node] = len(index)
            stack.append(node)
            for other in edges[node]:
                if other not in index:
                    visit(other)
                    low[node] = min(low[node], low[other])
                elif other in stack:
                    low[node] = min(low[node], index[other])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

        for node in nodes:
            if node not in index:
                visit(node)
        return groups


GRAPH = ImportGraph(ROOT)


def test_a_cycle_through_a_lazy_or_type_checking_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
    )
    (package / "c.py").write_text("import pkg.a\nC = 1\n")
    (package / "d.py").write_text("from pkg import a\n")
    assert ImportGraph(package).cycles_within("pkg") == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize(
    "package", ["mfconnector.emulator", "mfconnector.gmail_emulator", "mfconnector.graph"]
)
def test_no_import_cycle(package: str) -> None:
    assert GRAPH.cycles_within(package) == []


def test_the_emulator_imports_nothing_of_the_connector_but_the_document_builder() -> None:
    own = "mfconnector.emulator"
    outside = {
        (name, imported)
        for name in GRAPH.modules
        if name == own or name.startswith(own + ".")
        for imported in GRAPH.imports_of(name)
        if imported != SHARED and not (imported == own or imported.startswith(own + "."))
    }
    assert outside == set()


def test_the_document_builder_imports_only_the_standard_library() -> None:
    tree = ast.parse(GRAPH.modules[SHARED].read_text(encoding="utf-8"))
    names = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {n.split(".")[0] for n in names} <= set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.slow
def test_serving_the_demo_loads_no_other_part_of_the_connector() -> None:
    probe = (
        "import json, sys\n"
        "from mfconnector.emulator import Emulator\n"
        "answer = Emulator().handle('GET', 'https://graph.microsoft.com/v1.0/me/messages',"
        " {'authorization': 'Bearer x'}, b'')\n"
        "assert answer.status == 200, answer.status\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mfconnector'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    own = "mfconnector.emulator"
    foreign = [m for m in loaded if m not in ("mfconnector", SHARED) and not m.startswith(own)]
    assert foreign == []
    assert f"{own}.seed.tenant" in loaded
