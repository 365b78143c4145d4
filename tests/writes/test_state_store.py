"""One conformance suite for every state store: the SQLite file and a real Redis.

Each test runs against both backends (``store_kind``): what a preparation, a claim, an
outcome, the audit trail, the cursor key and the token cache promise is the same
wherever the state lives. "Two processes" are two store objects over the same file or
the same Redis database, each with its own instance name.
"""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mfconnector.writes.state import StateStore
from mfconnector.writes.store import Preparation, SendStore
from tests.support.acting_harness import ACCOUNT, FAST
from tests.support.redis_server import RedisServer, redis_server

DIGEST = "a" * 64
Opener = Callable[..., StateStore]


class Clock:
    def __init__(self, now: float = 1_000_000.25) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(params=["sqlite", "redis"])
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def open_store(
    store_kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock
) -> Iterator[Opener]:
    """``open_store(namespace="")``: a new store object ("another process") each call."""
    opened: list[Callable[[], None]] = []
    if store_kind == "redis":
        from mfconnector.writes.redis_store import RedisState

        server: RedisServer = request.getfixturevalue("redis")
        server.command("FLUSHALL")

        def open_redis(namespace: str = "", limits: object = FAST) -> StateStore:
            state = RedisState(server.url, limits=limits)  # type: ignore[arg-type]
            opened.append(state.close)
            return state.store(namespace, clock=clock)

        yield open_redis
    else:
        path = tmp_path / "state" / "state.sqlite3"

        def open_sqlite(namespace: str = "", limits: object = FAST) -> StateStore:
            store = SendStore(path, limits=limits, clock=clock, namespace=namespace)  # type: ignore[arg-type]
            opened.append(store.close)
            return store

        yield open_sqlite
    for close in opened:
        close()


def preparation(
    prepared_id: str, created: float, draft: str | None = None, **changes: object
) -> Preparation:
    record = Preparation(
        prepared_id=prepared_id,
        account=ACCOUNT,
        mailbox="/me",
        draft_id=draft or f"draft-{prepared_id}",
        digest=DIGEST,
        summary={"to": ["megan@contoso.com"], "subject": "Größe – ☃"},
        created_at=created,
        expires_at=created + FAST.preparation_seconds,
    )
    return dataclasses.replace(record, **changes)  # type: ignore[arg-type]


def test_a_preparation_reads_back_exactly(open_store: Opener, clock: Clock) -> None:
    store = open_store()
    saved = preparation("p1", clock.now)
    assert store.save(saved) == saved
    assert open_store().get("p1", ACCOUNT, "/me") == saved
    assert store.count() == 1


def test_one_claim_wins_across_processes(open_store: Opener, clock: Clock) -> None:
    first, second = open_store(), open_store()
    first.save(preparation("p1", clock.now))
    assert first.claim("p1", ACCOUNT, "/me", "b" * 64).status == "mismatch"
    assert second.claim("p1", "other@contoso.com", "/me", DIGEST).status == "missing"
    assert second.claim("p1", ACCOUNT, "/users/other", DIGEST).status == "missing"
    assert second.claim("nope", ACCOUNT, "/me", DIGEST).status == "missing"
    won = second.claim("p1", ACCOUNT, "/me", DIGEST)
    assert won.status == "claimed" and won.record is not None
    assert won.record.claimed_by == second.instance
    again = first.claim("p1", ACCOUNT, "/me", DIGEST)
    assert again.status == "done" and again.record is not None
    assert again.record.state == "sending"
    first.finish("p1", "sent", {"graph_status": 999})  # not its claim: nothing changes
    assert (first.get("p1", ACCOUNT, "/me") or preparation("x", 0)).state == "sending"
    second.finish("p1", "sent", {"graph_status": 202})
    record = first.get("p1", ACCOUNT, "/me")
    assert record is not None and record.state == "sent"
    assert record.outcome == {"graph_status": 202}
    assert first.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"


