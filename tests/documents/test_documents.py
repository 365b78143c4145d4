"""Documents through ``files_read`` against the loopback Graph: real downloads, real worker.

Every document here is built with known text by ``mfconnector/demo_documents.py`` (the
demo's own builder). Calls go through the whole server (Runtime + McpServer), the real
GraphClient over sockets, the spool to a private file and the worker process; the only fake
is the token provider.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import os
import stat
import struct
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mfconnector.demo_documents as docbuild
from mfconnector.documents.archive import check_directory
from mfconnector.documents.extract import extract
from mfconnector.documents.runner import workers_for
from mfconnector.errors import BusyError, DocumentError
from mfconnector.limits import DEFAULT_LIMITS, Limits
from tests.support.harness import request
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.tools.test_tools_loopback import FAST, tools_on

ITEM = "01LOOPBACKDOCUMENT0000000000000"
ITEM_REF = f"msb.{ITEM}"
"""The document as files_read takes it: a reference of the one account, ``default``."""
LINUX = sys.platform.startswith("linux")
posix_only = pytest.mark.skipif(not LINUX, reason="reads worker processes from /proc")
FAILURE_CODES = {"corrupt", "protected", "too_large", "memory", "cpu", "timeout", "crashed"}


def serve_document(
    graph: LoopbackServer,
    files: LoopbackServer,
    name: str,
    data: bytes,
    *,
    size: int | None = None,
    reply: Reply | None = None,
) -> None:
    """An item whose /content answers Graph's 302 to a pre-authenticated download host."""
    location = f"{files.url}/personal/u/download.aspx?UniqueId=1&tempauth=SECRET-CAPABILITY"
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{ITEM}",
        Reply.json(
            {
                "id": ITEM,
                "name": name,
                "size": len(data) if size is None else size,
                "file": {"mimeType": "application/octet-stream"},
                "@microsoft.graph.downloadUrl": location,
            }
        ),
    )
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{ITEM}/content",
        Reply(302, (("Location", location), ("Content-Length", "0"))),
    )
    files.route(
        "GET",
        "/personal/u/download.aspx",
        reply or Reply(200, (("Content-Type", "application/octet-stream"),), data),
    )


