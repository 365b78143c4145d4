"""Adele's OneDrive, continued: text, CSV, JSON and code files, a 2.6 MB log whose
incident is at the very end, a text file just over the 10,000-character read limit, and
forty standup notes."""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import mfconnector.demo_documents as docbuild
from mfconnector.emulator.seed.corpus import HOTEL_TEXT, LOG_INCIDENT, SENTENCES
from mfconnector.emulator.seed.documents import PNG, hotel_eml
from mfconnector.emulator.seed.drive_builder import DriveBuilder, text_file
from mfconnector.emulator.seed.facts import DEMO_NOW, PEOPLE, STAFF
from mfconnector.emulator.seed.prose import plain

__all__ = ["LOG_BYTES", "standup_notes", "text_files"]

LOG_BYTES = 2_600_000


def _text(d: DriveBuilder, path: str, content: str, mime: str = "text/plain", **kw: Any) -> None:
    data, body = text_file(content)
    d.file(path, mime, data, text=body, **kw)


def _log_bytes() -> bytes:
    """2,600,000 bytes of sync log: routine lines, then the incident at the very end."""
    room = LOG_BYTES - len(LOG_INCIDENT)
    lines, size, n = [], 0, 0
    while True:
        line = (
            f"2026-03-05T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z INFO sync "
            f"request={n:06d} mailbox=adelev items={n % 50} elapsed_ms={(n * 7) % 900}\n"
        )
        if size + len(line) > room:
            break
        lines.append(line)
        size += len(line)
        n += 1
    return ("".join(lines).ljust(room, "\n") + LOG_INCIDENT).encode("ascii")


def _notes_10001() -> str:
    source = (
        "Notes de réunion à Tōkyō — 会議メモ. Prochaine étape: le budget 2027 und die "
        "Einführung in München 🎉. "
    )
    return (source * (10_001 // len(source) + 1))[:10_001]


def text_files(d: DriveBuilder) -> None:
    budget_text = " ".join(SENTENCES["budget"])
    launch_text = " ".join(SENTENCES["launch"])
    _text(
        d,
        "/Documents/Reports/Report template.md",
        "# Report template\n\n## Summary\n\n## Numbers\n\n## Risks\n",
        "text/markdown",
    )
    _text(
        d,
        "/Documents/Reports/2026/Q1 report draft.md",
        "# Q1 report draft\n\n"
        + budget_text
        + "\n\n"
        + " ".join(plain(SENTENCES["product"]))
        + "\n",
        "text/markdown",
    )
    _text(
        d,
        "/Documents/Reports/2026/Q1 budget vs actuals.csv",
        "cost centre,plan,actual\nRetail stores,120000,123250\nMarketing,137500,131000\n"
        "Travel,172500,162750\n",
        "text/csv",
    )
    d.file(
        "/Documents/Reports/2026/Report chart.png",
        PNG,
        functools.partial(docbuild.png, 240, 160, 5),
    )
    _text(d, "/Documents/Notes de réunion – Tōkyō.txt", _notes_10001())
    _text(
        d,
        "/Documents/Budget 2027 – assumptions.csv",
        "assumption,value\ninflation,3.1%\nheadcount growth,4 FTE\ntravel,flat\n",
        "text/csv",
    )
    _text(
        d,
        "/Documents/launch-checklist.json",
        json.dumps(
            {
                "launch": "Contoso Launch",
                "date": "2026-04-14",
                "items": [
                    {"task": s, "done": n % 2 == 0} for n, s in enumerate(SENTENCES["launch"])
                ],
            },
            ensure_ascii=False,
            indent=2,
        ),
        "application/json",
    )
    d.file(
        "/Documents/Hotel confirmation.eml",
        "message/rfc822",
        hotel_eml,
        text="Reservation confirmed " + HOTEL_TEXT,
    )
    _text(
        d,
        "/Documents/forecast.py",
        '"""Budget 2027 forecast."""\n\nGROWTH = 0.031\n\n\n'
        "def forecast(plan: float) -> float:\n    return plan * (1 + GROWTH)\n",
        "text/x-python",
    )
    _text(
        d,
        "/Projects/Contoso Launch/Launch plan.md",
        "# Launch plan\n\n" + "\n".join(f"- {s}" for s in SENTENCES["launch"]) + "\n",
        "text/markdown",
    )
    _text(
        d,
        "/Projects/Contoso Launch/launch-timeline.csv",
        "milestone,date\npress review,2026-03-20\npartner preview,2026-03-31\nlaunch,2026-04-14\n",
        "text/csv",
    )
    _text(d, "/Projects/Budget 2027/Budget notes.txt", budget_text + "\n")
    _text(
        d,
        "/Projects/Project overview.md",
        "# Projects\n\n- Budget 2027\n- Contoso Launch\n",
        "text/markdown",
    )
    for n in range(3):
        d.file(
            f"/Photos/Store opening {n + 1}.png",
            PNG,
            functools.partial(docbuild.png, 160, 120, 20 + n),
        )
    d.file(
        "/server.log", "text/plain", _log_bytes, text="sync request mailbox adelev", size=2_600_000
    )
    _text(
        d,
        "/Project #42 notes.md",
        "# Project #42\n\nA name with a hash and spaces.\n",
        "text/markdown",
    )
    _text(d, "/Café menu – février.txt", "Café crème 3,20 €\nCroissant 2,10 €\nThé vert 2,80 €\n")
    _text(d, "/sync_inbox.py", "import time\n\nwhile True:\n    time.sleep(60)\n", "text/x-python")
    d.file("/Org chart.png", PNG, functools.partial(docbuild.png, 200, 140, 9))
    _text(d, "/settings.json", '{"theme": "dark", "language": "en-US"}\n', "application/json")
    _text(
        d,
        "/Team contacts.csv",
        "name,email\n" + "".join(f"{PEOPLE[s][0]},{PEOPLE[s][1]}\n" for s in STAFF),
        "text/csv",
    )
    _text(d, "/Reading list.txt", "The Goal\nGood Strategy Bad Strategy\nThe Mythical Man-Month\n")
    _text(
        d,
        "/Launch announcement draft.md",
        "# We are launching!\n\n" + launch_text + "\n",
        "text/markdown",
    )
    _text(
        d,
        "/会議メモ 2026-03.txt",
        "東京オフィスの会議メモ。新製品の発売計画と予算について話し合いました。\n",
    )


def standup_notes(d: DriveBuilder) -> None:
    start = datetime(2026, 1, 5, tzinfo=UTC)
    for n in range(40):
        day = start + timedelta(days=7 * (n // 5) + n % 5)
        topic = ["budget", "launch", "meeting", "product", "hiring"][n % 5]
        body = (
            f"# Standup {day:%Y-%m-%d}\n\n"
            + "\n".join(f"- {s}" for s in SENTENCES[topic][:3])
            + "\n"
        )
        _text(
            d,
            f"/Standup notes {day:%Y-%m-%d}.md",
            body,
            "text/markdown",
            days_ago=(DEMO_NOW - day).days,
        )
