"""Valid Office and PDF documents with real text, built by hand with the standard library.

Both emulators' demo mailboxes (and the Graph demo drive) carry Word, Excel, PowerPoint and
PDF files whose text a document reader must be able to extract, so they are real files, not
placeholders. It is the one module outside their own packages the emulators may import: it
imports only the standard library, like them. The test suite builds its documents with it
too (one builder, so what the tests read is what the demo serves).

- ``docx(title, blocks)``: WordprocessingML with an optional ``Title`` paragraph, then
  paragraphs, headings, list items and tables.
- ``xlsx(sheets)``: SpreadsheetML, one worksheet per ``(name, rows)``; strings go in a
  shared-strings part (or inline), numbers stay numbers, dates are date-formatted serials.
- ``pptx(slides)``: PresentationML, one slide per ``(title, bullets[, notes])``, with the
  master, layout and theme parts PowerPoint requires.
- ``pdf(title, lines)``: PDF 1.4 with one Helvetica text stream per page and a correct
  cross-reference table (ASCII text; other characters become ``?``); ``pdf_pages(pages)``:
  one WinAnsi page per string, optionally behind a password (an ``/Encrypt`` dictionary).
- ``png(width, height, seed)``: a valid RGB PNG; ``eml(...)``: an RFC 5322 message.
- ``zip_parts(parts)``: the archive writer under the Office formats.

Archives use fixed timestamps and a fixed member order, so the same input gives the same
bytes. Nothing here reads or writes files: each function returns ``bytes``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import struct
import zipfile
import zlib
from collections.abc import Sequence
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from io import BytesIO
from xml.sax.saxutils import escape

AUTHOR = "Demo Author"
"""The creator named in every document's core properties (both demo mailboxes share them)."""

__all__ = ["docx", "eml", "pdf", "pdf_pages", "png", "pptx", "xlsx", "zip_parts"]

_EPOCH = (2026, 1, 1, 0, 0, 0)
_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_OFFICE_DOC = _REL + "/officeDocument"


def zip_parts(parts: Sequence[tuple[str, str | bytes]]) -> bytes:
    """A deflated archive of ``(name, data)`` members, with fixed timestamps."""
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, data in parts:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            archive.writestr(info, data.encode("utf-8") if isinstance(data, str) else data)
    return buffer.getvalue()


def _types(defaults: dict[str, str], overrides: dict[str, str]) -> str:
    rows = [f'<Default Extension="{ext}" ContentType="{ct}"/>' for ext, ct in defaults.items()]
    rows += [f'<Override PartName="{part}" ContentType="{ct}"/>' for part, ct in overrides.items()]
    return f'{_XML}<Types xmlns="{_CT}">{"".join(rows)}</Types>'


def _rels(targets: Sequence[tuple[str, str, str]]) -> str:
    rows = [
        f'<Relationship Id="{rid}" Type="{kind}" Target="{target}"/>'
        for rid, kind, target in targets
    ]
    return f'{_XML}<Relationships xmlns="{_PKG_REL}">{"".join(rows)}</Relationships>'


_BASE_TYPES = {
    "rels": "application/vnd.openxmlformats-package.relationships+xml",
    "xml": "application/xml",
}


def _core(title: str) -> str:
    return (
        f"{_XML}<cp:coreProperties "
        'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<dc:title>{escape(title)}</dc:title><dc:creator>{escape(AUTHOR)}</dc:creator>"
        '<dcterms:created xsi:type="dcterms:W3CDTF">2026-01-01T00:00:00Z</dcterms:created>'
        "</cp:coreProperties>"
    )


_CORE_TYPE = "application/vnd.openxmlformats-package.core-properties+xml"
_CORE_REL = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"


Block = str | tuple[str, str] | list[list[str]]
"""A paragraph; ``(style, text)`` with style ``Title``, ``Heading1``-``Heading3`` or ``List``
(a bulleted item); or a table, as rows of cell texts. A tab in a text is a Word tab."""

_LIST_ITEM = '<w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>'


