"""The test tree mirrors the source tree, and its helpers cannot be mistaken for source.

- A folder of tests is named after what it tests: a package or a top-level module of
  ``mfconnector`` (``tests/tools`` for ``mfconnector/tools/``, ``tests/cli`` for
  ``mfconnector/cli.py``), or one of ``EXTRA_FOLDERS``.
- ``tests/`` itself holds tests of a top-level module (``test_<module>[_more].py``) and the
  repository-wide checks in ``REPOSITORY_CHECKS``.
- Shared helpers live in ``tests/support/`` and none shares a name with a source module,
  so ``acting`` can never mean both a test helper and ``mfconnector/tools/acting.py``.
- Every folder of Python files is a package, so two test files of one name in two
  folders cannot collide.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SOURCE = TESTS.parent / "mfconnector"

EXTRA_FOLDERS = {
    "process": "whole-process tests: the real server over real pipes, the official SDK clients",
    "protocol": "the MCP wire: framing, jsonrpc, jsoncost, protocol, session, runtime, stdio",
    "support": "shared helpers (no tests)",
}
REPOSITORY_CHECKS = {
    "test_code_quality.py",
    "test_dependencies.py",
    "test_docs_public.py",
    "test_layering.py",
    "test_test_layout.py",
}


def source_modules() -> set[str]:
    return {path.stem for path in SOURCE.rglob("*.py")} - {"__init__", "__main__"}


def top_level_modules() -> set[str]:
    return {path.stem for path in SOURCE.glob("*.py")} - {"__init__", "__main__"}


def allowed_folders() -> set[str]:
    packages = {path.parent.name for path in SOURCE.glob("*/__init__.py")}
    return packages | top_level_modules() | set(EXTRA_FOLDERS)


@cache
def python_files() -> list[Path]:
    """Ours: not caches, nor the npm packages the interop tests install beside their data
    (pruned, not filtered: node_modules holds thousands of files)."""
    found = []
    for folder, subfolders, names in os.walk(TESTS):
        subfolders[:] = [name for name in subfolders if name not in ("__pycache__", "node_modules")]
        found += [Path(folder) / name for name in names if name.endswith(".py")]
    return sorted(found)


def test_every_test_folder_is_named_after_what_it_tests() -> None:
    misplaced = [
        str(path.relative_to(TESTS))
        for path in python_files()
        if path.name.startswith("test_")
        and path.parent != TESTS
        and path.relative_to(TESTS).parts[0] not in allowed_folders() - {"support"}
    ]
    assert misplaced == [], f"put these under a folder named after what they test: {misplaced}"


def test_the_top_folder_holds_only_top_level_modules_tests_and_repository_checks() -> None:
    modules = top_level_modules()
    stray = [
        path.name
        for path in TESTS.glob("test_*.py")
        if path.name not in REPOSITORY_CHECKS
        and not any(
            path.stem == f"test_{module}" or path.stem.startswith(f"test_{module}_")
            for module in modules
        )
    ]
    assert stray == [], f"move these into the folder of what they test: {stray}"


def test_helpers_live_in_support_and_share_no_name_with_a_source_module() -> None:
    helpers = [
        path
        for path in python_files()
        if not path.name.startswith("test_") and path.name not in ("__init__.py", "conftest.py")
    ]
    outside = [str(p.relative_to(TESTS)) for p in helpers if p.parent != TESTS / "support"]
    assert outside == [], f"shared helpers belong in tests/support/: {outside}"
    clashing = sorted(p.name for p in helpers if p.stem in source_modules())
    assert clashing == [], f"these helpers share a name with a module of mfconnector: {clashing}"


def test_every_folder_of_python_files_is_a_package() -> None:
    folders = {path.parent for path in python_files()}
    missing = sorted(
        str(f.relative_to(TESTS.parent)) for f in folders if not (f / "__init__.py").exists()
    )
    assert missing == [], f"add an __init__.py to: {missing}"
