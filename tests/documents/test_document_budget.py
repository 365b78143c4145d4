"""Documents cost what their text is worth (issue 16 §2): zip entries trusted for nothing,
shared strings read only as far as needed, one deadline for the whole call.

Each test sends what 0.2.0 let through: a bzip2 or LZMA entry (no output bound), a
directory whose ``compress_size`` was raised to pass the ratio check, a local header that
disagrees with the directory, a tiny workbook with a huge shared-strings table, and a
call that waited for a worker with no deadline.
"""

from __future__ import annotations

import dataclasses
import io
import struct
import zipfile
from pathlib import Path

import pytest
import trio

import mfconnector.demo_documents as docbuild
from mfconnector.documents.archive import SafeZip, _Inflated, open_zip
from mfconnector.documents.extract import extract
from mfconnector.documents.runner import DocumentWorkers
from mfconnector.errors import BusyError, DocumentError
from mfconnector.limits import DEFAULT_LIMITS

WORD = docbuild.docx(None, ["Quarterly report", "Revenue grew 12%."])
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def rezipped(data: bytes, method: int, only: str | None = None) -> bytes:
    """The same parts, compressed with ``method`` (every part, or only ``only``)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            chosen = method if only in (None, info.filename) else zipfile.ZIP_DEFLATED
            archive.writestr(info.filename, source.read(info.filename), chosen)
    return buffer.getvalue()


def read(tmp_path: Path, data: bytes, kind: str = "docx", **limits: int) -> str:
    path = tmp_path / f"document.{kind}"
    path.write_bytes(data)
    return extract(str(path), kind, dataclasses.replace(DEFAULT_LIMITS, **limits)).text


def refusal(tmp_path: Path, data: bytes, kind: str = "docx") -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        read(tmp_path, data, kind)
    return caught.value


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_only_stored_and_deflate_entries_are_inflated(tmp_path: Path, method: int) -> None:
    """0.2.0 inflated bzip2/LZMA with no output bound: 1,816 bytes reached the 1 GB cap."""
    error = refusal(tmp_path, rezipped(WORD, method, "word/document.xml"))
    assert error.code == "too_large"
    assert f"compression method {method}" in error.message and "deflate" in error.message
    assert "Quarterly report" in read(tmp_path, rezipped(WORD, zipfile.ZIP_STORED))


def entry_offsets(data: bytes, member: str) -> tuple[int, int]:
    """(local header offset, central directory record offset) of ``member``."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(member)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_length] == member.encode():
            return info.header_offset, central
        central = data.find(b"PK\x01\x02", central + 4)
    raise AssertionError(member)


def test_a_compressed_size_raised_in_the_directory_is_refused(tmp_path: Path) -> None:
    """5 MB of spaces deflate about 1,000 to 1 and are refused by the ratio check; raising
    the last entry's ``compress_size`` (nothing follows it to overlap) passed 0.2.0's
    check. The compressed bytes must fit before the central directory."""
    source = zipfile.ZipFile(io.BytesIO(WORD))
    parts: dict[str, str | bytes] = {i.filename: source.read(i.filename) for i in source.infolist()}
    parts["word/padding.xml"] = b" " * 5_000_000
    bomb = docbuild.zip_parts(list(parts.items()))
    assert "compressed" in refusal(tmp_path, bomb).message  # the ratio check, as declared
    out = bytearray(bomb)
    local, central = entry_offsets(bomb, "word/padding.xml")
    raised = 5_000_000 // (DEFAULT_LIMITS.archive_ratio // 2)
    struct.pack_into("<I", out, central + 20, raised)
    struct.pack_into("<I", out, local + 18, raised)  # the local header agrees
    error = refusal(tmp_path, bytes(out))
    assert error.code == "too_large" and "runs past the next entry" in error.message