def _w_paragraph(text: str, style: str | None = None) -> str:
    if style == "List":
        props = _LIST_ITEM
    else:
        props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    runs = "<w:r><w:tab/></w:r>".join(
        f'<w:r><w:t xml:space="preserve">{escape(piece)}</w:t></w:r>' for piece in text.split("\t")
    )
    return f"<w:p>{props}{runs}</w:p>"


def _w_block(block: Block) -> str:
    if isinstance(block, str):
        return _w_paragraph(block)
    if isinstance(block, tuple):
        return _w_paragraph(block[1], block[0])
    rows = "".join(
        "<w:tr>" + "".join(f"<w:tc>{_w_paragraph(cell)}</w:tc>" for cell in row) + "</w:tr>"
        for row in block
    )
    return f"<w:tbl>{rows}</w:tbl>"


def docx(title: str | None, blocks: Sequence[Block]) -> bytes:
    """A Word document: the title (if any) in the Title style, then one block per entry."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    heads = [title] if title is not None else []
    body = "".join(_w_paragraph(text, "Title") for text in heads)
    body += "".join(_w_block(block) for block in blocks)
    document = (
        f'{_XML}<w:document xmlns:w="{w}"><w:body>{body}'
        '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>'
    )
    styles_used = {block[0] for block in blocks if isinstance(block, tuple)}
    headings = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/>'
        "</w:style>"
        for n in (1, 2, 3)
        if f"Heading{n}" in styles_used
    )
    styles = (
        f'{_XML}<w:styles xmlns:w="{w}"><w:style w:type="paragraph" w:styleId="Title">'
        f'<w:name w:val="Title"/><w:rPr><w:sz w:val="56"/></w:rPr></w:style>{headings}'
        "</w:styles>"
    )
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    overrides = {
        "/word/document.xml": main + ".document.main+xml",
        "/word/styles.xml": main + ".styles+xml",
        "/docProps/core.xml": _CORE_TYPE,
    }
    document_rels = [("rId1", _REL + "/styles", "styles.xml")]
    numbering: list[tuple[str, str | bytes]] = []
    if "List" in styles_used:
        overrides["/word/numbering.xml"] = main + ".numbering+xml"
        document_rels.append(("rId2", _REL + "/numbering", "numbering.xml"))
        numbering.append(
            (
                "word/numbering.xml",
                f'{_XML}<w:numbering xmlns:w="{w}"><w:abstractNum w:abstractNumId="0">'
                '<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="-"/></w:lvl>'
                '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
                "</w:numbering>",
            )
        )
    return zip_parts(
        [
            ("[Content_Types].xml", _types(_BASE_TYPES, overrides)),
            (
                "_rels/.rels",
                _rels(
                    [
                        ("rId1", _OFFICE_DOC, "word/document.xml"),
                        ("rId2", _CORE_REL, "docProps/core.xml"),
                    ]
                ),
            ),
            ("word/document.xml", document),
            ("word/_rels/document.xml.rels", _rels(document_rels)),
            ("word/styles.xml", styles),
            *numbering,
            ("docProps/core.xml", _core(title if title is not None else "Document")),
        ]
    )


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


Cell = str | int | float | dt.date | None
"""A cell's value; ``None`` leaves the cell out, a date is stored as Excel stores one."""

_EXCEL_EPOCH = dt.date(1899, 12, 30)


