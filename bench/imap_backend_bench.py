"""IMAP at the backend level: ``ImapMailBackend`` against a real Dovecot over TLS.

    .venv/bin/python bench/imap_backend_bench.py

Starts a throwaway Dovecot (tests/imap/mailservers.py; needs dovecot-imapd), seeds the same
50 realistic messages and 20 MB message as bench/imap_bench.py plus one long message
(about 60,000 characters of HTML with a plain-text alternative), warms Dovecot's cache,
then runs each scenario in a fresh child process: start the backend (log in, learn
capabilities), reset the peak RSS, run three times; median wall, client CPU (all threads:
the MIME reader and the HTML converter run in worker threads), server CPU (the session's
``imap`` process) per run, peak RSS over the three.

Scenarios: ``list50`` — ``list_messages`` of 50 (the summaries a compact ``mail_list``
shows: SEARCH, one FETCH of FLAGS, ENVELOPE, BODYSTRUCTURE, INTERNALDATE, MODSEQ, turned
into neutral summaries); ``read_long`` — ``read`` of the long message (partial fetch,
bounded MIME, body as text, links checked for credentials); ``read20`` — ``read`` of the
20 MB message (only its first ``mime_message_bytes`` are fetched and read). Linux only.
"""

from __future__ import annotations

import argparse
import json
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "tests" / "imap")]

import trio  # noqa: E402
from imap_bench import peak_reset, peak_rss_mb, seed, server_cpu  # noqa: E402

from mfconnector.imap.backend import ImapMailBackend  # noqa: E402
from mfconnector.imap.settings import ServerSettings  # noqa: E402
from mfconnector.limits import DEFAULT_LIMITS  # noqa: E402
from mfconnector.mail.model import Person  # noqa: E402
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest  # noqa: E402
from mfconnector.mail.refs import account_tag  # noqa: E402

SCENARIOS = ("list50", "read_long", "read20")


async def one(args: argparse.Namespace) -> dict[str, Any]:
    settings = ServerSettings(
        "127.0.0.1",
        args.port,
        "tls",
        "alice",
        "secret",
        ssl_context=ssl.create_default_context(cafile=args.ca),
    )
    backend = ImapMailBackend(
        account_tag("imap", "bench"),
        settings,
        DEFAULT_LIMITS,
        sender=Person("Alice", "alice@example.org"),
    )
    await backend.start()
    folder = await backend.resolve_folder(
        {"list50": "Bench50", "read_long": "Long", "read20": "Big"}[args.scenario], "folder"
    )
    first = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=50))
    walls: list[float] = []
    outcome = ""
    peak_reset()
    cpu0, server0 = time.process_time(), server_cpu(args.master)
    for _ in range(3):
        start = time.perf_counter()
        if args.scenario == "list50":
            page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=50))
            outcome = f"{len(page.items)} summaries"
        else:
            message = await backend.read(first.items[0].ref, ReadRequest(view="full"))
            assert message.body is not None
            outcome = f"{len(message.body.text):,} characters of text"
        walls.append(time.perf_counter() - start)
    result = {
        "wall_ms": round(statistics.median(walls) * 1000, 1),
        "cpu_ms": round((time.process_time() - cpu0) / len(walls) * 1000, 1),
        "server_cpu_ms": round((server_cpu(args.master) - server0) / len(walls) * 1000, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "outcome": outcome,
    }
    await backend.aclose()
    return result


def seed_long(server: Any) -> None:
    from email.message import EmailMessage

    paragraph = (
        "The review of the second quarter covers the budget, the hiring plan and the "
        "migration of the build servers; each section lists owners and dates. "
    )
    mail = EmailMessage()
    mail["From"] = "Reviewer <reviewer@example.org>"
    mail["To"] = "alice@example.org"
    mail["Subject"] = "The long review"
    mail.set_content(paragraph * 400)
    mail.add_alternative(
        "".join(
            f"<p>{paragraph}<a href='https://example.org/doc/{i}'>doc</a></p>" for i in range(400)
        ),
        subtype="html",
    )
    imap = server.imaplib()
    imap.create("Long")
    imap.append("Long", "", None, mail.as_bytes())
    imap.logout()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=SCENARIOS)
    parser.add_argument("--port", type=int)
    parser.add_argument("--ca")
    parser.add_argument("--master", type=int)
    args = parser.parse_args()
    if args.scenario:
        print(json.dumps(trio.run(one, args)))
        return
    from mailservers import Dovecot

    with Dovecot() as server:
        seed(server)
        seed_long(server)
        assert server._process is not None
        imap = server.imaplib()  # warm Dovecot's cache (written when a session ends)
        for folder in ("Bench50", "Long", "Big"):
            imap.select(folder, readonly=True)
            imap.uid("FETCH", "1:*", "(FLAGS ENVELOPE BODYSTRUCTURE INTERNALDATE)")
        imap.logout()
        print("| scenario | wall ms | client CPU ms | server CPU ms | peak RSS MB | outcome |")
        print("|---|---:|---:|---:|---:|---|")
        for scenario in SCENARIOS:
            child = subprocess.run(
                [
                    sys.executable,
                    __file__,
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
            print(
                f"| {scenario} | {r['wall_ms']} | {r['cpu_ms']} | {r['server_cpu_ms']} | "
                f"{r['peak_rss_mb']} | {r['outcome']} |"
            )


if __name__ == "__main__":
    main()