def worker_pids() -> set[int]:
    """This process's document workers still alive (Linux: from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next(
            (line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), ""
        )
        alive = "State:\tZ" not in status
        if parent == str(os.getpid()) and b"mfconnector.documents.worker" in command and alive:
            found.add(int(entry.name))
    return found


def process_limits(pid: int) -> str:
    return Path(f"/proc/{pid}/limits").read_text()


async def slow_error(tools: Any, arguments: dict[str, Any], request_id: int = 90) -> Any:
    """A files_read expected to fail after seconds of parsing (the harness waits 5 s)."""
    await tools.session.send(
        request(request_id, "tools/call", {"name": "files_read", "arguments": arguments})
    )
    reply = await tools.session.receive(timeout=120)
    assert reply["id"] == request_id and reply["result"]["isError"] is True
    return json.loads(reply["result"]["content"][0]["text"])["error"]


async def wait_for_workers(predicate: Any) -> set[int]:
    while True:
        pids = worker_pids()
        if predicate(pids):
            return pids
        await trio.sleep(0.02)


# --- documents of each kind, read whole -----------------------------------------------------

WORD = docbuild.docx(
    None,
    [
        ("Heading1", "Quarterly report"),
        "Revenue grew in every region.",
        ("List", "Hire two engineers"),
        [["Region", "Sales"], ["North", "1,200"], ["South", "950"]],
        ("Heading2", "Next steps"),
        "Ship the connector.",
    ],
)
EXCEL = docbuild.xlsx(
    [
        (
            "Sales",
            [
                ["Region", "Q1", "Q2"],
                ["North", 120, 130.5],
                ["South", 95, None, "note"],
                ["Closed", datetime.date(2026, 3, 31)],
            ],
        ),
        ("Staff", [["Name", "Team"], ["Ada", "Platform"]]),
    ]
)
POWERPOINT = docbuild.pptx(
    [("Kick-off", ["Agenda", "Budget"], ["Speak slowly"]), ("Plan", ["Phase 1"], [])]
)
PDF = docbuild.pdf_pages(["Invoice 2026-114\nTotal due: 1,250.00 EUR", "Payment terms: 30 days"])
EML = docbuild.eml(
    sender="Ada Lovelace <ada@contoso.com>",
    to=["Charles Babbage <charles@contoso.com>"],
    subject="Lunch on Friday?",
    text="See you at noon by the river.",
    sent=datetime.datetime(2026, 11, 30, 10, 0, tzinfo=datetime.UTC),
    message_id="<lunch@contoso.com>",
    attachments=[("data.csv", "text/csv", b"a,b\n1,2\n")],
)

KINDS = [
    pytest.param(
        "report.docx",
        WORD,
        "docx",
        [
            "# Quarterly report\nRevenue grew in every region.\n- Hire two engineers\n",
            "| Region | Sales |\n| North | 1,200 |\n| South | 950 |\n",
            "## Next steps\nShip the connector.\n",
        ],
        ["Quarterly report", "Next steps"],
        id="word",
    ),
    pytest.param(
        "sales.xlsx",
        EXCEL,
        "xlsx",
        [
            "## Sheet: Sales\nRegion\tQ1\tQ2\nNorth\t120\t130.5\nSouth\t95\t\tnote\n"
            "Closed\t2026-03-31\n",
            "Ada\tPlatform",
        ],
        ["Sheet: Sales", "Sheet: Staff"],
        id="excel",
    ),
    pytest.param(
        "deck.pptx",
        POWERPOINT,
        "pptx",
        [
            "## Slide 1: Kick-off\nAgenda\nBudget\nNotes:\nSpeak slowly\n",
            "## Slide 2: Plan\nPhase 1",
        ],
        ["Slide 1: Kick-off", "Slide 2: Plan"],
        id="powerpoint",
    ),
    pytest.param(
        "invoice.pdf",
        PDF,
        "pdf",
        [
            "## Page 1\nInvoice 2026-114\nTotal due: 1,250.00 EUR",
            "## Page 2\nPayment terms: 30 days",
        ],
        ["Page 1", "Page 2"],
        id="pdf",
    ),
    pytest.param(
        "lunch.eml",
        EML,
        "eml",
        ["Subject: Lunch on Friday?", "See you at noon by the river.", "- data.csv (text/csv)"],
        [],
        id="eml",
    ),
]


@pytest.mark.parametrize(("name", "data", "kind", "fragments", "parts"), KINDS)
async def test_each_kind_is_read_as_text(
    graph: LoopbackServer,
    files: LoopbackServer,
    name: str,
    data: bytes,
    kind: str,
    fragments: list[str],
    parts: list[str],
) -> None:
    serve_document(graph, files, name, data)
    async with tools_on(graph, allow_partial=True) as tools:
        result = await tools.data("files_read", {"item_id": ITEM_REF})
    content = result["content"]
    assert content["returned"] is True and content["format"] == kind
    for fragment in fragments:
        assert fragment in content["text"]
    assert content["chars_read"] == len(content["text"])
    assert [part["name"] for part in content.get("parts", [])] == parts
    for part in content.get("parts", []):
        assert content["text"][part["offset"] :].startswith(("## ", "# "))
    for download in files.requests:
        assert download.header("authorization") is None
    wire = json.dumps(result)
    assert "SECRET-CAPABILITY" not in wire and files.url not in wire


async def test_a_credential_link_inside_a_document_is_removed(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    link = "https://contoso.sharepoint.com/_layouts/15/download.aspx?tempauth=LEAKED-TOKEN"
    serve_document(graph, files, "links.docx", docbuild.docx(None, [f"Download it here: {link}"]))
    async with tools_on(graph, allow_partial=True) as tools:
        result = await tools.data("files_read", {"item_id": ITEM_REF})
    assert result["content"]["text"] == "Download it here: [pre-authenticated link removed]\n"
    assert "content.text" in result["skipped"]["removed"]["paths"]
    assert "LEAKED-TOKEN" not in json.dumps(result)


@pytest.mark.slow
async def test_a_long_workbook_continues_by_offset_and_jumps_to_a_sheet(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    rows = [[f"row {n}", n, n * 2] for n in range(2_000)]
    data = docbuild.xlsx([("Long", rows), ("Second sheet", [["only", "row"]])])
    expected_rows = [f"row {n}\t{n}\t{n * 2}" for n in range(2_000)]
    serve_document(graph, files, "long.xlsx", data)
    async with tools_on(graph, allow_partial=True) as tools:
        pieces, offset = [], 0
        while True:
            result = await tools.data("files_read", {"item_id": ITEM_REF, "offset": offset})
            pieces.append(result["content"]["text"])
            assert len(result["content"]["text"]) <= DEFAULT_LIMITS.body_chars
            record = result.get("skipped", {}).get("text", {})
            if "next_offset" not in record:
                break
            offset = record["next_offset"]
        by_name = await tools.data("files_read", {"item_id": ITEM_REF, "part": "second SHEET"})
        by_number = await tools.data("files_read", {"item_id": ITEM_REF, "part": 2})
        missing = await tools.error("files_read", {"item_id": ITEM_REF, "part": "Nope"})
        both = await tools.error("files_read", {"item_id": ITEM_REF, "part": 2, "offset": 5})
    text = "".join(pieces)
    assert len(pieces) >= 4
    assert text.split("\n")[1:2001] == expected_rows
    assert by_name["content"]["text"] == "## Sheet: Second sheet\nonly\trow\n"
    assert by_number["content"]["text"] == by_name["content"]["text"]
    assert "no sheet named 'Nope'" in missing["message"] and "Second sheet" in missing["hint"]
    assert "not both" in both["message"]


# --- the download: its own byte limit, a private temporary file ------------------------------


@pytest.mark.parametrize("delta", [-1, 0, 1])
@pytest.mark.parametrize("honest_size", [True, False])
async def test_document_bytes_limit(
    graph: LoopbackServer, files: LoopbackServer, delta: int, honest_size: bool
) -> None:
    data = PDF
    limits = dataclasses.replace(FAST, document_bytes=len(data) + delta)
    serve_document(graph, files, "invoice.pdf", data, size=None if honest_size else 10)
    async with tools_on(graph, limits=limits) as tools:
        result = await tools.call("files_read", {"item_id": ITEM_REF})
        after = await tools.call("files_read", {"item_id": ITEM_REF})
    if delta >= 0:
        assert "Invoice 2026-114" in result["structuredContent"]["content"]["text"]
        return
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["error_code"] == "document_unreadable" and error["reason"] == "too_large"
    assert f"{len(data):,} bytes" in error["message"] or not honest_size
    assert f"up to {len(data) - 1:,} bytes" in error["message"]
    if honest_size:
        assert files.requests == []  # refused from the metadata, nothing downloaded
    assert after["isError"] is True  # the server carries on answering


async def test_a_ranged_answer_reports_the_true_size(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    """The download host honours Range: its Content-Range total names the real size."""
    limits = dataclasses.replace(FAST, document_bytes=1_000)
    head = PDF[:1_001]
    reply = Reply(206, (("Content-Range", f"bytes 0-1000/{30_000_000}"),), head)
    serve_document(graph, files, "big.pdf", PDF, size=10, reply=reply)
    async with tools_on(graph, limits=limits) as tools:
        error = await tools.error("files_read", {"item_id": ITEM_REF})
    assert error["reason"] == "too_large" and "30,000,000 bytes" in error["message"]
    assert files.requests[0].header("range") == "bytes=0-1000"


async def test_the_download_is_a_private_file_deleted_after_use(
    graph: LoopbackServer, files: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[tuple[str, int]] = []

    def answer(_: RecordedRequest) -> Reply:
        seen.extend((p.name, stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.iterdir())
        return Reply(200, (), WORD)

    serve_document(graph, files, "report.docx", WORD, reply=answer)  # type: ignore[arg-type]
    async with tools_on(graph) as tools:
        result = await tools.data("files_read", {"item_id": ITEM_REF})
    assert "Quarterly report" in result["content"]["text"]
    assert len(seen) == 1 and seen[0][0].startswith("mfc-doc-")
    if os.name == "posix":
        assert seen[0][1] == 0o600
    assert os.listdir(tmp_path) == []


# --- hostile documents --------------------------------------------------------------------


def ole_container(*streams: str) -> bytes:
    """An OLE compound file whose directory names ``streams`` (UTF-16, as OLE stores them):
    Office writes ``EncryptionInfo`` and ``EncryptedPackage`` for a password-protected
    .docx; an old binary .doc holds ``WordDocument``."""
    names = b"".join(name.encode("utf-16-le").ljust(128, b"\0") for name in streams)
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + names + bytes(1024)


def with_part(base: bytes, name: str, content: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(base))
    parts = {info.filename: source.read(info.filename) for info in source.infolist()}
    parts[name] = content
    return docbuild.zip_parts(list(parts.items()))


BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(
        b'<!ENTITY %s "%s">' % (bytes([98 + i]), (b"&" + bytes([97 + i]) + b";") * 10)
        for i in range(8)
    )
    + b']><w:document xmlns:w="w"><w:body><w:p><w:r><w:t>&i;</w:t></w:r></w:p></w:body>'
    b"</w:document>"
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b'<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body>'
    b"</w:document>"
)

HOSTILE = [
    pytest.param(
        "secret.pdf",
        docbuild.pdf_pages(["secret page"], encrypted=True),
        "protected",
        id="encrypted-pdf",
    ),
    pytest.param(
        "secret.docx",
        ole_container("EncryptionInfo", "EncryptedPackage"),
        "protected",
        id="encrypted-office",
    ),
    pytest.param(
        "renamed.docx", ole_container("WordDocument", "1Table"), "unsupported", id="renamed-doc"
    ),
    pytest.param("cut.docx", WORD[: len(WORD) // 2], "corrupt", id="truncated-docx"),
    pytest.param("cut.pdf", PDF[:200], "corrupt", id="truncated-pdf"),
    pytest.param("noise.xlsx", os.urandom(4_000), "corrupt", id="not-a-zip"),
    pytest.param(
        "laughs.docx", with_part(WORD, "word/document.xml", BILLION_LAUGHS), "corrupt", id="laughs"
    ),
    pytest.param(
        "xxe.docx", with_part(WORD, "word/document.xml", EXTERNAL_ENTITY), "corrupt", id="xxe"
    ),
    pytest.param(
        "bomb.docx",
        with_part(WORD, "word/document.xml", b" " * 60_000_000),
        "too_large",
        id="zip-bomb",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "data", "code"), HOSTILE)
async def test_hostile_documents_get_a_clear_error_and_serving_continues(
    graph: LoopbackServer, files: LoopbackServer, name: str, data: bytes, code: str
) -> None:
    serve_document(graph, files, name, data)
    async with tools_on(graph) as tools:
        error = await tools.error("files_read", {"item_id": ITEM_REF})
        serve_document(graph, files, "report.docx", WORD)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    assert (
        error["error_code"] == "document_unreadable" and error["reason"] == code and error["hint"]
    )
    if code == "protected":
        assert "password-protected" in error["message"]
    if code == "unsupported":
        assert "an old binary Office format" in error["message"]
        assert "password" not in error["message"]
    assert "root:" not in json.dumps(error)  # nothing of /etc/passwd
    assert "Quarterly report" in after["content"]["text"]


# --- archive limits from the directory alone, at L-1, L and L+1 ------------------------------


def infos(sizes: list[tuple[int, int]]) -> list[zipfile.ZipInfo]:
    """Directory entries with (uncompressed, compressed) sizes, laid end to end."""
    found, offset = [], 0
    for index, (size, packed) in enumerate(sizes):
        info = zipfile.ZipInfo(f"part{index}.xml")
        info.file_size, info.compress_size, info.header_offset = size, packed, offset
        offset += packed + 100
        found.append(info)
    return found


def refused(entries: list[zipfile.ZipInfo], limits: Limits) -> str | None:
    try:
        check_directory(entries, limits, "Word document")
    except DocumentError as error:
        assert error.code == "too_large"
        return error.message
    return None


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_archive_member_limit(delta: int) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, archive_members=100)
    message = refused(infos([(10, 10)] * (100 + delta)), limits)
    assert (message is not None) is (delta > 0)
    if message:
        assert "101 entries (the limit is 100)" in message


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_archive_uncompressed_limit(delta: int) -> None:
    limit = DEFAULT_LIMITS.archive_uncompressed_bytes
    entries = infos([(limit // 2, limit // 4), (limit - limit // 2 + delta, limit // 4)])
    message = refused(entries, DEFAULT_LIMITS)
    assert (message is not None) is (delta > 0)
    if message:
        assert f"{limit + 1:,} bytes (the limit is {limit:,})" in message


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_archive_ratio_limit(delta: int) -> None:
    ratio = DEFAULT_LIMITS.archive_ratio
    packed = 10_000
    message = refused(infos([(packed * ratio + delta, packed)]), DEFAULT_LIMITS)
    assert (message is not None) is (delta > 0)
    if message:
        assert f"compressed {ratio:,} to 1 (the limit is {ratio:,})" in message


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_small_entries_are_not_ratio_checked(delta: int) -> None:
    floor = DEFAULT_LIMITS.archive_ratio_min_bytes
    message = refused(infos([(floor + delta, 1)]), DEFAULT_LIMITS)
    assert (message is not None) is (delta > 0)


def test_overlapping_entries_are_refused() -> None:
    entries = infos([(500_000, 1_000), (500_000, 1_000)])
    entries[1].header_offset = entries[0].header_offset  # one stream, two names
    assert "overlap" in (refused(entries, DEFAULT_LIMITS) or "")


@pytest.mark.slow
def test_a_real_bomb_is_refused_before_anything_is_inflated(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xlsx"
    path.write_bytes(with_part(EXCEL, "xl/sharedStrings.xml", b"<" * 50_000_000))
    with pytest.raises(DocumentError) as caught:
        extract(str(path), "xlsx", DEFAULT_LIMITS)
    assert caught.value.code == "too_large" and "to 1" in caught.value.message


def lie_about_size(data: bytes, member: str, size: int) -> bytes:
    """Rewrite one entry's uncompressed size in its local header and the directory."""
    out = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(member)
    struct.pack_into("<I", out, info.header_offset + 22, size)
    central = out.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", out, central + 28)[0]
        if out[central + 46 : central + 46 + name_length] == member.encode():
            struct.pack_into("<I", out, central + 24, size)
            break
        central = out.find(b"PK\x01\x02", central + 4)
    return bytes(out)


