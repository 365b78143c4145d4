"""Preparations, one-time send claims and outcomes, in one SQLite file shared by processes.

Two server processes (a desktop client and an editor) may share the file. The claim is one
``BEGIN IMMEDIATE`` transaction: SQLite lets one writer in at a time, so of two processes
racing on one preparation exactly one moves it from ``prepared`` to ``sending``; the other
reads the claim and sends nothing. A claim whose process died before recording an outcome
reads ``unknown`` afterwards and is never sent again.

States: ``prepared`` -> ``sending`` -> ``sent`` | ``verified`` | ``rejected`` | ``unknown``.

The file is WAL, mode 0600, in the user's state directory. A corrupt file or one from a
newer version is a ``StateStoreError`` that names the file; nothing here deletes it.
Every method blocks: the tools call them through ``trio.to_thread`` (``AsyncSendStore``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import os
import secrets
import socket
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import trio

from mfconnector.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "FINAL_STATES",
    "SCHEMA_VERSION",
    "STATE_FILE_NAME",
    "AsyncSendStore",
    "Claim",
    "Preparation",
    "SendStore",
    "StateStoreError",
]

SCHEMA_VERSION = 1
STATE_FILE_NAME = "state.sqlite3"
FINAL_STATES = frozenset({"sent", "verified", "rejected", "unknown"})
INTERRUPTED = (
    "the process that claimed this send stopped before recording an outcome: "
    "it may or may not have been sent"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS preparations (
    prepared_id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    mailbox TEXT NOT NULL,
    draft_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    state TEXT NOT NULL,
    claimed_by TEXT,
    claimed_at REAL,
    outcome TEXT,
    finished_at REAL
)
"""
_COLUMNS = (
    "prepared_id, account, mailbox, draft_id, digest, summary, created_at, expires_at, "
    "state, claimed_by, claimed_at, outcome, finished_at"
)


class StateStoreError(Exception):
    """The state file cannot be used; the message names it and says what to do."""

    def __init__(self, message: str, *, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True, slots=True)
class Preparation:
    """One prepared message, as stored."""

    prepared_id: str
    account: str
    mailbox: str
    draft_id: str
    digest: str
    summary: dict[str, Any]
    created_at: float
    expires_at: float
    state: str = "prepared"
    claimed_by: str | None = None
    claimed_at: float | None = None
    outcome: dict[str, Any] | None = None
    finished_at: float | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """What a claim attempt found. Only ``claimed`` allows a send."""

    status: Literal["claimed", "missing", "mismatch", "expired", "done"]
    record: Preparation | None = None


def _row(row: tuple[Any, ...]) -> Preparation:
    values = list(row)
    values[5] = json.loads(values[5])
    values[11] = json.loads(values[11]) if values[11] is not None else None
    return Preparation(*values)


