"""The read hot path: server CPU per tools/call on the demo, this checkout beside 0.2.0.

Issue 18 §5: a 50-message compact ``mail_list`` on the demo cost 5-6 ms of server CPU in
0.2.0 (half in recursive secret-stripping and bounding of every raw Graph item, 17% in
encoding every item twice for the size accounting); with the neutral model the backend
picks the fields once and the tool encodes each result once. Goals: the 50-message
compact list <= 2 ms, a 10,000-character ``mail_read`` <= 2 ms.

Both servers run ``--demo`` (the emulator, in process) over real pipes in one run of this
script, one after the other, each asked the same calls: warm-up calls first (imports, the
demo tenant, the mailbox zone, folder names), then batches of ``--calls`` sequential
calls; the figure is the median over batches of (utime + stime of the server process,
from /proc) / calls, so the emulator's own share is in both figures alike.

Usage:
  .venv/bin/python bench/hot_path.py --baseline-python /path/to/0.2.0-venv/bin/python \\
      [--calls 100] [--batches 5]

The 0.2.0 server is that venv's installed ``mfconnector`` (``pip install`` of the commit
that set the version to 0.2.0), started from a directory outside this checkout so it
imports its own copy. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
GOAL_MS = 2.0


class Server:
    """One ``--demo`` server process over pipes, and its CPU clock."""

    def __init__(self, python: str, cwd: Path, wrapper: tuple[str, ...] = ()) -> None:
        """``wrapper``: a command the server runs under (valgrind, for the instruction
        counts of ``hot_path_instructions.py``)."""
        self.process = subprocess.Popen(
            [*wrapper, python, "-m", "mfconnector", "--demo"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.ids = 0

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"_meta": META, "name": name, "arguments": arguments},
        }
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def read_target(server: Server) -> dict[str, Any]:
    """``mail_read`` arguments for the demo's message of exactly 10,000 characters."""
    found = server.call("mail_search", {"query": '"Store audit transcript"'})
    data = found["structuredContent"]
    columns = data["columns"]
    for row in data["messages"]:
        subject = row[columns.index("subject")]
        if "(10,000 " in subject:
            return {"message_id": row[columns.index("id")]}
    raise LookupError("the demo's 10,000-character message")


def measure(python: str, cwd: Path, calls: int, batches: int) -> dict[str, float]:
    """Median CPU ms per call of each scenario on one server."""
    server = Server(python, cwd)
    try:
        scenarios = {
            "mail_list (50, compact)": ("mail_list", {"limit": 50}),
            "mail_read (10,000 chars)": ("mail_read", read_target(server)),
        }
        out: dict[str, float] = {}
        for label, (name, arguments) in scenarios.items():
            first = server.call(name, arguments)
            if name == "mail_list":
                assert len(first["structuredContent"]["messages"]) == 50
            else:
                assert len(first["structuredContent"]["message"]["body"]) == 10_000
            for _ in range(5):
                server.call(name, arguments)
            per_batch = []
            for _ in range(batches):
                before = server.cpu_seconds()
                for _ in range(calls):
                    server.call(name, arguments)
                per_batch.append((server.cpu_seconds() - before) / calls * 1000)
            out[label] = statistics.median(per_batch)
        return out
    finally:
        server.close()


def emulator_share(calls: int, batches: int) -> dict[str, float]:
    """CPU ms per call that the demo's emulator (standing in for Graph) takes of the list
    and the read, measured in this process: the tools run as ``--demo`` wires them, and
    the emulator's transport is timed around each request it answers. A live server pays
    for TLS and the network read instead."""
    import time

    import trio

    from mfconnector.cli import build_parser
    from mfconnector.emulator.transport import EmulatorTransport
    from mfconnector.entry.wiring import build_context
    from mfconnector.limits import DEFAULT_LIMITS
    from mfconnector.tools.mail import mail_list, mail_search
    from mfconnector.tools.mail_read import mail_read

    spent = [0.0]
    answer = EmulatorTransport.handle_async_request

    async def timed(self: EmulatorTransport, request: Any) -> Any:
        started = time.process_time()
        try:
            return await answer(self, request)
        finally:
            spent[0] += time.process_time() - started

    EmulatorTransport.handle_async_request = timed  # type: ignore[method-assign]

    async def run() -> dict[str, float]:
        ctx, graph = build_context(build_parser().parse_args(["--demo"]), DEFAULT_LIMITS)
        found = await mail_search(ctx, {"query": '"Store audit transcript"'})
        columns = found["columns"]
        target = next(
            row[columns.index("id")]
            for row in found["messages"]
            if "(10,000 " in row[columns.index("subject")]
        )
        scenarios = {
            "mail_list (50, compact)": (mail_list, {"limit": 50}),
            "mail_read (10,000 chars)": (mail_read, {"message_id": target}),
        }
        out = {}
        for label, (tool, arguments) in scenarios.items():
            for _ in range(5):
                await tool(ctx, arguments)
            shares = []
            for _ in range(batches):
                spent[0] = 0.0
                for _ in range(calls):
                    await tool(ctx, arguments)
                shares.append(spent[0] / calls * 1000)
            out[label] = statistics.median(shares)
        await graph.aclose()
        return out

    try:
        return trio.run(run)
    finally:
        EmulatorTransport.handle_async_request = answer  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-python", required=True, help="python of a 0.2.0 venv")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--batches", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as outside:
        old = measure(args.baseline_python, Path(outside), args.calls, args.batches)
    new = measure(sys.executable, ROOT, args.calls, args.batches)
    print(f"## server CPU per tools/call on --demo (median of {args.batches} batches of ")
    print(f"{args.calls} calls)\n")
    emulator = emulator_share(args.calls, args.batches)
    print("| call | 0.2.0 (ms) | this checkout (ms) | of which the emulator (ms) | goal |")
    print("| --- | ---: | ---: | ---: | --- |")
    for label in new:
        mark = "met" if new[label] <= GOAL_MS else "missed"
        print(
            f"| {label} | {old[label]:.2f} | {new[label]:.2f} | {emulator[label]:.2f} "
            f"| <= {GOAL_MS:g} ms: {mark} |"
        )


if __name__ == "__main__":
    main()
