"""What Word, Excel and PowerPoint files share: a zip of XML parts linked by relationships.

The readers (``word``, ``excel``, ``powerpoint``) take only the parts that carry the words,
in reading order. Elements are matched by local name (``w:p`` and ``p`` alike), so Strict
OOXML reads the same as the transitional flavour.
"""

from __future__ import annotations

import posixpath
from typing import Any

from mfconnector.documents.archive import SafeZip, corrupt
from mfconnector.documents.xmlstream import whole

__all__ = ["attr", "child", "one_line", "rel_id", "relationships", "required_part", "whole_part"]


def attr(element: Any, name: str) -> str | None:
    """An attribute by local name, whatever its prefix (``w:val``, ``val``)."""
    value = element.get(name)
    if value is not None:
        return str(value)
    for key, found in element.attrib.items():
        if key.rpartition(":")[2] == name:
            return str(found)
    return None


def rel_id(element: Any) -> str:
    """The ``r:id`` of an element (a slide list entry has a plain ``id`` as well)."""
    for key, found in element.attrib.items():
        if ":" in key and key.rpartition(":")[2] == "id":
            return str(found)
    return ""


def child(element: Any, name: str) -> Any:
    for item in element:
        if item.tag == name:
            return item
    return None


def required_part(archive: SafeZip, name: str, what: str) -> Any:
    stream = archive.open(name)
    if stream is None:
        raise corrupt(what)
    return stream


def whole_part(archive: SafeZip, name: str) -> Any:
    """A small part parsed whole (a directory, a relationship list, one slide), or None."""
    stream = archive.open(name)
    if stream is None:
        return None
    with stream:
        return whole(stream)


def relationships(archive: SafeZip, part: str) -> dict[str, tuple[str, str]]:
    """``rId`` → (relationship type, target part path) for ``part``."""
    folder, name = posixpath.split(part)
    root = whole_part(archive, posixpath.join(folder, "_rels", name + ".rels"))
    found: dict[str, tuple[str, str]] = {}
    if root is None:
        return found
    for item in root:
        key, target = attr(item, "Id"), attr(item, "Target")
        if not key or not target or attr(item, "TargetMode") == "External":
            continue
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        found[key] = (attr(item, "Type") or "", posixpath.normpath(path))
    return found


def one_line(text: str) -> str:
    return " ".join(text.split())
