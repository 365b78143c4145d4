"""Google sign-in for Gmail: the installed-app flow with PKCE on a loopback redirect, the
refresh token in the token store, silent refresh, logout and status, against a fake
Google token endpoint on 127.0.0.1 (never Google itself)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mfconnector.auth.google import (
    GoogleSettings,
    GoogleTokenProvider,
    google_login,
    google_logout,
    google_status,
)
from mfconnector.errors import AuthError
from mfconnector.gmail.scopes import MODIFY, READONLY, scopes_for
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.google_oauth_fake import FakeGoogle


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGoogle]:
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the fake listens on http
    fake = FakeGoogle()
    yield fake
    fake.close()


def _settings(fake: FakeGoogle, tmp_path: Path, scopes: tuple[str, ...]) -> GoogleSettings:
    return GoogleSettings(
        client_id="client-123.apps.googleusercontent.example",
        client_secret="not-so-secret",
        scopes=scopes,
        store_path=tmp_path / "cache" / "token_cache.gmail.json",
        allow_plaintext=True,
        login_command="mfconnector login --provider gmail",
        auth_uri="https://accounts.google.example/o/oauth2/auth",
        token_uri=fake.token_uri,
    )


@pytest.mark.slow
async def test_login_keeps_the_refresh_token_and_tokens_refresh_silently(
    google: FakeGoogle, tmp_path: Path
) -> None:
    import trio

    settings = _settings(google, tmp_path, scopes_for(writes=True))
    shown: list[str] = []

    def show(line: str) -> None:
        shown.append(line)
        google.browser(line)

    result = await trio.to_thread.run_sync(
        lambda: google_login(settings, open_browser=False, show=show, timeout_seconds=20)
    )
    assert set(result["scopes"]) == {READONLY, MODIFY}
    stored = settings.store_path.read_text()
    assert "refresh-1" in stored and "access-1" not in stored  # access tokens stay in memory
    assert settings.store_path.stat().st_mode & 0o077 == 0
    assert any("Sign in to Google" in line for line in shown)
    provider = GoogleTokenProvider(settings)
    first = await provider.get_token()
    assert first == "access-2" and await provider.get_token() == first  # kept until expiry
    assert await provider.get_token(force_refresh=True) == "access-3"
    assert google.refreshes == 2
    status = google_status(settings)
    assert status["signed_in"] and not status["missing_scopes"]
    assert "refresh-1" not in json.dumps(status) and "refresh-1" not in json.dumps(
        await provider.describe()
    )
    assert google_logout(settings) is True
    with pytest.raises(AuthError, match="not signed in") as caught:
        await GoogleTokenProvider(settings).get_token()
    assert caught.value.hint and "mfconnector login --provider gmail" in caught.value.hint


def _signed_in(settings: GoogleSettings, scopes: list[str]) -> None:
    settings.store_path.parent.mkdir(parents=True, exist_ok=True)
    settings.store_path.write_text(
        json.dumps({"refresh_token": "refresh-1", "scopes": scopes, "client_id": "x"})
    )
    settings.store_path.chmod(0o600)


async def test_a_sign_in_without_a_gate_s_scope_asks_for_login_again(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = _settings(google, tmp_path, scopes_for(writes=True))
    settings = dataclasses.replace(
        settings, login_command="mfconnector login --provider gmail --enable-writes"
    )
    _signed_in(settings, [READONLY])
    with pytest.raises(AuthError) as caught:
        await GoogleTokenProvider(settings).get_token()
    assert caught.value.code == "consent_required"
    assert caught.value.hint and "--enable-writes" in caught.value.hint
    assert google.refreshes == 0
    assert google_status(settings)["missing_scopes"] == [MODIFY]


async def test_a_revoked_refresh_token_says_so_in_our_words(
    google: FakeGoogle, tmp_path: Path
) -> None:
    settings = _settings(google, tmp_path, scopes_for())
    _signed_in(settings, [READONLY])
    google.refuse_refresh = True
    with pytest.raises(AuthError) as caught:
        await GoogleTokenProvider(settings).get_token()
    assert caught.value.code == "refresh_failed"
    assert "invalid_grant" not in caught.value.message and "refresh-1" not in caught.value.message


def test_the_gmail_token_is_its_own_item_in_the_encrypted_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import msal_extensions

    from mfconnector.auth.persistence import open_persistence

    calls: list[dict[str, object]] = []

    class Recorder:
        def __init__(self, location: str, **kwargs: object) -> None:
            calls.append(kwargs)

        is_encrypted = True

        def get_location(self) -> str:
            return "somewhere"

    monkeypatch.setattr(msal_extensions, "KeychainPersistence", Recorder)
    monkeypatch.setattr(msal_extensions, "LibsecretPersistence", Recorder)
    open_persistence(
        tmp_path / "a",
        allow_plaintext=False,
        max_bytes=DEFAULT_LIMITS.token_cache_bytes,
        platform="darwin",
        item="gmail_token",
    )
    open_persistence(
        tmp_path / "b",
        allow_plaintext=False,
        max_bytes=DEFAULT_LIMITS.token_cache_bytes,
        platform="linux",
        item="gmail_token",
    )
    open_persistence(
        tmp_path / "c",
        allow_plaintext=False,
        max_bytes=DEFAULT_LIMITS.token_cache_bytes,
        platform="linux",
    )
    assert calls[0]["account_name"] == "gmail_token"
    assert calls[1]["schema_name"] == "mfconnector.gmail_token"
    assert calls[1]["attributes"] != calls[2]["attributes"]  # never the Microsoft cache's item
    assert calls[2]["attributes"] == {"app": "mfconnector"}


@pytest.mark.slow
def test_google_libraries_stay_off_the_start_up_path() -> None:
    code = (
        "import sys\n"
        "import mfconnector.cli as cli\n"
        "from mfconnector.gmail.account import gmail_account\n"
        "from mfconnector.auth import StaticTokenProvider\n"
        "from mfconnector.limits import DEFAULT_LIMITS\n"
        "cli.build_parser().parse_args(['--demo'])\n"
        "gmail_account('g', token_provider=StaticTokenProvider('t'), limits=DEFAULT_LIMITS)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('google', 'google_auth_oauthlib', 'oauthlib', 'requests_oauthlib'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