def _pid_gone(claimed_by: str) -> bool:
    """True when the claimer ran on this host and its process no longer exists (POSIX)."""
    host, _, rest = claimed_by.partition("|")
    pid_text = rest.partition("|")[0]
    if os.name != "posix" or host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class SendStore:
    """The blocking store. ``path=None`` keeps everything in memory (demo, tests)."""

    def __init__(
        self,
        path: Path | None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self.instance = f"{socket.gethostname()}|{os.getpid()}|{secrets.token_hex(4)}"
        self._in_flight: set[str] = set()

    @property
    def location(self) -> str:
        return str(self.path) if self.path is not None else "memory"

    # --- opening ---------------------------------------------------------------------

    def _broken(self, what: str) -> StateStoreError:
        return StateStoreError(
            f"the state file {self.location} {what}",
            hint="read tools keep working; move the file aside (or pass another --state-dir) "
            "to use the write tools again",
        )

    def _open(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        if self.path is None:
            target = ":memory:"
        else:
            self._create_private(self.path)
            target = str(self.path)
        try:
            connection = sqlite3.connect(
                target,
                timeout=self._limits.state_busy_seconds,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self._broken(f"cannot be opened ({exc})") from None
        try:
            self._prepare_schema(connection)
        except StateStoreError:
            connection.close()
            raise
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise self._broken(f"is not a usable SQLite database ({exc})") from None
        self._connection = connection
        # A store dropped without close() still closes its file (Python 3.13 warns otherwise).
        weakref.finalize(self, connection.close)
        return connection

    def _create_private(self, path: Path) -> None:
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
            if os.name == "posix":
                os.chmod(path, 0o600)
        except OSError as exc:
            raise self._broken(f"cannot be created ({exc.strerror or exc})") from None

    def _prepare_schema(self, connection: sqlite3.Connection) -> None:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise self._broken(
                f"was written by a newer mfconnector (schema {version}; this version "
                f"knows {SCHEMA_VERSION})"
            )
        if self.path is not None:
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise self._broken(f"cannot use write-ahead logging (journal mode {mode})")
        if version < SCHEMA_VERSION:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        connection.execute(f"SELECT {_COLUMNS} FROM preparations LIMIT 1").fetchall()

    @contextlib.contextmanager
    def _transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        with self._lock:
            connection = self._open()
            try:
                connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            except sqlite3.OperationalError as exc:
                raise self._broken(f"is locked by another process for too long ({exc})") from None
            except sqlite3.DatabaseError as exc:
                raise self._broken(f"is damaged ({exc})") from None
            try:
                yield connection
                connection.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise self._broken(f"is damaged ({exc})") from None
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise

    def check(self) -> None:
        """Open the file now (start-up), raising ``StateStoreError`` if it is unusable."""
        with self._lock:
            self._open()

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    # --- operations ------------------------------------------------------------------

    def save(self, preparation: Preparation) -> None:
        """Store a new preparation; purge expired ones and outcomes past retention."""
        now = self._clock()
        with self._transaction() as db:
            self._purge(db, now)
            db.execute(
                f"INSERT INTO preparations ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    preparation.prepared_id,
                    preparation.account,
                    preparation.mailbox,
                    preparation.draft_id,
                    preparation.digest,
                    json.dumps(preparation.summary, ensure_ascii=False),
                    preparation.created_at,
                    preparation.expires_at,
                    "prepared",
                    None,
                    None,
                    None,
                    None,
                ),
            )

    def _purge(self, db: sqlite3.Connection, now: float) -> None:
        db.execute("DELETE FROM preparations WHERE state = 'prepared' AND expires_at < ?", (now,))
        db.execute(
            "DELETE FROM preparations WHERE state != 'prepared' AND "
            "COALESCE(finished_at, claimed_at, created_at) < ?",
            (now - self._limits.outcome_retention_seconds,),
        )

    def _select(
        self, db: sqlite3.Connection, prepared_id: str, account: str, mailbox: str
    ) -> Preparation | None:
        row = db.execute(
            f"SELECT {_COLUMNS} FROM preparations WHERE prepared_id = ?", (prepared_id,)
        ).fetchone()
        if row is None:
            return None
        record = _row(row)
        if record.account != account or record.mailbox != mailbox:
            return None  # another account's preparation does not exist for this one
        return record

    def _settle_orphan(
        self, db: sqlite3.Connection, record: Preparation, now: float
    ) -> Preparation:
        """A ``sending`` claim nobody will finish becomes ``unknown`` (never resent)."""
        if record.state != "sending" or record.claimed_by is None:
            return record
        ours = record.claimed_by == self.instance
        if ours and record.prepared_id in self._in_flight:
            return record
        stale = now - (record.claimed_at or now) > self._limits.claim_orphan_seconds
        if not (ours or stale or _pid_gone(record.claimed_by)):
            return record
        outcome = {"status": "unknown", "reason": INTERRUPTED}
        db.execute(
            "UPDATE preparations SET state = 'unknown', outcome = ?, finished_at = ? "
            "WHERE prepared_id = ? AND state = 'sending'",
            (json.dumps(outcome), now, record.prepared_id),
        )
        return dataclasses.replace(record, state="unknown", outcome=outcome, finished_at=now)

    def get(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        """The preparation as this account and mailbox may see it, orphans settled."""
        now = self._clock()
        with self._transaction() as db:
            record = self._select(db, prepared_id, account, mailbox)
            return None if record is None else self._settle_orphan(db, record, now)

    def claim(self, prepared_id: str, account: str, mailbox: str, digest: str) -> Claim:
        """Move ``prepared`` to ``sending`` exactly once, in one BEGIN IMMEDIATE transaction."""
        now = self._clock()
        with self._transaction() as db:
            record = self._select(db, prepared_id, account, mailbox)
            if record is None:
                return Claim("missing")
            record = self._settle_orphan(db, record, now)
            if record.state != "prepared":
                return Claim("done", record)
            if not hmac.compare_digest(record.digest, digest):
                return Claim("mismatch", record)
            if now >= record.expires_at:
                return Claim("expired", record)
            db.execute(
                "UPDATE preparations SET state = 'sending', claimed_by = ?, claimed_at = ? "
                "WHERE prepared_id = ? AND state = 'prepared'",
                (self.instance, now, prepared_id),
            )
            self._in_flight.add(prepared_id)
            claimed = dataclasses.replace(
                record, state="sending", claimed_by=self.instance, claimed_at=now
            )
            return Claim("claimed", claimed)

    def finish(self, prepared_id: str, state: str, outcome: dict[str, Any]) -> None:
        """Record the outcome of a claimed send (only from ``sending``)."""
        if state not in FINAL_STATES:
            raise ValueError(f"not a final state: {state}")
        now = self._clock()
        try:
            with self._transaction() as db:
                db.execute(
                    "UPDATE preparations SET state = ?, outcome = ?, finished_at = ? "
                    "WHERE prepared_id = ? AND state = 'sending' AND claimed_by = ?",
                    (state, json.dumps(outcome), now, prepared_id, self.instance),
                )
        finally:
            self._in_flight.discard(prepared_id)

    def count(self) -> int:
        """Rows in the file (tests and the bench)."""
        with self._transaction(immediate=False) as db:
            return int(db.execute("SELECT COUNT(*) FROM preparations").fetchone()[0])


class AsyncSendStore:
    """The store for trio code: every call runs in a worker thread, one at a time.

    Calls are not abandoned on cancellation, so an outcome being recorded is recorded.
    """

    def __init__(self, store: SendStore) -> None:
        self.store = store
        self._limiter = trio.CapacityLimiter(1)

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def check(self) -> None:
        await self._run(self.store.check)

    async def save(self, preparation: Preparation) -> None:
        await self._run(self.store.save, preparation)

    async def get(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        result: Preparation | None = await self._run(self.store.get, prepared_id, account, mailbox)
        return result

    async def claim(self, prepared_id: str, account: str, mailbox: str, digest: str) -> Claim:
        result: Claim = await self._run(self.store.claim, prepared_id, account, mailbox, digest)
        return result

    async def finish(self, prepared_id: str, state: str, outcome: dict[str, Any]) -> None:
        with trio.CancelScope(shield=True):
            await self._run(self.store.finish, prepared_id, state, outcome)
