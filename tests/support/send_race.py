"""Real server processes racing to confirm one send (tests/process/test_send_processes*.py):
each is ``tests/support/write_server.py`` over real pipes, sharing a state file or a Redis.

``Process`` speaks JSON lines; ``racing_servers`` starts them and closes their input (and
waits for them) however the test ends; ``prepared_confirmation`` prepares a draft's send
through one of them; ``one_winner`` checks the outcome every race must have: one process
sent, every other reports that send and never sends again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from tests.support.acting_harness import ref
from tests.support.harness import request
from tests.support.loopback import LoopbackServer

__all__ = ["Process", "one_winner", "prepared_confirmation", "racing_servers"]

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "support" / "write_server.py"


class Process:
    """One server process over real pipes: JSON lines in, JSON lines out."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._buffer = b""
        self._ids = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        message = request(self._ids, "tools/call", {"name": name, "arguments": arguments})
        assert self.process.stdin is not None and self.process.stdout is not None
        await self.process.stdin.send_all(json.dumps(message).encode() + b"\n")
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive_some(65_536)
            assert chunk, "the server closed its output"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        assert reply["id"] == self._ids
        result: dict[str, Any] = reply["result"]
        return result


async def _start(graph: LoopbackServer, state: str) -> Process:
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), f"{graph.url}/v1.0", state],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return Process(process)


@asynccontextmanager
async def racing_servers(
    graph: LoopbackServer, state: str | Path, count: int
) -> AsyncIterator[list[Process]]:
    """``count`` servers reading Graph at ``graph`` and sharing ``state`` (a state
    directory or a ``redis://`` URL); each one's input is closed and its exit awaited."""
    processes: list[Process] = []
    try:
        for _ in range(count):
            processes.append(await _start(graph, str(state)))
        yield processes
    finally:
        for process in processes:
            assert process.process.stdin is not None
            await process.process.stdin.aclose()
            await process.process.wait()


async def prepared_confirmation(process: Process, draft_id: str) -> dict[str, Any]:
    """Review and prepare sending the draft; the ``mail_send_confirmed`` arguments."""
    read = await process.call("mail_review", {"action": "draft", "message_id": ref(draft_id)})
    prepared = (
        await process.call(
            "mail_prepare",
            {
                "action": "draft",
                "message_id": ref(draft_id),
                "source_digest": read["structuredContent"]["source_digest"],
            },
        )
    )["structuredContent"]
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


def one_winner(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exactly one result sent; each other one reports that send (``resent`` false, a
    sending/sent/verified status). The others' answers as they said them."""
    winners = [r for r in results if not r["isError"] and "resent" not in r["structuredContent"]]
    assert len(winners) == 1, results
    said_by_others = []
    for other in results:
        if other is winners[0]:
            continue
        said = json.loads(other["content"][0]["text"])
        recorded = said.get("error", {}).get("outcome", said)
        assert recorded["resent"] is False, said
        assert recorded["status"] in ("sending", "sent", "verified"), said
        said_by_others.append(said)
    return said_by_others
