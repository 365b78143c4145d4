"""The Gmail emulator imports nothing of the connector (shared/DESIGN.md "Layering":
emulators depend on nothing outside themselves), checked on the source and on the import
graph of a fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mfconnector.gmail_emulator

PACKAGE = Path(mfconnector.gmail_emulator.__file__).resolve().parent
FILES = sorted(PACKAGE.glob("*.py"))
OWN = "mfconnector.gmail_emulator"
SHARED = "mfconnector.demo_documents"
"""The stdlib-only document builder both emulators use for their demo attachments."""


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at top level or inside functions and TYPE_CHECKING."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import would escape this check's reading
                names.add("." * node.level + (node.module or ""))
            elif node.module:
                names.add(node.module)
    return names


def test_the_package_has_its_modules() -> None:
    assert {p.stem for p in FILES} >= {"core", "store", "search", "mime", "batch", "transport"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_module_imports_only_its_own_package_the_stdlib_and_httpx(path: Path) -> None:
    outside = set()
    for name in imported_modules(path):
        top = name.split(".")[0]
        if name in (OWN, SHARED) or name.startswith(OWN + "."):
            continue
        if top in sys.stdlib_module_names or top in ("__future__", "httpx"):
            continue
        outside.add(name)
    assert not outside, (path.name, outside)


@pytest.mark.slow
def test_importing_the_emulator_loads_no_other_part_of_the_connector() -> None:
    probe = (
        "import json, sys\n"
        "import mfconnector.gmail_emulator as g\n"
        "g.GmailEmulator()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mfconnector'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    foreign = [m for m in loaded if m not in ("mfconnector", SHARED) and not m.startswith(OWN)]
    assert foreign == []
    assert f"{OWN}.core" in loaded and f"{OWN}.demo" in loaded
