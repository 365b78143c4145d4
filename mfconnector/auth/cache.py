"""The token cache: msal's ``SerializableTokenCache`` kept in step with its persistence.

Why our own small wrapper instead of msal-extensions' ``PersistedTokenCache``: that class
writes through on every ``modify`` (one msal refresh makes several), truncates the file in
place (a crash mid-write loses the refresh token), and its fallback lock is a file that a
crashed process leaves behind. Here:

* ``JournaledTokenCache`` records each change msal makes. ``TokenStore.commit()`` writes only
  when ``has_state_changed``; if another process wrote the store since we read it, our
  changes are replayed on top of its state first, so neither side's rotated refresh token is
  lost and an unchanged cache is never rewritten. It uses only msal's public cache API
  (``modify``, ``serialize``, ``deserialize``, ``has_state_changed``) under a lock of its own.
* ``CacheLock`` is ``filelock``'s lock on ``<cache>.lock`` (``flock`` on Unix, ``msvcrt``
  locking on Windows): held only while reading or writing (never across a network call), and
  released by the operating system if the process dies.

Where the cache is stored (encrypted or, opted in, a 0600 file) is ``persistence``'s job.
Everything here blocks, so the server calls it from its msal worker thread. msal is
imported inside functions: this module is only loaded in live mode.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from mfconnector.auth.config import AuthConfig
from mfconnector.auth.persistence import (
    Persistence,
    Signature,
    cache_error,
    ensure_private_dir,
    open_persistence,
    os_reason,
)

__all__ = [
    "CacheLock",
    "JournaledTokenCache",
    "TokenStore",
    "ensure_private_dir",
    "open_token_store",
]

log = logging.getLogger("mfconnector.auth")


class CacheLock:
    """Cross-process lock for reading or writing the cache; short holds, no stale locks."""

    def __init__(self, path: Path, timeout_seconds: float) -> None:
        import filelock

        self.path = path
        self.timeout_seconds = timeout_seconds
        self._lock = filelock.FileLock(path, timeout=timeout_seconds, mode=0o600)

    def __enter__(self) -> CacheLock:
        import filelock

        ensure_private_dir(self.path.parent)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise cache_error(
                f"the token cache is locked by another process (waited {self.timeout_seconds:g} s)",
                hint="another mfconnector (a server or `login`) is writing the token cache: "
                "retry in a moment (a lock left by a crashed process is released by the system)",
                code="cache_locked",
            ) from None
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.release()


class JournaledTokenCache(Protocol):
    """What we use of our ``msal.SerializableTokenCache`` subclass (see ``new_token_cache``)."""

    has_state_changed: bool

    def serialize(self) -> str: ...

    def modify(
        self,
        credential_type: str,
        old_entry: dict[str, Any],
        new_key_value_pairs: dict[str, Any] | None = None,
    ) -> None: ...

    def replace_state(self, state: dict[str, Any]) -> None: ...

    def mark_saved(self) -> None: ...

    def snapshot(self, credential_type: str) -> list[dict[str, Any]]: ...


@functools.cache
def _journaled_class() -> type[Any]:
    import msal

    base: Any = msal.SerializableTokenCache

    class _JournaledTokenCache(base):  # type: ignore[misc]
        """Records every change so it can be replayed onto a newer stored state."""

        def __init__(self) -> None:
            super().__init__()
            self._journal_lock = threading.RLock()
            self._journal: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []

        def modify(
            self,
            credential_type: str,
            old_entry: dict[str, Any],
            new_key_value_pairs: dict[str, Any] | None = None,
        ) -> None:
            with self._journal_lock:
                super().modify(credential_type, old_entry, new_key_value_pairs)
                new = dict(new_key_value_pairs) if new_key_value_pairs else None
                self._journal.append((credential_type, dict(old_entry), new))

        def replace_state(self, state: dict[str, Any]) -> None:
            """Adopt a stored state, then replay the changes not yet saved on top of it."""
            with self._journal_lock:
                self.deserialize(json.dumps(state))
                for credential_type, old_entry, new in self._journal:
                    base.modify(self, credential_type, old_entry, new)
                self.has_state_changed = bool(self._journal)

        def mark_saved(self) -> None:
            with self._journal_lock:
                self._journal.clear()

        def snapshot(self, credential_type: str) -> list[dict[str, Any]]:
            """Copies of the entries of one type. ``search`` would drop expired access
            tokens as it goes, and ``serialize`` clears ``has_state_changed``: keep it."""
            with self._journal_lock:
                changed = self.has_state_changed
                state = json.loads(self.serialize())
                self.has_state_changed = changed
            section = state.get(credential_type, {})
            return [dict(e) for e in section.values()] if isinstance(section, dict) else []

    return _JournaledTokenCache


def new_token_cache() -> JournaledTokenCache:
    cache: JournaledTokenCache = _journaled_class()()
    return cache


def _parse_state(text: str | None, location: str) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        state = json.loads(text)
    except ValueError:
        state = None
    if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
        raise cache_error(
            f"the token cache {location} is damaged (not an msal token cache)",
            hint="delete it and run `mfconnector login`",
        )
    return state


class TokenStore:
    """An msal token cache kept in step with its persistence. Use from one thread at a time."""

    def __init__(
        self, persistence: Persistence, *, lock_path: Path, lock_timeout_seconds: float = 10.0
    ) -> None:
        self.persistence = persistence
        self.cache = new_token_cache()
        self._lock = CacheLock(lock_path, lock_timeout_seconds)
        self._signature: Signature = None
        self._loaded = False

    @property
    def encrypted(self) -> bool:
        return self.persistence.encrypted

    @property
    def location(self) -> str:
        return self.persistence.location

    @property
    def description(self) -> str:
        """How it is stored: "Windows DPAPI", "macOS Keychain", "plaintext file, mode 0600"."""
        return self.persistence.description

    def _load_locked(self) -> None:
        text, signature = self.persistence.read()
        self.cache.replace_state(_parse_state(text, self.location))
        self._signature = signature
        self._loaded = True

    def refresh(self) -> None:
        """Re-read the stored cache if another process changed it (a stat when it did not)."""
        try:
            signature = self.persistence.signature()
            if self._loaded and signature == self._signature:
                return
            if not self._loaded and signature is None:
                self.cache.replace_state({})  # nothing stored yet: no lock, no lock file
                self._loaded = True
                return
            with self._lock:
                self._load_locked()
        except OSError as exc:
            raise cache_error(
                f"cannot read the token cache {self.location}: {os_reason(exc)}"
            ) from None

    def commit(self) -> bool:
        """Save msal's changes, if there are any. Returns whether anything was written."""
        if not self.cache.has_state_changed:
            return False
        try:
            with self._lock:
                if not self._loaded or self.persistence.signature() != self._signature:
                    self._load_locked()  # another process wrote: replay our changes onto it
                text = self.cache.serialize()
                try:
                    self._signature = self.persistence.write(text)
                except BaseException:
                    self.cache.has_state_changed = True
                    raise
                self.cache.mark_saved()
        except OSError as exc:
            raise cache_error(
                f"cannot write the token cache {self.location}: {os_reason(exc)}",
                hint="check the directory's permissions and free space",
            ) from None
        log.debug("token cache saved to %s", self.location)
        return True


def open_token_store(config: AuthConfig) -> TokenStore:
    """The store for ``config.cache_path``; raises ``AuthError`` when it cannot be private."""
    path = config.cache_path
    try:
        ensure_private_dir(path.parent)
    except OSError as exc:
        raise cache_error(
            f"cannot create the token cache directory {path.parent}: {os_reason(exc)}"
        ) from None
    persistence = open_persistence(
        path,
        allow_plaintext=config.allow_plaintext_cache,
        max_bytes=config.limits.token_cache_bytes,
    )
    return TokenStore(
        persistence,
        lock_path=path.with_name(path.name + ".lock"),
        lock_timeout_seconds=config.lock_timeout_seconds,
    )
