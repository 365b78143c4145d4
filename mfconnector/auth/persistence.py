"""Where the serialized token cache lives: an encrypted platform store, or (opt-in) a file.

Encrypted storage comes from msal-extensions, chosen explicitly per platform
(``ENCRYPTED_STORES``): Windows DPAPI (a file encrypted for this Windows user), the macOS
Keychain, the Secret Service through libsecret on Linux (GNOME Keyring, KWallet). Where none
works (headless Linux, no PyGObject, another Unix), the cache is refused unless the user
opted in to ``PlaintextFilePersistence``: a 0600 file replaced atomically, which refuses a
cache that is a symlink, not ours, or cannot be made 0600. Everything here blocks; msal
-extensions is imported inside functions.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mfconnector.errors import AuthError

__all__ = [
    "ENCRYPTED_STORES",
    "ExtensionPersistence",
    "Persistence",
    "PlaintextFilePersistence",
    "Signature",
    "build_encrypted_store",
    "cache_error",
    "ensure_private_dir",
    "open_persistence",
    "os_reason",
]

log = logging.getLogger("mfconnector.auth")

_POSIX = os.name == "posix"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SERVICE = "mfconnector"

Signature = tuple[float, ...] | None
"""What changes whenever the stored cache changes (inode, mtime, size); None when absent."""


@dataclass(frozen=True, slots=True)
class EncryptedStore:
    """One platform's encrypted store: msal-extensions' class and what to call it."""

    class_name: str
    description: str


ENCRYPTED_STORES: dict[str, EncryptedStore] = {
    "win32": EncryptedStore("FilePersistenceWithDataProtection", "Windows DPAPI"),
    "darwin": EncryptedStore("KeychainPersistence", "macOS Keychain"),
    "linux": EncryptedStore("LibsecretPersistence", "Secret Service (libsecret)"),
}
"""The only platforms with an encrypted store; anywhere else needs the plaintext opt-in."""


def build_encrypted_store(
    path: Path, platform: str = sys.platform, *, item: str = "token_cache"
) -> tuple[Any, str]:
    """msal-extensions' store for ``platform`` and its description. ``item`` names the
    secret in a keyring (the Microsoft cache is ``token_cache``; Gmail's refresh token
    is another item of the same store).

    Raises ``ImportError`` (its library is missing), ``RuntimeError`` (it cannot work here,
    for example no Secret Service in a headless session) or ``LookupError`` (no store for
    this platform at all).
    """
    store = ENCRYPTED_STORES.get("linux" if platform.startswith("linux") else platform)
    if store is None:
        raise LookupError(platform)
    import msal_extensions

    factory = getattr(msal_extensions, store.class_name)
    location = str(path)
    if store.class_name == "KeychainPersistence":
        return factory(location, service_name=_SERVICE, account_name=item), (store.description)
    if store.class_name == "LibsecretPersistence":
        attributes = {"app": _SERVICE} if item == "token_cache" else {"app": _SERVICE, "item": item}
        return factory(
            location, schema_name=f"{_SERVICE}.{item}", attributes=attributes
        ), store.description
    return factory(location), store.description


def cache_error(
    message: str, *, hint: str | None = None, code: str = "cache_unusable"
) -> AuthError:
    return AuthError(message, hint=hint, code=code)


def os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class Persistence(Protocol):
    """Where the serialized cache lives. Implementations block."""

    @property
    def encrypted(self) -> bool: ...

    @property
    def location(self) -> str: ...

    @property
    def description(self) -> str: ...

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
    description = "plaintext file, mode 0600"

    def __init__(self, path: Path, *, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        """A file larger than this (``token_cache_bytes``) is refused as no token cache."""

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
            raise cache_error(f"the token cache {self.path} is not a regular file")
        if not _POSIX:
            return
        if st.st_uid != os.geteuid():
            raise cache_error(
                f"the token cache {self.path} belongs to another user: refused",
                hint="use --cache-path for a file of your own",
            )
        if st.st_mode & 0o077:
            log.warning("token cache %s was readable by others: mode set to 0600", self.path)
            os.fchmod(fd, 0o600)
            if os.fstat(fd).st_mode & 0o077:
                raise cache_error(f"the token cache {self.path} cannot be made private (0600)")

    def read(self) -> tuple[str | None, Signature]:
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            if self.path.is_symlink():
                raise cache_error(f"the token cache {self.path} is a symlink: refused") from None
            raise cache_error(
                f"cannot read the token cache {self.path}: {os_reason(exc)}"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(fd)
            self._check_private(fd, st)
            raw = handle.read(self.max_bytes + 1)
        if len(raw) > self.max_bytes:
            raise cache_error(f"the token cache {self.path} is too large to be a token cache")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise cache_error(f"the token cache {self.path} is not UTF-8 text") from None
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
                raise cache_error(
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

    def __init__(self, inner: Any, description: str = "encrypted store") -> None:
        self._inner = inner
        self.description = description

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


def open_persistence(
    path: Path,
    *,
    allow_plaintext: bool,
    max_bytes: int,
    platform: str = sys.platform,
    item: str = "token_cache",
) -> Persistence:
    """The encrypted store if this machine has one; else the plaintext file (at most
    ``max_bytes``, the ``token_cache_bytes`` limit), if opted in."""
    try:
        inner, description = build_encrypted_store(path, platform, item=item)
        return ExtensionPersistence(inner, description)
    except (ImportError, RuntimeError, LookupError) as exc:
        if isinstance(exc, ImportError):
            reason = "the keyring library (PyGObject with libsecret) is not installed"
        elif isinstance(exc, LookupError):
            reason = f"mfconnector knows no encrypted store on {platform}"
        else:
            reason = "no keyring service is running (a headless or SSH session)"
        if not allow_plaintext:
            raise AuthError(
                f"no encrypted token storage on this machine: {reason}",
                hint="to keep the token cache in a plaintext file only you can read (mode 0600), "
                "pass --allow-plaintext-cache or set MFC_ALLOW_PLAINTEXT_CACHE=1",
                code="cache_encryption_unavailable",
            ) from None
        log.info("token cache is a plaintext file (%s): %s", reason, path)
        return PlaintextFilePersistence(path, max_bytes=max_bytes)
