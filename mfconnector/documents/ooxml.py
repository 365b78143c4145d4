"""Word, Excel and PowerPoint text from their XML parts, streamed with expat (no DTD).

Only the parts that carry the words are read: Word's body (headings as ``#`` lines,
tables as ``| a | b |`` rows), each Excel sheet in workbook order (rows as tab-separated
cells, shared strings and dates resolved), each PowerPoint slide in presentation order
with its notes. Namespaces are matched by local name, so Strict OOXML reads the same.
Large parts are streamed one paragraph, table, row or string at a time, so memory
follows the largest of those, not the document (shared strings and one slide are held
whole).
"""

from __future__ import annotations

import datetime
import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any

from mfconnector.documents.archive import SafeZip, corrupt
from mfconnector.documents.text import TextBuilder
from mfconnector.documents.xmlstream import feed, iter_elements, safe_parser, whole

__all__ = ["docx_text", "pptx_text", "xlsx_text"]

_MAX_COLUMNS = 16_384
"""Excel's last column (XFD); a cell reference past it is a damaged sheet."""
_WORD_SKIPPED = frozenset({"pPr", "rPr", "del", "delText", "instrText", "fldChar", "rPh"})
"""Word run children that hold formatting, deleted text or field codes, not words."""
_BUILTIN_DATE_FORMATS = frozenset({*range(14, 23), 45, 46, 47})
_DATE_CODE = re.compile(r"[dmyhs]", re.IGNORECASE)
_QUOTED_OR_ESCAPED = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_CELL_REF = re.compile(r"^([A-Z]{1,3})\d*$")


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


def _required(archive: SafeZip, name: str, what: str) -> Any:
    stream = archive.open(name)
    if stream is None:
        raise corrupt(what)
    return stream


def _whole(archive: SafeZip, name: str) -> Any:
    """A small part parsed whole (a directory, a relationship list, one slide), or None."""
    stream = archive.open(name)
    if stream is None:
        return None
    with stream:
        return whole(stream)


def relationships(archive: SafeZip, part: str) -> dict[str, tuple[str, str]]:
    """``rId`` → (relationship type, target part path) for ``part``."""
    folder, name = posixpath.split(part)
    root = _whole(archive, posixpath.join(folder, "_rels", name + ".rels"))
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


def _cell_text(text: str) -> str:
    return " ".join(text.split())


# --- Word --------------------------------------------------------------------------------


def _heading_levels(archive: SafeZip) -> dict[str, int]:
    """Paragraph style id → heading level, from styles.xml names (any UI language)."""
    levels: dict[str, int] = {}
    root = _whole(archive, "word/styles.xml")
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
            cells.append(_cell_text(" ".join(lines)).replace("|", "/"))
        yield f"| {' | '.join(cells)} |\n"


def docx_text(archive: SafeZip, builder: TextBuilder) -> None:
    levels = _heading_levels(archive)
    with _required(archive, "word/document.xml", "Word document") as stream:
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


# --- Excel -------------------------------------------------------------------------------


def _shared_strings(archive: SafeZip) -> list[str]:
    """The workbook's string table, each already on one line (cells are tab-separated)."""
    stream = archive.open("xl/sharedStrings.xml")
    if stream is None:
        return []
    with stream:
        items = iter_elements(stream, frozenset({"si"}))
        return [_cell_text("".join(_rich_text(item))) for item in items]


def _rich_text(element: Any) -> Iterator[str]:
    """Text of a string item: its ``t`` elements, never the phonetic guide (``rPh``)."""
    for item in element:
        tag = item.tag
        if tag == "t":
            yield item.text or ""
        elif tag == "r":
            yield from _rich_text(item)


def _date_styles(archive: SafeZip) -> list[bool]:
    """For each cell style index: whether its number format shows a date or time."""
    root = _whole(archive, "xl/styles.xml")
    if root is None:
        return []
    custom: dict[int, bool] = {}
    formats = child(root, "numFmts")
    for item in formats if formats is not None else ():
        code = _QUOTED_OR_ESCAPED.sub("", attr(item, "formatCode") or "")
        number = attr(item, "numFmtId") or ""
        if number.isdigit():
            custom[int(number)] = bool(_DATE_CODE.search(code))
    styles = child(root, "cellXfs")
    dated: list[bool] = []
    for item in styles if styles is not None else ():
        number = attr(item, "numFmtId") or "0"
        number_id = int(number) if number.isdigit() else 0
        dated.append(custom.get(number_id, number_id in _BUILTIN_DATE_FORMATS))
    return dated


def _column(reference: str | None, previous: int) -> int:
    if not reference:
        return previous + 1
    match = _CELL_REF.match(reference)
    if not match:
        return previous + 1
    column = 0
    for letter in match.group(1):
        column = column * 26 + ord(letter) - 64
    return column


def _number(value: str, is_date: bool, epoch: datetime.datetime) -> str:
    try:
        number = float(value)
    except ValueError:
        return value
    if is_date and 0 <= number < 2_958_466:  # up to 9999-12-31
        moment = epoch + datetime.timedelta(days=number)
        if moment.time() == datetime.time(0):
            return moment.date().isoformat()
        return moment.replace(microsecond=0).isoformat(sep=" ")
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.15g}"


