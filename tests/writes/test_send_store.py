"""The SQLite state file: private, WAL, one claim per preparation, outcomes kept 7 days,
expired preparations purged, orphaned claims settled to unknown, and a file it cannot use
refused by name while the read tools keep working."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mfconnector.writes.store import APPLICATION_ID, Preparation, SendStore, StateStoreError
from tests.support.acting_harness import ACCOUNT, FAST, acting_session
from tests.support.loopback import LoopbackServer, Reply

DIGEST = "a" * 64


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def preparation(prepared_id: str, created: float) -> Preparation:
    return Preparation(
        prepared_id=prepared_id,
        account=ACCOUNT,
        mailbox="/me",
        draft_id=f"draft-{prepared_id}",
        digest=DIGEST,
        summary={"to": ["megan@contoso.com"], "subject": "s"},
        created_at=created,
        expires_at=created + FAST.preparation_seconds,
    )


def test_the_file_is_private_and_write_ahead_logged(tmp_path: Path) -> None:
    path = tmp_path / "state" / "state.sqlite3"
    store = SendStore(path, limits=FAST)
    store.save(preparation("p1", 1.0e9))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    for sidecar in path.parent.iterdir():
        assert stat.S_IMODE(sidecar.stat().st_mode) & 0o077 == 0, sidecar


def test_one_claim_wins_across_store_instances(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    clock = Clock()
    first, second = SendStore(path, clock=clock), SendStore(path, clock=clock)
    first.save(preparation("p1", clock.now))
    assert first.claim("p1", ACCOUNT, "/me", "b" * 64).status == "mismatch"
    assert second.claim("p1", "other@contoso.com", "/me", DIGEST).status == "missing"
    assert second.claim("p1", ACCOUNT, "/users/other", DIGEST).status == "missing"
    assert second.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    again = first.claim("p1", ACCOUNT, "/me", DIGEST)
    assert again.status == "done" and again.record is not None
    assert again.record.state == "sending"
    second.finish("p1", "sent", {"graph_status": 202})
    record = first.get("p1", ACCOUNT, "/me")
    assert record is not None and record.state == "sent"
    assert first.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_outcomes_are_kept_for_the_retention_period(tmp_path: Path, delta: int) -> None:
    clock = Clock()
    store = SendStore(tmp_path / "s.sqlite3", limits=FAST, clock=clock)
    store.save(preparation("p1", clock.now))
    assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    store.finish("p1", "sent", {})
    clock.now += FAST.outcome_retention_seconds + delta
    store.save(preparation("p2", clock.now))  # saving purges
    assert (store.get("p1", ACCOUNT, "/me") is not None) is (delta <= 0)


def test_expired_preparations_are_purged(tmp_path: Path) -> None:
    clock = Clock()
    store = SendStore(tmp_path / "s.sqlite3", limits=FAST, clock=clock)
    store.save(preparation("old", clock.now))
    clock.now += FAST.preparation_seconds - 1
    store.save(preparation("mid", clock.now))
    assert store.get("old", ACCOUNT, "/me") is not None
    clock.now += 2
    assert store.claim("old", ACCOUNT, "/me", DIGEST).status == "expired"
    store.save(preparation("new", clock.now))
    assert store.get("old", ACCOUNT, "/me") is None
    assert store.count() == 2


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_claim_with_no_outcome_becomes_unknown_after_the_orphan_limit(
    tmp_path: Path, delta: int
) -> None:
    clock = Clock()
    path = tmp_path / "s.sqlite3"
    claimer = SendStore(path, limits=FAST, clock=clock)  # alive, but never finishes
    claimer.save(preparation("p1", clock.now))
    assert claimer.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    clock.now += FAST.claim_orphan_seconds + delta
    record = SendStore(path, limits=FAST, clock=clock).get("p1", ACCOUNT, "/me")
    assert record is not None
    assert record.state == ("unknown" if delta > 0 else "sending")


@pytest.mark.skipif(os.name != "posix", reason="process liveness is checked on POSIX")
def test_a_claim_by_a_dead_process_is_unknown_at_once(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(finished.stdout)
    clock = Clock()
    path = tmp_path / "s.sqlite3"
    crashed = SendStore(path, limits=FAST, clock=clock)
    crashed.instance = f"{socket.gethostname()}|{dead_pid}|gone"
    crashed.save(preparation("p1", clock.now))
    assert crashed.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    restarted = SendStore(path, limits=FAST, clock=clock)
    record = restarted.get("p1", ACCOUNT, "/me")
    assert record is not None and record.state == "unknown"
    assert restarted.claim("p1", ACCOUNT, "/me", DIGEST).status == "done"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"this is not a database, it is a grocery list\n" * 100, "not a usable SQLite"),
        (None, "newer mfconnector"),
    ],
)
async def test_an_unusable_file_is_named_and_reads_keep_working(
    graph: LoopbackServer, tmp_path: Path, content: bytes | None, says: str
) -> None:
    path = tmp_path / "state.sqlite3"
    if content is None:
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute("PRAGMA user_version = 99")
    else:
        path.write_bytes(content)
    graph.route("GET", "/v1.0/me/mailFolders/inbox/messages", Reply.json({"value": []}))
    async with acting_session(graph, store=SendStore(path, limits=FAST)) as tools:
        error = await tools.fail(
            "mail_send_confirmed", {"prepared_id": "0" * 32, "confirmed_digest": "0" * 64}
        )
        await tools.ok("mail_list", {})
        status = await tools.fail("mail_review", {"action": "send_status", "prepared_id": "0" * 32})
    assert error["error_code"] == status["error_code"] == "state_unavailable"
    assert str(path) in error["message"] and says in error["message"]
    assert [r.path for r in graph.requests] == [
        "/v1.0/me/mailboxSettings",  # the mailbox time zone, read once by the first mail read
        "/v1.0/me/mailFolders/inbox/messages",
    ]
    if content is not None:
        assert path.read_bytes() == content, "the file is never rewritten or deleted"


def test_the_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"x" * 4096)
    with pytest.raises(StateStoreError) as caught:
        SendStore(path).check()
    assert str(path) in caught.value.message


@pytest.mark.parametrize("released_after", [0.1, None])
def test_another_process_holding_the_write_lock(
    tmp_path: Path, released_after: float | None
) -> None:
    """Within ``state_busy_seconds`` the claim waits its turn; past it, a named error."""
    import dataclasses
    import threading

    path = tmp_path / "s.sqlite3"
    limits = dataclasses.replace(FAST, state_busy_seconds=2.0 if released_after else 0.2)
    store = SendStore(path, limits=limits)
    store.save(preparation("p1", 2.0e9))
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    if released_after is not None:
        threading.Timer(released_after, lambda: holder.execute("ROLLBACK")).start()
        assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    else:
        with pytest.raises(StateStoreError) as caught:
            store.claim("p1", ACCOUNT, "/me", DIGEST)
        assert "locked by another process" in caught.value.message
        holder.execute("ROLLBACK")
    holder.close()


@pytest.mark.parametrize("released_after", [0.1, None])
def test_a_new_file_another_connection_is_about_to_write(
    tmp_path: Path, released_after: float | None
) -> None:
    """The switch to write-ahead logging needs the file to itself, and SQLite refuses it
    at once while another connection holds the write lock of a file not yet switched (its
    busy timeout does not cover the switch; 0.3 refused the write tools then): the store
    asks again until ``state_busy_seconds``, then names the lock."""
    import dataclasses
    import threading
    import time

    path = tmp_path / "state.sqlite3"
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    reader.execute("CREATE TABLE other_start (x)")  # a rollback-journal file, not yet ours
    reader.execute("DROP TABLE other_start")
    reader.execute("BEGIN IMMEDIATE")  # as a second store creating the file's tables
    limits = dataclasses.replace(FAST, state_busy_seconds=2.0 if released_after else 0.2)
    store = SendStore(path, limits=limits)
    if released_after is not None:
        threading.Timer(released_after, lambda: reader.execute("COMMIT")).start()
        started = time.monotonic()
        store.save(preparation("p1", 2.0e9))
        assert time.monotonic() - started >= released_after  # it waited for the lock
        assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    else:
        with pytest.raises(StateStoreError) as caught:
            store.check()
        assert "locked by another process for too long" in caught.value.message
        assert str(path) in caught.value.message
        reader.execute("COMMIT")
        store.save(preparation("p1", 2.0e9))  # nothing was lost: the file opens now
        assert store.claim("p1", ACCOUNT, "/me", DIGEST).status == "claimed"
    reader.close()
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_stores_opening_one_new_file_together_all_open_it(tmp_path: Path) -> None:
    """Four stores (as a desktop client, an editor and two more would) open a file that
    does not exist yet at the same moment, twenty times over: every one opens it. Before
    the switch to write-ahead logging was asked again, about one round in twelve refused
    a store ("not a usable SQLite database (database is locked)"), so this failed about
    four runs in five; the test above holds the mechanism itself, every time."""
    import threading

    refused: list[str] = []
    for round_ in range(20):
        path = tmp_path / f"r{round_}" / "state.sqlite3"
        together = threading.Barrier(4, timeout=10)

        def open_store(path: Path = path, together: threading.Barrier = together) -> None:
            store = SendStore(path)
            together.wait()
            try:
                store.check()
            except StateStoreError as error:
                refused.append(error.message)
            finally:
                store.close()

        threads = [threading.Thread(target=open_store) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert refused == []