def xlsx(
    sheets: Sequence[tuple[str, Sequence[Sequence[Cell]]]], *, shared_strings: bool = True
) -> bytes:
    """An Excel workbook: strings in sharedStrings.xml (inline strings when
    ``shared_strings`` is off, as some generators write them), numbers as numeric cells,
    dates as serial numbers in a date format."""
    s = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    shared: dict[str, int] = {}
    dates = False
    sheet_parts: list[tuple[str, str]] = []
    for number, (_, rows) in enumerate(sheets, 1):
        xml_rows = []
        for r, row in enumerate(rows, 1):
            cells = []
            for c, value in enumerate(row):
                ref = f"{_column(c)}{r}"
                if value is None:
                    continue
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    cells.append(f'<c r="{ref}"><v>{value}</v></c>')
                elif isinstance(value, dt.date):
                    dates = True
                    serial = (value - _EXCEL_EPOCH).days
                    cells.append(f'<c r="{ref}" s="1"><v>{serial}</v></c>')
                elif not shared_strings:
                    inline = escape(str(value))
                    cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{inline}</t></is></c>')
                else:
                    index = shared.setdefault(str(value), len(shared))
                    cells.append(f'<c r="{ref}" t="s"><v>{index}</v></c>')
            xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
        sheet_parts.append(
            (
                f"xl/worksheets/sheet{number}.xml",
                f'{_XML}<worksheet xmlns="{s}"><sheetData>{"".join(xml_rows)}</sheetData>'
                "</worksheet>",
            )
        )
    strings = "".join(f"<si><t>{escape(text)}</t></si>" for text in shared)
    shared_xml = (
        f'{_XML}<sst xmlns="{s}" count="{len(shared)}" uniqueCount="{len(shared)}">{strings}</sst>'
    )
    sheet_list = "".join(
        f'<sheet name="{escape(name, {chr(34): "&quot;"})}" sheetId="{n}" r:id="rId{n}"/>'
        for n, (name, _) in enumerate(sheets, 1)
    )
    workbook = (
        f'{_XML}<workbook xmlns="{s}" xmlns:r="{_REL}"><sheets>{sheet_list}</sheets></workbook>'
    )
    count = len(sheets)
    workbook_rels = [
        (f"rId{n}", _REL + "/worksheet", f"worksheets/sheet{n}.xml") for n in range(1, count + 1)
    ]
    workbook_rels.append((f"rId{count + 1}", _REL + "/sharedStrings", "sharedStrings.xml"))
    workbook_rels.append((f"rId{count + 2}", _REL + "/styles", "styles.xml"))
    # Style 1 (numFmtId 14, the built-in short date) exists only where a date uses it.
    cell_formats = '<cellXfs count="2"><xf/><xf numFmtId="14" applyNumberFormat="1"/>'
    styles = (
        f'{_XML}<styleSheet xmlns="{s}"><fonts count="1"><font><sz val="11"/>'
        '<name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill '
        'patternType="none"/></fill></fills><borders count="1"><border/></borders>'
        '<cellStyleXfs count="1"><xf/></cellStyleXfs>'
        + (cell_formats if dates else '<cellXfs count="1"><xf/>')
        + "</cellXfs></styleSheet>"
    )
    main = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    overrides = {"/xl/workbook.xml": main + ".sheet.main+xml"}
    for n in range(1, count + 1):
        overrides[f"/xl/worksheets/sheet{n}.xml"] = main + ".worksheet+xml"
    overrides["/xl/sharedStrings.xml"] = main + ".sharedStrings+xml"
    overrides["/xl/styles.xml"] = main + ".styles+xml"
    overrides["/docProps/core.xml"] = _CORE_TYPE
    return zip_parts(
        [
            ("[Content_Types].xml", _types(_BASE_TYPES, overrides)),
            (
                "_rels/.rels",
                _rels(
                    [
                        ("rId1", _OFFICE_DOC, "xl/workbook.xml"),
                        ("rId2", _CORE_REL, "docProps/core.xml"),
                    ]
                ),
            ),
            ("xl/workbook.xml", workbook),
            ("xl/_rels/workbook.xml.rels", _rels(workbook_rels)),
            *sheet_parts,
            ("xl/sharedStrings.xml", shared_xml),
            ("xl/styles.xml", styles),
            ("docProps/core.xml", _core(sheets[0][0] if sheets else "Workbook")),
        ]
    )


_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _shape(shape_id: int, name: str, placeholder: str, paragraphs: Sequence[str]) -> str:
    runs = (
        "".join(
            f'<a:p><a:r><a:rPr lang="en-US"/><a:t>{escape(text)}</a:t></a:r></a:p>'
            for text in paragraphs
        )
        or "<a:p/>"
    )
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{name}"/><p:cNvSpPr/>'
        f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr></p:nvSpPr><p:spPr/>'
        f"<p:txBody><a:bodyPr/><a:lstStyle/>{runs}</p:txBody></p:sp>"
    )