class _SheetReader:
    """Rows of one worksheet as tab-separated lines, straight from expat's callbacks.

    Sheets are the largest parts by far, so no element objects are built here: the
    handlers keep one row's cells and the text of the value being read. Tag names and
    column letters are looked up in small caches (a sheet repeats the same few).
    """

    def __init__(self, shared: list[str], dated: list[bool], epoch: datetime.datetime) -> None:
        self.shared, self.dated, self.epoch = shared, dated, epoch
        self.rows: list[str] = []
        self.cells: dict[int, str] = {}
        self.column = 0
        self.kind = "n"
        self.style = "0"
        self.pieces: list[str] = []
        self.reading = False
        self.phonetic = False
        self.tags: dict[str, str] = {}
        self.columns: dict[str, int] = {}

    def _tag(self, raw: str) -> str:
        tag = self.tags.get(raw)
        if tag is None:
            tag = self.tags[raw] = raw.rpartition(":")[2]
        return tag

    def _column(self, reference: str | None) -> int:
        if not reference:
            return self.column + 1
        letters = reference.rstrip("0123456789")
        column = self.columns.get(letters)
        if column is None:
            column = self.columns[letters] = _column(letters, self.column)
        return column

    def start(self, raw: str, attrs: dict[str, str]) -> None:
        tag = self._tag(raw)
        if tag == "c":
            self.column = self._column(attrs.get("r"))
            if self.column > _MAX_COLUMNS:
                raise corrupt("Excel workbook")
            self.kind = attrs.get("t", "n")
            self.style = attrs.get("s", "0")
            self.pieces = []
        elif tag == "v" or tag == "t":
            self.reading = not self.phonetic
        elif tag == "rPh":
            self.phonetic = True  # a phonetic guide: not the cell's text

    def end(self, raw: str) -> None:
        tag = self._tag(raw)
        if tag == "v" or tag == "t":
            self.reading = False
        elif tag == "rPh":
            self.phonetic = False
        elif tag == "c":
            value = self._value("".join(self.pieces))
            if value:
                self.cells[self.column] = value
        elif tag == "row":
            if self.cells:
                cells = self.cells
                self.rows.append("\t".join(cells.get(c, "") for c in range(1, max(cells) + 1)))
            self.cells, self.column = {}, 0

    def text(self, data: str) -> None:
        if self.reading:
            self.pieces.append(data)

    def _value(self, value: str) -> str:
        kind = self.kind
        if kind == "s":
            index = int(value) if value.isdigit() else -1
            return self.shared[index] if 0 <= index < len(self.shared) else ""
        if kind == "n" or kind == "d":
            if not value:
                return ""
            style = self.style
            dated = self.dated
            is_date = style.isdigit() and int(style) < len(dated) and dated[int(style)]
            return _number(value, is_date, self.epoch) if kind == "n" else value
        if kind == "b":
            return "TRUE" if value == "1" else "FALSE"
        return _cell_text(value)  # inlineStr, str (a formula's text), e (an error)


def _sheet_rows(
    stream: Any, shared: list[str], dated: list[bool], epoch: datetime.datetime
) -> Iterator[str]:
    reader = _SheetReader(shared, dated, epoch)
    parser = safe_parser()
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    yield from feed(parser, stream, reader.rows)


def xlsx_text(archive: SafeZip, builder: TextBuilder) -> None:
    workbook = _whole(archive, "xl/workbook.xml")
    if workbook is None:
        raise corrupt("Excel workbook")
    properties = child(workbook, "workbookPr")
    base_1904 = properties is not None and attr(properties, "date1904") in ("1", "true")
    epoch = datetime.datetime(1904, 1, 1) if base_1904 else datetime.datetime(1899, 12, 30)
    sheets_element = child(workbook, "sheets")
    sheets = list(sheets_element) if sheets_element is not None else []
    targets = relationships(archive, "xl/workbook.xml")
    builder.parts_total = len(sheets)
    builder.unit = "sheet"
    shared = _shared_strings(archive)
    dated = _date_styles(archive)
    for sheet in sheets:
        name = _cell_text(attr(sheet, "name") or "")
        target = targets.get(rel_id(sheet))
        hidden = attr(sheet, "state") in ("hidden", "veryHidden")
        builder.part(f"Sheet: {name}" + (" (hidden)" if hidden else ""))
        stream = archive.open(target[1]) if target else None
        if stream is None:
            continue  # a chart sheet or a missing part: the heading says it exists
        with stream:
            for line in _sheet_rows(stream, shared, dated, epoch):
                builder.line(line)


# --- PowerPoint --------------------------------------------------------------------------


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
                    _cell_text(" ".join(_drawing_paragraphs(cell))).replace("|", "/")
                    for cell in row
                    if cell.tag == "tc"
                ]
                lines.append(f"| {' | '.join(cells)} |")
    return title, lines


def _notes_lines(archive: SafeZip, slide: str) -> list[str]:
    for kind, target in relationships(archive, slide).values():
        if kind.endswith("/notesSlide"):
            root = _whole(archive, target)
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
    presentation = _whole(archive, "ppt/presentation.xml")
    if presentation is None:
        raise corrupt("PowerPoint presentation")
    targets = relationships(archive, "ppt/presentation.xml")
    listed = child(presentation, "sldIdLst")
    slides = [targets.get(rel_id(item)) for item in (listed if listed is not None else ())]
    builder.parts_total = len(slides)
    builder.unit = "slide"
    for number, target in enumerate(slides, start=1):
        root = _whole(archive, target[1]) if target else None
        title, lines = _slide_lines(root) if root is not None else ("", [])
        builder.part(f"Slide {number}" + (f": {title}" if title else ""))
        for line in lines:
            builder.line(line)
        notes = _notes_lines(archive, target[1]) if target else []
        if notes:
            builder.line("Notes:")
            for line in notes:
                builder.line(line)


READERS: dict[str, Callable[[SafeZip, TextBuilder], None]] = {
    "docx": docx_text,
    "xlsx": xlsx_text,
    "pptx": pptx_text,
}
