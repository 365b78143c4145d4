"""Three real stdio server processes sharing one Redis (the ``StateStore`` seam of
``tests/support/write_server.py``) race to confirm the same preparation against a loopback
Graph: exactly one send request reaches it, and the others report that send."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from tests.support.acting_harness import Draft, ScriptedMailbox, outlook_id
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.redis_server import RedisServer, redis_server
from tests.support.send_race import Process, one_winner, prepared_confirmation, racing_servers

PROCESSES = 3


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
        async with racing_servers(graph, redis.url, PROCESSES) as processes:
            confirm = await prepared_confirmation(processes[0], draft.id)
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
    assert len(mailbox.sends()) == 1
    assert len(one_winner(results)) == PROCESSES - 1