def _tree(shapes: str) -> str:
    return (
        '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/>'
        "</p:nvGrpSpPr><p:grpSpPr/>" + shapes + "</p:spTree></p:cSld>"
    )


Slide = tuple[str, Sequence[str]] | tuple[str, Sequence[str], Sequence[str]]
"""``(title, bullets)``, or ``(title, bullets, speaker notes)``."""

_CLR_MAP = (
    '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" '
    'accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" '
    'accent6="accent6" hlink="hlink" folHlink="folHlink"/>'
)


def pptx(slides: Sequence[Slide]) -> bytes:
    """A PowerPoint deck: each slide a title and a bulleted body, and its speaker notes
    (a notes slide under a notes master) where it has any."""
    ns = f'xmlns:a="{_A}" xmlns:r="{_REL}" xmlns:p="{_P}"'
    main = "application/vnd.openxmlformats-officedocument.presentationml"
    parts: list[tuple[str, str | bytes]] = []
    overrides = {
        "/ppt/presentation.xml": main + ".presentation.main+xml",
        "/ppt/slideMasters/slideMaster1.xml": main + ".slideMaster+xml",
        "/ppt/slideLayouts/slideLayout1.xml": main + ".slideLayout+xml",
        "/ppt/theme/theme1.xml": "application/vnd.openxmlformats-officedocument.theme+xml",
        "/docProps/core.xml": _CORE_TYPE,
    }
    slide_ids = []
    presentation_rels = [
        ("rId1", _REL + "/slideMaster", "slideMasters/slideMaster1.xml"),
        ("rId2", _REL + "/theme", "theme/theme1.xml"),
    ]
    noted = False
    for number, (title, bullets, *rest) in enumerate(slides, 1):
        notes: Sequence[str] = rest[0] if rest else ()
        shapes = _shape(2, "Title 1", "title", [title]) + _shape(3, "Content 2", "body", bullets)
        parts.append(
            (f"ppt/slides/slide{number}.xml", f"{_XML}<p:sld {ns}>{_tree(shapes)}</p:sld>")
        )
        slide_rels = [("rId1", _REL + "/slideLayout", "../slideLayouts/slideLayout1.xml")]
        if notes:
            noted = True
            notes_name = f"notesSlide{number}.xml"
            slide_rels.append(("rId2", _REL + "/notesSlide", f"../notesSlides/{notes_name}"))
            notes_shapes = _shape(2, "Slide Number 1", "sldNum", [str(number)]) + _shape(
                3, "Notes 2", "body", notes
            )
            parts.append(
                (
                    f"ppt/notesSlides/{notes_name}",
                    f"{_XML}<p:notes {ns}>{_tree(notes_shapes)}</p:notes>",
                )
            )
            parts.append(
                (
                    f"ppt/notesSlides/_rels/{notes_name}.rels",
                    _rels(
                        [
                            ("rId1", _REL + "/notesMaster", "../notesMasters/notesMaster1.xml"),
                            ("rId2", _REL + "/slide", f"../slides/slide{number}.xml"),
                        ]
                    ),
                )
            )
            overrides[f"/ppt/notesSlides/{notes_name}"] = main + ".notesSlide+xml"
        parts.append((f"ppt/slides/_rels/slide{number}.xml.rels", _rels(slide_rels)))
        overrides[f"/ppt/slides/slide{number}.xml"] = main + ".slide+xml"
        rid = f"rId{number + 2}"
        presentation_rels.append((rid, _REL + "/slide", f"slides/slide{number}.xml"))
        slide_ids.append(f'<p:sldId id="{255 + number}" r:id="{rid}"/>')
    notes_master_list = ""
    if noted:
        presentation_rels.append(("rIdN", _REL + "/notesMaster", "notesMasters/notesMaster1.xml"))
        notes_master_list = (
            '<p:notesMasterIdLst><p:notesMasterId r:id="rIdN"/></p:notesMasterIdLst>'
        )
        overrides["/ppt/notesMasters/notesMaster1.xml"] = main + ".notesMaster+xml"
        parts.append(
            (
                "ppt/notesMasters/notesMaster1.xml",
                f"{_XML}<p:notesMaster {ns}>{_tree('')}{_CLR_MAP}</p:notesMaster>",
            )
        )
        parts.append(
            (
                "ppt/notesMasters/_rels/notesMaster1.xml.rels",
                _rels([("rId1", _REL + "/theme", "../theme/theme1.xml")]),
            )
        )
    presentation = (
        f"{_XML}<p:presentation {ns}>"
        '<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
        f"{notes_master_list}<p:sldIdLst>{''.join(slide_ids)}</p:sldIdLst>"
        '<p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/>'
        "</p:presentation>"
    )
    master = (
        f"{_XML}<p:sldMaster {ns}>{_tree('')}{_CLR_MAP}"
        '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst>'
        "</p:sldMaster>"
    )
    layout = f'{_XML}<p:sldLayout {ns} type="obj">{_tree("")}</p:sldLayout>'
    colors = "".join(
        f'<a:{name}><a:srgbClr val="{value}"/></a:{name}>'
        for name, value in (
            ("dk1", "000000"),
            ("lt1", "FFFFFF"),
            ("dk2", "1F497D"),
            ("lt2", "EEECE1"),
            ("accent1", "4F81BD"),
            ("accent2", "C0504D"),
            ("accent3", "9BBB59"),
            ("accent4", "8064A2"),
            ("accent5", "4BACC6"),
            ("accent6", "F79646"),
            ("hlink", "0000FF"),
            ("folHlink", "800080"),
        )
    )
    theme = (
        f'{_XML}<a:theme xmlns:a="{_A}" name="Office"><a:themeElements>'
        f'<a:clrScheme name="Office">{colors}</a:clrScheme>'
        '<a:fontScheme name="Office"><a:majorFont><a:latin typeface="Calibri"/><a:ea '
        'typeface=""/><a:cs typeface=""/></a:majorFont><a:minorFont><a:latin '
        'typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont>'
        '</a:fontScheme><a:fmtScheme name="Office"><a:fillStyleLst><a:noFill/><a:noFill/>'
        "<a:noFill/></a:fillStyleLst><a:lnStyleLst><a:ln/><a:ln/><a:ln/></a:lnStyleLst>"
        "<a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle>"
        "<a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle>"
        "</a:effectStyleLst><a:bgFillStyleLst><a:noFill/><a:noFill/><a:noFill/>"
        "</a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>"
    )
    return zip_parts(
        [
            (
                "[Content_Types].xml",
                _types(_BASE_TYPES, overrides),
            ),
            (
                "_rels/.rels",
                _rels(
                    [
                        ("rId1", _OFFICE_DOC, "ppt/presentation.xml"),
                        ("rId2", _CORE_REL, "docProps/core.xml"),
                    ]
                ),
            ),
            ("ppt/presentation.xml", presentation),
            ("ppt/_rels/presentation.xml.rels", _rels(presentation_rels)),
            ("ppt/slideMasters/slideMaster1.xml", master),
            (
                "ppt/slideMasters/_rels/slideMaster1.xml.rels",
                _rels(
                    [
                        ("rId1", _REL + "/slideLayout", "../slideLayouts/slideLayout1.xml"),
                        ("rId2", _REL + "/theme", "../theme/theme1.xml"),
                    ]
                ),
            ),
            ("ppt/slideLayouts/slideLayout1.xml", layout),
            (
                "ppt/slideLayouts/_rels/slideLayout1.xml.rels",
                _rels([("rId1", _REL + "/slideMaster", "../slideMasters/slideMaster1.xml")]),
            ),
            ("ppt/theme/theme1.xml", theme),
            *parts,
            ("docProps/core.xml", _core(slides[0][0] if slides else "Presentation")),
        ]
    )


