"""Three real stdio server processes sharing one Redis (the ``StateStore`` seam of
``tests/support/write_server.py``) race to confirm the same preparation against a loopback
Graph: exactly one send request reaches it, and the others report that send."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from tests.process.test_send_processes import SERVER, Process
from tests.support.acting_harness import Draft, ScriptedMailbox, outlook_id, ref
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.redis_server import RedisServer, redis_server

PROCESSES = 3


async def start(graph: LoopbackServer, state_url: str) -> Process:
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), f"{graph.url}/v1.0", state_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    return Process(process)


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
async def test_three_processes_on_one_redis_send_exactly_once(
    graph: LoopbackServer, redis: RedisServer, round_: int
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id(f"redisrace{round_}")))
    results: list[dict[str, Any]] = []
    with trio.fail_after(90):
        processes = [await start(graph, redis.url) for _ in range(PROCESSES)]
        try:
            first = processes[0]
            read = await first.call("mail_review", {"action": "draft", "message_id": ref(draft.id)})
            prepared = (
                await first.call(
                    "mail_prepare",
                    {
                        "action": "draft",
                        "message_id": ref(draft.id),
                        "source_digest": read["structuredContent"]["source_digest"],
                    },
                )
            )["structuredContent"]
            confirm = {
                "prepared_id": prepared["prepared_id"],
                "confirmed_digest": prepared["digest"],
            }
            all_reading = threading.Barrier(PROCESSES, timeout=30)

            def held_read(recorded: RecordedRequest) -> Reply:
                all_reading.wait()  # every confirmation is inside its re-read at once
                return Reply.json(draft.json())

            graph.route("GET", f"/v1.0/me/messages/{draft.id}", held_read)

            async def send(process: Process) -> None:
                results.append(await process.call("mail_send_confirmed", confirm))

            async with trio.open_nursery() as nursery:
                for process in processes:
                    nursery.start_soon(send, process)
        finally:
            for process in processes:
                assert process.process.stdin is not None
                await process.process.stdin.aclose()
                await process.process.wait()
    assert len(mailbox.sends()) == 1
    winners = [r for r in results if not r["isError"] and "resent" not in r["structuredContent"]]
    assert len(winners) == 1, results
    for other in results:
        if other is winners[0]:
            continue
        said = json.loads(other["content"][0]["text"])
        recorded = said.get("error", {}).get("outcome", said)
        assert recorded["resent"] is False, said
        assert recorded["status"] in ("sending", "sent", "verified"), said
