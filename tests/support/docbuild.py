"""Real Office Open XML, PDF and .eml documents with known text, built with the stdlib.

Each builder writes what the application itself would need to open the file (content
types, package relationships), so the extractors are tested on the real layout.
"""

from __future__ import annotations

import datetime
import io
import zipfile
from collections.abc import Sequence
from email.message import EmailMessage
from xml.sax.saxutils import escape

__all__ = ["docx", "eml", "encrypted_pdf", "pdf", "pptx", "xlsx", "zip_parts"]

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PR = "http://schemas.openxmlformats.org/package/2006/relationships"
CT = "http://schemas.openxmlformats.org/package/2006/content-types"
OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def zip_parts(parts: dict[str, str | bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _rels(items: Sequence[tuple[str, str, str]]) -> str:
    body = "".join(
        f'<Relationship Id="{rid}" Type="{OFFICE}{kind}" Target="{target}"/>'
        for rid, kind, target in items
    )
    return f'{DECL}<Relationships xmlns="{PR}">{body}</Relationships>'


def _types(overrides: dict[str, str]) -> str:
    body = "".join(
        f'<Override PartName="/{name}" ContentType="{kind}"/>' for name, kind in overrides.items()
    )
    return (
        f'{DECL}<Types xmlns="{CT}">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f"{body}</Types>"
    )


# --- Word ----------------------------------------------------------------------------------

Block = str | tuple[str, str] | list[list[str]]
"""A paragraph, ("Heading1", text) / ("List", text), or a table (rows of cells)."""


def _w_paragraph(text: str, style: str | None = None) -> str:
    props = ""
    if style == "List":
        props = '<w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>'
    elif style:
        props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>'
    runs = "".join(
        f'<w:r><w:t xml:space="preserve">{escape(piece)}</w:t></w:r>'
        + ("<w:r><w:tab/></w:r>" if index < text.count("\t") else "")
        for index, piece in enumerate(text.split("\t"))
    )
    return f"<w:p>{props}{runs}</w:p>"


def docx(blocks: Sequence[Block]) -> bytes:
    body = []
    for block in blocks:
        if isinstance(block, str):
            body.append(_w_paragraph(block))
        elif isinstance(block, tuple):
            body.append(_w_paragraph(block[1], block[0]))
        else:
            rows = "".join(
                "<w:tr>" + "".join(f"<w:tc>{_w_paragraph(c)}</w:tc>" for c in row) + "</w:tr>"
                for row in block
            )
            body.append(f"<w:tbl>{rows}</w:tbl>")
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/>'
        "</w:style>"
        for n in (1, 2, 3)
    )
    return zip_parts(
        {
            "[Content_Types].xml": _types(
                {
                    "word/document.xml": "application/vnd.openxmlformats-officedocument."
                    "wordprocessingml.document.main+xml",
                    "word/styles.xml": "application/vnd.openxmlformats-officedocument."
                    "wordprocessingml.styles+xml",
                }
            ),
            "_rels/.rels": _rels([("rId1", "officeDocument", "word/document.xml")]),
            "word/_rels/document.xml.rels": _rels([("rId1", "styles", "styles.xml")]),
            "word/document.xml": f'{DECL}<w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>'
            + "".join(body)
            + "</w:body></w:document>",
            "word/styles.xml": f'{DECL}<w:styles xmlns:w="{W}">{styles}</w:styles>',
        }
    )


# --- Excel ---------------------------------------------------------------------------------

Cell = str | int | float | datetime.date | None


def _column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def xlsx(sheets: dict[str, Sequence[Sequence[Cell]]], *, shared: bool = True) -> bytes:
    """Strings go to the shared-string table (as Excel writes them) unless ``shared`` is off."""
    strings: list[str] = []
    index: dict[str, int] = {}
    parts: dict[str, str | bytes] = {}
    sheet_entries = []
    rels = []
    overrides = {
        "xl/workbook.xml": "application/vnd.openxmlformats-officedocument.spreadsheetml."
        "sheet.main+xml"
    }
    for number, (name, rows) in enumerate(sheets.items(), start=1):
        xml_rows = []
        for r, row in enumerate(rows, start=1):
            cells = []
            for c, value in enumerate(row):
                ref = f"{_column_name(c)}{r}"
                if value is None:
                    continue
                if isinstance(value, str):
                    if shared:
                        if value not in index:
                            index[value] = len(strings)
                            strings.append(value)
                        cells.append(f'<c r="{ref}" t="s"><v>{index[value]}</v></c>')
                    else:
                        cells.append(
                            f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
                        )
                elif isinstance(value, datetime.date):
                    serial = (value - datetime.date(1899, 12, 30)).days
                    cells.append(f'<c r="{ref}" s="1"><v>{serial}</v></c>')
                else:
                    cells.append(f'<c r="{ref}"><v>{value}</v></c>')
            xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
        parts[f"xl/worksheets/sheet{number}.xml"] = (
            f'{DECL}<worksheet xmlns="{S}"><sheetData>{"".join(xml_rows)}</sheetData></worksheet>'
        )
        overrides[f"xl/worksheets/sheet{number}.xml"] = (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
        )
        sheet_entries.append(
            f'<sheet name="{escape(name, {chr(34): "&quot;"})}" sheetId="{number}" '
            f'r:id="rId{number}"/>'
        )
        rels.append((f"rId{number}", "worksheet", f"worksheets/sheet{number}.xml"))
    rels.append(("rIdS", "sharedStrings", "sharedStrings.xml"))
    overrides["xl/sharedStrings.xml"] = (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
    )
    parts["xl/sharedStrings.xml"] = (
        f'{DECL}<sst xmlns="{S}" count="{len(strings)}" uniqueCount="{len(strings)}">'
        + "".join(f'<si><t xml:space="preserve">{escape(s)}</t></si>' for s in strings)
        + "</sst>"
    )
    parts["xl/styles.xml"] = (
        f'{DECL}<styleSheet xmlns="{S}">'
        '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
        '<fills count="2"><fill><patternFill patternType="none"/></fill>'
        '<fill><patternFill patternType="gray125"/></fill></fills>'
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
        '</cellStyleXfs><cellXfs count="2">'
        '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
        '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
        "</cellXfs></styleSheet>"
    )
    rels.append(("rIdT", "styles", "styles.xml"))
    overrides["xl/styles.xml"] = (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"
    )
    parts["xl/workbook.xml"] = (
        f'{DECL}<workbook xmlns="{S}" xmlns:r="{R}"><sheets>{"".join(sheet_entries)}</sheets>'
        "</workbook>"
    )
    parts["xl/_rels/workbook.xml.rels"] = _rels(rels)
    parts["_rels/.rels"] = _rels([("rId1", "officeDocument", "xl/workbook.xml")])
    parts["[Content_Types].xml"] = _types(overrides)
    return zip_parts(parts)


# --- PowerPoint ----------------------------------------------------------------------------


def _a_body(lines: Sequence[str]) -> str:
    paragraphs = "".join(f"<a:p><a:r><a:t>{escape(line)}</a:t></a:r></a:p>" for line in lines)
    return f"<p:txBody><a:bodyPr/>{paragraphs}</p:txBody>"


def _shape(lines: Sequence[str], placeholder: str | None) -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/>{ph}</p:nvSpPr>'
        f"<p:spPr/>{_a_body(lines)}</p:sp>"
    )