@pytest.mark.parametrize("size", [10, 4_000_000_000])
def test_an_entry_that_lies_about_its_size_is_an_error(tmp_path: Path, size: int) -> None:
    path = tmp_path / "lying.docx"
    path.write_bytes(lie_about_size(WORD, "word/document.xml", size))
    with pytest.raises(DocumentError) as caught:
        extract(str(path), "docx", DEFAULT_LIMITS)
    assert caught.value.code in ("corrupt", "too_large")


# --- the worker: limits, deadline, cancellation, crash, reuse --------------------------------


def slow_workbook(cells: int = 4_000_000) -> bytes:
    """A sheet that streams flat but takes seconds of CPU: millions of tiny cells."""
    row = b"<row>" + b"<c><v>1</v></c>" * 100 + b"</row>"
    sheet = (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b"<sheetData>" + row * (cells // 100) + b"</sheetData></worksheet>"
    )
    return with_part(docbuild.xlsx([("Big", [["x"]])]), "xl/worksheets/sheet1.xml", sheet)


@pytest.fixture(scope="module")
def slow_document() -> bytes:
    return slow_workbook()


HEAVY = dataclasses.replace(
    FAST,
    archive_ratio=100_000,
    archive_uncompressed_bytes=500_000_000,
    document_text_chars=100_000_000,
)


@pytest.mark.slow
async def test_the_wall_clock_deadline_kills_the_worker(
    graph: LoopbackServer, files: LoopbackServer, slow_document: bytes
) -> None:
    # 2 s: the slow workbook needs several times that, while the next read (a fresh worker
    # and a small document, under the same whole-call deadline) stays far inside it even on
    # a loaded machine; 0.5 s failed there.
    limits = dataclasses.replace(HEAVY, document_seconds=2.0)
    serve_document(graph, files, "big.xlsx", slow_document)
    async with tools_on(graph, limits=limits) as tools:
        error = await tools.error("files_read", {"item_id": ITEM_REF})
        if LINUX:
            assert worker_pids() == set()
        serve_document(graph, files, "report.docx", WORD)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    assert error["reason"] == "timeout" and "longer than 2 s" in error["message"]
    assert "Quarterly report" in after["content"]["text"]


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_CPU is POSIX")
async def test_the_cpu_limit_ends_the_worker(
    graph: LoopbackServer, files: LoopbackServer, slow_document: bytes
) -> None:
    limits = dataclasses.replace(HEAVY, document_cpu_seconds=1, document_seconds=60)
    serve_document(graph, files, "big.xlsx", slow_document)
    async with tools_on(graph, limits=limits) as tools:
        error = await slow_error(tools, {"item_id": ITEM_REF})
    assert error["reason"] == "cpu" and "more than 1 s of CPU time" in error["message"]


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_AS is POSIX")
async def test_the_memory_limit_ends_in_a_clear_error(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    huge_string = b"<sst><si><t>" + b"word " * 16_000_000 + b"</t></si></sst>"  # 80 MB
    data = with_part(EXCEL, "xl/sharedStrings.xml", huge_string)
    del huge_string
    limits = dataclasses.replace(HEAVY, document_memory_bytes=120_000_000)
    serve_document(graph, files, "huge.xlsx", data)
    async with tools_on(graph, limits=limits) as tools:
        error = await slow_error(tools, {"item_id": ITEM_REF})
        serve_document(graph, files, "sales.xlsx", EXCEL)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    assert error["reason"] == "memory" and "120,000,000-byte limit" in error["message"]
    assert "North" in after["content"]["text"]


@posix_only
async def test_the_worker_runs_under_its_limits(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    serve_document(graph, files, "report.docx", WORD)
    async with tools_on(graph) as tools:
        await tools.data("files_read", {"item_id": ITEM_REF})
        (pid,) = worker_pids()  # kept idle for the next document
        limits = process_limits(pid)
    address = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    size = next(line for line in limits.splitlines() if line.startswith("Max file size"))
    assert address.split()[3] == str(DEFAULT_LIMITS.document_memory_bytes)
    assert size.split()[3] == "0"


@posix_only
@pytest.mark.slow
async def test_cancelling_the_call_kills_the_worker(
    graph: LoopbackServer, files: LoopbackServer, slow_document: bytes
) -> None:
    serve_document(graph, files, "big.xlsx", slow_document)
    async with tools_on(graph, limits=HEAVY) as tools:
        call = request(41, "tools/call", {"name": "files_read", "arguments": {"item_id": ITEM_REF}})
        await tools.session.send(call)
        busy = await wait_for_workers(bool)
        await tools.session.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 41}}
        )
        await wait_for_workers(lambda pids: not (pids & busy))
        serve_document(graph, files, "report.docx", WORD)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    assert "Quarterly report" in after["content"]["text"]


