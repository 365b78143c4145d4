"""IMAP: our sans-I/O client on trio vs imaplib in a worker thread, against a real Dovecot.

    .venv/bin/python bench/imap_bench.py

Starts a throwaway Dovecot (tests/support/mailservers.py; needs dovecot-imapd), seeds a
folder of 50 realistic messages and one 20 MB message, then runs each scenario in a fresh
child process (``--one``): connect and log in (warm-up), reset the peak RSS
(``/proc/self/clear_refs``), run the scenario three times, and report the median wall
time, the client's CPU time (all threads), the server's CPU time (the Dovecot ``imap``
process of that session, from /proc) and the peak RSS (``VmHWM``) over the runs.

Scenarios: ``headers`` — UID SEARCH ALL, then one UID FETCH of the 50 newest with FLAGS,
RFC822.SIZE, ENVELOPE and BODYSTRUCTURE (ours parses to typed results; imaplib leaves raw
tuples, so it does less). ``read20`` — the 20 MB message read in 1 MiB partial fetches
(``BODY.PEEK[]<offset.1048576>``), hashed as it comes. ``whole20`` — one
``BODY.PEEK[]`` of it: imaplib holds all 20 MB; ours refuses the 20 MB literal at the
8 MiB cap before reading it. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import hashlib
import imaplib
import json
import os
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from mfconnector.imap import commands  # noqa: E402
from mfconnector.imap.connection import ImapConnection  # noqa: E402
from mfconnector.imap.errors import ImapLimitError  # noqa: E402
from mfconnector.imap.settings import ServerSettings  # noqa: E402
from mfconnector.limits import DEFAULT_LIMITS  # noqa: E402

CHUNK = 1_048_576
BIG = 20 * 1024 * 1024
HEADER_ITEMS = ["UID", "FLAGS", "RFC822.SIZE", "ENVELOPE", "BODYSTRUCTURE"]


def peak_reset() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def server_cpu(master: int) -> float:
    """CPU seconds of the master's ``imap`` children (one session runs at a time)."""
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master and cmd.endswith(b"dovecot/imap"):
            total += int(fields[11]) + int(fields[12])
    return total / tick


# --- our client -----------------------------------------------------------------------


async def ours(args: argparse.Namespace) -> dict[str, Any]:
    settings = ServerSettings(
        "127.0.0.1",
        args.port,
        "tls",
        "alice",
        "secret",
        ssl_context=ssl.create_default_context(cafile=args.ca),
    )
    connection = await ImapConnection.open(settings, DEFAULT_LIMITS)
    await commands.examine(connection, "INBOX")
    walls: list[float] = []
    outcome = ""
    peak_reset()
    cpu0, server0 = time.process_time(), server_cpu(args.master)
    for _ in range(3):
        start = time.perf_counter()
        if args.scenario == "headers":
            uids = (await commands.search(connection, "Bench50")).uids[-50:]
            found = await commands.fetch(connection, "Bench50", uids, HEADER_ITEMS)
            outcome = f"{len(found)} messages"
        elif args.scenario == "read20":
            outcome = await ours_read(connection)
        else:
            try:
                await commands.fetch(connection, "Big", [1], ["BODY.PEEK[]"])
                outcome = "read whole"
            except ImapLimitError:
                outcome = "refused at the literal cap"
                connection = await ImapConnection.open(settings, DEFAULT_LIMITS)
        walls.append(time.perf_counter() - start)
    result = figures(walls, cpu0, server0, args.master, outcome)
    await connection.logout()
    return result


async def ours_read(connection: ImapConnection) -> str:
    digest, offset = hashlib.sha256(), 0
    while True:
        piece = await commands.fetch_range(connection, "Big", 1, offset, CHUNK)
        digest.update(piece)
        offset += len(piece)
        if len(piece) < CHUNK:
            return f"{offset:,} bytes"


# --- imaplib in a worker thread ----------------------------------------------------------


def imaplib_session(args: argparse.Namespace) -> imaplib.IMAP4_SSL:
    imap = imaplib.IMAP4_SSL(
        "127.0.0.1", args.port, ssl_context=ssl.create_default_context(cafile=args.ca)
    )
    imap.login("alice", "secret")
    return imap


