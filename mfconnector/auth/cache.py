"""The token cache on disk: encrypted where the platform can, private and atomic always.

Why our own small wrapper instead of msal-extensions' ``PersistedTokenCache``: that class
writes through on every ``modify`` (one msal refresh makes several), truncates the file in
place (a crash mid-write loses the refresh token), and its fallback lock is a file that a
crashed process leaves behind. Here:

* ``JournaledTokenCache`` (an ``msal.SerializableTokenCache``) records each change msal
  makes. ``TokenStore.commit()`` writes only when ``has_state_changed``; if another process
  wrote the file since we read it, our changes are replayed on top of its state first, so
  neither side's rotated refresh token is lost and an unchanged cache is never rewritten.
* ``PlaintextFilePersistence`` (the headless-Linux fallback, opt-in only) writes a temporary
  file created 0600 in the same directory, fsyncs it and ``os.replace``s it over the cache;
  it refuses a cache that is a symlink, not ours, or cannot be made 0600.
* ``CacheLock`` is an ``flock`` on ``<cache>.lock``: held only while reading or writing (never
  across a network call), released by the kernel if the process dies.

Encryption comes from msal-extensions' ``build_encrypted_persistence`` (DPAPI, Keychain,
libsecret). Everything here blocks, so the server calls it from its msal worker thread.
msal is imported inside functions: this module is only loaded in live mode.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import stat
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from mfconnector.auth.config import AuthConfig
from mfconnector.errors import AuthError

__all__ = [
    "CacheLock",
    "JournaledTokenCache",
    "Persistence",
    "PlaintextFilePersistence",
    "TokenStore",
    "ensure_private_dir",
    "open_persistence",
    "open_token_store",
]

log = logging.getLogger("mfconnector.auth")

MAX_CACHE_BYTES = 4_000_000
"""A token cache with one account is a few KB; anything near this is not ours."""
_POSIX = os.name == "posix"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Signature = tuple[float, ...] | None
"""What changes whenever the stored cache changes (inode, mtime, size); None when absent."""


def _cache_error(
    message: str, *, hint: str | None = None, code: str = "cache_unusable"
) -> AuthError:
    return AuthError(message, hint=hint, code=code)


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class Persistence(Protocol):
    """Where the serialized cache lives. Implementations block."""

    @property
    def encrypted(self) -> bool: ...

    @property
    def location(self) -> str: ...

    def signature(self) -> Signature: ...

    def read(self) -> tuple[str | None, Signature]: ...

    def write(self, data: str) -> Signature: ...


def ensure_private_dir(directory: Path) -> None:
    """Create missing directories (only those) with mode 0700."""
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        if _POSIX:
            os.chmod(path, 0o700)  # the umask may have taken bits we meant to keep


class PlaintextFilePersistence:
    """A 0600 JSON file, replaced atomically. Used only with the plaintext opt-in."""

    encrypted = False

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def location(self) -> str:
        return str(self.path)

    def signature(self) -> Signature:
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return (float(st.st_ino), float(st.st_mtime_ns), float(st.st_size))

    def _check_private(self, fd: int, st: os.stat_result) -> None:
        if not stat.S_ISREG(st.st_mode):
            raise _cache_error(f"the token cache {self.path} is not a regular file")
        if not _POSIX:
            return
        if st.st_uid != os.geteuid():
            raise _cache_error(
                f"the token cache {self.path} belongs to another user: refused",
                hint="use --cache-path for a file of your own",
            )
        if st.st_mode & 0o077:
            log.warning("token cache %s was readable by others: mode set to 0600", self.path)
            os.fchmod(fd, 0o600)
            if os.fstat(fd).st_mode & 0o077:
                raise _cache_error(f"the token cache {self.path} cannot be made private (0600)")

    def read(self) -> tuple[str | None, Signature]:
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            if self.path.is_symlink():
                raise _cache_error(f"the token cache {self.path} is a symlink: refused") from None
            raise _cache_error(
                f"cannot read the token cache {self.path}: {_os_reason(exc)}"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(fd)
            self._check_private(fd, st)
            raw = handle.read(MAX_CACHE_BYTES + 1)
        if len(raw) > MAX_CACHE_BYTES:
            raise _cache_error(f"the token cache {self.path} is too large to be a token cache")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _cache_error(f"the token cache {self.path} is not UTF-8 text") from None
        return text, (float(st.st_ino), float(st.st_mtime_ns), float(st.st_size))

    def write(self, data: str) -> Signature:
        directory = self.path.parent
        ensure_private_dir(directory)
        fd, tmp_name = tempfile.mkstemp(
            prefix="." + self.path.name + ".", suffix=".tmp", dir=directory
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                if _POSIX:
                    os.fchmod(fd, 0o600)  # mkstemp already does; say it where it matters
                handle.write(data.encode("utf-8"))
                handle.flush()
                os.fsync(fd)
            os.replace(tmp_name, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            raise
        _fsync_dir(directory)
        st = os.stat(self.path, follow_symlinks=False)
        if _POSIX and stat.S_IMODE(st.st_mode) != 0o600:
            os.chmod(self.path, 0o600)
            st = os.stat(self.path, follow_symlinks=False)
            if stat.S_IMODE(st.st_mode) != 0o600:
                os.unlink(self.path)
                raise _cache_error(
                    f"the file system under {directory} cannot keep the token cache private "
                    "(0600): nothing was saved",
                    hint="use --cache-path on a local file system",
                )
        return (float(st.st_ino), float(st.st_mtime_ns), float(st.st_size))


def _fsync_dir(directory: Path) -> None:
    if not _POSIX:
        return
    fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ExtensionPersistence:
    """msal-extensions' encrypted store (DPAPI file, Keychain or libsecret + signal file)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def encrypted(self) -> bool:
        return bool(self._inner.is_encrypted)

    @property
    def location(self) -> str:
        return str(self._inner.get_location())

    def signature(self) -> Signature:
        from msal_extensions.persistence import PersistenceNotFound

        try:
            return (float(self._inner.time_last_modified()),)
        except PersistenceNotFound:
            return None

    def read(self) -> tuple[str | None, Signature]:
        from msal_extensions.persistence import PersistenceNotFound

        signature = self.signature()
        try:
            data = self._inner.load()
        except PersistenceNotFound:
            return None, None
        return (str(data) if data is not None else None), signature

    def write(self, data: str) -> Signature:
        self._inner.save(data)
        return self.signature()


