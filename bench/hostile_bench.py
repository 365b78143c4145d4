"""Hostile content against a checkout of the server: peak RSS and wall time (issue 16).

    .venv/bin/python bench/hostile_bench.py                      # this checkout
    .venv/bin/python bench/hostile_bench.py --root /path/to/0.2.0  # another one, same script

**HTML**: the real server process (``python -m mfconnector --fixtures FILE``, from the
checkout under test) answers ``mail_read`` for one message whose body is the reproduction of
issue 16 (``<div>``, 250 distinct ``<b id=N>``, ``</div>``, then N x ``<p>x``) at 83 KB,
243 KB and 1.9 MB, after one small ``mail_read`` (imports, the client). Figures: wall time
of the call, the server's peak RSS (``VmHWM``, start-up included), and what came back. A
watchdog kills a server past ``RSS_CAP_BYTES`` or ``CALL_SECONDS`` and says so.

**Documents**: the checkout's own worker pool (``DocumentWorkers``, default limits, two
workers) gets eight 3-4 KB workbooks with a huge shared-strings table and, 0.1 s later, a
ninth small document. Two tables: 199,900 empty strings (just under 1 MB, below the ratio
check's floor), and 160,000 rich-text strings (4 MB) whose directory entry declares a
compressed size raised to pass the ratio check. Then the slot scenario: eight workbooks of
4,000,000 cells that parse for seconds each (ratio check raised as in the tests, deadline
``SLOT_SECONDS``), the ninth small document behind them.
Figures: each call's wall time and outcome, the ninth's wait, the largest worker RSS seen.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
RSS_CAP_BYTES = 7 * 2**30
CALL_SECONDS = 60.0
MESSAGE_ID = "AAMkAGI2hostilebench0001="
WARM_ID = "AAMkAGI2hostilebench0002="
SLOT_SECONDS = 5.0
"""``document_seconds`` in the slot scenario (30 s by default: the same shape, 6x longer)."""
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def hostile_html(paragraphs: int) -> str:
    return "<div>" + "".join(f"<b id={n}>" for n in range(250)) + "</div>" + "<p>x" * paragraphs


def status_bytes(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def html_scenario(root: Path, paragraphs: int) -> dict[str, Any]:
    body = hostile_html(paragraphs)
    doc = {
        "id": MESSAGE_ID,
        "subject": "Your parcel is waiting",
        "hasAttachments": False,
        "body": {"contentType": "html", "content": body},
    }
    entry = {
        "request": {"method": "GET", "path": f"/me/messages/{MESSAGE_ID}"},
        "response": {"json": doc},
    }
    warm_doc = {**doc, "id": WARM_ID, "body": {"contentType": "html", "content": "<p>hi</p>"}}
    warm = {
        "request": {"method": "GET", "path": f"/me/messages/{WARM_ID}"},
        "response": {"json": warm_doc},
    }
    with tempfile.TemporaryDirectory() as folder:
        fixtures = Path(folder) / "hostile.json"
        fixtures.write_text(json.dumps({"responses": [entry, warm]}))
        env = {**os.environ, "PYTHONPATH": str(root)}
        process = subprocess.Popen(
            [sys.executable, "-m", "mfconnector", "--fixtures", str(fixtures)],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.flush()
        process.stdout.readline()
        warm_call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "mail_read", "arguments": {"message_id": WARM_ID}},
        }
        process.stdin.write(json.dumps(warm_call).encode() + b"\n")  # imports, client, ...
        process.stdin.flush()
        process.stdout.readline()
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "mail_read", "arguments": {"message_id": MESSAGE_ID}},
        }
        verdict: dict[str, Any] = {}

        def watch() -> None:
            while process.poll() is None and not verdict:
                if status_bytes(process.pid, "VmRSS") > RSS_CAP_BYTES:
                    verdict["killed"] = f"RSS past {RSS_CAP_BYTES / 2**30:.0f} GiB"
                    verdict["peak"] = status_bytes(process.pid, "VmHWM")
                    process.kill()
                    return
                if time.monotonic() - started > CALL_SECONDS:
                    verdict["killed"] = f"no reply in {CALL_SECONDS:.0f} s"
                    verdict["peak"] = status_bytes(process.pid, "VmHWM")
                    process.kill()
                    return
                time.sleep(0.02)

        started = time.monotonic()
        process.stdin.write(json.dumps(call).encode() + b"\n")
        process.stdin.flush()
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        line = process.stdout.readline()
        seconds = time.monotonic() - started
        peak = status_bytes(process.pid, "VmHWM")
        verdict.setdefault("done", True)
        process.kill()
        process.communicate()
        watcher.join()
    out: dict[str, Any] = {"body_bytes": len(body), "seconds": seconds}
    if "killed" in verdict:
        return {**out, "outcome": "killed: " + verdict["killed"], "peak": verdict["peak"]}
    reply = json.loads(line)
    if "error" in reply:
        return {**out, "outcome": f"error {reply['error']['code']}", "peak": peak}
    data = reply["result"]["structuredContent"]
    text = data.get("message", {}).get("body", "")
    marks = [f.get("limit") for f in data.get("skipped", {}).get("fields", []) if "limit" in f]
    outcome = f"text ({len(text):,} chars shown)" + (f", marked {marks}" if marks else "")
    return {**out, "outcome": outcome, "peak": peak}


def raise_compress_size(data: bytes, member: str, ratio: int) -> bytes:
    """Declare ``member``'s compressed size as its size / ``ratio`` (directory and local
    header): a lie that passes a ratio check trusting the directory (0.2.0's)."""
    import struct

    out = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(member)
    declared = info.file_size // ratio
    struct.pack_into("<I", out, info.header_offset + 18, declared)
    central = out.find(b"PK\x01\x02")
    while central != -1:
        length = struct.unpack_from("<H", out, central + 28)[0]
        if out[central + 46 : central + 46 + length] == member.encode():
            struct.pack_into("<I", out, central + 20, declared)
        central = out.find(b"PK\x01\x02", central + 4)
    return bytes(out)


def strings_workbook(strings: int, item: str = "<si/>") -> bytes:
    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>'
        ),
        "xl/workbook.xml": (
            f'<workbook xmlns="{S}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>"
        ),
        "xl/_rels/workbook.xml.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
        ),
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{S}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row>'
            "</sheetData></worksheet>"
        ),
        "xl/sharedStrings.xml": f'<sst xmlns="{S}">' + item * strings + "</sst>",
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def slow_workbook() -> bytes:
    """A sheet of 4,000,000 tiny cells (60 MB of XML): seconds of parsing."""
    row = "<row>" + "<c><v>1</v></c>" * 100 + "</row>"
    book = strings_workbook(1)
    source = zipfile.ZipFile(io.BytesIO(book))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                sheet = f'<worksheet xmlns="{S}"><sheetData>' + row * 40_000
                data = (sheet + "</sheetData></worksheet>").encode()
            archive.writestr(info.filename, data)
    return buffer.getvalue()


