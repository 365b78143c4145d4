"""Warn the model about names that hide characters: one pass over a read result. Pure code.

An attachment named ``INV-2026-0877_\\u202efdp.scr`` reads "INV-2026-0877_rcs.pdf" on
screen. Every name and address a read result shows (attachment and file names, display
names, addresses, subjects, folder names, paths) is scanned once; each that holds a bidi
control or another invisible or control character gets one entry in the result's
``warnings``: which field, which code points, the name with them made visible (``<U+202E>``)
and, for a file name, the extension the file system sees. Text that is printable ASCII, as
nearly every name is, costs one ``str.isascii`` and one ``str.isprintable``.

Bodies, previews and document text are not names: they are shown as text and may hold line
breaks, so they are not scanned here.
"""

from __future__ import annotations

from typing import Any

from mfconnector.visible import find_hidden, true_extension

__all__ = ["NAME_KEYS", "with_name_warnings"]

NAME_KEYS = frozenset(
    {
        "name",
        "displayName",
        "address",
        "subject",
        "from",
        "to",
        "cc",
        "bcc",
        "sender",
        "replyTo",
        "folder",
        "path",
        "title",
    }
)
"""Keys whose string values are names or addresses (a compact table's columns included)."""

FILE_NAME_KEYS = frozenset({"name"})
"""Keys whose values are file names: their warnings name the true extension."""


def with_name_warnings(structured: dict[str, Any], max_warnings: int) -> dict[str, Any]:
    """``structured`` with ``warnings`` for each name that hides characters (at most
    ``max_warnings``; past that, ``warnings_omitted`` says how many more)."""
    found: list[dict[str, Any]] = []
    _scan(structured, "", None, found)
    # A tool that checked its own names (a draft's preview) already said so: once is enough.
    existing = structured.get("warnings")
    prior = [w for w in existing if isinstance(w, dict)] if isinstance(existing, list) else []
    already = {w.get("shown_as") for w in prior if w.get("kind") == "invisible"}
    found = [w for w in found if w["shown_as"] not in already]
    if not found:
        return structured
    out = dict(structured)
    out["warnings"] = prior + found[:max_warnings]
    if len(found) > max_warnings:
        out["warnings_omitted"] = len(found) - max_warnings
    return out


def _scan(value: Any, path: str, key: str | None, found: list[dict[str, Any]]) -> None:
    if isinstance(value, str):
        if key in NAME_KEYS and not (value.isascii() and value.isprintable()):
            _check(value, path, key, found)
    elif isinstance(value, dict):
        columns = value.get("columns")
        for name, item in value.items():
            where = f"{path}.{name}" if path else str(name)
            if isinstance(columns, list) and name != "columns" and isinstance(item, list):
                _scan_table(item, where, columns, found)
            else:
                _scan(item, where, name if name in NAME_KEYS else key if key else None, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _scan(item, f"{path}[{index}]", key, found)


def _scan_table(
    rows: list[Any], path: str, columns: list[Any], found: list[dict[str, Any]]
) -> None:
    """A compact table (``{"columns": [...], "messages": [[...], ...]}``): cells by column.
    Fifty rows of plain text are the common case: a cell's path is written only for a cell
    that needs a closer look."""
    names = [c if isinstance(c, str) else None for c in columns]
    named = [n in NAME_KEYS for n in names]
    for index, row in enumerate(rows):
        if not isinstance(row, list):
            _scan(row, f"{path}[{index}]", None, found)
            continue
        for column, cell in enumerate(row[: len(names)]):
            kind = cell.__class__
            if kind is str:
                if not named[column] or (cell.isascii() and cell.isprintable()):
                    continue
            elif cell is None or kind is bool or kind is int:
                continue
            name = names[column]
            _scan(cell, f"{path}[{index}].{name}", name, found)


def _check(text: str, path: str, key: str | None, found: list[dict[str, Any]]) -> None:
    hidden = find_hidden(text)
    if hidden is None:
        return
    warning = hidden.as_warning(path)
    if key in FILE_NAME_KEYS:
        extension = true_extension(text)
        if extension:
            warning["true_extension"] = extension
    found.append(warning)
