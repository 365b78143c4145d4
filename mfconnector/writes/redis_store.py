"""The state store in Redis, shared by the replicas of a hosted server (``StateStore``).

redis-py's blocking client runs in trio's worker threads (``redis.asyncio`` needs an
asyncio loop); this module is imported only when ``--state-url redis://`` is given, so
the stdio start-up never imports redis.

Every decision that must be taken once is one Lua script, which Redis runs atomically:
the claim (owner, digest, state and expiry checked, ``prepared`` -> ``sending``), saving
a preparation (at most one live preparation per draft), and recording an outcome (only
from ``sending``, only by the claimer). Commands are never retried by the client: a
connection lost after Redis ran a claim but before its answer came back must be a tool
error and a claim left ``sending`` (later ``unknown``), never a second claim and a
second send.

Keys, per namespace ``N`` (a hosted user's subject key, ``local`` for stdio)::

    mfc:1:N:prep:<prepared_id>       hash: one preparation
    mfc:1:N:draft:<sha256 of owner>  list: prepared ids of one draft, oldest first
    mfc:1:N:audit:<sha256 of owner>  list: audit entries (JSON), newest first
    mfc:1:N:token:<sha256 of slot>   string: a sealed on-behalf-of token
    mfc:1:cursor-key                 string: the cursor-signing key (hex), for everyone
    mfc:1:demo-epoch                 string: when the demo's clock began (``--demo``)

Retention is the SQLite store's: an expired preparation still answers ``expired`` for
``preparation_seconds`` more, a claim or an outcome is kept ``outcome_retention_seconds``
after its last change, audit entries as long. Each key carries that expiry (Redis forgets
it), and reads also judge it on the store's clock (the demo's clock is not Redis's).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import trio

from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.writes.store import (
    FINAL_STATES,
    INTERRUPTED,
    Claim,
    Preparation,
    StateStoreError,
    _pid_gone,
)

__all__ = [
    "CLAIM_SCRIPT",
    "KEY_PREFIX",
    "RedisState",
    "RedisStateStore",
    "redacted_url",
]

KEY_PREFIX = "mfc:1:"
CURSOR_KEY = f"{KEY_PREFIX}cursor-key"
DEMO_EPOCH_KEY = f"{KEY_PREFIX}demo-epoch"
CURSOR_KEY_BYTES = 32
_NUMBERS = ("created_at", "expires_at", "claimed_at", "finished_at")

CLAIM_SCRIPT = """
local r = redis.call('HMGET', KEYS[1], 'account', 'mailbox', 'state', 'digest', 'expires_at')
if not r[1] or r[1] ~= ARGV[1] or r[2] ~= ARGV[2] then return 'missing' end
if r[3] ~= 'prepared' then return 'done' end
if redis.sha1hex(r[4]) ~= redis.sha1hex(ARGV[3]) then return 'mismatch' end
if tonumber(ARGV[4]) >= tonumber(r[5]) then return 'expired' end
redis.call('HSET', KEYS[1], 'state', 'sending', 'claimed_by', ARGV[5], 'claimed_at', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 'claimed'
"""
"""KEYS: the preparation. ARGV: account, mailbox, digest, now, instance, seconds to keep."""

FINISH_SCRIPT = """
local r = redis.call('HMGET', KEYS[1], 'state', 'claimed_by')
if r[1] ~= 'sending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'outcome', ARGV[3], 'finished_at', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""
"""Only from ``sending`` and only for the expected claimer (an outcome, or an orphan
settled to ``unknown``). ARGV: claimer, state, outcome JSON, now, seconds to keep."""

RELEASE_SCRIPT = """
local r = redis.call('HMGET', KEYS[1], 'state', 'claimed_by')
if r[1] ~= 'sending' or r[2] ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'prepared')
redis.call('HDEL', KEYS[1], 'claimed_by', 'claimed_at')
return 1
"""
"""Give back a claim whose send never left this process: ``sending`` -> ``prepared``, only
for its claimer. ARGV: claimer."""

CANCEL_SCRIPT = """
local r = redis.call('HMGET', KEYS[1], 'state')
if r[1] ~= 'prepared' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'outcome', ARGV[1], 'finished_at', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

SAVE_SCRIPT = """
local now = tonumber(ARGV[1])
local prefix = ARGV[2]
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  local key = prefix .. id
  local r = redis.call('HMGET', key, 'state', 'expires_at', 'digest',
                       'finished_at', 'claimed_at', 'created_at')
  local last = tonumber(r[4] or r[5] or r[6] or '0')
  if not r[1] then
    redis.call('LREM', KEYS[1], 0, id)
  elseif (r[1] == 'sending' or r[1] == 'sent' or r[1] == 'verified' or r[1] == 'unknown')
      and now - last <= tonumber(ARGV[6])
      or (r[1] == 'prepared' and now < tonumber(r[2])) then
    if r[1] ~= 'prepared' or redis.sha1hex(r[3]) == redis.sha1hex(ARGV[3]) then
      return id
    end
    redis.call('HSET', key, 'state', 'replaced', 'outcome', ARGV[4], 'finished_at', ARGV[1])
    redis.call('EXPIRE', key, ARGV[6])
    break
  end
end
redis.call('HSET', KEYS[2], unpack(ARGV, 8))
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('RPUSH', KEYS[1], ARGV[7])
redis.call('EXPIRE', KEYS[1], ARGV[6])
return false
"""
"""KEYS: the draft's list, the new preparation. ARGV: now, preparation key prefix, new
digest, replaced outcome JSON, seconds to keep the new one, seconds to keep an outcome,
the new prepared id, then the new preparation's field/value pairs. Returns the prepared id
of the draft's live preparation when there is one (nothing stored), else nothing."""

RECORD_SCRIPT = """
redis.call('LPUSH', KEYS[1], ARGV[1])
for _ = 1, 8 do
  local oldest = redis.call('LINDEX', KEYS[1], -1)
  if not oldest or tonumber(cjson.decode(oldest)['at']) >= tonumber(ARGV[2]) then break end
  redis.call('RPOP', KEYS[1])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
"""
"""The oldest few past retention go with each new entry: bounded work, no scan."""


def redacted_url(url: str) -> str:
    """``url`` without its password (a location is said in messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    netloc = f"{user}:***@{parts.hostname}" + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class InFlight:
    """Claims being made or sent by this process, counted: two threads of one process
    confirming one preparation both mark it, and the loser's unmark leaves the winner's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._counts[key] > 0 if isinstance(key, str) else False

    def mark(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1

    def unmark(self, key: str) -> None:
        with self._lock:
            self._counts[key] -= 1
            if self._counts[key] <= 0:
                del self._counts[key]


class RedisState:
    """One Redis database for the process: its connection pool and scripts. ``store()``
    gives one namespace's ``StateStore`` over it."""

    def __init__(self, url: str, *, limits: Limits = DEFAULT_LIMITS) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.url = url
        self.location = redacted_url(url)
        self._limits = limits
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            # a blocking pool: a call beyond state_connections waits for a connection
            # (at most state_busy_seconds) instead of failing with "Too many connections"
            pool = redis.BlockingConnectionPool.from_url(
                url,
                max_connections=limits.state_connections,
                timeout=limits.state_busy_seconds,
                socket_timeout=limits.state_busy_seconds,
                socket_connect_timeout=limits.state_busy_seconds,
                retry=Retry(NoBackoff(), 0),
                retry_on_timeout=False,
            )
            self.client = redis.Redis(connection_pool=pool)
        except ValueError as error:
            raise StateStoreError(
                f"the state URL {self.location} is not usable ({error})",
                hint="pass --state-url redis://HOST:PORT/DB",
            ) from None
        self.scripts = {
            name: self.client.register_script(source)
            for name, source in (
                ("claim", CLAIM_SCRIPT),
                ("finish", FINISH_SCRIPT),
                ("release", RELEASE_SCRIPT),
                ("cancel", CANCEL_SCRIPT),
                ("save", SAVE_SCRIPT),
                ("record", RECORD_SCRIPT),
            )
        }
        self.instance = f"{socket.gethostname()}|{os.getpid()}|{secrets.token_hex(4)}"
        """One per process: every namespace's claims from here carry it."""
        self.in_flight = InFlight()
        """Preparation keys this process claims or sends now (never settled meanwhile)."""
        self.unrecorded: dict[str, tuple[str, dict[str, Any]]] = {}
        """Outcomes ``finish`` could not write; written by the next look at their claim."""
        self._cursor_key: bytes | None = None
        self._demo_epoch: float | None = None
        self.limiter = trio.CapacityLimiter(limits.state_connections)
        """Every namespace's calls from trio share it: never more threads than connections."""

    def lost(self, error: BaseException) -> NoReturn:
        """A Redis failure, as the state store's error (the tools answer state_unavailable)."""
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise StateStoreError(
            f"the state store {self.location} cannot be reached ({reason})",
            hint="nothing was sent by this call; check that Redis is running, then call again "
            "(a send that was claimed keeps its claim and is never sent twice)",
        ) from None

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as error:
            self.lost(error)

    def check(self) -> None:
        self.call(self.client.ping)

    def close(self) -> None:
        """Closes every pooled connection (``Redis.close`` leaves a pool it was given)."""
        self.client.close()
        self.client.connection_pool.disconnect()

    def cursor_key(self) -> bytes:
        """The shared key: the first replica to ask makes it (``SET NX``), all read it
        (once per process: it never changes while it is in Redis)."""
        if self._cursor_key is not None:
            return self._cursor_key
        fresh = secrets.token_bytes(CURSOR_KEY_BYTES).hex()
        self.call(self.client.set, CURSOR_KEY, fresh, nx=True)
        found = _text(self.call(self.client.get, CURSOR_KEY)) or ""
        try:
            key = bytes.fromhex(found)
        except ValueError:
            key = b""
        if len(key) < CURSOR_KEY_BYTES:
            raise StateStoreError(
                f"the state store {self.location} holds a malformed cursor key",
                hint=f"delete the Redis key {CURSOR_KEY}; every replica then shares a new one",
            )
        self._cursor_key = key
        return key

    def demo_epoch(self) -> float:
        """When the demo's time began for every process on this store (``--demo``): the
        first to ask sets it (``SET NX``), all read it, once per process."""
        if self._demo_epoch is None:
            self.call(self.client.set, DEMO_EPOCH_KEY, repr(time.time()), nx=True)
            found = _text(self.call(self.client.get, DEMO_EPOCH_KEY)) or ""
            try:
                self._demo_epoch = float(found)
            except ValueError:
                raise StateStoreError(
                    f"the state store {self.location} holds a malformed demo epoch",
                    hint=f"delete the Redis key {DEMO_EPOCH_KEY}",
                ) from None
        return self._demo_epoch

    def store(
        self, namespace: str = "", *, clock: Callable[[], float] | None = None
    ) -> RedisStateStore:
        return RedisStateStore(self, namespace, clock=clock or time.time)


class RedisStateStore:
    """One namespace in Redis (a ``StateStore``)."""

    def __init__(self, state: RedisState, namespace: str, *, clock: Callable[[], float]) -> None:
        self._state = state
        self._limits = state._limits
        self.concurrency = self._limits.state_connections
        self._clock = clock
        self.namespace = namespace
        self._prefix = f"{KEY_PREFIX}{namespace or 'local'}:"
        self.instance = state.instance
        self._in_flight = state.in_flight
        self._unrecorded = state.unrecorded

    @property
    def location(self) -> str:
        return self._state.location

    # --- keys and records -------------------------------------------------------------

    def _prep(self, prepared_id: str) -> str:
        return f"{self._prefix}prep:{prepared_id}"

    def _draft(self, account: str, mailbox: str, draft_id: str) -> str:
        return f"{self._prefix}draft:{_digest(account, mailbox, draft_id)}"

    def _audit(self, account: str, mailbox: str) -> str:
        return f"{self._prefix}audit:{_digest(account, mailbox)}"

    def _keep_outcome(self) -> int:
        return int(self._limits.outcome_retention_seconds)

    def _keep_prepared(self, preparation: Preparation, now: float) -> int:
        left = math.ceil(preparation.expires_at - now)
        return max(1, left + int(self._limits.preparation_seconds))

    @staticmethod
    def _fields(preparation: Preparation) -> list[str]:
        pairs: list[str] = []
        for field in dataclasses.fields(Preparation):
            value = getattr(preparation, field.name)
            if value is None:
                continue
            if field.name in ("summary", "outcome"):
                value = json.dumps(value, ensure_ascii=False)
            elif field.name in _NUMBERS:
                value = repr(float(value))
            pairs += [field.name, str(value)]
        return pairs

    def _load(self, prepared_id: str, account: str, mailbox: str, now: float) -> Preparation | None:
        raw = self._state.call(self._state.client.hgetall, self._prep(prepared_id))
        if not raw:
            return None
        values = {str(_text(k)): str(_text(v)) for k, v in raw.items()}
        if values.get("account") != account or values.get("mailbox") != mailbox:
            return None  # another account's preparation does not exist for this one
        try:
            record = Preparation(
                prepared_id=str(values["prepared_id"]),
                account=str(values["account"]),
                mailbox=str(values["mailbox"]),
                draft_id=str(values["draft_id"]),
                digest=str(values["digest"]),
                summary=json.loads(values["summary"] or "{}"),
                created_at=float(values["created_at"] or 0),
                expires_at=float(values["expires_at"] or 0),
                state=str(values["state"]),
                claimed_by=values.get("claimed_by"),
                claimed_at=float(values["claimed_at"]) if values.get("claimed_at") else None,
                outcome=json.loads(values["outcome"]) if values.get("outcome") else None,
                finished_at=float(values["finished_at"]) if values.get("finished_at") else None,
            )
        except (KeyError, TypeError, ValueError):
            raise StateStoreError(
                f"the state store {self.location} holds a malformed preparation",
                hint="read tools keep working; the preparation cannot be used: prepare again",
            ) from None
        return record if self._retained(record, now) else None

    def _retained(self, record: Preparation, now: float) -> bool:
        """Judged on the store's clock, as the SQLite store purges."""
        if record.state == "prepared":
            return now < record.expires_at + self._limits.preparation_seconds
        last = record.finished_at or record.claimed_at or record.created_at
        return now - last <= self._limits.outcome_retention_seconds

    def _settle_orphan(self, record: Preparation, now: float) -> Preparation:
        """A ``sending`` claim nobody will finish becomes ``unknown`` (never resent)."""
        if record.state != "sending" or record.claimed_by is None:
            return record
        ours = record.claimed_by == self.instance
        if ours and self._prep(record.prepared_id) in self._in_flight:
            return record
        stale = now - (record.claimed_at or now) > self._limits.claim_orphan_seconds
        if not (ours or stale or _pid_gone(record.claimed_by)):
            return record
        state, outcome = "unknown", {"status": "unknown", "reason": INTERRUPTED}
        if ours and self._prep(record.prepared_id) in self._unrecorded:
            state, outcome = self._unrecorded[self._prep(record.prepared_id)]
        self._state.call(
            self._state.scripts["finish"],
            keys=[self._prep(record.prepared_id)],
            args=[record.claimed_by, state, json.dumps(outcome), repr(now), self._keep_outcome()],
        )
        self._unrecorded.pop(self._prep(record.prepared_id), None)
        # whoever settled it, the stored state is now final: read what it says
        settled = self._load(record.prepared_id, record.account, record.mailbox, now)
        return settled or dataclasses.replace(record, state=state, outcome=outcome, finished_at=now)

    # --- the StateStore operations ----------------------------------------------------

    def check(self) -> None:
        self._state.check()

    def close(self) -> None:
        """The connection pool is the process's (``RedisState.close``)."""

    def save(self, preparation: Preparation) -> Preparation:
        for _ in range(3):
            saved = self._save_once(preparation)
            if saved is not None:
                return saved
        raise StateStoreError(
            f"the state store {self.location} keeps changing this draft's preparations",
            hint="nothing was prepared; call again",
        )

    def _save_once(self, preparation: Preparation) -> Preparation | None:
        """The saved or live preparation; None if the live one vanished meanwhile."""
        now = self._clock()
        fields = self._fields(dataclasses.replace(preparation, state="prepared"))
        live_id = self._state.call(
            self._state.scripts["save"],
            keys=[
                self._draft(preparation.account, preparation.mailbox, preparation.draft_id),
                self._prep(preparation.prepared_id),
            ],
            args=[
                repr(now),
                self._prep(""),
                preparation.digest,
                json.dumps({"replaced_by": preparation.prepared_id}),
                self._keep_prepared(preparation, now),
                self._keep_outcome(),
                preparation.prepared_id,
                *fields,
            ],
        )
        if live_id is None:
            return preparation
        live = self._load(_text(live_id) or "", preparation.account, preparation.mailbox, now)
        return None if live is None else self._settle_orphan(live, now)

    def get(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        now = self._clock()
        record = self._load(prepared_id, account, mailbox, now)
        return None if record is None else self._settle_orphan(record, now)

    def cancel(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        now = self._clock()
        record = self.get(prepared_id, account, mailbox)
        if record is None or record.state != "prepared":
            return record
        outcome = {"reason": "cancelled before it was confirmed; nothing was sent"}
        self._state.call(
            self._state.scripts["cancel"],
            keys=[self._prep(prepared_id)],
            args=[json.dumps(outcome), repr(now), self._keep_outcome()],
        )
        return self._load(prepared_id, account, mailbox, now)

    def claim(self, prepared_id: str, account: str, mailbox: str, digest: str) -> Claim:
        now = self._clock()
        record = self.get(prepared_id, account, mailbox)
        if record is None:
            return Claim("missing")
        if record.state != "prepared":
            return Claim("done", record)
        keep = self._keep_outcome() + math.ceil(self._limits.claim_orphan_seconds)
        # in flight before Redis answers: this process never settles its own live claim
        self._in_flight.mark(self._prep(prepared_id))
        try:
            status = _text(
                self._state.call(
                    self._state.scripts["claim"],
                    keys=[self._prep(prepared_id)],
                    args=[account, mailbox, digest, repr(now), self.instance, keep],
                )
            )
        except StateStoreError:
            # Redis may have run the claim: it stays ``sending`` (later ``unknown``)
            self._in_flight.unmark(self._prep(prepared_id))
            raise
        if status != "claimed":
            self._in_flight.unmark(self._prep(prepared_id))
        if status == "claimed":
            claimed = dataclasses.replace(
                record, state="sending", claimed_by=self.instance, claimed_at=now
            )
            return Claim("claimed", claimed)
        if status == "missing":
            return Claim("missing")
        if status == "done":
            latest = self.get(prepared_id, account, mailbox)
            return Claim("done", latest) if latest is not None else Claim("missing")
        if status == "mismatch":
            return Claim("mismatch", record)
        if status == "expired":
            return Claim("expired", record)
        raise StateStoreError(f"the state store {self.location} answered a claim oddly")

    def finish(self, prepared_id: str, state: str, outcome: dict[str, Any]) -> None:
        if state not in FINAL_STATES:
            raise ValueError(f"not a final state: {state}")
        now = self._clock()
        try:
            self._state.call(
                self._state.scripts["finish"],
                keys=[self._prep(prepared_id)],
                args=[self.instance, state, json.dumps(outcome), repr(now), self._keep_outcome()],
            )
        except StateStoreError:
            self._unrecorded[self._prep(prepared_id)] = (state, outcome)
            raise
        finally:
            self._in_flight.unmark(self._prep(prepared_id))

    def release(self, prepared_id: str) -> None:
        try:
            self._state.call(
                self._state.scripts["release"], keys=[self._prep(prepared_id)], args=[self.instance]
            )
        finally:
            self._in_flight.unmark(self._prep(prepared_id))

    def record(self, account: str, mailbox: str, entry: dict[str, Any]) -> None:
        now = self._clock()
        line = json.dumps({"at": now, "entry": entry}, ensure_ascii=False)
        self._state.call(
            self._state.scripts["record"],
            keys=[self._audit(account, mailbox)],
            args=[line, repr(now - self._limits.outcome_retention_seconds), self._keep_outcome()],
        )

    def recent(self, account: str, mailbox: str, limit: int) -> list[dict[str, Any]]:
        horizon = self._clock() - self._limits.outcome_retention_seconds
        lines = self._state.call(
            self._state.client.lrange, self._audit(account, mailbox), 0, max(0, limit - 1)
        )
        entries = []
        for line in lines:
            doc = json.loads(_text(line) or "{}")
            if float(doc.get("at", 0)) >= horizon and isinstance(doc.get("entry"), dict):
                entries.append({"at": float(doc["at"]), **doc["entry"]})
        return entries

    def count(self) -> int:
        found = self._state.call(
            lambda: sum(1 for _ in self._state.client.scan_iter(match=f"{self._prefix}prep:*"))
        )
        return int(found)

    def cursor_key(self) -> bytes:
        return self._state.cursor_key()

    def _token(self, key: str) -> str:
        return f"{self._prefix}token:{_digest(key)}"

    def token_get(self, key: str) -> bytes | None:
        found = self._state.call(self._state.client.get, self._token(key))
        return found if isinstance(found, bytes) else None

    def token_put(self, key: str, sealed: bytes, lifetime_seconds: float) -> None:
        if lifetime_seconds <= 0:
            self._state.call(self._state.client.delete, self._token(key))
            return
        milliseconds = max(1, math.floor(lifetime_seconds * 1000))
        self._state.call(self._state.client.set, self._token(key), sealed, px=milliseconds)