def open_persistence(path: Path, *, allow_plaintext: bool) -> Persistence:
    """The encrypted store if this machine has one; else the plaintext file, if opted in."""
    try:
        from msal_extensions import build_encrypted_persistence

        return ExtensionPersistence(build_encrypted_persistence(str(path)))
    except (ImportError, RuntimeError) as exc:
        # ImportError: no PyGObject/libsecret; RuntimeError: no Secret Service (headless).
        reason = (
            "the keyring library (PyGObject with libsecret) is not installed"
            if isinstance(exc, ImportError)
            else "no keyring service is running (a headless or SSH session)"
        )
        if not allow_plaintext:
            raise AuthError(
                f"no encrypted token storage on this machine: {reason}",
                hint="to keep the token cache in a plaintext file only you can read (mode 0600), "
                "pass --allow-plaintext-cache or set MFC_ALLOW_PLAINTEXT_CACHE=1",
                code="cache_encryption_unavailable",
            ) from None
        log.info("token cache is a plaintext file (%s): %s", reason, path)
        return PlaintextFilePersistence(path)


class CacheLock:
    """Cross-process lock for reading or writing the cache; short holds, no stale files."""

    def __init__(self, path: Path, timeout_seconds: float) -> None:
        self.path = path
        self.timeout_seconds = timeout_seconds
        self._fd: int | None = None
        self._fallback: Any = None

    def __enter__(self) -> CacheLock:
        try:
            import fcntl
        except ImportError:  # Windows: msal-extensions' exclusive-create lock file
            from msal_extensions import CrossPlatLock, LockError

            self._fallback = CrossPlatLock(str(self.path))
            try:
                self._fallback.__enter__()
            except LockError:
                raise self._busy() from None
            return self
        ensure_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
        deadline = time.monotonic() + self.timeout_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise self._busy() from None
                time.sleep(0.02)
        self._fd = fd
        return self

    def _busy(self) -> AuthError:
        return _cache_error(
            f"the token cache is locked by another process (waited {self.timeout_seconds:g} s)",
            hint=f"retry; if no other mfconnector is running, remove {self.path}",
            code="cache_locked",
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fallback is not None:
            self._fallback.__exit__(exc_type, exc, tb)
            self._fallback = None
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


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
            self._journal: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []

        def modify(
            self,
            credential_type: str,
            old_entry: dict[str, Any],
            new_key_value_pairs: dict[str, Any] | None = None,
        ) -> None:
            with self._lock:
                super().modify(credential_type, old_entry, new_key_value_pairs)
                new = dict(new_key_value_pairs) if new_key_value_pairs else None
                self._journal.append((credential_type, dict(old_entry), new))

        def replace_state(self, state: dict[str, Any]) -> None:
            """Adopt a stored state, then replay the changes not yet saved on top of it."""
            with self._lock:
                self._cache = state
                for credential_type, old_entry, new in self._journal:
                    base.modify(self, credential_type, old_entry, new)
                self.has_state_changed = bool(self._journal)

        def mark_saved(self) -> None:
            with self._lock:
                self._journal.clear()

        def snapshot(self, credential_type: str) -> list[dict[str, Any]]:
            """Copies of the entries of one type, without msal's search side effects."""
            with self._lock:
                return [dict(e) for e in self._cache.get(credential_type, {}).values()]

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
        raise _cache_error(
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
            raise _cache_error(
                f"cannot read the token cache {self.location}: {_os_reason(exc)}"
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
            raise _cache_error(
                f"cannot write the token cache {self.location}: {_os_reason(exc)}",
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
        raise _cache_error(
            f"cannot create the token cache directory {path.parent}: {_os_reason(exc)}"
        ) from None
    persistence = open_persistence(path, allow_plaintext=config.allow_plaintext_cache)
    return TokenStore(
        persistence,
        lock_path=path.with_name(path.name + ".lock"),
        lock_timeout_seconds=config.lock_timeout_seconds,
    )
