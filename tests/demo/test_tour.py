"""``mfconnector tour``: the README's first command shows a person the real server at work."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_the_tour_runs_the_real_server_on_the_demo_mailbox() -> None:
    completed = subprocess.run(  # `tour --demo` was an argparse error in 0.2.0
        [sys.executable, "-m", "mfconnector", "tour", "--demo"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    out = completed.stdout.decode()
    assert completed.returncode == 0, completed.stderr.decode()
    assert "speaks MCP 2026-07-28, 2025-11-25, 2025-06-18" in out
    assert "mailbox of Adele Vance" in out
    assert "Inbox" in out and "61 total" in out
    # A search and a filter built from what the listing returned, not from a script.
    assert "A search nobody scripted" in out and "A filter nobody scripted" in out
    search = out.split("A search nobody scripted", 1)[1].split("A filter nobody scripted")[0]
    assert search.count("\n    20") >= 1, "the unscripted search found nothing"
    assert "continue with cursor=" in out
    assert "continue with offset 10000" in out
    documents = out.split("Reading documents", 1)[1]
    assert "Q1 Budget Review.docx (docx" in documents and "| # Q1 Budget Review" in documents
    assert "Budget 2027 model.xlsx (xlsx, 2 parts: Sheet: Budget 2027" in documents
    assert "| Cost centre | Q1 plan | Q1 actual | Variance" in documents
    assert "Launch deck.pptx (pptx, 4 parts: Slide 1: Contoso Launch" in documents
    assert "Fabrikam MSA.pdf (pdf" in documents and "| ## Page 1" in documents
    progress = out.split("A document read with progress")[1]
    assert re.search(r"progress ([\d,]+) of \1: downloaded \1 of \1 bytes of the PDF", progress)
    attached = out.split("A draft with a workbook from the drive attached")[1]
    assert "on the draft: Budget 2027 model.xlsx, 3,296 bytes, SHA-256 " in attached
    assert "(no bytes in the call)" in attached
    # issue 22 §7: a parent folder shows what its subfolders hold (0.2.0: "0 total" only)
    projects = next(line for line in out.splitlines() if line.strip().startswith("Projects "))
    assert "0 total" in projects and "56 total in 2 subfolders" in projects
    # the drive table stays aligned whatever the MIME type (0.2.0 printed OOXML types whole)
    drive = out.split("== The drive", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in drive.splitlines() if line.endswith(" bytes")]
    assert len(rows) >= 4 and any("Word document" in row for row in rows)
    assert len({len(row) for row in rows}) == 1, rows
    assert "this server reads text, not pictures" in drive
    assert "not readable as text yet" not in out
    for secret in ("tempauth", "fixture-token", "download.aspx"):
        assert secret not in out


@pytest.mark.slow
def test_the_tour_survives_a_console_code_page_without_cjk_or_emoji() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mfconnector", "tour"],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},
    )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    out = completed.stdout.decode("cp1252")
    assert "mailbox of Adele Vance" in out and "What this shows" in out
    assert "?" in out  # the Japanese subject, shown as replacement characters


@pytest.mark.slow
def test_the_tour_stops_quietly_when_its_reader_goes_away() -> None:
    tour = subprocess.Popen(
        [sys.executable, "-m", "mfconnector", "tour"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert tour.stdout is not None and tour.stderr is not None
    tour.stdout.read(10)
    tour.stdout.close()
    stderr = tour.stderr.read()
    tour.stderr.close()
    assert tour.wait(timeout=60) == 0
    assert b"Traceback" not in stderr