@pytest.mark.parametrize("field", ["method", "name", "size"])
def test_a_local_header_that_disagrees_with_the_directory_is_refused(
    tmp_path: Path, field: str
) -> None:
    out = bytearray(WORD)
    local, _ = entry_offsets(WORD, "word/document.xml")
    if field == "method":
        struct.pack_into("<H", out, local + 8, zipfile.ZIP_STORED)
    elif field == "name":
        out[local + 30] = ord("W")  # "Word/document.xml": a different part
    else:
        size = struct.unpack_from("<I", out, local + 22)[0]
        struct.pack_into("<I", out, local + 22, size * 1_000)
    error = refusal(tmp_path, bytes(out))
    assert error.code == "too_large" and "local header disagrees" in error.message


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_inflated_bytes_are_counted_at_l_minus_1_l_and_l_plus_1(delta: int) -> None:
    """The count that bounds a worker on every platform (Windows has no rlimits): every
    byte read from any entry, a part read twice counted twice."""
    archive = zipfile.ZipFile(io.BytesIO(WORD))
    size = archive.getinfo("word/document.xml").file_size
    safe = SafeZip(archive, _Inflated(2 * size + delta, "Word document"))
    for _ in range(2):
        stream = safe.open("word/document.xml")
        assert stream is not None
        with stream:
            if delta < 0 and _ == 1:
                with pytest.raises(DocumentError) as caught:
                    stream.read()
                assert caught.value.code == "too_large"
                assert f"more than {2 * size - 1:,} bytes" in caught.value.message
            else:
                assert len(stream.read()) == size


def workbook(strings: int, index: int, text: str = "word") -> bytes:
    """One cell pointing at string ``index`` of a table of ``strings`` strings."""
    base = docbuild.xlsx([("Data", [["first"]])])
    source = zipfile.ZipFile(io.BytesIO(base))
    parts: dict[str, str | bytes] = {i.filename: source.read(i.filename) for i in source.infolist()}
    parts["xl/sharedStrings.xml"] = (
        f'<sst xmlns="{S}">' + f"<si><t>{text}</t></si>" * strings + "</sst>"
    )
    parts["xl/worksheets/sheet1.xml"] = (
        f'<worksheet xmlns="{S}"><sheetData><row r="1"><c r="A1" t="s"><v>{index}</v></c>'
        "</row></sheetData></worksheet>"
    )
    return docbuild.zip_parts(list(parts.items()))


def test_a_huge_shared_strings_table_is_read_only_as_far_as_the_cells_ask(
    tmp_path: Path,
) -> None:
    """55,000 strings (935 KB, under the ratio check's floor, deflated to a few KB), one cell
    using the first: 0.2.0 read all of them before the first sheet."""
    data = workbook(55_000, 0, "w")
    assert len(data) < 10_000
    path = tmp_path / "big.xlsx"
    path.write_bytes(data)
    archive = open_zip(str(path), DEFAULT_LIMITS, "Excel workbook")
    try:
        from mfconnector.documents.excel import _SharedStrings

        table = _SharedStrings(archive, DEFAULT_LIMITS.document_text_chars)
        assert table.get(0) == "w"
        assert len(table._strings) < 10_000  # one parser chunk's worth, not 55,000
        table.close()
    finally:
        archive.close()
    assert read(tmp_path, data, "xlsx").splitlines()[1] == "w"


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_shared_strings_count_against_the_text_cap_at_l_minus_1_l_and_l_plus_1(
    tmp_path: Path, delta: int
) -> None:
    """Ten strings of four characters cost 50 (one more each); the cell uses the tenth."""
    path = tmp_path / "table.xlsx"
    path.write_bytes(workbook(10, 9, "abcd"))
    limits = dataclasses.replace(DEFAULT_LIMITS, document_text_chars=50 + delta)
    got = extract(str(path), "xlsx", limits)
    if delta < 0:
        assert "abcd" not in got.text
        assert got.cut is not None and "shared strings table" in got.cut
    else:
        assert got.text.splitlines()[1] == "abcd" and got.cut is None


