"""Replicas of ``serve-http --demo`` on one Redis (``--state-url``): one truth for all.

Two or three real server processes, a real ``redis-server``, real HTTP. What one replica
issued (a cursor, a preparation) another continues; 100 confirmations racing across three
replicas send once; a replica killed between its send and its outcome leaves ``unknown``,
never a second send; one user's ``prepared_id`` or cursor is nobody else's.

Hosted mode serves ``--demo`` only in this version, so there is no loopback Graph behind
it: each replica sends into its own in-memory demo mailbox (built the same on every
replica, the seeded drafts included). "Exactly one send" is therefore counted where a user
would look: the message in Sent Items, summed over every replica's mailbox of that user.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mfconnector.writes.redis_store import CLAIM_SCRIPT, FINISH_SCRIPT
from tests.support.hosted_process import HostedServer, hosted_replicas, started
from tests.support.redis_proxy import redis_proxy
from tests.support.redis_server import RedisServer, redis_server
from tests.support.send_race import one_winner

pytestmark = pytest.mark.slow

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SWITCHES = ("--enable-writes", "--enable-send")


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as server:
        yield server


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=60, trust_env=False) as http:
        yield http


def call(
    client: httpx.Client,
    server: HostedServer,
    name: str,
    arguments: dict[str, Any],
    user: str = "a1",
) -> dict[str, Any]:
    """One tools/call; a 429 (the user's concurrent-request cap) is retried as a client would."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": META},
    }
    headers = {
        **server.auth(user),
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    for _ in range(600):
        response = client.post(server.url, json=body, headers=headers)
        if response.status_code != 429:
            break
        time.sleep(0.05)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def data(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, result
    content: dict[str, Any] = result["structuredContent"]
    return content


def page(result: dict[str, Any]) -> dict[str, Any]:
    """A listing cut to its limit is incomplete (isError, unless --allow-partial)."""
    content: dict[str, Any] = result["structuredContent"]
    assert content["messages"], result
    return content


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True, result
    said: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return said


def prepare_seeded_draft(
    client: httpx.Client, server: HostedServer, user: str = "a1"
) -> dict[str, Any]:
    """Prepare the demo's first draft (every replica's mailbox has it, the same)."""
    drafts = page(call(client, server, "mail_list", {"folder": "drafts", "limit": 1}, user))
    columns = drafts["columns"]
    row = drafts["messages"][0]
    draft_id, subject = row[columns.index("id")], row[columns.index("subject")]
    review = data(
        call(client, server, "mail_review", {"action": "draft", "message_id": draft_id}, user)
    )
    prepared = data(
        call(
            client,
            server,
            "mail_prepare",
            {"action": "draft", "message_id": draft_id, "source_digest": review["source_digest"]},
            user,
        )
    )
    return {**prepared, "subject": subject}


def confirm_args(prepared: dict[str, Any]) -> dict[str, Any]:
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


def sent_count(client: httpx.Client, server: HostedServer, subject: str, user: str = "a1") -> int:
    listed = call(client, server, "mail_list", {"folder": "sentitems", "limit": 50}, user)[
        "structuredContent"
    ]
    columns = listed["columns"]
    return [row[columns.index("subject")] for row in listed["messages"]].count(subject)


def test_a_cursor_issued_by_one_replica_continues_on_another(
    tmp_path: Path, redis: RedisServer, client: httpx.Client
) -> None:
    with hosted_replicas(tmp_path, 2, *SWITCHES, "--state-url", redis.url) as (one, two):
        first = page(call(client, one, "mail_list", {"limit": 2}))
        cursor = first["skipped"]["items"]["cursor"]
        on_two = page(call(client, two, "mail_list", {"cursor": cursor, "limit": 2}))
        on_one = page(call(client, one, "mail_list", {"cursor": cursor, "limit": 2}))
        assert on_two["messages"] == on_one["messages"], "both continue the same listing"
        assert not set(map(str, on_two["messages"])) & set(map(str, first["messages"]))
        refused = error_of(call(client, two, "mail_list", {"cursor": cursor, "limit": 2}, "b2"))
        assert "issued to another user of this server" in refused["message"], refused


def test_without_a_state_store_another_users_cursor_is_said_to_be_another_users(
    tmp_path: Path, client: httpx.Client
) -> None:
    """No --state-url: each user's tenant signs in memory; b2 is told the cursor is another
    user's, not one of an earlier run, and a1 still continues it."""
    with hosted_replicas(tmp_path, 1, *SWITCHES) as (server,):
        first = page(call(client, server, "mail_list", {"limit": 2}))
        cursor = first["skipped"]["items"]["cursor"]
        refused = error_of(call(client, server, "mail_list", {"cursor": cursor, "limit": 2}, "b2"))
        assert "issued to another user of this server" in refused["message"], refused
        assert "earlier run" not in refused["message"], refused
        mine = page(call(client, server, "mail_list", {"cursor": cursor, "limit": 2}))
        assert not set(map(str, mine["messages"])) & set(map(str, first["messages"]))


def test_a_preparation_made_on_one_replica_is_confirmed_on_another(
    tmp_path: Path, redis: RedisServer, client: httpx.Client
) -> None:
    with hosted_replicas(tmp_path, 2, *SWITCHES, "--state-url", redis.url) as (one, two):
        prepared = prepare_seeded_draft(client, one)
        stolen = error_of(call(client, two, "mail_send_confirmed", confirm_args(prepared), "b2"))
        assert stolen["error_code"] == "not_found", stolen
        status = error_of(
            call(
                client,
                one,
                "mail_review",
                {"action": "send_status", "prepared_id": prepared["prepared_id"]},
                "b2",
            )
        )
        assert status["error_code"] == "not_found", status
        sent = data(call(client, two, "mail_send_confirmed", confirm_args(prepared)))
        assert sent["status"] == "verified", sent
        again = data(call(client, one, "mail_send_confirmed", confirm_args(prepared)))
        assert again["resent"] is False and again["status"] == "verified"
        assert sent_count(client, two, prepared["subject"]) == 1
        assert sent_count(client, one, prepared["subject"]) == 0, "replica one never sent it"
        assert sent_count(client, two, prepared["subject"], user="b2") == 0
        trail = data(call(client, one, "mail_review", {"action": "recent"}))
        tools = [entry["tool"] for entry in trail["recent"]]
        assert tools == ["mail_send_confirmed", "mail_send_confirmed", "mail_prepare"], trail
        theirs = data(call(client, two, "mail_review", {"action": "recent"}, "b2"))["recent"]
        assert [(e["tool"], e["outcome"]) for e in theirs] == [("mail_send_confirmed", "not_found")]


def test_a_hundred_racing_confirmations_across_three_replicas_send_once(
    tmp_path: Path, redis: RedisServer
) -> None:
    with hosted_replicas(tmp_path, 3, *SWITCHES, "--state-url", redis.url) as replicas:
        with httpx.Client(timeout=60, trust_env=False) as setup_client:
            prepared = prepare_seeded_draft(setup_client, replicas[0])
        start = threading.Barrier(100, timeout=60)
        results: list[dict[str, Any]] = []

        def confirm(n: int) -> None:
            with httpx.Client(timeout=120, trust_env=False) as own:
                start.wait()
                results.append(
                    call(own, replicas[n % 3], "mail_send_confirmed", confirm_args(prepared))
                )

        threads = [threading.Thread(target=confirm, args=(n,)) for n in range(100)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert len(results) == 100
        with httpx.Client(timeout=60, trust_env=False) as check:
            counts = [sent_count(check, replica, prepared["subject"]) for replica in replicas]
    one_winner(results)
    assert sum(counts) == 1, counts


def test_a_replica_killed_between_send_and_outcome_leaves_unknown_never_a_resend(
    tmp_path: Path, redis: RedisServer, client: httpx.Client
) -> None:
    """The victim reaches Redis through a relay that lets its claim through, then holds
    everything after it: its send happens, its outcome never arrives, and it is killed."""
    for script in (CLAIM_SCRIPT, FINISH_SCRIPT):  # loaded now: no NOSCRIPT round trip later
        redis.command("SCRIPT", "LOAD", script)
    claim_sha = hashlib.sha1(CLAIM_SCRIPT.encode()).hexdigest().encode()
    with (
        redis_proxy(redis.port, freeze_after=claim_sha) as proxy,
        hosted_replicas(tmp_path, 1, *SWITCHES, "--state-url", redis.url) as (survivor,),
        started(
            survivor.issuer, tmp_path / "victim", *SWITCHES, "--state-url", proxy.url
        ) as victim,
    ):
        prepared = prepare_seeded_draft(client, survivor)
        outcome: list[BaseException | dict[str, Any]] = []

        def confirm_on_victim() -> None:
            try:
                outcome.append(call(client, victim, "mail_send_confirmed", confirm_args(prepared)))
            except (httpx.HTTPError, AssertionError) as error:
                outcome.append(error)

        caller = threading.Thread(target=confirm_on_victim)
        caller.start()
        assert proxy.held.wait(60), "the victim never tried to record its outcome"
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.wait(30)
        caller.join(60)
        assert outcome and not isinstance(outcome[0], dict), "the killed replica answered"
        status = data(
            call(
                client,
                survivor,
                "mail_review",
                {"action": "send_status", "prepared_id": prepared["prepared_id"]},
            )
        )
        assert status["status"] == "unknown", status
        again = call(client, survivor, "mail_send_confirmed", confirm_args(prepared))
        said = json.loads(again["content"][0]["text"])
        recorded = said.get("error", {}).get("outcome", said)
        assert recorded["status"] == "unknown" and recorded["resent"] is False, said
        assert sent_count(client, survivor, prepared["subject"]) == 0, "never sent again"
