"""Drive items as compact tables, the way mail lists already are (mail folders' table is
``tools.message_pages``).

A page of drive items repeats the same parent, the same editor and a web address that is
the folder's address plus the name; a page of folders repeats one parent id. The compact
view pays for each column name once, states a value every row shares once (``common``),
names once what it left out (``omitted``), and ``detail: "full"`` returns the items
exactly as Graph's fields, as 0.2 did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["GET_FULL", "drive_table"]

GET_FULL = 'detail: "full"'
DRIVE_COLUMNS = ("id", "name", "size", "type", "modified")
DRIVE_SHARED = ("children", "parent", "modifiedBy")
"""Columns when rows differ, one ``common`` value when every row of the page agrees."""
DRIVE_SHOWN = ("id", "name", "size", "file", "folder", "lastModifiedDateTime")
"""Graph fields the compact drive row carries whole (with parent and editor as above)."""
Row = dict[str, Any]


def _parent(item: Mapping[str, Any]) -> Any:
    parent = item.get("parentReference")
    if not isinstance(parent, Mapping):
        return None
    return parent.get("path") or parent.get("id")


def _editor(item: Mapping[str, Any]) -> Any:
    by = item.get("lastModifiedBy")
    user = by.get("user") if isinstance(by, Mapping) else None
    return user.get("displayName") if isinstance(user, Mapping) else None


def drive_row(item: Mapping[str, Any]) -> Row:
    """One drive item's compact values: ``type`` is the MIME type, or ``folder``."""
    facet = item.get("file")
    folder = item.get("folder")
    kind = facet.get("mimeType") if isinstance(facet, Mapping) else None
    if isinstance(folder, Mapping):
        kind = "folder"
    return {
        "id": item.get("id"),
        "name": item.get("name"),
        "size": item.get("size"),
        "type": kind,
        "modified": item.get("lastModifiedDateTime"),
        "children": folder.get("childCount") if isinstance(folder, Mapping) else None,
        "parent": _parent(item),
        "modifiedBy": _editor(item),
    }


def _table(
    rows: list[Row], fixed: Sequence[str], shared: Sequence[str], *, key: str
) -> dict[str, Any]:
    """Columns once, one value list per row (trailing empties dropped), shared values once.

    A ``shared`` column whose value is the same on every row becomes ``common[name]``; one
    that no row has is left out; otherwise it is a column.
    """
    common: dict[str, Any] = {}
    columns = list(fixed)
    for name in shared:
        values = [row.get(name) for row in rows]
        if all(value is None for value in values):
            continue
        if len(rows) > 1 and all(value == values[0] for value in values):
            common[name] = values[0]
        else:
            columns.append(name)
    lines = []
    for row in rows:
        line = [row.get(column) for column in columns]
        while line and line[-1] is None:
            line.pop()
        lines.append(line)
    out: dict[str, Any] = {"columns": columns, key: lines}
    if common:
        out["common"] = common
    return out


def _omitted(all_fields: Sequence[str], shown: Sequence[str]) -> dict[str, Any] | None:
    names = [name for name in all_fields if name not in shown]
    return {"fields": names, "get": GET_FULL} if names else None


def _compact(
    result: dict[str, Any],
    key: str,
    make_row: Callable[[Mapping[str, Any]], Row],
    fixed: Sequence[str],
    shared: Sequence[str],
    omitted: dict[str, Any] | None,
) -> dict[str, Any]:
    """``result`` with its ``key`` list as a table; incomplete and skipped stay last."""
    ordered = {k: v for k, v in result.items() if k not in (key, "incomplete", "skipped")}
    rows = [make_row(item) for item in result[key] if isinstance(item, Mapping)]
    ordered.update(_table(rows, fixed, shared, key=key))
    if omitted and rows:
        ordered["omitted"] = omitted
    for name in ("incomplete", "skipped"):
        if name in result:
            ordered[name] = result[name]
    return ordered


def drive_table(result: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """A files_list or files_search result (items shaped to ``fields``) in compact form."""
    shown = (*DRIVE_SHOWN, "parentReference", "lastModifiedBy")
    omitted = _omitted(fields, shown) or {"fields": [], "get": GET_FULL}
    omitted["fields"].append("parentReference.id")
    omitted["note"] = "parent is parentReference.path; modifiedBy the editor's name"
    return _compact(result, "items", drive_row, DRIVE_COLUMNS, DRIVE_SHARED, omitted)
