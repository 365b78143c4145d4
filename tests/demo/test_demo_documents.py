"""The demo's documents are real files: each checked against its format's own rules.

OOXML: every part the relationships name exists, every part has a content type, and the
text read back from the XML is the text put in. PDF: the cross-reference table points at
each object, ``/Length`` is each stream's length, and the text is in the page streams.
PNG: valid chunk CRCs and image data of the declared size.
"""

from __future__ import annotations

import io
import posixpath
import re
import struct
import zipfile
import zlib
from datetime import UTC, date, datetime
from email import message_from_bytes
from xml.etree import ElementTree

import pytest

import mfconnector.demo_documents as docbuild
from mfconnector.emulator.seed.tenant import build_tenant

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
CT = "{http://schemas.openxmlformats.org/package/2006/content-types}"


def check_package(data: bytes) -> zipfile.ZipFile:
    """Relationships resolve and every part has a content type (OPC rules)."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    names = set(archive.namelist())
    types = ElementTree.fromstring(archive.read("[Content_Types].xml"))
    defaults = {d.get("Extension") for d in types.iter(CT + "Default")}
    overrides = {o.get("PartName") for o in types.iter(CT + "Override")}
    for name in names:
        assert "/" + name in overrides or name.rsplit(".", 1)[-1] in defaults, name
    for name in names:
        if not name.endswith(".rels"):
            ElementTree.fromstring(archive.read(name))  # well-formed XML
            continue
        source_dir = posixpath.dirname(posixpath.dirname(name))
        for rel in ElementTree.fromstring(archive.read(name)).iter(REL + "Relationship"):
            target = posixpath.normpath(posixpath.join(source_dir, rel.get("Target", "")))
            assert target in names, (name, target)
    return archive


def test_docx_text_reads_back() -> None:
    paragraphs = ["First paragraph & more.", "Zweiter Absatz: Grüße <ok>."]
    archive = check_package(docbuild.docx("Title here", paragraphs))
    root = ElementTree.fromstring(archive.read("word/document.xml"))
    texts = ["".join(t.text or "" for t in p.iter(W + "t")) for p in root.iter(W + "p")]
    assert texts == ["Title here", *paragraphs]


def test_docx_headings_lists_and_tables_are_a_valid_package() -> None:
    """The blocks the document tests use: every style and numbering a paragraph names exists."""
    blocks: list[docbuild.Block] = [
        ("Heading1", "Report"),
        ("List", "one\ttwo"),
        [["Region", "Sales"], ["North", "1,200"]],
    ]
    archive = check_package(docbuild.docx(None, blocks))
    root = ElementTree.fromstring(archive.read("word/document.xml"))
    styles = ElementTree.fromstring(archive.read("word/styles.xml"))
    defined = {style.get(W + "styleId") for style in styles.iter(W + "style")}
    used = {style.get(W + "val") for style in root.iter(W + "pStyle")}
    assert used == {"Heading1"} and used <= defined
    numbering = ElementTree.fromstring(archive.read("word/numbering.xml"))
    assert {n.get(W + "numId") for n in numbering.iter(W + "num")} == {"1"}
    texts = ["".join(t.text or "" for t in p.iter(W + "t")) for p in root.iter(W + "p")]
    assert texts == ["Report", "onetwo", "Region", "Sales", "North", "1,200"]
    assert len(list(root.iter(W + "tab"))) == 1


def test_xlsx_dates_and_inline_strings_are_a_valid_package() -> None:
    rows: list[list[docbuild.Cell]] = [["Closed", date(2026, 3, 31), None, "x"]]
    archive = check_package(docbuild.xlsx([("Dates", rows)], shared_strings=False))
    sheet = ElementTree.fromstring(archive.read("xl/worksheets/sheet1.xml"))
    cells = {c.get("r"): c for c in sheet.iter(S + "c")}
    assert sorted(cells) == ["A1", "B1", "D1"]  # None leaves its cell out
    assert cells["A1"].get("t") == "inlineStr"
    serial = cells["B1"].find(S + "v")
    assert serial is not None and serial.text == str((date(2026, 3, 31) - date(1899, 12, 30)).days)
    formats = ElementTree.fromstring(archive.read("xl/styles.xml")).find(S + "cellXfs")
    assert formats is not None
    style = int(cells["B1"].get("s", "0"))
    assert list(formats)[style].get("numFmtId") == "14"  # a built-in date format


def test_xlsx_cells_read_back() -> None:
    rows = [["Name", "Amount"], ["Café", 12.5], ["Total", 3]]
    archive = check_package(docbuild.xlsx([("Sheet A", rows), ("Second", [["x"]])]))
    strings = [
        "".join(t.text or "" for t in si.iter(S + "t"))
        for si in ElementTree.fromstring(archive.read("xl/sharedStrings.xml")).iter(S + "si")
    ]
    sheet = ElementTree.fromstring(archive.read("xl/worksheets/sheet1.xml"))
    got = []
    for row in sheet.iter(S + "row"):
        values: list[str | float] = []
        for cell in row.iter(S + "c"):
            raw = cell.find(S + "v")
            assert raw is not None and raw.text is not None
            values.append(strings[int(raw.text)] if cell.get("t") == "s" else float(raw.text))
        got.append(values)
    assert got == [["Name", "Amount"], ["Café", 12.5], ["Total", 3.0]]
    workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    assert [s.get("name") for s in workbook.iter(S + "sheet")] == ["Sheet A", "Second"]


def test_pptx_slides_read_back() -> None:
    slides = [("Kickoff", ["One", "Two"]), ("Risks", ["Venue"])]
    archive = check_package(docbuild.pptx(slides))
    for number, (title, bullets) in enumerate(slides, 1):
        root = ElementTree.fromstring(archive.read(f"ppt/slides/slide{number}.xml"))
        assert [t.text for t in root.iter(A + "t")] == [title, *bullets]


def test_pptx_speaker_notes_hang_off_their_slide_under_a_notes_master() -> None:
    archive = check_package(
        docbuild.pptx([("Kick-off", ["Agenda"], ["Speak slowly"]), ("Plan", [])])
    )
    notes = ElementTree.fromstring(archive.read("ppt/notesSlides/notesSlide1.xml"))
    assert [t.text for t in notes.iter(A + "t")] == ["1", "Speak slowly"]
    assert "ppt/notesSlides/notesSlide2.xml" not in archive.namelist()  # no notes, no part
    presentation = archive.read("ppt/presentation.xml").decode()
    assert "<p:notesMasterIdLst>" in presentation
    assert presentation.index("notesMasterIdLst") < presentation.index("sldIdLst")


def test_pdf_pages_hold_exactly_their_text_and_encryption_is_declared() -> None:
    data = docbuild.pdf_pages(["Invoice\nTotal: 5 EUR", "Café"])
    objects = pdf_objects(data)
    streams = b"".join(body for body in objects.values() if b"stream" in body)
    assert b"(Invoice) Tj" in streams and b"(Total: 5 EUR) Tj" in streams
    assert "(Café) Tj".encode("cp1252") in streams  # WinAnsi, as the font declares
    assert b"/Encrypt" not in data
    locked = docbuild.pdf_pages(["secret"], encrypted=True)
    pdf_objects(locked)
    assert b"/Encrypt" in locked.split(b"trailer")[1]


def pdf_objects(data: bytes) -> dict[int, bytes]:
    start = int(re.search(rb"startxref\n(\d+)\n%%EOF", data).group(1))  # type: ignore[union-attr]
    assert data[start:].startswith(b"xref\n")
    header, *entries = data[start:].split(b"trailer")[0].splitlines()[1:]
    first, count = (int(x) for x in header.split())
    assert first == 0 and len(entries) == count
    objects = {}
    for number, entry in enumerate(entries[1:], 1):
        offset = int(entry[:10])
        assert data[offset:].startswith(f"{number} 0 obj".encode()), number
        objects[number] = data[offset : data.index(b"endobj", offset)]
    return objects


def test_pdf_structure_and_text() -> None:
    lines = [f"Line {n}: (parenthesised) back\\slash" for n in range(60)]
    data = docbuild.pdf("A title", lines)
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    shown = []
    for body in pdf_objects(data).values():
        match = re.search(rb"/Length (\d+) >>\nstream\n", body)
        if match is None:
            continue
        stream = body[match.end() : body.rindex(b"\nendstream")]
        assert len(stream) == int(match.group(1))
        for text in re.findall(rb"\(((?:[^()\\]|\\.)*)\) Tj", stream):
            shown.append(re.sub(rb"\\(.)", rb"\1", text).decode())
    assert shown == ["A title", *lines]
    assert b"/Count 2" in data  # 61 lines at 45 a page


def test_png_is_valid() -> None:
    for noise in (False, True):
        data = docbuild.png(37, 11, 5, noise=noise)
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        position, chunks = 8, {}
        while position < len(data):
            (length,) = struct.unpack(">I", data[position : position + 4])
            kind = data[position + 4 : position + 8]
            body = data[position + 8 : position + 8 + length]
            (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
            assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
            chunks[kind] = body
            position += 12 + length
        assert struct.unpack(">II", chunks[b"IHDR"][:8]) == (37, 11)
        assert len(zlib.decompress(chunks[b"IDAT"])) == 11 * (1 + 37 * 3)


def test_eml_parses() -> None:
    data = docbuild.eml(
        sender="A <a@example.com>",
        to=["b@example.com"],
        subject="Héllo",
        text="Body text",
        sent=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        message_id="<x@example.com>",
    )
    parsed = message_from_bytes(data)
    assert parsed["Message-ID"] == "<x@example.com>" and "Body text" in parsed.get_payload()


@pytest.mark.parametrize("suffix", [".docx", ".xlsx", ".pptx", ".pdf"])
def test_every_demo_document_is_valid_with_its_text(suffix: str) -> None:
    tenant = build_tenant()
    found = 0
    for drive in tenant.drives.values():
        for item in drive.items.values():
            if not item.name.endswith(suffix):
                continue
            found += 1
            data = item.content()
            assert len(data) == item.size
            if suffix == ".pdf":
                text = b" ".join(pdf_objects(data).values()).decode("latin-1").casefold()
                words = re.findall(r"[a-z]{5,}", item.text.casefold())
                assert words and all(w in text for w in words), (item.name, words)
                continue
            archive = check_package(data)
            xml = b" ".join(archive.read(n) for n in archive.namelist() if n.endswith(".xml"))
            text = xml.decode().casefold()
            words = re.findall(r"[a-z]{5,}", item.text.casefold())
            assert words and all(w in text for w in words), (item.name, words)
    assert found >= 2
