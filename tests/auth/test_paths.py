"""Platform paths for the token cache and the state directory, and the encrypted token store
chosen per platform (msal-extensions' classes are replaced by recorders: this Linux machine
cannot run DPAPI or the Keychain)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, ClassVar

import platformdirs
import pytest

from mfconnector.auth.config import AuthConfig
from mfconnector.auth.persistence import (
    ENCRYPTED_STORES,
    ExtensionPersistence,
    PlaintextFilePersistence,
    build_encrypted_store,
    open_persistence,
)
from mfconnector.errors import AuthError
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.paths import default_cache_path, default_state_dir


@pytest.mark.parametrize(
    ("platform", "env", "cache", "state"),
    [
        (
            "win32",
            {"LOCALAPPDATA": r"C:\Users\adele\AppData\Local"},
            Path(r"C:\Users\adele\AppData\Local") / "mfconnector" / "Cache" / "token_cache.json",
            Path(r"C:\Users\adele\AppData\Local") / "mfconnector",
        ),
        (
            "darwin",
            {"HOME": "/Users/adele"},
            Path("/Users/adele/Library/Caches/mfconnector/token_cache.json"),
            Path("/Users/adele/Library/Application Support/mfconnector"),
        ),
        (
            "linux",
            {"HOME": "/home/adele"},
            Path("/home/adele/.cache/mfconnector/token_cache.json"),
            Path("/home/adele/.local/state/mfconnector"),
        ),
        (
            "linux",
            {"HOME": "/home/adele", "XDG_CACHE_HOME": "/x/cache", "XDG_STATE_HOME": "/x/state"},
            Path("/x/cache/mfconnector/token_cache.json"),
            Path("/x/state/mfconnector"),
        ),
        (
            "linux",  # relative XDG values are ignored, as the XDG spec says
            {"HOME": "/home/adele", "XDG_CACHE_HOME": "rel", "XDG_STATE_HOME": "rel"},
            Path("/home/adele/.cache/mfconnector/token_cache.json"),
            Path("/home/adele/.local/state/mfconnector"),
        ),
    ],
)
def test_each_platform_gets_its_conventional_directories(
    platform: str, env: dict[str, str], cache: Path, state: Path
) -> None:
    assert default_cache_path(env, platform=platform) == cache
    assert default_state_dir(env, platform=platform) == state


def test_this_machine_agrees_with_platformdirs() -> None:
    expected_cache = platformdirs.user_cache_path("mfconnector", appauthor=False)
    expected_state = platformdirs.user_state_path("mfconnector", appauthor=False)
    assert default_cache_path(os.environ) == expected_cache / "token_cache.json"
    assert default_state_dir(os.environ) == expected_state


def test_the_sign_in_configuration_uses_the_platform_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert AuthConfig().cache_path == default_cache_path(os.environ)


class Recorder:
    """Stands in for one msal-extensions store class and records how it was built."""

    calls: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, location: str, **kwargs: Any) -> Any:
        Recorder.calls.append((self.name, location, kwargs))
        return _Stored()


class _Stored:
    is_encrypted = True

    def get_location(self) -> str:
        return "somewhere"


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    import msal_extensions

    Recorder.calls = []
    for store in ENCRYPTED_STORES.values():
        monkeypatch.setattr(msal_extensions, store.class_name, Recorder(store.class_name))
    return Recorder.calls


@pytest.mark.parametrize(
    ("platform", "class_name", "description"),
    [
        ("win32", "FilePersistenceWithDataProtection", "Windows DPAPI"),
        ("darwin", "KeychainPersistence", "macOS Keychain"),
        ("linux", "LibsecretPersistence", "Secret Service (libsecret)"),
    ],
)
def test_each_platform_gets_its_encrypted_store(
    recorded: list[tuple[str, str, dict[str, Any]]],
    tmp_path: Path,
    platform: str,
    class_name: str,
    description: str,
) -> None:
    path = tmp_path / "token_cache.json"
    persistence = open_persistence(
        path, allow_plaintext=False, max_bytes=DEFAULT_LIMITS.token_cache_bytes, platform=platform
    )
    assert isinstance(persistence, ExtensionPersistence)
    assert persistence.encrypted and persistence.description == description
    ((name, location, kwargs),) = recorded
    assert (name, location) == (class_name, str(path))
    if platform == "darwin":
        assert kwargs == {"service_name": "mfconnector", "account_name": "token_cache"}
    if platform == "linux":
        assert kwargs["attributes"] == {"app": "mfconnector"}


def test_a_platform_without_a_store_needs_the_plaintext_opt_in(
    recorded: list[tuple[str, str, dict[str, Any]]], tmp_path: Path
) -> None:
    path = tmp_path / "token_cache.json"
    with pytest.raises(LookupError):
        build_encrypted_store(path, "freebsd14")
    with pytest.raises(AuthError) as caught:
        open_persistence(
            path,
            allow_plaintext=False,
            max_bytes=DEFAULT_LIMITS.token_cache_bytes,
            platform="freebsd14",
        )
    assert caught.value.code == "cache_encryption_unavailable"
    assert "no encrypted store on freebsd14" in caught.value.message
    assert "--allow-plaintext-cache" in (caught.value.hint or "")
    plain = open_persistence(
        path, allow_plaintext=True, max_bytes=DEFAULT_LIMITS.token_cache_bytes, platform="freebsd14"
    )
    assert isinstance(plain, PlaintextFilePersistence) and not plain.encrypted
    assert recorded == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's store only")
def test_linux_without_a_keyring_library_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import msal_extensions

    def no_gi(location: str, **kwargs: Any) -> Any:
        raise ImportError("Unable to import module 'gi'")

    monkeypatch.setattr(msal_extensions, "LibsecretPersistence", no_gi)
    with pytest.raises(AuthError) as caught:
        open_persistence(
            tmp_path / "c.json", allow_plaintext=False, max_bytes=DEFAULT_LIMITS.token_cache_bytes
        )
    assert "PyGObject with libsecret" in caught.value.message


@pytest.mark.parametrize("slack", [-1, 0, 1])
def test_a_token_cache_is_read_up_to_its_size_limit(tmp_path: Path, slack: int) -> None:
    path = tmp_path / "token_cache.json"
    size = DEFAULT_LIMITS.token_cache_bytes + slack
    data = '{"AccessToken": {}, "pad": "' + "x" * (size - 30) + '"}'
    assert len(data) == size
    path.write_text(data)
    path.chmod(0o600)
    store = PlaintextFilePersistence(path, max_bytes=DEFAULT_LIMITS.token_cache_bytes)
    if slack <= 0:
        assert store.read()[0] == data
    else:
        with pytest.raises(AuthError, match="too large to be a token cache"):
            store.read()
