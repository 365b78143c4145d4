"""Documents: which libraries, and what a read costs in time and memory.

    .venv/bin/python bench/documents_bench.py             # our extractors, worker, server
    .venv/bin/python bench/documents_bench.py --compare   # plus the candidate libraries

``--compare`` needs the candidates installed in the same environment
(``pip install pypdf python-docx openpyxl python-pptx defusedxml``); they are not
dependencies of the project. Every extraction of the comparison runs in a fresh child
process (``--one``) that imports its library first, then resets its peak RSS
(``/proc/self/clear_refs``) and reports the time and the peak (``VmHWM``) of one
extraction. Documents are generated here with known text: 1 MB and 10 MB of each format
(docbuild's stdlib writers), and a small "quality" document of each Office format written
by the other libraries' own writers (python-docx, openpyxl, python-pptx) when installed.
Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

import mfconnector.demo_documents as docbuild  # noqa: E402
from mfconnector.limits import DEFAULT_LIMITS  # noqa: E402

UNCAPPED = dataclasses.replace(
    DEFAULT_LIMITS, document_text_chars=10**9, document_parts=10**6, document_seconds=600
)
WORD_TEXT = (
    "budget launch contract review quarterly forecast meeting notes revenue region team "
    "customer invoice schedule milestone risk owner update draft final approval Grüße "
    "Tōkyō café naïve 東京 ümlaut payment terms delivery scope"
)
SYLLABLE_TEXT = "ka lo ri ne sta pel mon tra vi do qu en ar is ul ber gen fol wen tus"


def vocabulary(count: int = 3_000) -> list[str]:
    """Made-up words, enough that text deflates about as much as real prose (3-4x)."""
    rng = random.Random("words")
    syllables = SYLLABLE_TEXT.split()
    return ["".join(rng.choice(syllables) for _ in range(1 + n % 4)) for n in range(count)]


WORDS = WORD_TEXT.split() + vocabulary()
LATIN = [word for word in WORDS if word.isascii() or word in ("Grüße", "café", "naïve")]
"""What the stdlib PDF writer's WinAnsi font can show."""


