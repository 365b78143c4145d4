"""Gmail emulator bench: what the in-memory Gmail API costs, in process (no MCP, no client).

Prints one table: CPU per operation (median of N repetitions, ``time.process_time``) and
the bytes of its answer, for building the demo mailbox (cold: writing and parsing the MIME
once per process; warm: replaying it) and for the calls a Gmail backend makes for a
50-message list (one ``messages.list``, then 50 ``messages.get?format=metadata`` one by
one or in one batch) and a long read (``threads.get`` of the 14-message thread).

Usage:
  .venv/bin/python bench/gmail_emulator_bench.py [--runs N]

Figures depend on the machine and its load; bench/README.md records them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mfconnector.gmail_emulator import DEMO_TOKEN, GmailEmulator  # noqa: E402
from mfconnector.gmail_emulator import demo as demo_module  # noqa: E402
from mfconnector.gmail_emulator.transport import answer_bytes  # noqa: E402

API = "https://gmail.googleapis.com/gmail/v1/users/me"
AUTH = {"Authorization": f"Bearer {DEMO_TOKEN}"}


def measure(work: Callable[[], int], runs: int) -> tuple[float, int]:
    """(median CPU ms, bytes of the last answer)."""
    times, size = [], 0
    for _ in range(runs):
        start = time.process_time()
        size = work()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times), size


def get(emulator: GmailEmulator, url: str) -> int:
    answer = emulator.handle("GET", url, AUTH, b"")
    assert answer.status == 200, answer.json
    return len(answer_bytes(answer))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    start = time.process_time()
    demo_module.build_demo_mailbox()
    cold_ms = (time.process_time() - start) * 1000
    rows = [("build demo mailbox, cold (first in process)", cold_ms, 0)]
    rows.append(("build demo mailbox, warm", *measure(lambda: (GmailEmulator(), 0)[1], runs)))
    emulator = GmailEmulator()
    listing = emulator.handle("GET", f"{API}/messages?maxResults=50", AUTH, b"").json
    ids = [m["id"] for m in listing["messages"]]
    rows.append(("messages.list maxResults=50", *measure(
        lambda: get(emulator, f"{API}/messages?maxResults=50"), runs)))  # fmt: skip
    rows.append(("messages.list q=has:attachment", *measure(
        lambda: get(emulator, f"{API}/messages?q=has:attachment"), runs)))  # fmt: skip
    metadata = "format=metadata&metadataHeaders=From&metadataHeaders=Subject&metadataHeaders=Date"

    def one_by_one() -> int:
        return sum(get(emulator, f"{API}/messages/{i}?{metadata}") for i in ids)

    rows.append(("50 x messages.get format=metadata", *measure(one_by_one, runs)))
    boundary = "bench_boundary"
    body = (
        "".join(
            f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <{n}>\r\n\r\n"
            f"GET /gmail/v1/users/me/messages/{i}?{metadata}\r\n\r\n"
            for n, i in enumerate(ids)
        ).encode()
        + f"--{boundary}--\r\n".encode()
    )
    headers = {**AUTH, "Content-Type": f"multipart/mixed; boundary={boundary}"}

    def batch() -> int:
        answer = emulator.handle("POST", "https://www.googleapis.com/batch/gmail/v1", headers, body)
        assert answer.status == 200
        return len(answer_bytes(answer))

    rows.append(("1 batch of 50 messages.get format=metadata", *measure(batch, runs)))
    threads = emulator.mailbox.messages.values()
    longest = max({m.thread_id for m in threads}, key=lambda t: len(emulator.mailbox.thread(t)))
    rows.append(("threads.get format=full (14 messages)", *measure(
        lambda: get(emulator, f"{API}/threads/{longest}"), runs)))  # fmt: skip
    print(f"{'operation':50} {'CPU ms':>9} {'bytes':>9}")
    for name, ms, size in rows:
        print(f"{name:50} {ms:9.2f} {size:9d}")


if __name__ == "__main__":
    main()
