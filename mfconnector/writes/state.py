"""The state store: what the acting tools keep between calls, whichever backend holds it.

Two backends implement ``StateStore``: the SQLite file of one machine
(``writes.store.SendStore``, the default) and Redis (``writes.redis_store``), which
replicas of a hosted server share so that any of them can confirm a preparation or
continue a cursor another one made. Both keep the same things with the same rules:

- preparations, and the one-time claim that moves one from ``prepared`` to ``sending``
  atomically (exactly one claimer wins, whatever process or replica asks);
- outcomes, kept ``outcome_retention_seconds``; a claim whose claimer died reads
  ``unknown`` and is never sent again;
- the audit trail of acting calls, for the same retention;
- the key continuation cursors are signed with;
- the on-behalf-of Graph token cache, sealed (encrypted) before it is stored.

Each store is opened for one ``namespace`` (a hosted user's subject key; empty for the
single person of a stdio server): nothing of one namespace is visible from another.
Every method blocks; trio code calls them through ``AsyncSendStore``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["Claim", "Preparation", "StateStore", "StateStoreError"]


class StateStoreError(Exception):
    """The state file cannot be used; the message names it and says what to do."""

    def __init__(self, message: str, *, hint: str = "") -> None:
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


class StateStore(Protocol):
    """One namespace's view of a state backend (SQLite file or Redis)."""

    instance: str
    """Names this process among the store's users (``host|pid|random``): claims carry it."""
    concurrency: int
    """Calls that may run at once from worker threads (SQLite: 1; Redis: a pool)."""

    @property
    def location(self) -> str:
        """Where the state lives, for messages: a path, ``memory``, or a password-free URL."""
        ...

    def check(self) -> None:
        """Reach the store now (start-up), raising ``StateStoreError`` if it is unusable."""
        ...

    def close(self) -> None: ...

    def save(self, preparation: Preparation) -> Preparation:
        """Store ``preparation`` unless its draft has a live one; return the live one."""
        ...

    def cancel(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None: ...

    def get(self, prepared_id: str, account: str, mailbox: str) -> Preparation | None:
        """The preparation as this account and mailbox may see it, orphans settled."""
        ...

    def claim(self, prepared_id: str, account: str, mailbox: str, digest: str) -> Claim:
        """``prepared`` -> ``sending`` exactly once, atomically, across every user."""
        ...

    def finish(self, prepared_id: str, state: str, outcome: dict[str, Any]) -> None:
        """Record the outcome of this instance's claim (only from ``sending``)."""
        ...

    def release(self, prepared_id: str) -> None:
        """Give back this instance's claim when its send never left the process (the
        sign-in stalled, the connection was refused): ``sending`` -> ``prepared``."""
        ...

    def record(self, account: str, mailbox: str, entry: dict[str, Any]) -> None:
        """Keep one audit entry for the retention period."""
        ...

    def recent(self, account: str, mailbox: str, limit: int) -> list[dict[str, Any]]:
        """The newest audit entries of this account and mailbox, newest first."""
        ...

    def count(self) -> int:
        """Preparations this namespace holds (tests and the bench)."""
        ...

    def cursor_key(self) -> bytes:
        """The cursor-signing key: shared by every replica of a shared store, kept in
        memory for this process by a local one."""
        ...

    def token_get(self, key: str) -> bytes | None:
        """A sealed cached token, or None (absent or expired)."""
        ...

    def token_put(self, key: str, sealed: bytes, lifetime_seconds: float) -> None:
        """Keep a sealed token for ``lifetime_seconds`` (not at all when that is <= 0)."""
        ...
