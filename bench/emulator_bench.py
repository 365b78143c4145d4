"""Emulator bench: what ``--demo`` costs, measured on the real process over pipes.

Prints three tables:

  startup   spawn of ``python -m mfconnector --demo`` to the first ``server/discover``
            answer, and to the first ``mail_list`` answer (the emulator builds the demo
            tenant on that first call). Median of N runs. Target: first answer <= 0.3 s.
  cpu       server CPU (utime + stime from /proc) per ``tools/call``, median of repeated
            batches, for a 50-message ``mail_list`` and a few other calls, on ``--demo``
            and, for comparison, ``--fixtures fixtures/canned.json`` (0.1's canned pages).
            Target: mail_list (50) <= 2 ms on ``--demo``.
  emulator  the emulator alone (no MCP, no client): CPU per Graph request, in process.

Usage:
  .venv/bin/python bench/emulator_bench.py [--runs N] [--calls N]

Linux only (reads /proc). Figures depend on the machine and its load; bench/README.md
records them with the date and conditions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CANNED = ROOT / "fixtures" / "canned.json"
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "mail_list (50, inbox)": ("mail_list", {}),
    "mail_list (50, unread filter)": ("mail_list", {"unread_only": True, "folder": "archive"}),
    "mail_search (budget)": ("mail_search", {"query": "budget"}),
    "files_list (50, root)": ("files_list", {}),
    "mail_folders": ("mail_folders", {}),
}


def line(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": META, **(params or {})},
    }
    return json.dumps(message).encode() + b"\n"


def call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    return line(request_id, "tools/call", {"name": name, "arguments": arguments})


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def spawn(*flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "mfconnector", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )


def ask(process: subprocess.Popen[bytes], data: bytes) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(data)
    process.stdin.flush()
    reply: dict[str, Any] = json.loads(process.stdout.readline())
    return reply


def stop(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=30)


def startup(runs: int) -> None:
    discover, first_list = [], []
    for _ in range(runs):
        start = time.perf_counter()
        process = spawn("--demo")
        ask(process, line(1, "server/discover"))
        discover.append(time.perf_counter() - start)
        reply = ask(process, call(2, "mail_list", {}))
        assert len(reply["result"]["structuredContent"]["messages"]) == 50
        first_list.append(time.perf_counter() - start)
        stop(process)
    print("## startup (--demo), median of", runs, "runs\n")
    print("| measure | seconds | target |")
    print("| --- | ---: | --- |")
    print(
        f"| spawn to first answer (server/discover) | {statistics.median(discover):.3f} | <= 0.3 |"
    )
    print(f"| spawn to first mail_list (50) answer | {statistics.median(first_list):.3f} | |")
    print()


def cpu_per_call(flags: list[str], name: str, arguments: dict[str, Any], calls: int) -> float:
    process = spawn(*flags)
    try:
        ask(process, call(0, name, arguments))  # warm: imports, tenant, caches
        batches = []
        for batch in range(5):
            before = cpu_seconds(process.pid)
            for n in range(calls):
                reply = ask(process, call(1000 * batch + n + 1, name, arguments))
                assert "result" in reply, reply
            batches.append((cpu_seconds(process.pid) - before) / calls)
        return statistics.median(batches)
    finally:
        stop(process)


def cpu(calls: int) -> None:
    print(f"## server CPU per tools/call (median of 5 batches of {calls})\n")
    print("| call | --demo (ms) | --fixtures canned.json (ms) |")
    print("| --- | ---: | ---: |")
    for label, (name, arguments) in CALLS.items():
        demo = cpu_per_call(["--demo"], name, arguments, calls)
        canned = (
            cpu_per_call(["--fixtures", str(CANNED)], name, arguments, calls)
            if label in ("mail_list (50, inbox)", "files_list (50, root)", "mail_folders")
            else None
        )
        shown = f"{canned * 1000:.2f}" if canned is not None else "n/a (not canned)"
        print(f"| {label} | {demo * 1000:.2f} | {shown} |")
    print()


def emulator_alone(calls: int) -> None:
    from mfconnector.emulator import Emulator

    emulator = Emulator()
    headers = {"authorization": "Bearer x", "prefer": 'IdType="ImmutableId"'}
    from mfconnector.graph.mail_model import FULL_LIST_FIELDS

    select = ",".join(FULL_LIST_FIELDS)
    urls = {
        "inbox, 50, $select, $orderby": (
            "https://graph.microsoft.com/v1.0/me/mailFolders/inbox/messages"
            f"?$select={select}&$top=50&$orderby=receivedDateTime%20desc"
        ),
        "$search budget, 50": (
            f"https://graph.microsoft.com/v1.0/me/messages?$search=%22budget%22&$select={select}&$top=50"
        ),
        "drive root children, 50": (
            "https://graph.microsoft.com/v1.0/me/drive/root/children?$top=50"
        ),
    }
    start = time.perf_counter()
    emulator.handle("GET", "https://graph.microsoft.com/v1.0/me", headers, b"")
    built = time.perf_counter() - start
    print("## the emulator alone, in process\n")
    print(f"building the demo tenant (first request): {built * 1000:.1f} ms\n")
    print("| Graph request | CPU per request (ms) |")
    print("| --- | ---: |")
    for label, url in urls.items():
        emulator.handle("GET", url, headers, b"")
        before = time.process_time()
        for _ in range(calls):
            answer = emulator.handle("GET", url, headers, b"")
            assert answer.status == 200
        print(f"| {label} | {(time.process_time() - before) / calls * 1000:.3f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    startup(args.runs)
    cpu(args.calls)
    emulator_alone(args.calls * 5)


if __name__ == "__main__":
    main()