def imaplib_run(imap: imaplib.IMAP4_SSL, scenario: str) -> str:
    if scenario == "headers":
        imap.select("Bench50", readonly=True)
        _, data = imap.uid("SEARCH", "ALL")
        uids = data[0].split()[-50:]
        _, fetched = imap.uid("FETCH", b",".join(uids).decode(), "(" + " ".join(HEADER_ITEMS) + ")")
        return f"{len(fetched)} messages"
    imap.select("Big", readonly=True)
    if scenario == "read20":
        digest, offset = hashlib.sha256(), 0
        while True:
            _, fetched = imap.uid("FETCH", "1", f"(BODY.PEEK[]<{offset}.{CHUNK}>)")
            item = fetched[0]
            piece = item[1] if isinstance(item, tuple) else b""
            digest.update(piece)
            offset += len(piece)
            if len(piece) < CHUNK:
                return f"{offset:,} bytes"
    _, fetched = imap.uid("FETCH", "1", "(BODY.PEEK[])")
    item = fetched[0]
    return f"read whole ({len(item[1]) if isinstance(item, tuple) else 0:,} bytes)"


async def threaded(args: argparse.Namespace) -> dict[str, Any]:
    imap = await trio.to_thread.run_sync(imaplib_session, args)
    walls: list[float] = []
    outcome = ""
    peak_reset()
    cpu0, server0 = time.process_time(), server_cpu(args.master)
    for _ in range(3):
        start = time.perf_counter()
        outcome = await trio.to_thread.run_sync(imaplib_run, imap, args.scenario)
        walls.append(time.perf_counter() - start)
    result = figures(walls, cpu0, server0, args.master, outcome)
    await trio.to_thread.run_sync(imap.logout)
    return result


def figures(
    walls: list[float], cpu0: float, server0: float, master: int, outcome: str
) -> dict[str, Any]:
    return {
        "wall_ms": round(statistics.median(walls) * 1000, 1),
        "cpu_ms": round((time.process_time() - cpu0) / len(walls) * 1000, 1),
        "server_cpu_ms": round((server_cpu(master) - server0) / len(walls) * 1000, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "outcome": outcome,
    }


# --- the driver ---------------------------------------------------------------------------


def seed(server: Any) -> None:
    from email.message import EmailMessage

    imap = server.imaplib()
    imap.create("Bench50")
    imap.create("Big")
    for index in range(50):
        mail = EmailMessage()
        mail["From"] = f"Sender {index} <sender{index}@example.org>"
        mail["To"] = "alice@example.org, team@example.org"
        mail["Subject"] = f"Quarterly planning, part {index}: agenda and notes"
        mail["Message-ID"] = f"<bench{index}@example.org>"
        mail.set_content("Paragraph of text.\n" * 150)
        mail.add_alternative("<p>Paragraph of text.</p>\n" * 150, subtype="html")
        if index % 5 == 0:
            mail.add_attachment(
                b"\0" * 40_000,
                maintype="application",
                subtype="pdf",
                filename=f"report-{index}.pdf",
            )
        imap.append("Bench50", "", None, mail.as_bytes())
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\r\n"
    imap.append("Big", "", None, b"Subject: big\r\n\r\n" + line * (BIG // len(line)))
    imap.logout()


def warm_up(server: Any) -> None:
    """One session of each scenario first: Dovecot writes its cache of ENVELOPE and
    BODYSTRUCTURE when a session ends, so without this the first client measured pays
    for building it and every later one reads it for free."""
    imap = server.imaplib()
    for scenario in ("headers", "read20"):
        imaplib_run(imap, scenario)  # type: ignore[arg-type]
    imap.logout()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", choices=["ours", "imaplib"])
    parser.add_argument("--scenario", choices=["headers", "read20", "whole20"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--ca")
    parser.add_argument("--master", type=int)
    args = parser.parse_args()
    if args.one:
        run = ours if args.one == "ours" else threaded
        print(json.dumps(trio.run(run, args)))
        return
    from tests.support.mailservers import Dovecot

    with Dovecot() as server:
        seed(server)
        assert server._process is not None
        warm_up(server)
        print(
            "| scenario | client | wall ms | client CPU ms | server CPU ms | peak RSS MB "
            "| outcome |"
        )
        print("|---|---|---:|---:|---:|---:|---|")
        for scenario in ("headers", "read20", "whole20"):
            for client in ("ours", "imaplib"):
                child = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--one",
                        client,
                        "--scenario",
                        scenario,
                        "--port",
                        str(server.imaps_port),
                        "--ca",
                        str(server.ca_file),
                        "--master",
                        str(server._process.pid),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=ROOT,
                )
                r = json.loads(child.stdout)
                name = "ours (trio, sans-I/O)" if client == "ours" else "imaplib in a thread"
                print(
                    f"| {scenario} | {name} | {r['wall_ms']} | {r['cpu_ms']} | "
                    f"{r['server_cpu_ms']} | {r['peak_rss_mb']} | {r['outcome']} |"
                )


if __name__ == "__main__":
    main()
