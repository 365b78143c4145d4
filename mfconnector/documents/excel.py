"""Excel (.xlsx): each sheet in workbook order, each row as tab-separated cells.

Shared strings are resolved, numbers shown as Excel's general format shows them, dated
numbers as ISO dates (from the cell's number format), booleans as TRUE/FALSE; formulas
give their cached value. Sheets are read straight from expat's callbacks, row by row.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from typing import Any

from mfconnector.documents.archive import SafeZip, corrupt
from mfconnector.documents.ooxml import attr, child, one_line, rel_id, relationships, whole_part
from mfconnector.documents.text import TextBuilder
from mfconnector.documents.xmlstream import feed, iter_elements, safe_parser

__all__ = ["xlsx_text"]

_MAX_COLUMNS = 16_384
"""Excel's last column (XFD); a cell reference past it is a damaged sheet."""
_BUILTIN_DATE_FORMATS = frozenset({*range(14, 23), 45, 46, 47})
_DATE_CODE = re.compile(r"[dmyhs]", re.IGNORECASE)
_QUOTED_OR_ESCAPED = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_CELL_REF = re.compile(r"^([A-Z]{1,3})\d*$")


class _SharedStrings:
    """The workbook's string table, read only as far as the cells ask, under a budget.

    A 3.8 KB workbook can declare a table of millions of strings; reading it whole before
    the first sheet kept a worker busy for 30 s whatever the text cap. Read lazily, a
    table costs what the sheets use of it, and the strings read count against the
    document's text cap (``document_text_chars``, one more for each string), so a table
    the sheets index deep into stops when the text would have stopped anyway. Each string
    is already on one line (cells are tab-separated).
    """

    def __init__(self, archive: SafeZip, budget: int) -> None:
        self._stream = archive.open("xl/sharedStrings.xml")
        self._items = (
            iter_elements(self._stream, frozenset({"si"})) if self._stream is not None else None
        )
        self._strings: list[str] = []
        self._left = budget
        self.cut = False

    def get(self, index: int) -> str:
        while index >= len(self._strings) and self._items is not None:
            item = next(self._items, None)
            if item is None:
                self._items = None
                break
            text = one_line("".join(_rich_text(item)))
            self._left -= len(text) + 1
            if self._left < 0:
                self.cut = True
                self.close()
                break
            self._strings.append(text)
        return self._strings[index] if index < len(self._strings) else ""

    def close(self) -> None:
        self._items = None
        if self._stream is not None:
            self._stream.close()
            self._stream = None


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
    root = whole_part(archive, "xl/styles.xml")
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

    def __init__(self, shared: _SharedStrings, dated: list[bool], epoch: datetime.datetime) -> None:
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
            return self.shared.get(int(value)) if value.isdigit() else ""
        if kind == "n" or kind == "d":
            if not value:
                return ""
            style = self.style
            dated = self.dated
            is_date = style.isdigit() and int(style) < len(dated) and dated[int(style)]
            return _number(value, is_date, self.epoch) if kind == "n" else value
        if kind == "b":
            return "TRUE" if value == "1" else "FALSE"
        return one_line(value)  # inlineStr, str (a formula's text), e (an error)


def _sheet_rows(
    stream: Any, shared: _SharedStrings, dated: list[bool], epoch: datetime.datetime
) -> Iterator[str]:
    reader = _SheetReader(shared, dated, epoch)
    parser = safe_parser()
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    yield from feed(parser, stream, reader.rows)


def xlsx_text(archive: SafeZip, builder: TextBuilder) -> None:
    workbook = whole_part(archive, "xl/workbook.xml")
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
    shared = _SharedStrings(archive, builder.max_chars)
    try:
        _sheets(archive, builder, sheets, targets, shared, epoch)
    finally:
        shared.close()
    if shared.cut:
        builder.note(
            f"the shared strings table holds more text than the {builder.max_chars:,}-character "
            "cap: cells past it are shown empty"
        )


def _sheets(
    archive: SafeZip,
    builder: TextBuilder,
    sheets: list[Any],
    targets: dict[str, tuple[str, str]],
    shared: _SharedStrings,
    epoch: datetime.datetime,
) -> None:
    dated = _date_styles(archive)
    for sheet in sheets:
        name = one_line(attr(sheet, "name") or "")
        target = targets.get(rel_id(sheet))
        hidden = attr(sheet, "state") in ("hidden", "veryHidden")
        builder.part(f"Sheet: {name}" + (" (hidden)" if hidden else ""))
        stream = archive.open(target[1]) if target else None
        if stream is None:
            continue  # a chart sheet or a missing part: the heading says it exists
        with stream:
            for line in _sheet_rows(stream, shared, dated, epoch):
                builder.line(line)