def reset_peak() -> None:
    """Start VmHWM again from the current RSS (Linux ``clear_refs`` 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def status(field: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def sentence(rng: random.Random, words: int = 12, pool: list[str] = WORDS) -> str:
    return " ".join(rng.choice(pool) for _ in range(words)).capitalize() + "."


# --- documents of a given size -------------------------------------------------------------


def grow(build: Any, target: int, first: int) -> bytes:
    """Call ``build(n)`` with n scaled until the output is within 10 % of ``target`` bytes."""
    n = first
    for _ in range(6):
        data: bytes = build(n)
        if abs(len(data) - target) < target * 0.1:
            return data
        n = max(1, int(n * target / len(data)))
    return data


def make(kind: str, target: int) -> bytes:
    rng = random.Random(f"{kind}{target}")
    if kind == "docx":

        def build(n: int) -> bytes:
            blocks: list[Any] = []
            for i in range(n):
                if i % 50 == 0:
                    blocks.append(("Heading1", f"Section {i // 50 + 1}"))
                if i % 40 == 20:
                    blocks.append([[sentence(rng, 3) for _ in range(4)] for _ in range(5)])
                blocks.append(sentence(rng, 40))
            return docbuild.docx(None, blocks)

        return grow(build, target, 3_000)
    if kind == "xlsx":

        def build(n: int) -> bytes:
            rows = [
                [
                    f"item {r}",
                    rng.randint(1, 10**6),
                    round(rng.random() * 1000, 2),
                    sentence(rng, 3),
                ]
                for r in range(n)
            ]
            return docbuild.xlsx([("Data", rows), ("Summary", [["total", n]])])

        return grow(build, target, 20_000)
    if kind == "pptx":

        def build(n: int) -> bytes:
            slides = [
                (f"Slide {i}", [sentence(rng, 12) for _ in range(30)], [sentence(rng, 30)])
                for i in range(n)
            ]
            return docbuild.pptx(slides)

        return grow(build, target, 300)
    if kind == "pdf":

        def build(n: int) -> bytes:
            return docbuild.pdf_pages(
                ["\n".join(sentence(rng, 10, LATIN) for _ in range(40)) for _ in range(n)]
            )

        return grow(build, target, 300)
    if kind == "eml":

        def build(n: int) -> bytes:
            return docbuild.eml(
                sender="Ada Lovelace <ada@contoso.com>",
                to=["Charles Babbage <charles@contoso.com>"],
                subject="Minutes",
                text="\n".join(sentence(rng, 12) for _ in range(n)),
                sent=datetime.datetime(2026, 11, 30, 10, 0, tzinfo=datetime.UTC),
                message_id="<minutes@contoso.com>",
                attachments=[("data.csv", "text/csv", b"a,b\n1,2\n")],
            )

        return grow(build, target, 10_000)
    raise ValueError(kind)


# --- candidate extractors (each run in a fresh child process) ------------------------------


def ours(path: str, kind: str) -> str:
    from mfconnector.documents.extract import extract

    return extract(path, kind, UNCAPPED).text


def with_pypdf(path: str, kind: str) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def with_python_docx(path: str, kind: str) -> str:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(path)
    out = []
    for block in document.element.body.iterchildren():
        if block.tag.endswith("}p"):
            out.append(Paragraph(block, document).text)
        elif block.tag.endswith("}tbl"):
            for row in Table(block, document).rows:
                out.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(out)


def with_openpyxl(path: str, kind: str) -> str:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    out = []
    for sheet in book.worksheets:
        out.append(f"## {sheet.title}")
        for row in sheet.iter_rows(values_only=True):
            out.append("\t".join("" if v is None else str(v) for v in row))
    book.close()
    return "\n".join(out)


def with_python_pptx(path: str, kind: str) -> str:
    from pptx import Presentation

    out = []
    for slide in Presentation(path).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                out.append(shape.text_frame.text)
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    out.append(" | ".join(cell.text for cell in row.cells))
        if slide.has_notes_slide:
            out.append(slide.notes_slide.notes_text_frame.text)
    return "\n".join(out)


EXTRACTORS = {
    "ours": ours,
    "pypdf": with_pypdf,
    "python-docx": with_python_docx,
    "openpyxl": with_openpyxl,
    "python-pptx": with_python_pptx,
}
CANDIDATES = {
    "pdf": ["ours", "pypdf"],
    "docx": ["ours", "python-docx"],
    "xlsx": ["ours", "openpyxl"],
    "pptx": ["ours", "python-pptx"],
    "eml": ["ours"],
}
IMPORTS = {
    "ours": ["mfconnector.documents.extract", "mfconnector.documents.word",
             "mfconnector.documents.excel", "mfconnector.documents.powerpoint",
             "mfconnector.documents.pdf", "mfconnector.documents.eml"],
    "pypdf": ["pypdf"],
    "python-docx": ["docx"],
    "openpyxl": ["openpyxl"],
    "python-pptx": ["pptx"],
}  # fmt: skip


def one(extractor: str, path: str, kind: str) -> None:
    """Child process: import, reset the peak, extract once, print the figures."""
    import importlib

    for module in IMPORTS[extractor]:
        importlib.import_module(module)
    reset_peak()
    before = status("VmRSS")
    started = time.perf_counter()
    text = EXTRACTORS[extractor](path, kind)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak": status("VmHWM"),
                "growth": status("VmHWM") - before,
                "chars": len(text),
                "text": text if os.path.getsize(path) < 200_000 else "",
            }
        )
    )


def run_one(extractor: str, path: str, kind: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, __file__, "--one", extractor, path, kind],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if completed.returncode:
        return {"error": completed.stderr.strip().splitlines()[-1][:80]}
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def installed(extractor: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m.split(".")[0]) for m in IMPORTS[extractor])


# --- text quality on documents written by the libraries' own writers -----------------------

QUALITY_CHECKS: dict[str, list[tuple[str, str]]] = {
    "docx": [
        ("heading", "Project Orion"),
        ("paragraph", "Grüße aus Tōkyō 東京"),
        ("table row in order", "North | 1200"),
        ("tab kept", "left\tright"),
    ],
    "xlsx": [
        ("sheet name", "Q4 sales"),
        ("row as cells", "North\t1200\t0.25"),
        ("date cell", "2026-03-31"),
        ("float", "1234.5"),
    ],
    "pptx": [
        ("title", "Launch plan"),
        ("body line", "Beta in March"),
        ("table row", "Owner"),
        ("notes", "Mention the budget"),
    ],
}


def quality_documents(folder: Path) -> dict[str, Path]:
    """One small document per Office format, written by python-docx/openpyxl/python-pptx."""
    found: dict[str, Path] = {}
    if installed("python-docx"):
        import docx

        document = docx.Document()
        document.add_heading("Project Orion", level=1)
        document.add_paragraph("Grüße aus Tōkyō 東京")
        table = document.add_table(rows=2, cols=2)
        for r, row in enumerate([["Region", "Sales"], ["North", "1200"]]):
            for c, value in enumerate(row):
                table.cell(r, c).text = value
        document.add_paragraph("left\tright")
        found["docx"] = folder / "quality.docx"
        document.save(str(found["docx"]))
    if installed("openpyxl"):
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = "Q4 sales"
        sheet.append(["Region", "Sales", "Share"])
        sheet.append(["North", 1200, 0.25])
        sheet.append(["Closed", datetime.date(2026, 3, 31), 1234.5])
        found["xlsx"] = folder / "quality.xlsx"
        book.save(str(found["xlsx"]))
    if installed("python-pptx"):
        from pptx import Presentation
        from pptx.util import Inches

        deck = Presentation()
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = "Launch plan"
        slide.placeholders[1].text_frame.text = "Beta in March"
        shape = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1))
        shape.table.cell(0, 0).text = "Owner"
        shape.table.cell(0, 1).text = "Date"
        slide.notes_slide.notes_text_frame.text = "Mention the budget"
        found["pptx"] = folder / "quality.pptx"
        deck.save(str(found["pptx"]))
    return found


# --- the worker and the server, through the real code path ---------------------------------


async def worker_figures(path: str, kind: str) -> dict[str, float]:
    """A fresh worker's time and peak RSS for one document, then a reused worker's time."""
    from mfconnector.documents.runner import DocumentWorkers

    pool = DocumentWorkers(DEFAULT_LIMITS)
    job = {"kind": kind, "offset": 0, "part": None, "chars": 10_000, "path": path}
    started = time.perf_counter()
    await pool.run(job, DEFAULT_LIMITS, kind)
    fresh = time.perf_counter() - started
    (worker,) = pool.idle
    peak = status("VmHWM", worker.process.pid)
    started = time.perf_counter()
    await pool.run(job, DEFAULT_LIMITS, kind)
    reused = time.perf_counter() - started
    while pool.idle:
        await pool.idle.pop().kill()
    return {"fresh": fresh, "reused": reused, "peak": peak}


async def server_rss(data: bytes, name: str) -> dict[str, float]:
    """files_read's document path (GraphClient + spool + worker) in this process: its RSS."""
    from mfconnector.auth import StaticTokenProvider
    from mfconnector.graph.client import GraphClient
    from mfconnector.shaping import Skipped
    from mfconnector.tools.base import ToolContext
    from mfconnector.tools.documents import document_kind, read_document
    from tests.support.loopback import LoopbackServer, Reply

    with LoopbackServer() as server:
        server.route("GET", "/v1.0/me/drive/items/X/content", Reply(200, (), data))
        tokens = StaticTokenProvider("t", account="bench")
        client = GraphClient(root=f"{server.url}/v1.0", token_provider=tokens)

        async def graph() -> GraphClient:
            return client

        ctx = ToolContext(DEFAULT_LIMITS, "live", False, tokens)
        kind = document_kind(name, None) or ""
        async with client:
            await read_document(  # warm up: imports, connection, one worker
                ctx, client, "/me/drive/items/X/content", kind=kind, size=None,
                arguments={}, skipped=Skipped(DEFAULT_LIMITS.skipped_paths_listed),
            )  # fmt: skip
            reset_peak()
            before = status("VmRSS")
            samples: list[int] = []

            async def sample() -> None:
                while True:
                    samples.append(status("VmRSS"))
                    await trio.sleep(0.005)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(sample)
                started = time.perf_counter()
                await read_document(
                    ctx, client, "/me/drive/items/X/content", kind=kind, size=None,
                    arguments={"offset": 0}, skipped=Skipped(DEFAULT_LIMITS.skipped_paths_listed),
                )  # fmt: skip
                seconds = time.perf_counter() - started
                nursery.cancel_scope.cancel()
    return {
        "before": before,
        "max": max(samples),
        "hwm_growth": status("VmHWM") - before,
        "seconds": seconds,
    }