def _pdf_text(text: str) -> str:
    ascii_text = text.encode("ascii", "replace").decode("ascii")
    return ascii_text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf(title: str, lines: Sequence[str], *, lines_per_page: int = 45) -> bytes:
    """A PDF whose pages show ``lines`` in Helvetica; text extractors read them back."""
    pages = [list(lines[i : i + lines_per_page]) for i in range(0, len(lines), lines_per_page)]
    pages = pages or [[]]
    if pages:
        pages[0].insert(0, title)
    objects: list[bytes] = []
    # 1 catalog, 2 pages, 3 font, 4 info; then (page, content) pairs from object 5.
    kids = " ".join(f"{5 + 2 * n} 0 R" for n in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Title ({_pdf_text(title)}) /Producer (mfconnector demo) >>".encode())
    for n, page_lines in enumerate(pages):
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
        for line in page_lines:
            ops.append(f"({_pdf_text(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("ascii")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {6 + 2 * n} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    return _pdf_file(objects, "/Root 1 0 R /Info 4 0 R")


def _pdf_file(objects: Sequence[bytes], trailer: str) -> bytes:
    """Objects numbered from 1, a cross-reference table that points at each, the trailer."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} {trailer} >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def _pdf_winansi(text: str) -> bytes:
    raw = text.encode("cp1252", "replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def pdf_pages(pages: Sequence[str], *, encrypted: bool = False) -> bytes:
    """One Helvetica page per string (its lines split on newlines), WinAnsi encoded, and no
    title line: each page holds exactly its text. ``encrypted`` adds a Standard security
    handler whose user password is not empty, so a reader without it sees no text."""
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for n, text in enumerate(pages):
        shown = b" ".join(_pdf_winansi(line) + b" Tj T*" for line in text.split("\n"))
        stream = b"BT /F1 12 Tf 14 TL 72 720 Td " + shown + b" ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * n} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    trailer = "/Root 1 0 R"
    if encrypted:
        objects.append(
            b"<< /Filter /Standard /V 1 /R 2 /O <"
            + b"ab" * 32
            + b"> /U <"
            + b"cd" * 32
            + b"> /P -44 >>"
        )
        trailer += f" /Encrypt {len(objects)} 0 R /ID [<{'01' * 16}> <{'01' * 16}>]"
    return _pdf_file(objects, trailer)


def png(width: int, height: int, seed: int, *, noise: bool = False) -> bytes:
    """A valid RGB PNG: a colour gradient, or deterministic noise (which does not compress).

    Noise is stored uncompressed (deflate level 0), so a large noisy image costs no
    compression time and its size is exact and predictable.
    """
    if noise:
        pixels = _noise(f"png:{seed}", width * height * 3)
        stride = width * 3
        rows = b"".join(b"\x00" + pixels[y * stride : (y + 1) * stride] for y in range(height))
        level = 0
    else:
        red = bytes(((x * 255 // max(1, width)) ^ seed) & 0xFF for x in range(width))
        blue = bytes([(seed * 37) & 0xFF]) * width
        lines = []
        for y in range(height):
            line = bytearray(width * 3)
            line[0::3] = red
            line[1::3] = bytes([y * 255 // max(1, height)]) * width
            line[2::3] = blue
            lines.append(b"\x00" + bytes(line))
        rows = b"".join(lines)
        level = 6

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, level))
        + chunk(b"IEND", b"")
    )


def _noise(label: str, size: int) -> bytes:
    out = bytearray()
    seed = hashlib.sha256(label.encode()).digest()
    counter = 0
    while len(out) < size:
        out += hashlib.sha512(seed + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:size])


def eml(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    text: str,
    sent: datetime,
    message_id: str,
    html: str | None = None,
    attachments: Sequence[tuple[str, str, bytes]] = (),
) -> bytes:
    """An RFC 5322 message (UTF-8 text body) as Outlook exports one: an HTML alternative of
    the body if given, then each ``(file name, content type, bytes)`` attachment."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Subject"] = subject
    message["Date"] = format_datetime(sent)
    message["Message-ID"] = message_id
    message.set_content(text)
    if html is not None:
        message.add_alternative(html, subtype="html")
    for filename, content_type, data in attachments:
        maintype, _, subtype = content_type.partition("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return message.as_bytes()