@posix_only
@pytest.mark.slow
async def test_a_crashed_worker_is_a_clear_error(
    graph: LoopbackServer, files: LoopbackServer, slow_document: bytes
) -> None:
    serve_document(graph, files, "big.xlsx", slow_document)
    async with tools_on(graph, limits=HEAVY) as tools:
        async with trio.open_nursery() as nursery:
            errors: list[dict[str, Any]] = []

            async def read() -> None:
                errors.append(await slow_error(tools, {"item_id": ITEM_REF}))

            nursery.start_soon(read)
            (pid,) = await wait_for_workers(bool)
            os.kill(pid, 9)
        serve_document(graph, files, "report.docx", WORD)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    assert errors[0]["reason"] == "crashed" and "exit status -9" in errors[0]["message"]
    assert "Quarterly report" in after["content"]["text"]


async def test_a_worker_is_reused_after_success_and_never_after_a_failure(
    tmp_path: Path,
) -> None:
    good, bad = tmp_path / "good.pdf", tmp_path / "bad.pdf"
    good.write_bytes(PDF)
    bad.write_bytes(PDF[:100])
    pool = workers_for(DEFAULT_LIMITS)
    job = {"kind": "pdf", "offset": 0, "part": None, "chars": 100}
    await pool.run({**job, "path": str(good)}, DEFAULT_LIMITS, "PDF")
    (first,) = pool.idle
    await pool.run({**job, "path": str(good)}, DEFAULT_LIMITS, "PDF")
    assert pool.idle == [first]
    with pytest.raises(DocumentError):
        await pool.run({**job, "path": str(bad)}, DEFAULT_LIMITS, "PDF")
    assert pool.idle == [] and first.process.returncode is not None