def slow_sheet() -> bytes:
    row = b"<row>" + b"<c><v>1</v></c>" * 100 + b"</row>"
    sheet = (
        f'<worksheet xmlns="{S}"><sheetData>'.encode() + row * 40_000 + b"</sheetData></worksheet>"
    )
    base = docbuild.xlsx([("Big", [["x"]])])
    source = zipfile.ZipFile(io.BytesIO(base))
    parts: dict[str, str | bytes] = {i.filename: source.read(i.filename) for i in source.infolist()}
    parts["xl/worksheets/sheet1.xml"] = sheet
    return docbuild.zip_parts(list(parts.items()))


@pytest.mark.slow
async def test_the_wait_for_a_worker_is_inside_the_calls_deadline(tmp_path: Path) -> None:
    """One worker busy with a slow workbook: a second call is told so when its own
    deadline passes (0.2.0 waited for the slot with no deadline, then started its own)."""
    slow_limits = dataclasses.replace(
        DEFAULT_LIMITS,
        document_workers=1,
        document_seconds=6.0,
        archive_ratio=100_000,
        archive_uncompressed_bytes=500_000_000,
        document_text_chars=100_000_000,
    )
    limits = dataclasses.replace(slow_limits, document_seconds=1.0)
    slow = tmp_path / "slow.xlsx"
    slow.write_bytes(slow_sheet())
    text = tmp_path / "note.pdf"
    text.write_bytes(docbuild.pdf_pages(["a short note"]))
    pool = DocumentWorkers(slow_limits)
    outcomes: dict[str, BaseException | None] = {}
    answered = trio.Event()

    async def run(name: str, path: Path, kind: str) -> None:
        job = {"kind": kind, "offset": 0, "part": None, "chars": 100, "path": str(path)}
        try:
            await pool.run(job, slow_limits if name == "slow" else limits, kind)
            outcomes[name] = None
        except (DocumentError, BusyError) as error:
            outcomes[name] = error
        if name == "waiting":
            answered.set()

    with trio.fail_after(slow_limits.document_seconds + 5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, "slow", slow, "xlsx")
            await trio.sleep(0.2)
            started = trio.current_time()
            nursery.start_soon(run, "waiting", text, "pdf")
            await answered.wait()
            waited = trio.current_time() - started
    slow_outcome = outcomes["slow"]
    assert isinstance(slow_outcome, DocumentError), slow_outcome
    assert slow_outcome.code == "timeout", slow_outcome.message
    waiting = outcomes["waiting"]
    assert isinstance(waiting, BusyError), outcomes
    assert "stayed busy" in waiting.message
    assert waited <= limits.document_seconds + 1.0  # one deadline, not the slot's plus its own
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "after", text, "pdf")
    assert outcomes["after"] is None  # the next call is served
    while pool.idle:
        await pool.idle.pop().kill()


async def test_a_worker_that_dies_of_an_uncaught_error_says_the_parser_failed(
    tmp_path: Path,
) -> None:
    """A job the worker cannot even start (no path) ends its process with a traceback."""
    pool = DocumentWorkers(DEFAULT_LIMITS)
    job = {"kind": "pdf", "offset": 0, "part": None, "chars": 100}
    with trio.fail_after(30), pytest.raises(DocumentError) as caught:
        await pool.run(job, DEFAULT_LIMITS, "PDF")
    assert caught.value.code == "crashed"
    assert "the parser failed" in caught.value.message and "exit status" not in caught.value.message


def html_eml(tags: int) -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "a@contoso.com"
    message["Subject"] = "html"
    message.set_content("<p>one " + "<i>" * (tags - 2) + "two<br>three", subtype="html")
    return bytes(message)


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_an_eml_html_body_is_converted_under_html_tags_at_l_minus_1_l_and_l_plus_1(
    tmp_path: Path, delta: int
) -> None:
    """The worker gets the server's ``html_tags`` with the job; past it the note says so."""
    path = tmp_path / "saved.eml"
    path.write_bytes(html_eml(100))
    got = extract(str(path), "eml", dataclasses.replace(DEFAULT_LIMITS, html_tags=100 + delta))
    if delta < 0:
        assert "one two three" in got.text
        assert got.cut is not None and "html_tags" in got.cut
    else:
        assert "one two\nthree" in got.text and got.cut is None