async def refusals(folder: Path) -> list[tuple[str, str, float]]:
    from mfconnector.documents.runner import DocumentWorkers
    from mfconnector.errors import DocumentError

    rows = []
    cases = {
        "zip bomb: 1 entry, 2 GB of zeros declared as 2 MB compressed": (
            "docx", zip_bomb()
        ),
        "10,000-page PDF": ("pdf", docbuild.pdf_pages([f"page {n}" for n in range(10_000)])),
    }  # fmt: skip
    for label, (kind, data) in cases.items():
        path = folder / f"case.{kind}"
        write_bytes(path, data)
        pool = DocumentWorkers(DEFAULT_LIMITS)
        job = {"kind": kind, "offset": 0, "part": None, "chars": 10_000, "path": str(path)}
        started = time.perf_counter()
        try:
            answer = await pool.run(job, DEFAULT_LIMITS, kind)
            outcome = f"cut: {answer['cut']} ({answer['totalChars']:,} chars)"
        except DocumentError as error:
            outcome = f"refused ({error.code}): {error.message}"
        rows.append((label, outcome, time.perf_counter() - started))
        while pool.idle:
            await pool.idle.pop().kill()
    return rows


def write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def zip_bomb() -> bytes:
    """A real bomb: 2 GB of zeros deflated into about 2 MB, in a .docx."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/document.xml", "w", force_zip64=True) as entry,
    ):
        block = bytes(1 << 20)
        for _ in range(2048):
            entry.write(block)
    return buffer.getvalue()


# --- report ------------------------------------------------------------------------------


def mb(value: float) -> str:
    return f"{value / 1e6:.1f} MB"


def build_corpus(folder: Path) -> dict[tuple[str, int], Path]:
    corpus: dict[tuple[str, int], Path] = {}
    for kind in ("docx", "xlsx", "pptx", "pdf", "eml"):
        for size in (1_000_000, 10_000_000):
            path = folder / f"{size // 1_000_000}MB.{kind}"
            path.write_bytes(make(kind, size))
            corpus[(kind, size)] = path
    return corpus


def compare_extractors(corpus: dict[tuple[str, int], Path], compare: bool) -> None:
    print("## Extractors side by side (fresh process each; time and peak RSS of one extraction)\n")
    print("| format | file | extractor | seconds | peak RSS | RSS growth | chars |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for (kind, _), path in corpus.items():
        for extractor in CANDIDATES[kind] if compare else ["ours"]:
            if not installed(extractor):
                continue
            got = run_one(extractor, str(path), kind)
            size = mb(path.stat().st_size)
            if "error" in got:
                print(f"| {kind} | {size} | {extractor} | error: {got['error']} ||||")
                continue
            print(
                f"| {kind} | {size} | {extractor} | {got['seconds']:.2f} | "
                f"{mb(got['peak'])} | {mb(got['growth'])} | {got['chars']:,} |"
            )


def compare_quality(folder: Path, corpus: dict[tuple[str, int], Path]) -> None:
    print("\n## Text quality on documents written by python-docx, openpyxl, python-pptx\n")
    print("| format | check | expected | ours | library |")
    print("|---|---|---|---|---|")
    for kind, path in quality_documents(folder).items():
        texts = {e: run_one(e, str(path), kind).get("text", "") for e in CANDIDATES[kind]}
        for check, expected in QUALITY_CHECKS[kind]:
            marks = ["yes" if expected in texts[e] else "no" for e in CANDIDATES[kind]]
            print(f"| {kind} | {check} | `{expected!r}` | " + " | ".join(marks) + " |")
    print("\n## XML parsing of the 10 MB workbook's sheet: expat handlers vs defusedxml\n")
    print(xml_parsers(corpus[("xlsx", 10_000_000)]))


async def through_the_worker(folder: Path, corpus: dict[tuple[str, int], Path]) -> None:
    print("\n## Worker: one document through the runner (spawned, then reused)\n")
    print("| format | file | fresh worker s | reused worker s | worker peak RSS |")
    print("|---|---:|---:|---:|---:|")
    small = {}
    for kind in ("docx", "xlsx", "pptx", "pdf", "eml"):
        small[(kind, 20_000)] = folder / f"small.{kind}"
        write_bytes(small[(kind, 20_000)], make(kind, 20_000))
    for (kind, _), path in {**small, **corpus}.items():
        got = await worker_figures(str(path), kind)
        print(
            f"| {kind} | {mb(path.stat().st_size)} | {got['fresh']:.2f} | {got['reused']:.2f} | "
            f"{mb(got['peak'])} |"
        )
    print("\n## Server process while a worker parses (download, spool, worker; this process)\n")
    print("| document | seconds | RSS before | RSS max during | peak growth |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("xlsx", "pdf"):
        path = corpus[(kind, 10_000_000)]
        got = await server_rss(read_bytes(path), path.name)
        print(
            f"| {path.name} ({mb(len(read_bytes(path)))}) | {got['seconds']:.2f} | "
            f"{mb(got['before'])} | {mb(got['max'])} | {mb(got['hwm_growth'])} |"
        )
    print("\n## Hostile documents (default limits)\n")
    print("| case | outcome | seconds |")
    print("|---|---|---:|")
    for label, outcome, seconds in await refusals(folder):
        print(f"| {label} | {outcome} | {seconds:.2f} |")


def read_bytes(path: Path) -> bytes:
    return path.read_bytes()


def main(compare: bool) -> None:
    folder = Path(tempfile.mkdtemp(prefix="mfc-docbench-"))
    try:
        corpus = build_corpus(folder)
        compare_extractors(corpus, compare)
        if compare:
            compare_quality(folder, corpus)
        trio.run(through_the_worker, folder, corpus)
    finally:
        shutil.rmtree(folder)


def xml_parsers(path: Path) -> str:
    from defusedxml.ElementTree import iterparse

    from mfconnector.documents.xmlstream import iter_elements

    with zipfile.ZipFile(path) as archive:
        sheet = archive.read("xl/worksheets/sheet1.xml")
    started = time.perf_counter()
    rows = sum(1 for _ in iter_elements(io.BytesIO(sheet), frozenset({"row"})))
    ours_seconds = time.perf_counter() - started
    started = time.perf_counter()
    count = 0
    for _, element in iterparse(io.BytesIO(sheet), forbid_dtd=True):
        if element.tag.endswith("}row"):
            count += 1
            element.clear()
    defused_seconds = time.perf_counter() - started
    return (
        f"{len(sheet):,} bytes of sheet XML, {rows:,} rows: expat with refusing handlers "
        f"{ours_seconds:.2f} s; defusedxml.ElementTree.iterparse {defused_seconds:.2f} s "
        f"({defused_seconds / ours_seconds:.1f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--one", nargs=3, metavar=("EXTRACTOR", "PATH", "KIND"))
    options = parser.parse_args()
    if options.one:
        one(*options.one)
    else:
        main(options.compare)
