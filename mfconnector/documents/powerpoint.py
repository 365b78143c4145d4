"""PowerPoint (.pptx): each slide in presentation order, its title, text, tables and notes."""

from __future__ import annotations

from typing import Any

from mfconnector.documents.archive import SafeZip, corrupt
from mfconnector.documents.ooxml import child, one_line, rel_id, relationships, whole_part
from mfconnector.documents.text import TextBuilder

__all__ = ["pptx_text"]


def _drawing_paragraphs(element: Any) -> list[str]:
    """Lines of a text body: each ``a:p`` with its runs, fields and line breaks."""
    lines = []
    for paragraph in element.iter():
        if paragraph.tag != "p":
            continue
        pieces = []
        for item in paragraph.iter():
            tag = item.tag
            if tag == "t":
                pieces.append(item.text or "")
            elif tag == "br":
                pieces.append("\n")
        text = "".join(pieces).strip()
        if text:
            lines.append(text)
    return lines


def _placeholder(shape: Any) -> str | None:
    for item in shape.iter():
        if item.tag == "ph":
            return str(item.get("type", "body"))
    return None


def _slide_lines(root: Any) -> tuple[str, list[str]]:
    """(title, other lines) of one slide, shapes in document order, tables as rows."""
    title = ""
    lines: list[str] = []
    for element in root.iter():
        tag = element.tag
        if tag == "sp":
            body = child(element, "txBody")
            if body is None:
                continue
            text = _drawing_paragraphs(body)
            if _placeholder(element) in ("title", "ctrTitle") and not title:
                title = " ".join(" ".join(text).split())
            else:
                lines.extend(text)
        elif tag == "tbl":
            for row in element:
                if row.tag != "tr":
                    continue
                cells = [
                    one_line(" ".join(_drawing_paragraphs(cell))).replace("|", "/")
                    for cell in row
                    if cell.tag == "tc"
                ]
                lines.append(f"| {' | '.join(cells)} |")
    return title, lines


def _notes_lines(archive: SafeZip, slide: str) -> list[str]:
    for kind, target in relationships(archive, slide).values():
        if kind.endswith("/notesSlide"):
            root = whole_part(archive, target)
            if root is None:
                return []
            lines = []
            for shape in root.iter():
                if shape.tag == "sp" and _placeholder(shape) == "body":
                    body = child(shape, "txBody")
                    lines.extend(_drawing_paragraphs(body) if body is not None else [])
            return lines
    return []


def pptx_text(archive: SafeZip, builder: TextBuilder) -> None:
    presentation = whole_part(archive, "ppt/presentation.xml")
    if presentation is None:
        raise corrupt("PowerPoint presentation")
    targets = relationships(archive, "ppt/presentation.xml")
    listed = child(presentation, "sldIdLst")
    slides = [targets.get(rel_id(item)) for item in (listed if listed is not None else ())]
    builder.parts_total = len(slides)
    builder.unit = "slide"
    for number, target in enumerate(slides, start=1):
        root = whole_part(archive, target[1]) if target else None
        title, lines = _slide_lines(root) if root is not None else ("", [])
        builder.part(f"Slide {number}" + (f": {title}" if title else ""))
        for line in lines:
            builder.line(line)
        notes = _notes_lines(archive, target[1]) if target else []
        if notes:
            builder.line("Notes:")
            for line in notes:
                builder.line(line)
