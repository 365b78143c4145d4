"""prepare + confirm round trip on the demo emulator, over real pipes.

    .venv/bin/python bench/send_roundtrip.py [--rounds 50] [--person]

Starts ``python -m mfconnector --demo --enable-send`` and, per round, calls
``mail_prepare new`` (creates a draft, reads it back, freezes it, stores the preparation)
then ``mail_send_confirmed`` (re-reads, claims, sends, checks Sent Items). Prints the
median and 90th percentile of each step and of the whole round, and checks that every
message landed in the sandbox's Sent Items. Nothing leaves the process: the emulator is
in memory and the demo's state store too.

``--person``: the client declares elicitation, so confirming is two calls: the first is
answered ``input_required`` (the form and a signed ``requestState``), the second brings the
person's accept (given at once here) and sends. The confirm figure is both calls together.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


class Server:
    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mfconnector", "--demo", "--enable-send"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.ids = 0

    def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"_meta": self.meta, "name": name, "arguments": arguments, **extra},
        }
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        result: dict[str, Any] = reply["result"]
        if result.get("resultType") == "input_required":
            return result
        if result.get("isError"):
            raise SystemExit(f"{name} failed: {result['content'][0]['text'][:500]}")
        return result["structuredContent"]  # type: ignore[no-any-return]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--person", action="store_true", help="the client asks the person")
    options = parser.parse_args()
    rounds = options.rounds
    server = Server(ELICITING if options.person else META)
    try:
        server.call("account_status", {})  # warm up: imports, the emulator's mailbox
        prepares, confirms, wholes, outcomes = [], [], [], []
        for index in range(rounds):
            began = time.perf_counter()
            prepared = server.call(
                "mail_prepare",
                {
                    "action": "new",
                    "to": ["megan@contoso.example"],
                    "subject": f"bench round {index}",
                    "text": "One line of text.\n" * 20,
                },
            )
            middle = time.perf_counter()
            confirm = {
                "prepared_id": prepared["prepared_id"],
                "confirmed_digest": prepared["digest"],
            }
            sent = server.call("mail_send_confirmed", confirm)
            if options.person:
                accept = {"action": "accept", "content": {"decision": "Send"}}
                sent = server.call(
                    "mail_send_confirmed",
                    confirm,
                    requestState=sent["requestState"],
                    inputResponses={"confirm": accept},
                )
            ended = time.perf_counter()
            prepares.append(middle - began)
            confirms.append(ended - middle)
            wholes.append(ended - began)
            outcomes.append(sent["status"])
        sent_items = server.call("mail_search", {"query": "subject:bench", "folder": "sentitems"})
    finally:
        server.close()
    asked = " (the person asked: input_required, then the accept)" if options.person else ""
    print(f"{rounds} rounds on the demo emulator (python -m mfconnector --demo --enable-send)")
    print(f"  confirmed by {'the person' if options.person else 'the assistant'}{asked}")
    for label, values in (("prepare", prepares), ("confirm", confirms), ("round", wholes)):
        print(
            f"  {label:8} median {statistics.median(values) * 1000:6.1f} ms   "
            f"p90 {percentile(values, 0.9) * 1000:6.1f} ms"
        )
    print(f"  outcomes: {', '.join(f'{o} x{outcomes.count(o)}' for o in sorted(set(outcomes)))}")
    print(f"  in Sent Items (search, first page): {len(sent_items.get('messages', []))}")


if __name__ == "__main__":
    main()