async def test_a_legacy_binary_format_says_how_to_make_it_readable(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    serve_document(graph, files, "old.doc", ole_container())
    async with tools_on(graph) as tools:
        result = await tools.data("files_read", {"item_id": ITEM_REF})
    assert result["content"] == {
        "returned": False,
        "reason": "Word 97-2003 (.doc) files are not read as text; "
        "a copy saved in the current format is",
    }
    assert files.requests == []


# --- mutated documents: always text or a clear error, within the deadline --------------------

SEEDS = {"docx": WORD, "xlsx": EXCEL, "pptx": POWERPOINT, "pdf": PDF, "eml": EML}


def inflate_entry(data: bytes, index: int, size: int) -> bytes:
    """Declare a different uncompressed size for one zip entry (both headers)."""
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    return lie_about_size(data, names[index % len(names)], size)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[kind])
    how = draw(
        st.sampled_from(
            ["flip", "truncate", "inflate"] if kind in NAMES_ZIP else ["flip", "truncate"]
        )
    )
    if how == "flip":
        for _ in range(draw(st.integers(1, 8))):
            position = draw(st.integers(0, len(data) - 1))
            data[position] ^= draw(st.integers(1, 255))
    elif how == "truncate":
        del data[draw(st.integers(0, len(data) - 1)) :]
    else:
        index = draw(st.integers(0, 20))
        size = draw(st.sampled_from([0, 1, 100, 10**6, 10**8, 2**32 - 1]))
        data = bytearray(inflate_entry(bytes(data), index, size))
    return kind, bytes(data)


