"""Preparations, one-time send claims and outcomes, in one SQLite file shared by processes.

Two server processes (a desktop client and an editor) may share the file. The claim is one
``BEGIN IMMEDIATE`` transaction: SQLite lets one writer in at a time, so of two processes
racing on one preparation exactly one moves it from ``prepared`` to ``sending``; the other
reads the claim and sends nothing. A claim whose process died before recording an outcome
reads ``unknown`` afterwards and is never sent again.

States: ``prepared`` -> ``sending`` -> ``sent`` | ``verified`` | ``rejected`` | ``unknown``;
a preparation nobody sent ends ``cancelled`` or ``replaced`` (by a newer one of its draft).
A claim whose send never left this process (the sign-in stalled, the connection was
refused) is given back by its claimer (``release``: ``sending`` -> ``prepared``).

One draft has at most one live preparation: ``save`` runs in the same kind of transaction
and answers with the preparation already live for the draft (same content), replaces a
``prepared`` one whose content changed, and never adds one beside a claim, a send or an
unknown outcome. So two preparations of one message can never both be sent.

The file is WAL, mode 0600, in a private state directory (0700, refused when others can
write it). It is opened without following links and must carry our SQLite application id
(or be empty, or be a 0.2 file): another program's database is refused and left as it was.
A corrupt file or one from a newer version is a ``StateStoreError`` that names the file;
nothing here deletes it. The same file keeps the audit trail of acting calls
(``writes.audit``) for the outcome retention period.
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
import stat
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import trio

from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.writes.state import Claim, Preparation, StateStore, StateStoreError

__all__ = [
    "FINAL_STATES",
    "LIVE_STATES",
    "SCHEMA_VERSION",
    "STATE_FILE_NAME",
    "UNSENT_STATES",
    "AsyncSendStore",
    "Claim",
    "Preparation",
    "SendStore",
    "StateStoreError",
]

SCHEMA_VERSION = 2
APPLICATION_ID = 0x6D66636E
"""``PRAGMA application_id`` of our state files ("mfcn"), so a foreign database is refused."""
STATE_FILE_NAME = "state.sqlite3"
WAL_RETRY_FIRST_PAUSE_SECONDS = 0.005
WAL_RETRY_LONGEST_PAUSE_SECONDS = 0.1
"""The pauses between asks to switch a new file to write-ahead logging while another
connection holds it (doubling from the first), within ``state_busy_seconds`` in all."""
FINAL_STATES = frozenset({"sent", "verified", "rejected", "unknown"})
UNSENT_STATES = frozenset({"cancelled", "replaced"})
"""Ended without a send request: the draft may be prepared again."""
LIVE_STATES = ("prepared", "sending", "sent", "verified", "unknown")
"""States that keep a draft from being prepared a second time (``prepared`` until expiry)."""
NAMESPACE_MARK = "\x1f"
"""Joins a namespace to the account in the ``account`` column (no account contains it)."""
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
_SCHEMA_V2 = (
    "CREATE INDEX IF NOT EXISTS preparations_by_draft ON preparations (account, mailbox, draft_id)",
    """CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    account TEXT NOT NULL,
    mailbox TEXT NOT NULL,
    entry TEXT NOT NULL
)""",
)
_COLUMNS = (
    "prepared_id, account, mailbox, draft_id, digest, summary, created_at, expires_at, "
    "state, claimed_by, claimed_at, outcome, finished_at"
)


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
    """The blocking SQLite store (a ``StateStore``). ``path=None`` keeps everything in
    memory (demo, tests). ``namespace`` separates users sharing one file.

    The cursor key and the token cache are this process's own, in memory: a local
    server's cursors last as long as its process, and no token is ever written to disk.
    """

    concurrency = 1

    def __init__(
        self,
        path: Path | None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        clock: Callable[[], float] = time.time,
        namespace: str = "",
    ) -> None:
        self.path = path
        self.namespace = namespace
        self._cursor_key = secrets.token_bytes(32)
        self._tokens: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self.instance = f"{socket.gethostname()}|{os.getpid()}|{secrets.token_hex(4)}"
        self._in_flight: set[str] = set()
        self._unrecorded: dict[str, tuple[str, dict[str, Any]]] = {}
        """Outcomes ``finish`` could not write; written by the next look at their claim."""

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
            if self.path is not None:
                self._make_private(self.path)
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

    def _refuse(self, what: str, hint: str) -> StateStoreError:
        return StateStoreError(f"the state file {self.location} {what}", hint=hint)

    def _private_directory(self, directory: Path) -> None:
        """Create the directory 0700; refuse one another user owns or others can write."""
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(directory)
        if not stat.S_ISDIR(info.st_mode):
            raise self._refuse("is not in a directory", "pass a directory as --state-dir")
        if os.name != "posix":
            return
        if info.st_uid != os.getuid():
            raise self._refuse(
                f"is in {directory}, which belongs to another user",
                "pass a --state-dir of your own",
            )
        if info.st_mode & 0o022:
            raise self._refuse(
                f"is in {directory}, which others can write (mode "
                f"{stat.S_IMODE(info.st_mode):o}): they could swap the file",
                f"run `chmod 700 {directory}`, or pass a private --state-dir",
            )

    def _create_private(self, path: Path) -> None:
        """Create the file 0600 if it is new; refuse a link or another user's file.

        An existing file is only looked at (``lstat``), never opened here: closing a
        descriptor would drop the POSIX locks another connection of this process holds.
        """
        link = "is a symbolic link; it is never followed"
        try:
            self._private_directory(path.parent)
            for sidecar in ("-wal", "-shm", "-journal"):
                if os.path.islink(f"{path}{sidecar}"):
                    raise self._refuse(
                        f"has a symbolic link beside it ({path.name}{sidecar})",
                        "remove the link; nothing was written",
                    )
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                flags = os.O_CREAT | os.O_EXCL | os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)
                try:
                    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
                except FileExistsError:
                    info = os.lstat(path)  # another process created it just now
                else:
                    if os.name == "posix":
                        os.fchmod(fd, 0o600)
                    os.close(fd)  # a new, empty file: nobody holds a lock on it yet
                    return
            if stat.S_ISLNK(info.st_mode):
                raise self._refuse(link, "point --state-dir at the real directory")
            if not stat.S_ISREG(info.st_mode):
                raise self._refuse("is not a regular file", "move it aside")
            if os.name == "posix" and info.st_uid != os.getuid():
                raise self._refuse("belongs to another user", "pass your own --state-dir")
            if os.name == "posix" and info.st_nlink > 1:
                raise self._refuse("has another name (a hard link)", "pass a fresh --state-dir")
        except OSError as exc:
            raise self._broken(f"cannot be created ({exc.strerror or exc})") from None

    def _make_private(self, path: Path) -> None:
        """0600 on our own file and its sidecars, by path, never through a link.

        Never by opening them: closing any descriptor of a file drops every POSIX lock
        this process holds on it, SQLite's own included (a shared-memory file whose lock
        is lost gets re-initialised under another process: SIGBUS). The directory is
        private and ours, so nobody else can swap a name for a link meanwhile.
        """
        if os.name != "posix":
            return
        for name in (str(path), f"{path}-wal", f"{path}-shm"):
            try:
                info = os.lstat(name)
                if stat.S_ISLNK(info.st_mode):
                    raise self._refuse(
                        f"has a symbolic link beside it ({Path(name).name})",
                        "remove the link; nothing was written",
                    )
                if stat.S_IMODE(info.st_mode) != 0o600:
                    os.chmod(name, 0o600)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise self._broken(f"cannot be made private ({exc.strerror or exc})") from None

    def _check_ours(self, connection: sqlite3.Connection) -> int:
        """The schema version of a file that is ours (or empty); a foreign one is refused."""
        connection.execute("BEGIN")  # one snapshot: another process may be creating it
        try:
            application = int(connection.execute("PRAGMA application_id").fetchone()[0])
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            tables = {
                str(row[0])
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        finally:
            connection.execute("COMMIT")
        fresh = application == 0 and version == 0 and not tables
        ours_v1 = application == 0 and version == 1 and tables == {"preparations"}
        if application != APPLICATION_ID and not (fresh or ours_v1):
            raise StateStoreError(
                f"the state file {self.location} is another program's SQLite database "
                f"(application id {application}); nothing in it was changed",
                hint="pass a --state-dir of mfconnector's own",
            )
        return version

    def _prepare_schema(self, connection: sqlite3.Connection) -> None:
        version = self._check_ours(connection)
        if version > SCHEMA_VERSION:
            raise self._broken(
                f"was written by a newer mfconnector (schema {version}; this version "
                f"knows {SCHEMA_VERSION})"
            )
        if self.path is not None:
            mode = self._write_ahead_logging(connection)
            if str(mode).lower() != "wal":
                raise self._broken(f"cannot use write-ahead logging (journal mode {mode})")
        if version < SCHEMA_VERSION:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(_SCHEMA)
                for statement in _SCHEMA_V2:
                    connection.execute(statement)
                connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        connection.execute(f"SELECT {_COLUMNS} FROM preparations LIMIT 1").fetchall()

    def _write_ahead_logging(self, connection: sqlite3.Connection) -> str:
        """Switch the file to write-ahead logging; the journal mode it is in after.

        The switch needs the file to itself, and SQLite answers one that meets another
        connection's lock with "database is locked" at once: its busy timeout does not
        cover it. Two processes opening a new state file together (a desktop client and an
        editor started at once) met that, and the write tools of one of them were refused.
        So the switch is asked again, a little later each time, for ``state_busy_seconds``.
        """
        deadline = time.monotonic() + self._limits.state_busy_seconds
        pause = WAL_RETRY_FIRST_PAUSE_SECONDS
        while True:
            try:
                return str(connection.execute("PRAGMA journal_mode=WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() + pause > deadline:
                    raise self._broken(
                        f"is locked by another process for too long ({exc})"
                    ) from None
            time.sleep(pause)
            pause = min(pause * 2, WAL_RETRY_LONGEST_PAUSE_SECONDS)

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

    def save(self, preparation: Preparation) -> Preparation:
        """Store a new preparation unless its draft has a live one; return the live one.

        Same draft, same digest, still ``prepared``: the earlier preparation is the answer
        (its ``prepared_id``). Same draft, changed content: the earlier one becomes
        ``replaced`` and the new one is stored. A claim, a send or an unknown outcome of
        the draft is returned as it is and nothing is stored. Expired preparations and
        outcomes past retention are purged first.
        """
        now = self._clock()
        with self._transaction() as db:
            self._purge(db, now)
            live = self._live_for_draft(db, preparation, now)
            if live is not None:
                if live.state != "prepared" or hmac.compare_digest(live.digest, preparation.digest):
                    return live
                db.execute(
                    "UPDATE preparations SET state = 'replaced', outcome = ?, finished_at = ? "
                    "WHERE prepared_id = ? AND state = 'prepared'",
                    (json.dumps({"replaced_by": preparation.prepared_id}), now, live.prepared_id),
                )
            db.execute(
                f"INSERT INTO preparations ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    preparation.prepared_id,
                    self._owner(preparation.account),
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
            return preparation

    def _live_for_draft(
        self, db: sqlite3.Connection, preparation: Preparation, now: float
    ) -> Preparation | None:
        marks = ",".join("?" for _ in LIVE_STATES)
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM preparations WHERE account = ? AND mailbox = ? AND "
            f"draft_id = ? AND state IN ({marks}) ORDER BY created_at",
            (
                self._owner(preparation.account),
                preparation.mailbox,
                preparation.draft_id,
                *LIVE_STATES,
            ),
        ).fetchall()
        for row in rows:
            record = self._settle_orphan(db, self._record(row), now)
            if record.state != "prepared" or now < record.expires_at:
                return record
        return None

    def cancel(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        """``prepared`` -> ``cancelled`` (nothing sent); any other state is returned as is."""
        now = self._clock()
        with self._transaction() as db:
            record = self._select(db, prepared_id, account, mailbox)
            if record is None:
                return None
            record = self._settle_orphan(db, record, now)
            if record.state != "prepared":
                return record
            outcome = {"reason": "cancelled before it was confirmed; nothing was sent"}
            db.execute(
                "UPDATE preparations SET state = 'cancelled', outcome = ?, finished_at = ? "
                "WHERE prepared_id = ? AND state = 'prepared'",
                (json.dumps(outcome), now, prepared_id),
            )
            return dataclasses.replace(record, state="cancelled", outcome=outcome, finished_at=now)

    def _purge(self, db: sqlite3.Connection, now: float) -> None:
        db.execute("DELETE FROM preparations WHERE state = 'prepared' AND expires_at < ?", (now,))
        horizon = now - self._limits.outcome_retention_seconds
        db.execute(
            "DELETE FROM preparations WHERE state != 'prepared' AND "
            "COALESCE(finished_at, claimed_at, created_at) < ?",
            (horizon,),
        )
        db.execute("DELETE FROM audit WHERE at < ?", (horizon,))

    def record(self, account: str, mailbox: str, entry: dict[str, Any]) -> None:
        """Keep one audit entry (an acting call and its outcome) for the retention period."""
        now = self._clock()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO audit (at, account, mailbox, entry) VALUES (?,?,?,?)",
                (now, self._owner(account), mailbox, json.dumps(entry, ensure_ascii=False)),
            )
            # the oldest few past retention go with each new one: bounded work, no scan
            db.execute(
                "DELETE FROM audit WHERE seq IN (SELECT seq FROM audit ORDER BY seq LIMIT 8) "
                "AND at < ?",
                (now - self._limits.outcome_retention_seconds,),
            )

    def recent(self, account: str, mailbox: str, limit: int) -> list[dict[str, Any]]:
        """The newest audit entries of this account and mailbox, newest first."""
        now = self._clock()
        horizon = now - self._limits.outcome_retention_seconds
        with self._transaction(immediate=False) as db:
            rows = db.execute(
                "SELECT at, entry FROM audit WHERE account = ? AND mailbox = ? AND at >= ? "
                "ORDER BY seq DESC LIMIT ?",
                (self._owner(account), mailbox, horizon, limit),
            ).fetchall()
        return [{"at": float(at), **json.loads(entry)} for at, entry in rows]

    def _owner(self, account: str) -> str:
        """The ``account`` column's value: the account, within this store's namespace."""
        return f"{self.namespace}{NAMESPACE_MARK}{account}" if self.namespace else account

    def _record(self, row: tuple[Any, ...]) -> Preparation:
        record = _row(row)
        account = record.account.partition(NAMESPACE_MARK)[2] if self.namespace else record.account
        return dataclasses.replace(record, account=account)

    def _select(
        self, db: sqlite3.Connection, prepared_id: str, account: str, mailbox: str
    ) -> Preparation | None:
        row = db.execute(
            f"SELECT {_COLUMNS} FROM preparations WHERE prepared_id = ?", (prepared_id,)
        ).fetchone()
        if row is None or row[1] != self._owner(account) or row[2] != mailbox:
            return None  # another account's (or user's) preparation does not exist here
        return self._record(row)

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
        state, outcome = "unknown", {"status": "unknown", "reason": INTERRUPTED}
        if ours and record.prepared_id in self._unrecorded:
            state, outcome = self._unrecorded[record.prepared_id]
        db.execute(
            "UPDATE preparations SET state = ?, outcome = ?, finished_at = ? "
            "WHERE prepared_id = ? AND state = 'sending'",
            (state, json.dumps(outcome), now, record.prepared_id),
        )
        self._unrecorded.pop(record.prepared_id, None)
        return dataclasses.replace(record, state=state, outcome=outcome, finished_at=now)

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
        except StateStoreError:
            self._unrecorded[prepared_id] = (state, outcome)
            raise
        finally:
            self._in_flight.discard(prepared_id)

    def release(self, prepared_id: str) -> None:
        """Give back a claim whose send never left this process (the sign-in stalled, the
        connection was refused): ``sending`` -> ``prepared``, only by its claimer."""
        try:
            with self._transaction() as db:
                db.execute(
                    "UPDATE preparations SET state = 'prepared', claimed_by = NULL, "
                    "claimed_at = NULL WHERE prepared_id = ? AND state = 'sending' "
                    "AND claimed_by = ?",
                    (prepared_id, self.instance),
                )
        finally:
            self._in_flight.discard(prepared_id)

    def count(self) -> int:
        """Preparations of this namespace in the file (tests and the bench)."""
        with self._transaction(immediate=False) as db:
            if not self.namespace:
                found = db.execute(
                    "SELECT COUNT(*) FROM preparations WHERE instr(account, ?) = 0",
                    (NAMESPACE_MARK,),
                )
            else:
                found = db.execute(
                    "SELECT COUNT(*) FROM preparations WHERE substr(account, 1, ?) = ?",
                    (len(self.namespace) + 1, self.namespace + NAMESPACE_MARK),
                )
            return int(found.fetchone()[0])

    def cursor_key(self) -> bytes:
        return self._cursor_key

    def token_get(self, key: str) -> bytes | None:
        with self._lock:
            found = self._tokens.get(key)
            if found is None or found[1] <= self._clock():
                self._tokens.pop(key, None)
                return None
            self._tokens.move_to_end(key)
            return found[0]

    def token_put(self, key: str, sealed: bytes, lifetime_seconds: float) -> None:
        with self._lock:
            if lifetime_seconds <= 0:
                self._tokens.pop(key, None)
                return
            self._tokens[key] = (sealed, self._clock() + lifetime_seconds)
            self._tokens.move_to_end(key)
            while len(self._tokens) > self._limits.state_local_tokens:
                self._tokens.popitem(last=False)


class AsyncSendStore:
    """Any ``StateStore`` for trio code: every call runs in a worker thread, at most
    ``store.concurrency`` at once (SQLite: one at a time).

    Calls are not abandoned on cancellation, so an outcome being recorded is recorded.
    """

    def __init__(self, store: StateStore, limiter: trio.CapacityLimiter | None = None) -> None:
        """``limiter``: shared by the stores of one backend (Redis: one per process)."""
        self.store = store
        self._limiter = limiter or trio.CapacityLimiter(store.concurrency)

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def check(self) -> None:
        await self._run(self.store.check)

    async def save(self, preparation: Preparation) -> Preparation:
        result: Preparation = await self._run(self.store.save, preparation)
        return result

    async def cancel(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        result: Preparation | None = await self._run(
            self.store.cancel, prepared_id, account, mailbox
        )
        return result

    async def record(self, account: str, mailbox: str, entry: dict[str, Any]) -> None:
        with trio.CancelScope(shield=True):
            await self._run(self.store.record, account, mailbox, entry)

    async def recent(self, account: str, mailbox: str, limit: int) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await self._run(self.store.recent, account, mailbox, limit)
        return result

    async def get(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        result: Preparation | None = await self._run(self.store.get, prepared_id, account, mailbox)
        return result

    async def claim(self, prepared_id: str, account: str, mailbox: str, digest: str) -> Claim:
        result: Claim = await self._run(self.store.claim, prepared_id, account, mailbox, digest)
        return result

    async def finish(self, prepared_id: str, state: str, outcome: dict[str, Any]) -> None:
        with trio.CancelScope(shield=True):
            await self._run(self.store.finish, prepared_id, state, outcome)

    async def release(self, prepared_id: str) -> None:
        with trio.CancelScope(shield=True):
            await self._run(self.store.release, prepared_id)

    async def token_get(self, key: str) -> bytes | None:
        result: bytes | None = await self._run(self.store.token_get, key)
        return result

    async def token_put(self, key: str, sealed: bytes, lifetime_seconds: float) -> None:
        await self._run(self.store.token_put, key, sealed, lifetime_seconds)
