"""Live replicas of ``serve-http`` (no ``--demo``) on one Redis, sending through Graph.

Each user's JWT is exchanged on behalf of them; Entra and Graph are one loopback TLS
server behind a CONNECT proxy (``tests.support.hosted_live``), its drafts and sends those
of ``ScriptedMailbox`` (a sent draft is filed in Sent Items, as Graph files it). So "sent
once" is counted where it happens: the ``POST /messages/{id}/send`` requests that reached
Graph. ``test_replicas`` proves the same in demo mode, where there is no Graph to count.
Nothing waits on the clock: Graph holds a send, and a relay in front of Redis holds
claims, each until the event the test names has happened.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.writes.redis_store import CLAIM_SCRIPT
from tests.support.acting_harness import Draft, ScriptedMailbox, outlook_id, ref
from tests.support.hosted_live import Live, call_tool, claims_of, live_servers
from tests.support.loopback import RecordedRequest, Reply
from tests.support.redis_proxy import RedisProxy, redis_proxy
from tests.support.redis_server import RedisServer, redis_server
from tests.support.send_race import one_winner

pytestmark = pytest.mark.slow

SWITCHES = ("--enable-writes", "--enable-send")
RACERS = 100
REPLICAS = 3
WAIT_SECONDS = 120.0
"""Generous: a hundred TLS clients and three servers share two loaded cores."""
CLAIMS_AT_ONCE = REPLICAS * DEFAULT_LIMITS.http_requests_per_subject
"""Every confirmation the replicas serve this user at once: each one's claim is held at
the relay until all of them have come (none can be decided before)."""


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as server:
        yield server


@dataclass
class Racing:
    live: Live
    relay: RedisProxy


@pytest.fixture
def racing(tmp_path: Path, redis: RedisServer) -> Iterator[Racing]:
    """Three live replicas that reach Redis through a relay gathering their claims."""
    redis.command("SCRIPT", "LOAD", CLAIM_SCRIPT)  # loaded now: the claim is one EVALSHA
    claim_sha = hashlib.sha1(CLAIM_SCRIPT.encode()).hexdigest().encode()
    with (
        redis_proxy(redis.port, gather_on=claim_sha, gather=CLAIMS_AT_ONCE) as relay,
        live_servers(tmp_path, *SWITCHES, "--state-url", relay.url, replicas=REPLICAS) as live,
    ):
        yield Racing(live, relay)


def mailbox_of(live: Live) -> tuple[ScriptedMailbox, Draft]:
    mailbox = ScriptedMailbox(live.graph)
    mailbox.files_sent = True
    return mailbox, mailbox.add(Draft(outlook_id("race")))


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = reply["result"]
    return result


def data(reply: dict[str, Any]) -> dict[str, Any]:
    result = result_of(reply)
    assert result["isError"] is False, result
    content: dict[str, Any] = result["structuredContent"]
    return content


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    result = result_of(reply)
    assert result["isError"] is True, result
    said: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return said


def prepare(live: Live, token: str, draft: Draft, replica: int = 0) -> dict[str, Any]:
    reading = {"action": "draft", "message_id": ref(draft.id)}
    review = data(call_tool(live, token, "mail_review", reading, replica))
    arguments = {
        "action": "draft",
        "message_id": ref(draft.id),
        "source_digest": review["source_digest"],
    }
    return data(call_tool(live, token, "mail_prepare", arguments, replica))


def confirm_args(prepared: dict[str, Any]) -> dict[str, Any]:
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


def status_of(live: Live, token: str, prepared: dict[str, Any], replica: int) -> dict[str, Any]:
    arguments = {"action": "send_status", "prepared_id": prepared["prepared_id"]}
    return call_tool(live, token, "mail_review", arguments, replica)


def user_of(request: RecordedRequest) -> tuple[str, str]:
    """(oid, tid) of the Graph token a request carried."""
    claims = claims_of(request.header("authorization") or "")
    return claims["oid"], claims["tid"]


def writes(live: Live) -> list[RecordedRequest]:
    """Every request that reached Graph and could change a mailbox."""
    return [r for r in live.graph_requests() if r.method != "GET"]


def test_a_hundred_racing_confirmations_across_three_live_replicas_send_once(
    racing: Racing,
) -> None:
    """The relay holds every claim until as many as can be in flight have come, so Redis
    decides between claims made at once on three replicas; Graph then holds the one send
    unanswered until half the confirmations have been answered, so those race a claim that
    is ``sending``; the rest race the recorded outcome."""
    live = racing.live
    mailbox, draft = mailbox_of(live)
    token = live.server.token("a1")
    prepared = prepare(live, token, draft)
    for replica in range(1, REPLICAS):  # one draft, one preparation, on every replica
        assert prepare(live, token, draft, replica)["prepared_id"] == prepared["prepared_id"]
    assert writes(live) == [], "preparing a draft writes nothing"
    assert racing.relay.arrived == 0, "no claim before the race"
    start = threading.Barrier(RACERS, timeout=WAIT_SECONDS)
    replies: list[dict[str, Any] | BaseException | None] = [None] * RACERS
    lock, half_answered = threading.Lock(), threading.Event()
    answered: list[int] = []

    def slow_first_send(recorded: RecordedRequest) -> Reply:
        if len(mailbox.sends()) == 1:
            half_answered.wait(WAIT_SECONDS)
        mailbox.file_in_sent_items(draft.id)
        return Reply(202, (), b"")

    mailbox.send_reply = slow_first_send

    def confirm(n: int) -> None:
        try:
            with httpx.Client(timeout=WAIT_SECONDS, trust_env=False) as own:
                start.wait()
                replies[n] = call_tool(
                    live, token, "mail_send_confirmed", confirm_args(prepared), n % REPLICAS, own
                )
        except BaseException as error:  # reported below, with the others' answers
            replies[n] = error
        with lock:
            answered.append(n)
            if len(answered) >= RACERS // 2:
                half_answered.set()

    threads = [threading.Thread(target=confirm, args=(n,)) for n in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS * 2)
    assert racing.relay.gathered.is_set(), f"only {racing.relay.arrived} claims came at once"
    failed = [r for r in replies if not isinstance(r, dict)]
    assert failed == [], failed[:3]
    results = [result_of(r) for r in replies if isinstance(r, dict)]

    sends = mailbox.sends()
    assert len(sends) == 1, f"{len(sends)} send requests reached Graph"
    send = sends[0]
    assert writes(live) == [send], "one request changed the mailbox: the send"
    assert send.path == f"/v1.0/me/messages/{draft.id}/send"
    assert user_of(send) == (claims_of(token)["oid"], claims_of(token)["tid"])
    said_by_others = one_winner(results)  # one sent; every other one reports that send
    (winner,) = [r for r in results if not r["isError"] and "resent" not in r["structuredContent"]]
    assert winner["structuredContent"]["status"] == "verified", winner
    answers = []
    for said in said_by_others:
        if "error" in said:
            # being sent right now by another confirmation: never sent by this one
            assert said["error"]["error_code"] == "outcome_unknown", said
            recorded = said["error"]["outcome"]
            assert recorded["status"] == "sending", said
        else:
            recorded = said
            assert "nothing was sent now" in recorded["note"], said
        assert recorded["prepared_id"] == prepared["prepared_id"], said
        answers.append(recorded["status"])
    assert len(answers) == RACERS - 1
    assert answers.count("sending") >= RACERS // 2, "half raced a claim being sent"

    for replica in range(REPLICAS):  # every replica serves on, and tells the one outcome
        status = data(status_of(live, token, prepared, replica))
        assert status["status"] == "verified" and status["in_sent_items"] is True, status
        listed = result_of(call_tool(live, token, "mail_list", {"limit": 1}, replica))
        assert listed.get("isError") is not True, listed
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize(
    "other",
    [{"user": "b2"}, {"user": "a1", "tid": "9b9b9b9b-0000-4000-8000-0000000000bb"}],
    ids=["another-user", "same-oid-another-tenant"],
)
def test_one_users_prepared_id_is_not_found_for_another_on_every_replica(
    tmp_path: Path, redis: RedisServer, other: dict[str, str]
) -> None:
    with live_servers(tmp_path, *SWITCHES, "--state-url", redis.url, replicas=2) as live:
        mailbox, draft = mailbox_of(live)
        owner = live.server.token("a1")
        intruder = live.server.token(**other)
        prepared = prepare(live, owner, draft)
        listed = result_of(call_tool(live, intruder, "mail_list", {"limit": 1}, 1))
        assert listed.get("isError") is not True, listed  # the intruder's own token works
        owner_claims = claims_of(owner)
        owner_id = (owner_claims["oid"], owner_claims["tid"])
        attempts = [
            ("mail_send_confirmed", confirm_args(prepared)),
            ("mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}),
            ("mail_prepare", {"action": "cancel", "prepared_id": prepared["prepared_id"]}),
        ]
        for replica in range(len(live.servers)):
            for name, arguments in attempts:
                refused = error_of(call_tool(live, intruder, name, arguments, replica))
                assert refused["error_code"] == "not_found", (name, refused)
                assert draft.subject not in json.dumps(refused)
        assert mailbox.sends() == [] and writes(live) == []
        theirs = [r for r in live.graph_requests() if user_of(r) != owner_id]
        assert theirs, "the intruder's requests reached Graph with their own token"
        assert not [r for r in theirs if draft.id in r.path], "none touched the owner's draft"

        sent = data(call_tool(live, owner, "mail_send_confirmed", confirm_args(prepared), 1))
        assert sent["status"] == "verified", "the intruder neither used nor cancelled it"
        (send,) = mailbox.sends()
        assert user_of(send) == owner_id


def test_a_live_replica_killed_mid_send_leaves_unknown_never_a_resend(
    tmp_path: Path, redis: RedisServer
) -> None:
    """Graph holds the victim's send request unanswered; the victim is killed; the send
    then completes at Graph. The survivor reports ``unknown`` and never sends again."""
    with live_servers(tmp_path, *SWITCHES, "--state-url", redis.url, replicas=2) as live:
        survivor, victim = 0, 1
        mailbox, draft = mailbox_of(live)
        token = live.server.token("a1")
        prepared = prepare(live, token, draft, survivor)
        arrived, answer, filed = threading.Event(), threading.Event(), threading.Event()

        def held(recorded: RecordedRequest) -> Reply:
            arrived.set()
            answer.wait(WAIT_SECONDS)
            mailbox.file_in_sent_items(draft.id)  # Graph went on with the send
            filed.set()
            return Reply(202, (), b"")

        mailbox.send_reply = held
        outcome: list[dict[str, Any] | BaseException] = []

        def confirm_on_victim() -> None:
            try:
                outcome.append(
                    call_tool(live, token, "mail_send_confirmed", confirm_args(prepared), victim)
                )
            except (httpx.HTTPError, AssertionError) as error:
                outcome.append(error)

        caller = threading.Thread(target=confirm_on_victim)
        caller.start()
        try:
            assert arrived.wait(WAIT_SECONDS), "the victim's send never reached Graph"
            killed = live.servers[victim].process
            os.kill(killed.pid, signal.SIGKILL)
            killed.wait(30)
        finally:
            answer.set()
        assert filed.wait(WAIT_SECONDS)
        caller.join(WAIT_SECONDS)
        assert outcome and not isinstance(outcome[0], dict), "the killed replica answered"

        status = data(status_of(live, token, prepared, survivor))
        assert status["status"] == "unknown", status
        assert status["in_sent_items"] is True, "the status shows where to look: it went"
        again = result_of(
            call_tool(live, token, "mail_send_confirmed", confirm_args(prepared), survivor)
        )
        said = json.loads(again["content"][0]["text"])
        assert again["isError"] is True and said["error"]["error_code"] == "outcome_unknown", said
        recorded = said["error"]["outcome"]
        assert recorded["status"] == "unknown" and recorded["resent"] is False, said
        assert len(mailbox.sends()) == 1, "never sent again"
        assert writes(live) == mailbox.sends()
        listed = result_of(call_tool(live, token, "mail_list", {"limit": 1}, survivor))
        assert listed.get("isError") is not True, listed