NAMES_ZIP = {"docx", "xlsx", "pptx"}


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=mutated())
async def test_mutated_documents_end_in_text_or_a_clear_error(
    tmp_path: Path, document: tuple[str, bytes]
) -> None:
    kind, data = document
    path = tmp_path / f"mutated.{kind}"
    path.write_bytes(data)
    pool = workers_for(DEFAULT_LIMITS)
    job = {"kind": kind, "offset": 0, "part": None, "chars": 10_000, "path": str(path)}
    with trio.fail_after(DEFAULT_LIMITS.document_seconds + 10):
        try:
            answer = await pool.run(job, DEFAULT_LIMITS, kind)
        except DocumentError as error:
            assert error.code in FAILURE_CODES and error.message and error.hint
        else:
            assert answer["ok"] is True and isinstance(answer["text"], str)
            assert len(answer["text"]) <= 10_000
        # whatever happened, the next document is read
        good = tmp_path / "good.pdf"
        good.write_bytes(PDF)
        again = await pool.run({**job, "kind": "pdf", "path": str(good)}, DEFAULT_LIMITS, "PDF")
    assert "Invoice 2026-114" in again["text"]


# --- text, part and listing caps at L-1, L and L+1 ------------------------------------------


def extract_bytes(tmp_path: Path, kind: str, data: bytes, limits: Limits) -> Any:
    path = tmp_path / f"document.{kind}"
    path.write_bytes(data)
    return extract(str(path), kind, limits)


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_document_text_chars_limit(tmp_path: Path, delta: int) -> None:
    whole = extract_bytes(tmp_path, "pdf", PDF, DEFAULT_LIMITS).text
    limits = dataclasses.replace(DEFAULT_LIMITS, document_text_chars=len(whole) + delta)
    got = extract_bytes(tmp_path, "pdf", PDF, limits)
    if delta < 0:
        assert got.text == whole[:-1]
        assert got.cut == f"only the first {len(whole) - 1:,} characters of text were extracted"
    else:
        assert got.text == whole and got.cut is None


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_document_parts_limit(tmp_path: Path, delta: int) -> None:
    pages = docbuild.pdf_pages([f"page {n}" for n in range(1, 11)])
    limits = dataclasses.replace(DEFAULT_LIMITS, document_parts=10 + delta)
    got = extract_bytes(tmp_path, "pdf", pages, limits)
    assert len(got.parts) == min(10, 10 + delta) and got.parts_total == 10
    if delta < 0:
        assert got.cut == "only the first 9 of 10 pages were read"
        assert got.text.rstrip().endswith("page 9")
    else:
        assert got.cut is None and got.text.rstrip().endswith("page 10")


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_document_parts_listed_limit(tmp_path: Path, delta: int) -> None:
    path = tmp_path / "pages.pdf"
    path.write_bytes(docbuild.pdf_pages([f"page {n}" for n in range(1, 11)]))
    limits = dataclasses.replace(DEFAULT_LIMITS, document_parts_listed=10 + delta)
    answer = await workers_for(limits).run(
        {"kind": "pdf", "offset": 0, "part": None, "chars": 100, "path": str(path)},
        limits,
        "PDF",
    )
    assert [p["name"] for p in answer["parts"]] == [f"Page {n}" for n in range(1, 11)][: 10 + delta]
    assert answer["partsTotal"] == 10


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_document_worker_jobs_limit(tmp_path: Path, delta: int) -> None:
    """A worker serves ``document_worker_jobs`` documents, then the next one gets a new one."""
    path = tmp_path / "a.pdf"
    path.write_bytes(PDF)
    limit = 3
    limits = dataclasses.replace(DEFAULT_LIMITS, document_worker_jobs=limit)
    pool = workers_for(limits)
    job = {"kind": "pdf", "offset": 0, "part": None, "chars": 100, "path": str(path)}
    await pool.run(job, limits, "PDF")
    (first,) = pool.idle
    for _ in range(limit + delta - 1):
        await pool.run(job, limits, "PDF")
    if delta < 0:
        assert pool.idle == [first]  # under the limit: kept for the next document
    elif delta == 0:
        assert pool.idle == [] and first.process.returncode is not None  # retired
    else:
        (second,) = pool.idle  # the job past the limit ran in a new worker
        assert second.process.pid != first.process.pid and second.jobs == 1


