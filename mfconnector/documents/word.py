"""Word (.docx): the body in order, headings as ``#`` lines, lists as ``- ``, tables as rows.

The body is streamed one top-level paragraph or table at a time; heading levels come from
the style names in styles.xml (``heading 1`` in any UI language) or the outline level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mfconnector.documents.archive import SafeZip
from mfconnector.documents.ooxml import attr, child, one_line, required_part, whole_part
from mfconnector.documents.text import TextBuilder
from mfconnector.documents.xmlstream import iter_elements

__all__ = ["docx_text"]

_WORD_SKIPPED = frozenset({"pPr", "rPr", "del", "delText", "instrText", "fldChar", "rPh"})
"""Word run children that hold formatting, deleted text or field codes, not words."""


def _heading_levels(archive: SafeZip) -> dict[str, int]:
    """Paragraph style id → heading level, from styles.xml names (any UI language)."""
    levels: dict[str, int] = {}
    root = whole_part(archive, "word/styles.xml")
    if root is None:
        return levels
    for style in root:
        style_id = attr(style, "styleId")
        name_element = child(style, "name")
        name = (attr(name_element, "val") or "").lower() if name_element is not None else ""
        if not style_id:
            continue
        match = re.fullmatch(r"heading ([1-9])", name)
        if match:
            levels[style_id] = int(match.group(1))
        elif name == "title":
            levels[style_id] = 1
    return levels


def _word_text(element: Any, out: list[str]) -> None:
    for item in element:
        tag = item.tag
        if tag in _WORD_SKIPPED:
            continue
        if tag == "t":
            out.append(item.text or "")
        elif tag == "tab":
            out.append("\t")
        elif tag in ("br", "cr"):
            out.append("\n")
        elif tag == "noBreakHyphen":
            out.append("-")
        else:
            _word_text(item, out)


def _paragraph_style(paragraph: Any, levels: dict[str, int]) -> tuple[int, bool]:
    """(heading level or 0, is a list item)."""
    properties = child(paragraph, "pPr")
    if properties is None:
        return 0, False
    style = child(properties, "pStyle")
    style_id = attr(style, "val") if style is not None else None
    level = levels.get(style_id or "", 0)
    if not level and style_id:
        match = re.fullmatch(r"(?i)heading([1-9])", style_id)
        level = int(match.group(1)) if match else (1 if style_id.lower() == "title" else 0)
    outline = child(properties, "outlineLvl")
    if not level and outline is not None and (attr(outline, "val") or "").isdigit():
        level = min(int(attr(outline, "val") or 0) + 1, 9)
    return level, child(properties, "numPr") is not None


def _table_rows(table: Any) -> Iterator[str]:
    for row in table:
        if row.tag != "tr":
            continue
        cells = []
        for cell in row:
            if cell.tag != "tc":
                continue
            lines = []
            for paragraph in cell.iter("p"):
                pieces: list[str] = []
                _word_text(paragraph, pieces)
                lines.append("".join(pieces))
            cells.append(one_line(" ".join(lines)).replace("|", "/"))
        yield f"| {' | '.join(cells)} |\n"


def docx_text(archive: SafeZip, builder: TextBuilder) -> None:
    levels = _heading_levels(archive)
    with required_part(archive, "word/document.xml", "Word document") as stream:
        for element in iter_elements(stream, frozenset({"p", "tbl"})):
            if element.tag == "tbl":
                builder.block("".join(_table_rows(element)))
                continue
            pieces: list[str] = []
            _word_text(element, pieces)
            text = "".join(pieces).strip()
            if not text:
                continue
            level, listed = _paragraph_style(element, levels)
            if level:
                line = " ".join(text.split())
                builder.heading(line, f"{'#' * level} {line}\n")
            else:
                builder.line(f"- {text}" if listed else text)