def test_sixteen_racing_claims_give_exactly_one(open_store: Opener, clock: Clock) -> None:
    stores = [open_store() for _ in range(4)]
    stores[0].save(preparation("race", clock.now))
    start = threading.Barrier(16, timeout=30)
    statuses: list[str] = []

    def claim(store: StateStore) -> None:
        start.wait()
        statuses.append(store.claim("race", ACCOUNT, "/me", DIGEST).status)

    threads = [threading.Thread(target=claim, args=(stores[i % 4],)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(statuses) == ["claimed"] + ["done"] * 15


def test_one_live_preparation_per_draft(open_store: Opener, clock: Clock) -> None:
    store, other = open_store(), open_store()
    first = preparation("p1", clock.now, draft="d")
    assert store.save(first) == first
    assert other.save(preparation("p2", clock.now, draft="d")).prepared_id == "p1", "same content"
    changed = preparation("p3", clock.now, draft="d", digest="c" * 64)
    assert other.save(changed) == changed
    replaced = store.get("p1", ACCOUNT, "/me")
    assert replaced is not None and replaced.state == "replaced"
    assert replaced.outcome == {"replaced_by": "p3"}
    assert store.claim("p3", ACCOUNT, "/me", "c" * 64).status == "claimed"
    live = other.save(preparation("p4", clock.now, draft="d", digest="e" * 64))
    assert live.prepared_id == "p3" and live.state == "sending", "never beside a claim"
    assert store.get("p4", ACCOUNT, "/me") is None


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_an_expired_preparation_cannot_be_claimed(
    open_store: Opener, clock: Clock, delta: int
) -> None:
    store = open_store()
    store.save(preparation("p1", clock.now))
    clock.now += FAST.preparation_seconds + delta
    expected = "claimed" if delta < 0 else "expired"
    assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == expected


def test_an_expired_preparation_no_longer_holds_its_draft(open_store: Opener, clock: Clock) -> None:
    store = open_store()
    store.save(preparation("p1", clock.now, draft="d"))
    clock.now += FAST.preparation_seconds + 1
    fresh = preparation("p2", clock.now, draft="d")
    assert store.save(fresh) == fresh


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_outcomes_are_kept_for_the_retention_period(
    open_store: Opener, clock: Clock, delta: int
) -> None:
    store = open_store()
    store.save(preparation("p1", clock.now))
    assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    store.finish("p1", "verified", {"in_sent_items": True})
    clock.now += FAST.outcome_retention_seconds + delta
    store.save(preparation("p2", clock.now))  # the SQLite store purges as it saves
    assert (store.get("p1", ACCOUNT, "/me") is not None) is (delta <= 0)


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_claim_with_no_outcome_becomes_unknown_after_the_orphan_limit(
    open_store: Opener, clock: Clock, delta: int
) -> None:
    claimer = open_store()  # alive, but never finishes
    claimer.save(preparation("p1", clock.now))
    assert claimer.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    clock.now += FAST.claim_orphan_seconds + delta
    record = open_store().get("p1", ACCOUNT, "/me")
    assert record is not None
    assert record.state == ("unknown" if delta > 0 else "sending")
    if delta > 0:
        assert record.outcome is not None and record.outcome["status"] == "unknown"
        claimer.finish("p1", "sent", {})  # too late: unknown stays unknown
        assert (claimer.get("p1", ACCOUNT, "/me") or record).state == "unknown"


def test_a_claim_by_a_dead_process_is_unknown_at_once(open_store: Opener, clock: Clock) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    crashed = open_store()
    crashed.instance = f"{socket.gethostname()}|{int(finished.stdout)}|gone"
    crashed.save(preparation("p1", clock.now))
    assert crashed.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    restarted = open_store()
    restarted.instance = f"{socket.gethostname()}|1|restarted"
    record = restarted.get("p1", ACCOUNT, "/me")
    assert record is not None and record.state == "unknown"
    assert restarted.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"


def test_cancel_ends_only_an_unclaimed_preparation(open_store: Opener, clock: Clock) -> None:
    store = open_store()
    store.save(preparation("p1", clock.now))
    store.save(preparation("p2", clock.now))
    cancelled = store.cancel("p1", ACCOUNT, "/me")
    assert cancelled is not None and cancelled.state == "cancelled"
    assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"
    assert store.claim("p2", ACCOUNT, "/me", DIGEST).status == "claimed"
    still = store.cancel("p2", ACCOUNT, "/me")
    assert still is not None and still.state == "sending"
    assert store.cancel("p2", "other@contoso.com", "/me") is None


def test_a_released_claim_is_prepared_again_only_by_its_claimer(
    open_store: Opener, clock: Clock
) -> None:
    """A send that never left the process (a stalled sign-in) gives its claim back."""
    first, second = open_store(), open_store()
    first.save(preparation("p1", clock.now))
    assert first.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    second.release("p1")  # not its claim: nothing changes
    assert (second.get("p1", ACCOUNT, "/me") or preparation("x", 0)).state == "sending"
    assert second.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"
    first.release("p1")
    record = second.get("p1", ACCOUNT, "/me")
    assert record is not None and record.state == "prepared" and record.claimed_by is None
    won = second.claim("p1", ACCOUNT, "/me", DIGEST)
    assert won.status == "claimed" and won.record is not None
    assert won.record.claimed_by == second.instance


def test_the_audit_trail_newest_first_per_mailbox(open_store: Opener, clock: Clock) -> None:
    store = open_store()
    for n in range(5):
        clock.now += 1
        store.record(ACCOUNT, "/me", {"tool": "mail_create", "n": n, "target": "Größe"})
    store.record(ACCOUNT, "/users/shared@contoso.com", {"tool": "mail_modify"})
    store.record("other@contoso.com", "/me", {"tool": "mail_delete_permanently"})
    entries = open_store().recent(ACCOUNT, "/me", 3)
    assert [e["n"] for e in entries] == [4, 3, 2]
    assert entries[0] == {"at": clock.now, "tool": "mail_create", "n": 4, "target": "Größe"}
    assert [e["tool"] for e in store.recent(ACCOUNT, "/users/shared@contoso.com", 10)] == [
        "mail_modify"
    ]


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_audit_entries_are_kept_for_the_retention_period(
    open_store: Opener, clock: Clock, delta: int
) -> None:
    store = open_store()
    store.record(ACCOUNT, "/me", {"tool": "mail_create"})
    clock.now += FAST.outcome_retention_seconds + delta
    store.record(ACCOUNT, "/me", {"tool": "mail_modify"})
    tools = [e["tool"] for e in store.recent(ACCOUNT, "/me", 10)]
    assert tools == (["mail_modify", "mail_create"] if delta <= 0 else ["mail_modify"])


def test_namespaces_are_isolated(open_store: Opener, clock: Clock) -> None:
    alice, bob = open_store("subject-a"), open_store("subject-b")
    alice.save(preparation("p1", clock.now, draft="d"))
    alice.record(ACCOUNT, "/me", {"tool": "mail_prepare"})
    assert bob.get("p1", ACCOUNT, "/me") is None
    assert bob.claim("p1", ACCOUNT, "/me", DIGEST).status == "missing"
    assert bob.cancel("p1", ACCOUNT, "/me") is None
    assert bob.recent(ACCOUNT, "/me", 10) == []
    assert bob.count() == 0 and alice.count() == 1
    mine = preparation("p2", clock.now, draft="d")
    assert bob.save(mine) == mine, "the same draft id in another namespace is another draft"
    assert alice.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    assert open_store("subject-a").get("p1", ACCOUNT, "/me") is not None


def test_the_cursor_key_is_stable(open_store: Opener) -> None:
    store = open_store()
    key = store.cursor_key()
    assert len(key) >= 32 and store.cursor_key() == key


def test_sealed_tokens_expire_and_are_namespaced(open_store: Opener, clock: Clock) -> None:
    alice, bob = open_store("subject-a"), open_store("subject-b")
    alice.token_put("assertion-1", b"\x00sealed\xff", 60)
    assert alice.token_get("assertion-1") == b"\x00sealed\xff"
    assert bob.token_get("assertion-1") is None
    alice.token_put("assertion-1", b"gone", 0)
    assert alice.token_get("assertion-1") is None


def test_racing_claims_in_one_process_leave_the_winner_its_send(
    open_store: Opener, clock: Clock
) -> None:
    """The losers' looks at the claim must not settle the winner's live send as unknown."""
    store = open_store()
    store.save(preparation("race", clock.now))
    start = threading.Barrier(8, timeout=30)
    claims: list[str] = []
    looks: list[str] = []

    def claim() -> None:
        start.wait()
        found = store.claim("race", ACCOUNT, "/me", DIGEST)
        claims.append(found.status)
        if found.status == "done":
            looks.append((store.get("race", ACCOUNT, "/me") or preparation("x", 0)).state)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(claims) == ["claimed"] + ["done"] * 7
    assert set(looks) == {"sending"}, looks
    store.finish("race", "sent", {"graph_status": 202})
    final = store.get("race", ACCOUNT, "/me")
    assert final is not None and final.state == "sent"


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_sent_draft_holds_it_for_the_retention_period(
    open_store: Opener, clock: Clock, delta: int
) -> None:
    """A send keeps its draft from being prepared again while its outcome is kept."""
    store = open_store()
    store.save(preparation("p1", clock.now, draft="d"))
    assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    store.finish("p1", "sent", {})
    clock.now += FAST.outcome_retention_seconds + delta
    answer = store.save(preparation("p2", clock.now, draft="d"))
    assert answer.prepared_id == ("p1" if delta <= 0 else "p2")
