"""Browser sign-in: msal's real authorization-code flow with PKCE, against the fake identity
provider, with a test browser that loads the sign-in page and follows its form_post to the
loopback redirect over real HTTP. Failures end in a message that names the other flow where
that one may get through."""

from __future__ import annotations

import argparse
import io
import logging
import threading
import urllib.request
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from mfconnector.auth import commands
from mfconnector.auth.config import AuthConfig
from mfconnector.auth.sessions import DelegatedSession, broker_available
from mfconnector.cli import build_parser
from tests.support.idp_fake import FakeIdP

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


pytestmark = pytest.mark.usefixtures("no_keyring")


@pytest.fixture
def config(tmp_path: Path) -> AuthConfig:
    return AuthConfig(
        client_id=CLIENT_ID,
        cache_path=tmp_path / "cache" / "token_cache.json",
        allow_plaintext_cache=True,
        call_timeout_seconds=10.0,
    )


@pytest.fixture
def idp() -> FakeIdP:
    return FakeIdP(client_id=CLIENT_ID)


class FakeBrowser:
    """Plays the user's browser: the sign-in page, then the form_post to the redirect URI."""

    def __init__(self, idp: FakeIdP, *, opens: bool = True, follows: bool = True) -> None:
        self.idp = idp
        self.opens = opens
        self.follows = follows
        self.opened: list[str] = []
        self.pages: list[tuple[int, str]] = []
        self.errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        if self.follows:
            thread = threading.Thread(target=self.follow, args=(url,), daemon=True)
            self._threads.append(thread)
            thread.start()
        return self.opens

    def follow(self, url: str) -> None:
        try:
            answer = self.idp.authorize(url)
            request = urllib.request.Request(
                answer.redirect_uri,
                data=urlencode(answer.form).encode("ascii"),
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            with _NO_PROXY.open(request, timeout=10) as response:
                self.pages.append((response.status, response.read().decode("utf-8")))
        except BaseException as exc:
            self.errors.append(exc)

    def join(self) -> None:
        for thread in self._threads:
            thread.join(10)


def login(config: AuthConfig, idp: FakeIdP, browser: Any, **kwargs: Any) -> tuple[int, str]:
    out = io.StringIO()
    code = commands.login(config, http_client=idp, browser=browser, stream=out, **kwargs)
    if isinstance(browser, FakeBrowser):
        browser.join()
    return code, out.getvalue()


@pytest.mark.slow
def test_browser_sign_in_names_the_account_and_granted_scopes(
    config: AuthConfig, idp: FakeIdP, capsys: pytest.CaptureFixture[str]
) -> None:
    browser = FakeBrowser(idp)
    code, text = login(config, idp, browser)
    assert code == 0, text
    assert "Signed in as adele.vance@contoso.example" in text
    assert "Granted scopes: Files.Read, Mail.Read, MailboxSettings.Read, User.Read." in text
    assert browser.errors == []
    assert browser.pages and browser.pages[0][0] == 200
    assert "Signed in to mfconnector" in browser.pages[0][1]
    # The authorization request: PKCE S256, a loopback redirect on the receiver's port.
    (asked,) = idp.authorize_requests
    assert asked["code_challenge_method"] == "S256"
    assert asked["redirect_uri"].startswith("http://localhost:")
    assert asked["prompt"] == "select_account"
    assert "Mail.Read" in asked["scope"]
    (redeemed,) = idp.token_requests("authorization_code")
    assert redeemed.data["code_verifier"] and redeemed.data["redirect_uri"] == asked["redirect_uri"]
    # Saved, and the server can use it: one refresh token in the cache.
    assert '"RefreshToken"' in config.cache_path.read_text()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert not any(secret in text for secret in idp.secrets())


@pytest.mark.slow
def test_browser_sign_in_leaks_no_code_or_token_to_output_or_logs(
    config: AuthConfig,
    idp: FakeIdP,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    browser = FakeBrowser(idp)
    code, text = login(config, idp, browser, method="browser")
    assert code == 0, text
    (redeemed,) = idp.token_requests("authorization_code")
    captured = capsys.readouterr()
    assert captured.out == ""
    everything = "\n".join(
        [text, captured.err, caplog.text, *(r.getMessage() for r in caplog.records)]
    )
    secrets = [*idp.secrets(), str(redeemed.data["code_verifier"])]
    assert len(secrets) >= 5  # the code, its verifier, access, refresh and id tokens
    assert [s[:12] for s in secrets if s in everything] == []


@pytest.mark.slow
def test_auto_picks_the_browser_when_one_is_given(config: AuthConfig, idp: FakeIdP) -> None:
    code, text = login(config, idp, FakeBrowser(idp), method="auto")
    assert code == 0 and "device" not in text.lower()
    assert idp.token_requests("urn:ietf:params:oauth:grant-type:device_code") == []


def test_no_browser_here_means_a_device_code(
    config: AuthConfig, idp: FakeIdP, monkeypatch: pytest.MonkeyPatch
) -> None:
    def nothing_to_open(using: str | None = None) -> Any:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", nothing_to_open)  # a headless machine
    code, text = login(config, idp, None, method="auto")
    assert code == 0, text
    assert "No web browser can be opened here: signing in with a device code." in text
    assert "https://microsoft.com/devicelogin" in text
    assert idp.authorize_requests == []


@pytest.mark.slow
def test_a_browser_that_does_not_open_shows_the_address(config: AuthConfig, idp: FakeIdP) -> None:
    browser = FakeBrowser(idp, opens=False)  # the user copies the address by hand
    code, text = login(config, idp, browser, method="browser")
    assert code == 0, text
    assert "No browser could be opened" in text
    (address,) = browser.opened
    assert address in text
    query = dict(parse_qsl(urlsplit(address).query))
    assert query["client_id"] == CLIENT_ID


@pytest.mark.slow
def test_declining_in_the_browser_is_named(config: AuthConfig, idp: FakeIdP) -> None:
    idp.authorize_error = "user_declined"
    code, text = login(config, idp, FakeBrowser(idp), method="browser")
    assert code == 1
    assert "error: sign-in was declined" in text and "AADSTS65004" in text
    assert idp.token_requests() == []


@pytest.mark.slow
def test_a_missing_redirect_uri_points_to_the_device_code(config: AuthConfig, idp: FakeIdP) -> None:
    idp.token_errors = ["redirect_uri_mismatch"]
    code, text = login(config, idp, FakeBrowser(idp), method="browser")
    assert code == 1
    assert "no http://localhost redirect URI" in text and "(AADSTS50011)" in text
    assert "Mobile and desktop applications" in text
    assert "`mfconnector login --device-code`" in text


def test_a_blocked_device_code_points_to_the_browser(config: AuthConfig, idp: FakeIdP) -> None:
    idp.devicecode_error = "device_code_blocked"
    code, text = login(config, idp, None, method="device-code")
    assert code == 1
    assert "policy blocks sign-in with a device code (AADSTS530033)" in text
    assert "without --device-code" in text


@pytest.mark.slow
def test_a_browser_sign_in_never_finished_times_out_clearly(
    config: AuthConfig, idp: FakeIdP
) -> None:
    browser = FakeBrowser(idp, follows=False)  # opened, and the user walked away
    code, text = login(config, idp, browser, method="browser", timeout_seconds=0.5)
    assert code == 1
    assert "did not finish within 1 s" in text
    assert "--device-code" in text


@pytest.mark.slow
def test_cancel_while_waiting_for_the_browser(config: AuthConfig, idp: FakeIdP) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    code, text = login(
        config, idp, FakeBrowser(idp, follows=False), method="browser", cancel=cancel
    )
    assert code == 130 and "Sign-in cancelled." in text


def test_login_flags_choose_the_flow() -> None:
    parser = build_parser()
    assert parser.parse_args(["login"]).login_method is None  # auto
    assert parser.parse_args(["login", "--device-code"]).login_method == "device-code"
    assert parser.parse_args(["login", "--browser"]).login_method == "browser"
    with pytest.raises(SystemExit):
        parser.parse_args(["login", "--browser", "--device-code"])


def test_the_windows_broker_is_used_only_where_it_exists(config: AuthConfig, idp: FakeIdP) -> None:
    import importlib.util

    installed = importlib.util.find_spec("pymsalruntime") is not None
    assert broker_available("win32") is installed
    assert broker_available("linux") is False and broker_available("darwin") is False
    assert DelegatedSession(config, http_client=idp).broker is False  # never with a fake IdP


def test_run_command_passes_the_flag(config: AuthConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def fake_login(config: AuthConfig, *, method: str, stream: Any) -> int:
        seen.append(method)
        return 0

    monkeypatch.setattr(commands, "login", fake_login)
    env = {"MFC_CLIENT_ID": CLIENT_ID, "MFC_CACHE_PATH": str(config.cache_path)}
    for argv, expected in ((["login"], "auto"), (["login", "--device-code"], "device-code")):
        args = build_parser().parse_args(argv)
        assert commands.run_command("login", args, env, stream=io.StringIO()) == 0
        assert seen[-1] == expected
    assert isinstance(build_parser().parse_args(["login"]), argparse.Namespace)
