"""Two real server processes (a desktop client and an editor) share one state file and
race to confirm the same preparation: exactly one send request reaches Graph."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.support.acting_harness import Draft, ScriptedMailbox, outlook_id, ref
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.send_race import Process, one_winner, prepared_confirmation, racing_servers


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
async def test_two_processes_racing_send_exactly_once(
    graph: LoopbackServer, tmp_path: Path, round_: int
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id(f"race{round_}")))
    results: list[dict[str, Any]] = []
    with trio.fail_after(60):
        async with racing_servers(graph, tmp_path, 2) as (desktop, editor):
            confirm = await prepared_confirmation(desktop, draft.id)
            both_reading = threading.Barrier(2, timeout=20)

            def slow_read(recorded: RecordedRequest) -> Reply:
                both_reading.wait()  # both confirmations are inside their re-read at once
                return Reply.json(draft.json())

            graph.route("GET", f"/v1.0/me/messages/{draft.id}", slow_read)

            async def send(process: Process) -> None:
                results.append(await process.call("mail_send_confirmed", confirm))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(send, desktop)
                nursery.start_soon(send, editor)
    assert len(mailbox.sends()) == 1
    draft_path = f"/v1.0/me/messages/{draft.id}"
    reads = [r for r in graph.requests if r.method == "GET" and r.path == draft_path]
    assert len(reads) == 4, "both confirmations re-read the draft: they raced to the claim"
    assert len(one_winner(results)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
async def test_two_processes_each_preparing_the_same_draft_send_it_once(
    graph: LoopbackServer, tmp_path: Path, round_: int
) -> None:
    """0.2 gave each process its own prepared_id, and both were sent (issue 17)."""
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id(f"perdraft{round_}")))
    results: list[dict[str, Any]] = []
    prepared: list[dict[str, Any]] = []
    with trio.fail_after(60):
        async with racing_servers(graph, tmp_path, 2) as (desktop, editor):

            async def prepare_and_confirm(process: Process) -> None:
                read = await process.call(
                    "mail_review", {"action": "draft", "message_id": ref(draft.id)}
                )
                digest = read["structuredContent"]["source_digest"]
                answer = await process.call(
                    "mail_prepare",
                    {"action": "draft", "message_id": ref(draft.id), "source_digest": digest},
                )
                if answer["isError"]:  # the other one already claimed it: its outcome
                    refused = json.loads(answer["content"][0]["text"])["error"]
                    assert refused["outcome"]["resent"] is False, refused
                    prepared.append(refused["outcome"])
                    return
                mine = answer["structuredContent"]
                prepared.append(mine)
                results.append(
                    await process.call(
                        "mail_send_confirmed",
                        {"prepared_id": mine["prepared_id"], "confirmed_digest": mine["digest"]},
                    )
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(prepare_and_confirm, desktop)
                nursery.start_soon(prepare_and_confirm, editor)
    assert len(mailbox.sends()) == 1, "one draft, one send request"
    assert prepared[0]["prepared_id"] == prepared[1]["prepared_id"], "one live claim per draft"
    one_winner(results)


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
async def test_the_loser_of_a_race_gets_the_winners_outcome_not_a_draft_error(
    graph: LoopbackServer, tmp_path: Path, round_: int
) -> None:
    """The loser re-reads the draft after the winner sent it: Graph no longer has a draft
    there. 0.2 answered that with invalid_arguments ("that message is not a draft")."""
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id(f"loser{round_}")))
    second_reading, sent = threading.Event(), threading.Event()
    reads: list[int] = []

    def held_read(recorded: RecordedRequest) -> Reply:
        reads.append(1)
        if len(reads) == 1:
            second_reading.wait(20)  # both confirmations passed the store's check
        else:
            second_reading.set()
            sent.wait(20)  # this one reads after the winner's send
        return Reply.json(draft.json())

    def accepted(recorded: RecordedRequest) -> Reply:
        draft.is_draft = False  # Graph moves a sent draft to Sent Items
        mailbox.in_sent_items.add(draft.id)
        sent.set()
        return Reply(202)

    results: list[dict[str, Any]] = []
    with trio.fail_after(60):
        async with racing_servers(graph, tmp_path, 2) as (desktop, editor):
            confirm = await prepared_confirmation(desktop, draft.id)
            graph.route("GET", f"/v1.0/me/messages/{draft.id}", held_read)
            mailbox.send_reply = accepted

            async def send(process: Process) -> None:
                results.append(await process.call("mail_send_confirmed", confirm))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(send, desktop)
                nursery.start_soon(send, editor)
    assert len(mailbox.sends()) == 1
    (said,) = one_winner(results)
    assert said.get("error", {}).get("error_code") != "invalid_arguments", said