async def test_an_idle_worker_stops_after_document_idle_seconds(tmp_path: Path) -> None:
    path = tmp_path / "a.pdf"
    path.write_bytes(PDF)
    limits = dataclasses.replace(DEFAULT_LIMITS, document_idle_seconds=0.2)
    pool = workers_for(limits)
    job = {"kind": "pdf", "offset": 0, "part": None, "chars": 100, "path": str(path)}
    await pool.run(job, limits, "PDF")
    (worker,) = pool.idle
    await trio.sleep(0.1)
    assert pool.idle == [worker]  # still within its idle time
    with trio.fail_after(10):
        await worker.process.wait()
    assert pool.idle == []


@posix_only
@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 3])
async def test_document_workers_limit(tmp_path: Path, slow_document: bytes, workers: int) -> None:
    """Two slow documents at once: never more than ``document_workers`` processes parse."""
    path = tmp_path / "big.xlsx"
    path.write_bytes(slow_document)
    limits = dataclasses.replace(HEAVY, document_workers=workers, document_seconds=1.0)
    pool = workers_for(limits)
    job = {"kind": "xlsx", "offset": 0, "part": None, "chars": 100, "path": str(path)}
    most = 0
    async with trio.open_nursery() as nursery:

        async def read() -> None:
            # each runs into the 1 s deadline: parsing, or (one worker) waiting for it
            with pytest.raises((DocumentError, BusyError)):
                await pool.run(job, limits, "Excel workbook")

        nursery.start_soon(read)
        nursery.start_soon(read)
        with trio.move_on_after(3.5):
            while True:
                most = max(most, len(worker_pids()))
                await trio.sleep(0.02)
    assert most == min(workers, 2)


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_document_part_name_chars_limit(tmp_path: Path, delta: int) -> None:
    limit = DEFAULT_LIMITS.document_part_name_chars
    heading = "H" * (limit + delta)
    got = extract_bytes(
        tmp_path, "docx", docbuild.docx(None, [("Heading1", heading), "x"]), DEFAULT_LIMITS
    )
    assert got.parts == [("H" * min(limit, limit + delta), 0)]
    assert got.text.startswith(f"# {heading}\n")  # the text itself keeps the whole heading


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_the_part_argument_is_bounded_by_the_same_limit(
    graph: LoopbackServer, files: LoopbackServer, delta: int
) -> None:
    limit = DEFAULT_LIMITS.document_part_name_chars
    serve_document(graph, files, "sales.xlsx", EXCEL)
    async with tools_on(graph) as tools:
        error = await tools.error(
            "files_read", {"item_id": ITEM_REF, "part": "S" * (limit + delta)}
        )
    if delta > 0:
        assert error["error_code"] == "invalid_arguments" and "part" in error["message"]
        assert files.requests == []
    else:
        assert error["error_code"] == "invalid_arguments" and "no sheet named" in error["message"]


