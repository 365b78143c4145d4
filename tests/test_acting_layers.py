"""The acting layer sits between the tools and the mail model (issue 18 §2): checked on the
source itself, every import (top level, inside functions, under TYPE_CHECKING)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_layering import PACKAGE, imported_modules

WRITES = sorted((PACKAGE / "writes").glob("*.py"))
GRAPH = sorted((PACKAGE / "graph").glob("*.py"))
ACTING_TOOLS = [
    PACKAGE / "tools" / f"{name}.py"
    for name in ("acting", "mail_write", "send", "send_preview", "draft_input", "gated")
]
ABOVE_WRITES = (
    "mfconnector.tools",
    "mfconnector.cli",
    "mfconnector.server",
    "mfconnector.runtime",
    "mfconnector.graph",
    "mfconnector.imap",
    "mfconnector.gmail",
    "mfconnector.hosted",
)


def _under(names: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {n for n in names if n in prefixes or n.startswith(tuple(p + "." for p in prefixes))}


@pytest.mark.parametrize("path", WRITES, ids=lambda p: p.name)
def test_the_acting_layer_imports_no_tool_entry_point_or_backend(path: Path) -> None:
    assert not _under(imported_modules(path), ABOVE_WRITES), path.name
    assert not imported_modules(path) & {"httpx", "msal"}, path.name


@pytest.mark.parametrize("path", GRAPH, ids=lambda p: p.name)
def test_the_graph_backend_imports_neither_the_tools_nor_the_acting_layer(path: Path) -> None:
    assert not _under(imported_modules(path), ("mfconnector.tools", "mfconnector.writes")), (
        path.name
    )


@pytest.mark.parametrize("path", ACTING_TOOLS, ids=lambda p: p.name)
def test_the_acting_tools_speak_only_the_mail_model(path: Path) -> None:
    names = imported_modules(path)
    assert not _under(names, ("mfconnector.graph", "mfconnector.imap", "mfconnector.gmail")), (
        path.name
    )
    assert "httpx" not in names, path.name