def small_docx() -> bytes:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>'
        ),
        "word/document.xml": (
            f'<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>ninth</w:t></w:r></w:p>'
            "</w:body></w:document>"
        ),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def documents_scenario(root: Path) -> None:
    """Run in a child with the checkout first on sys.path; prints one JSON line."""
    sys.path.insert(0, str(root))
    import trio

    from mfconnector.documents.runner import DocumentWorkers
    from mfconnector.limits import DEFAULT_LIMITS

    folder = Path(tempfile.mkdtemp())
    book = folder / "strings.xlsx"
    limits = DEFAULT_LIMITS
    if os.environ.get("BENCH_SLOTS"):  # seconds of parsing each; the ninth waits for a slot
        import dataclasses

        limits = dataclasses.replace(
            DEFAULT_LIMITS,
            archive_ratio=100_000,
            archive_uncompressed_bytes=500_000_000,
            document_text_chars=100_000_000,
            document_seconds=SLOT_SECONDS,
        )
        book.write_bytes(slow_workbook())
    elif os.environ.get("BENCH_LIE"):  # 4 MB of rich-text strings in 10 KB, size raised
        lie = strings_workbook(160_000, "<si><r><t>a</t></r></si>")
        book.write_bytes(raise_compress_size(lie, "xl/sharedStrings.xml", 150))
    else:
        book.write_bytes(strings_workbook(199_900))
    ninth = folder / "ninth.docx"
    ninth.write_bytes(small_docx())
    results: list[dict[str, Any]] = []
    worker_peak = 0

    async def main() -> None:
        nonlocal worker_peak
        pool = DocumentWorkers(limits)
        started = trio.current_time()

        async def one(name: str, path: Path, kind: str) -> None:
            job = {"kind": kind, "offset": 0, "part": None, "chars": 10_000, "path": str(path)}
            began = trio.current_time()
            try:
                answer = await pool.run(job, limits, kind)
                outcome = f"text ({answer['totalChars']:,} chars)"
            except Exception as error:  # the outcome is the figure
                outcome = f"{type(error).__name__}: {getattr(error, 'message', error)}"
            results.append(
                {
                    "name": name,
                    "seconds": trio.current_time() - began,
                    "ended_at": trio.current_time() - started,
                    "outcome": outcome,
                }
            )

        async def watch() -> None:
            nonlocal worker_peak
            while True:
                for worker in list(pool.idle):
                    worker_peak = max(worker_peak, status_bytes(worker.process.pid, "VmHWM"))
                for entry in Path("/proc").iterdir():  # noqa: ASYNC240 - a bench's poll
                    if entry.name.isdigit():
                        try:
                            command = (entry / "cmdline").read_bytes()
                        except OSError:
                            continue
                        if b"mfconnector.documents.worker" in command:
                            worker_peak = max(worker_peak, status_bytes(int(entry.name), "VmHWM"))
                await trio.sleep(0.05)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            async with trio.open_nursery() as calls:
                for n in range(8):
                    calls.start_soon(one, f"xlsx {n + 1}", book, "xlsx")
                await trio.sleep(0.1)
                calls.start_soon(one, "ninth (small .docx)", ninth, "docx")
            nursery.cancel_scope.cancel()
        while pool.idle:
            await pool.idle.pop().kill()

    trio.run(main)
    print(
        json.dumps(
            {"book_bytes": len(book.read_bytes()), "results": results, "worker_peak": worker_peak}
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure")
    parser.add_argument("--only", choices=["html", "documents", "documents-lie", "documents-slots"])
    parser.add_argument("--documents-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="20000,60000,480000", help="<p> counts")
    args = parser.parse_args()
    root = args.root.resolve()
    if args.documents_child:
        documents_scenario(root)
        return
    head = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(f"# hostile bench — {root} ({head[:60]}), Python {sys.version.split()[0]}")
    if args.only in (None, "html"):
        print()
        print("| HTML body | wall time | server peak RSS (VmHWM) | outcome |")
        print("|---|---:|---:|---|")
        for paragraphs in (int(n) for n in args.sizes.split(",")):
            got = html_scenario(root, paragraphs)
            print(
                f"| {got['body_bytes']:,} bytes ({paragraphs:,} <p>) | {got['seconds']:.2f} s "
                f"| {got['peak'] / 2**20:,.0f} MiB | {got['outcome']} |"
            )
    for variant in ("documents", "documents-lie", "documents-slots"):
        if args.only not in (None, variant):
            continue
        env = {
            **os.environ,
            "BENCH_LIE": "1" if variant == "documents-lie" else "",
            "BENCH_SLOTS": "1" if variant == "documents-slots" else "",
            "PYTHONPATH": str(root),  # the workers it starts import the same checkout
        }
        script = str(HERE / "bench" / "hostile_bench.py")
        done = subprocess.run(
            [sys.executable, script, "--root", str(root), "--documents-child"],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0:
            print("documents scenario failed:", done.stderr.strip().splitlines()[-1:])
            continue
        report = json.loads(done.stdout.strip().splitlines()[-1])
        print()
        table = {
            "documents-lie": "160,000 rich-text shared strings (4 MB) with a raised compress_size",
            "documents-slots": f"4,000,000 cells, ratio check raised, document_seconds "
            f"= {SLOT_SECONDS:g}",
        }.get(variant, "199,900 shared strings (999 KB, under the ratio floor)")
        print(
            f"8 workbooks of {report['book_bytes']:,} bytes ({table}) + a ninth "
            f"small .docx 0.1 s later; largest worker peak RSS "
            f"{report['worker_peak'] / 2**20:,.0f} MiB"
        )
        print()
        print("| call | its wall time | ended at | outcome |")
        print("|---|---:|---:|---|")
        for row in sorted(report["results"], key=lambda r: r["ended_at"]):
            print(
                f"| {row['name']} | {row['seconds']:.2f} s | {row['ended_at']:.2f} s "
                f"| {row['outcome'][:90]} |"
            )


if __name__ == "__main__":
    main()