def test_sheet_cells_read_as_excel_shows_them(tmp_path: Path) -> None:
    """Rich and phonetic text, skipped columns, a dated number, a boolean, a formula."""
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><r><t>東</t></r><r><t>京</t></r>'
        '<rPh sb="0" eb="2"><t>とうきょう</t></rPh></is></c>'
        '<c r="C1" s="1"><v>46112</v></c><c r="D1" t="b"><v>1</v></c>'
        '<c r="E1"><f>SUM(B1:B9)</f><v>0.30000000000000004</v></c>'
        '<c r="F1" t="e"><v>#DIV/0!</v></c><c r="G1" t="str"><f>A1</f><v>line\none</v></c>'
        "</row></sheetData></worksheet>"
    ).encode()
    data = with_part(EXCEL, "xl/worksheets/sheet1.xml", sheet)
    got = extract_bytes(tmp_path, "xlsx", data, DEFAULT_LIMITS)
    assert got.text.startswith(
        "## Sheet: Sales\n東京\t\t2026-03-31\tTRUE\t0.3\t#DIV/0!\tline one\n"
    )


@pytest.mark.slow
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=mutated())
async def test_mutated_documents_through_files_read_never_stop_the_server(
    graph: LoopbackServer, files: LoopbackServer, document: tuple[str, bytes]
) -> None:
    kind, data = document
    serve_document(graph, files, f"mutated.{kind}", data)
    async with tools_on(graph, allow_partial=True) as tools:
        result = await tools.call("files_read", {"item_id": ITEM_REF})
        serve_document(graph, files, "invoice.pdf", PDF)
        after = await tools.data("files_read", {"item_id": ITEM_REF})
    if result["isError"] and "structuredContent" not in result:
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["error_code"] == "document_unreadable" and error["reason"] in FAILURE_CODES
    else:
        assert isinstance(result["structuredContent"]["content"]["text"], str)
    assert "Invoice 2026-114" in after["content"]["text"]