def pptx(slides: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> bytes:
    """Slides of (title, body lines, notes lines)."""
    ns = f'xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}"'
    parts: dict[str, str | bytes] = {}
    ids = []
    rels = []
    overrides = {
        "ppt/presentation.xml": "application/vnd.openxmlformats-officedocument."
        "presentationml.presentation.main+xml"
    }
    for number, (title, lines, notes) in enumerate(slides, start=1):
        shapes = _shape([title], "title") + _shape(lines, None)
        parts[f"ppt/slides/slide{number}.xml"] = (
            f"{DECL}<p:sld {ns}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
        )
        overrides[f"ppt/slides/slide{number}.xml"] = (
            "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"
        )
        slide_rels = []
        if notes:
            notes_shapes = _shape(["1"], "sldNum") + _shape(notes, "body")
            parts[f"ppt/notesSlides/notesSlide{number}.xml"] = (
                f"{DECL}<p:notes {ns}><p:cSld><p:spTree>{notes_shapes}</p:spTree></p:cSld>"
                "</p:notes>"
            )
            slide_rels.append(("rId2", "notesSlide", f"../notesSlides/notesSlide{number}.xml"))
            overrides[f"ppt/notesSlides/notesSlide{number}.xml"] = (
                "application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"
            )
        parts[f"ppt/slides/_rels/slide{number}.xml.rels"] = _rels(slide_rels)
        ids.append(f'<p:sldId id="{255 + number}" r:id="rId{number}"/>')
        rels.append((f"rId{number}", "slide", f"slides/slide{number}.xml"))
    parts["ppt/presentation.xml"] = (
        f"{DECL}<p:presentation {ns}><p:sldIdLst>{''.join(ids)}</p:sldIdLst></p:presentation>"
    )
    parts["ppt/_rels/presentation.xml.rels"] = _rels(rels)
    parts["_rels/.rels"] = _rels([("rId1", "officeDocument", "ppt/presentation.xml")])
    parts["[Content_Types].xml"] = _types(overrides)
    return zip_parts(parts)


# --- PDF -----------------------------------------------------------------------------------


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def pdf(pages: Sequence[str], *, encrypt: bool = False) -> bytes:
    """One Helvetica text page per string (lines split on newlines), WinAnsi encoded."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    objects.append(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    for index, text in enumerate(pages):
        content = (
            b"BT /F1 12 Tf 14 TL 72 720 Td "
            + b" ".join(_pdf_string(line) + b" Tj T*" for line in text.split("\n"))
            + b" ET"
        )
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * index} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    trailer_extra = b""
    if encrypt:
        offsets.append(len(out))
        out += b"%d 0 obj\n<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P -44 >>\nendobj\n" % (
            len(objects) + 1,
            b"ab" * 32,
            b"cd" * 32,
        )
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (
            len(objects) + 1,
            b"01" * 16,
            b"01" * 16,
        )
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(offsets) + 1,
        trailer_extra,
        xref,
    )
    return bytes(out)


def encrypted_pdf() -> bytes:
    """A PDF with a Standard security handler whose user password is not empty."""
    return pdf(["secret page"], encrypt=True)


# --- e-mail --------------------------------------------------------------------------------


def eml(subject: str, body: str, *, html: str | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = "Ada Lovelace <ada@contoso.com>"
    message["To"] = "Charles Babbage <charles@contoso.com>"
    message["Subject"] = subject
    message["Date"] = "Mon, 30 Nov 2026 10:00:00 +0000"
    message.set_content(body)
    if html is not None:
        message.add_alternative(html, subtype="html")
    message.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="data.csv")
    return bytes(message)
