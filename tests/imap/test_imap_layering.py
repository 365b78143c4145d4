"""The IMAP protocol core and the MIME reader are pure: no trio, no sockets, no httpx."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mfconnector

PACKAGE = Path(mfconnector.__file__).resolve().parent
PURE = [
    PACKAGE / "imap" / name
    for name in (
        "wire.py",
        "encode.py",
        "results.py",
        "errors.py",
        "settings.py",
        "capabilities.py",
        "refs.py",
        "folders.py",
        "summaries.py",
        "search.py",
        "compose.py",
        "classify.py",
    )
] + sorted((PACKAGE / "mime").glob("*.py"))


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(
                node.module if node.module.startswith("mfconnector") else node.module.split(".")[0]
            )
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_protocol_core_and_mime_reader_do_no_io(path: Path) -> None:
    names = imported(path)
    io = {"trio", "httpx", "socket", "smtplib", "imaplib", "threading", "ssl"}
    if path.name == "settings.py":
        io.discard("ssl")  # the SSLContext type a caller passes in; no I/O here
    assert not names & io, (path.name, names & io)
    outer = (
        "mfconnector.tools",
        "mfconnector.runtime",
        "mfconnector.graph",
        "mfconnector.auth",
        "mfconnector.imap.connection",
        "mfconnector.imap.pool",
    )
    assert not {n for n in names if n.startswith(outer)}, path.name
