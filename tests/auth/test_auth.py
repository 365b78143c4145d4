"""Sign-in: msal's own code runs for real, offline, against a fake identity provider.

The only fake is ``tests/support/idp_fake.py`` at msal's ``http_client`` seam; our config, cache,
error mapping, provider and commands are the production code. Machines with a desktop
keyring are made to look headless (``headless`` fixture) so tests never touch a real
keyring; one test checks this machine as it is.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import logging
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio

from mfconnector.auth import commands
from mfconnector.auth.cache import open_token_store
from mfconnector.auth.config import (
    CLOUDS,
    RESERVED_SCOPES,
    AuthConfig,
    AuthConfigError,
    add_auth_arguments,
    auth_config_from_args,
    check_scopes,
)
from mfconnector.auth.errors import aadsts_codes, auth_error_from_result
from mfconnector.auth.msal_provider import MsalTokenProvider, build_token_provider
from mfconnector.auth.persistence import ENCRYPTED_STORES
from mfconnector.errors import AuthError
from tests.support.app_certs import app_key, write_app_certificate
from tests.support.idp_fake import ERRORS, FakeIdP, FakeUser

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
TENANT_ID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
REPO = Path(__file__).resolve().parents[2]
# The claims of graph-samples/http-401-claims-challenge.json, as Graph sends them (base64).
CLAIMS_B64 = "eyJhY2Nlc3NfdG9rZW4iOnsiYWNycyI6eyJlc3NlbnRpYWwiOnRydWUsInZhbHVlIjoiY3AxIn19fQ=="
CLAIMS_JSON = base64.b64decode(CLAIMS_B64).decode("utf-8")
LOGIN = "run `mfconnector login`"


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def headless(request: pytest.FixtureRequest) -> None:
    """Make every machine look like this headless one: no encrypted store to build."""
    if "real_machine" not in request.fixturenames:
        request.getfixturevalue("no_keyring")


@pytest.fixture
def real_machine() -> None:
    """Asked for by a test that must see this machine's keyring support as it is."""


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "mfconnector" / "token_cache.json"


@pytest.fixture
def config(cache_path: Path) -> AuthConfig:
    return AuthConfig(
        client_id=CLIENT_ID,
        cache_path=cache_path,
        allow_plaintext_cache=True,
        lock_timeout_seconds=2.0,
        call_timeout_seconds=10.0,
    )


@pytest.fixture
def idp() -> FakeIdP:
    return FakeIdP(client_id=CLIENT_ID)


def sign_in(config: AuthConfig, idp: FakeIdP, **kwargs: Any) -> str:
    """Run the real ``login`` command; return what it printed (to its stream)."""
    out = io.StringIO()
    assert (
        commands.login(config, method="device-code", http_client=idp, stream=out, **kwargs) == 0
    ), out.getvalue()
    return out.getvalue()


def cache_state(path: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return state


def refresh_secrets(path: Path) -> list[str]:
    return [e["secret"] for e in cache_state(path).get("RefreshToken", {}).values()]


# --- configuration ----------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_auth_arguments(parser)
    sub = parser.add_subparsers(dest="command")
    add_auth_arguments(sub.add_parser("login"))
    return parser.parse_args(list(argv))


def test_defaults_come_from_xdg_cache_home(tmp_path: Path) -> None:
    config = auth_config_from_args(parse(), {"XDG_CACHE_HOME": str(tmp_path)})
    assert config.cache_path == tmp_path / "mfconnector" / "token_cache.json"
    assert config.tenant == "common"
    assert config.authority == "https://login.microsoftonline.com/common"
    assert config.graph_root == "https://graph.microsoft.com/v1.0"
    assert config.scopes == ("User.Read", "Mail.Read", "MailboxSettings.Read", "Files.Read")
    assert config.user_path == "/me"
    assert config.mode == "delegated"
    assert not config.allow_plaintext_cache
    home = auth_config_from_args(parse(), {"HOME": str(tmp_path)})
    assert home.cache_path == tmp_path / ".cache" / "mfconnector" / "token_cache.json"


def test_environment_is_read_and_flags_override_it(tmp_path: Path) -> None:
    env = {
        "MFC_CLIENT_ID": CLIENT_ID,
        "MFC_TENANT": "organizations",
        "MFC_CLOUD": "usgov",
        "MFC_CACHE_PATH": str(tmp_path / "env.json"),
        "MFC_ALLOW_PLAINTEXT_CACHE": "1",
        "MFC_SCOPES_ALL_FILES": "true",
    }
    from_env = auth_config_from_args(parse(), env)
    assert from_env.client_id == CLIENT_ID
    assert from_env.tenant == "organizations"
    assert from_env.cloud is CLOUDS["usgov"]
    assert from_env.cache_path == tmp_path / "env.json"
    assert from_env.allow_plaintext_cache and from_env.all_files
    assert from_env.scopes == (
        "User.Read",
        "Mail.Read",
        "MailboxSettings.Read",
        "Files.Read.All",
        "Sites.Read.All",
    )

    other_id = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    flags = parse(
        "--tenant",
        "consumers",
        "login",
        "--client-id",
        other_id,
        "--cloud",
        "global",
        "--cache-path",
        str(tmp_path / "flag.json"),
        "--no-allow-plaintext-cache",
        "--no-all-files",
    )
    config = auth_config_from_args(flags, env)
    assert config.client_id == other_id
    assert config.tenant == "consumers"  # given before the subcommand, and kept
    assert config.cloud is CLOUDS["global"]
    assert config.cache_path == tmp_path / "flag.json"
    assert not config.allow_plaintext_cache and not config.all_files


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"MFC_CLIENT_ID": "my-app"}, "client id"),
        ({"MFC_TENANT": "https://evil.example/x"}, "not a tenant"),
        ({"MFC_CLOUD": "mars"}, "unknown cloud"),
        ({"MFC_ALLOW_PLAINTEXT_CACHE": "maybe"}, "MFC_ALLOW_PLAINTEXT_CACHE"),
        ({"MFC_CLIENT_SECRET": "s3cr3t-value", "MFC_TENANT": TENANT_ID}, "--user"),
        ({"MFC_CLIENT_SECRET": "s3cr3t-value", "MFC_USER": "a@b.example"}, "tenant id"),
        ({"MFC_APP_ONLY": "1", "MFC_USER": "a@b.example", "MFC_TENANT": TENANT_ID}, "credential"),
        ({"MFC_CLIENT_CERT_THUMBPRINT": "xyz"}, "thumbprint"),
    ],
)
def test_configuration_mistakes_are_named(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(AuthConfigError) as caught:
        auth_config_from_args(parse(), env)
    error = caught.value
    assert fragment in error.message + (error.hint or "")
    assert error.code == "config"
    assert "s3cr3t-value" not in error.message + (error.hint or "")


@pytest.mark.parametrize(
    ("cloud", "authority", "graph_root"),
    [
        ("global", "https://login.microsoftonline.com/", "https://graph.microsoft.com/v1.0"),
        ("usgov", "https://login.microsoftonline.us/", "https://graph.microsoft.us/v1.0"),
        ("dod", "https://login.microsoftonline.us/", "https://dod-graph.microsoft.us/v1.0"),
        (
            "china",
            "https://login.chinacloudapi.cn/",
            "https://microsoftgraph.chinacloudapi.cn/v1.0",
        ),
    ],
)
def test_clouds_pair_authority_with_graph_root(cloud: str, authority: str, graph_root: str) -> None:
    env = {"MFC_CLOUD": cloud, "MFC_TENANT": TENANT_ID}
    config = auth_config_from_args(parse(), env)
    assert config.authority == authority + TENANT_ID
    assert config.graph_root == graph_root
    app_only = auth_config_from_args(
        parse("--user", "adele@contoso.example"), {**env, "MFC_CLIENT_SECRET": "x"}
    )
    assert app_only.scopes == (graph_root.removesuffix("/v1.0") + "/.default",)


def test_app_only_user_path_is_one_quoted_segment() -> None:
    def path(user: str) -> str:
        return AuthConfig(app_only=True, user=user, client_secret="x", tenant=TENANT_ID).user_path

    assert path("adele@contoso.example") == "/users/adele@contoso.example"
    assert (
        path("9f5e7c3e-0000-4000-8000-000000000001")
        == "/users/9f5e7c3e-0000-4000-8000-000000000001"
    )
    assert path("adele_contoso.com#EXT#@fabrikam.example") == (
        "/users/adele_contoso.com%23EXT%23@fabrikam.example"
    )
    assert path("../me?x=1") == "/users/..%2Fme%3Fx=1"
    assert AuthConfig(user="adele@contoso.example").user_path == "/me"  # delegated ignores it


def test_reserved_scopes_are_refused_and_never_configured() -> None:
    for scopes in (["openid"], ["Mail.Read", "offline_access"], ["profile", "User.Read"]):
        with pytest.raises(AuthConfigError, match="reserved"):
            check_scopes(scopes)
    for config in (
        AuthConfig(),
        AuthConfig(all_files=True),
        AuthConfig(app_only=True, user="u", client_secret="x", cloud=CLOUDS["china"]),
    ):
        assert not set(config.scopes) & RESERVED_SCOPES


def test_secret_is_not_in_the_config_repr() -> None:
    config = auth_config_from_args(
        parse("--user", "a@b.example"),
        {"MFC_CLIENT_SECRET": "very-secret-value", "MFC_TENANT": TENANT_ID},
    )
    assert config.app_only
    assert "very-secret-value" not in repr(config)


def test_auth_package_does_not_import_msal() -> None:
    code = (
        "import sys, mfconnector.auth, mfconnector.auth.config, mfconnector.auth.errors, "
        "mfconnector.auth.cache, mfconnector.auth.msal_provider, mfconnector.auth.commands; "
        "assert 'msal' not in sys.modules, 'msal imported'; "
        "assert 'msal_extensions' not in sys.modules, 'msal_extensions imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=60)


# --- login ------------------------------------------------------------------------------------


def test_login_prints_the_code_to_stderr_only(
    config: AuthConfig, idp: FakeIdP, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        commands.login(config, method="device-code", http_client=idp) == 0
    )  # default stream: sys.stderr
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "https://microsoft.com/devicelogin" in captured.err
    assert "enter the code" in captured.err
    assert (
        f"Signed in as adele.vance@contoso.example (tenant {TENANT_ID}). "
        "Granted scopes: Files.Read, Mail.Read, MailboxSettings.Read, User.Read." in captured.err
    )
    assert "not encrypted" in captured.err
    assert captured.err.rstrip().splitlines()[-1].startswith("Signed in as ")
    # We passed no reserved scope (msal would have raised); msal added its own.
    (devicecode,) = [r for r in idp.requests if r.path.endswith("/devicecode")]
    assert devicecode.data["scope"].split() == sorted(
        [
            "Files.Read",
            "Mail.Read",
            "MailboxSettings.Read",
            "User.Read",
            "offline_access",
            "openid",
            "profile",
        ]
    )
    # CP1 is declared, so Graph may send claims challenges.
    (device_poll,) = idp.token_requests("urn:ietf:params:oauth:grant-type:device_code")
    assert json.loads(device_poll.data["claims"]) == {
        "access_token": {"xms_cc": {"values": ["CP1"]}}
    }


@pytest.mark.slow
def test_login_waits_through_authorization_pending(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, pending_polls=1, interval=1)
    text = sign_in(config, idp)
    assert "Signed in as" in text
    assert len(idp.token_requests("urn:ietf:params:oauth:grant-type:device_code")) == 2


def test_login_warns_about_scopes_that_were_not_granted(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, granted_scopes="Mail.Read User.Read openid profile")
    text = sign_in(config, idp)
    assert "warning: not granted: MailboxSettings.Read, Files.Read" in text
    assert "Granted scopes: Mail.Read, User.Read." in text


def test_login_all_files_asks_for_files_read_all(config: AuthConfig, idp: FakeIdP) -> None:
    config = AuthConfig(**{**_fields(config), "all_files": True})
    text = sign_in(config, idp)
    assert "Files.Read.All" in text
    (devicecode,) = [r for r in idp.requests if r.path.endswith("/devicecode")]
    assert "Files.Read.All" in devicecode.data["scope"].split()


def _fields(config: AuthConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in AuthConfig.__dataclass_fields__}


def test_login_cancel_returns_130_promptly(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, device_outcome="pending", interval=5)
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    out = io.StringIO()
    started = time.monotonic()
    timer.start()
    try:
        code = commands.login(
            config, method="device-code", http_client=idp, stream=out, cancel=cancel
        )
    finally:
        timer.cancel()
    assert code == 130
    assert time.monotonic() - started < 2.0
    assert "cancelled" in out.getvalue()
    assert not config.cache_path.exists()


@pytest.mark.slow
def test_login_ctrl_c_in_a_real_process(cache_path: Path) -> None:
    child = (
        "import signal, sys\n"
        "from pathlib import Path\n"
        "from tests.support.idp_fake import FakeIdP\n"
        "from mfconnector.auth.commands import login\n"
        "from mfconnector.auth.config import AuthConfig\n"
        "import msal_extensions\n"
        "def no_keyring(location):\n"
        "    raise ImportError('no gi')\n"
        "msal_extensions.build_encrypted_persistence = no_keyring\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal\n"
        f"config = AuthConfig(client_id={CLIENT_ID!r}, cache_path=Path(sys.argv[1]),\n"
        "                    allow_plaintext_cache=True)\n"
        f"idp = FakeIdP(client_id={CLIENT_ID!r}, device_outcome='pending', interval=5)\n"
        "sys.exit(login(config, method='device-code', http_client=idp))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", child, str(cache_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    assert proc.stderr is not None and proc.stdout is not None
    try:
        seen = b""
        while b"Ctrl-C" not in seen:
            line = proc.stderr.readline()
            assert line, f"login ended early: {seen!r}"
            seen += line
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=10)
        elapsed = time.monotonic() - started
        rest = proc.stderr.read()
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert code == 130
    assert elapsed < 3.0
    assert b"cancelled" in rest
    assert stdout == b""
    assert b"enter the code" in seen


def test_login_timeout_is_a_clear_failure(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, device_outcome="pending", interval=5)
    out = io.StringIO()
    started = time.monotonic()
    assert (
        commands.login(
            config, method="device-code", http_client=idp, stream=out, timeout_seconds=0.3
        )
        == 1
    )
    assert time.monotonic() - started < 2.0
    assert "did not finish within" in out.getvalue()
    assert LOGIN in out.getvalue()


@pytest.mark.parametrize(
    ("outcome", "fragment"),
    [
        ("expired_token", "code expired"),
        ("authorization_declined", "declined"),
    ],
)
def test_login_device_flow_endings(config: AuthConfig, outcome: str, fragment: str) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, device_outcome=outcome)
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 1
    assert fragment in out.getvalue()
    assert "mfconnector login" in out.getvalue()
    assert not config.cache_path.exists()


@pytest.mark.parametrize(
    ("where", "error", "fragment"),
    [
        ("devicecode", "unknown_client", "unknown client id"),
        ("token", "public_client_disabled", "enable 'Allow public client flows'"),
        ("token", "personal_account_wrong_tenant", "--tenant consumers (or common)"),
        ("token", "msa_only_app", "use --tenant consumers"),
        ("token", "consent_required", "consent required"),
    ],
)
def test_login_failures_say_what_to_change(
    config: AuthConfig, idp: FakeIdP, where: str, error: str, fragment: str
) -> None:
    if where == "devicecode":
        idp.devicecode_error = error
    else:
        idp.token_errors = [error]
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 1
    text = out.getvalue()
    assert fragment in text
    assert "Trace ID" not in text
    assert "hint:" in text


def test_login_with_unknown_tenant(config: AuthConfig, idp: FakeIdP) -> None:
    config = AuthConfig(**{**_fields(config), "tenant": "nosuch.onmicrosoft.com"})
    idp.unknown_tenants.add("nosuch.onmicrosoft.com")
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 1
    assert "does not know tenant 'nosuch.onmicrosoft.com'" in out.getvalue()


def test_login_without_client_id_says_how_to_configure(cache_path: Path, idp: FakeIdP) -> None:
    config = AuthConfig(cache_path=cache_path, allow_plaintext_cache=True)
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 1
    assert "MFC_CLIENT_ID" in out.getvalue()
    assert idp.requests == []


def test_second_login_replaces_the_first_account(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    idp.user = FakeUser(username="megan@contoso.example", name="Megan Bowen")
    text = sign_in(config, idp)
    assert "Signed in as megan@contoso.example" in text
    accounts = cache_state(config.cache_path)["Account"]
    assert [a["username"] for a in accounts.values()] == ["megan@contoso.example"]
    assert refresh_secrets(config.cache_path) == [idp.refresh_tokens[-1]]


# --- the cache on disk ------------------------------------------------------------------------


def test_cache_file_is_0600_and_its_new_directories_0700(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    path = config.cache_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700
    lock = path.with_name(path.name + ".lock")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_loose_cache_file_is_made_private(
    config: AuthConfig, idp: FakeIdP, caplog: pytest.LogCaptureFixture
) -> None:
    sign_in(config, idp)
    os.chmod(config.cache_path, 0o644)
    store = open_token_store(config)
    store.refresh()
    assert stat.S_IMODE(config.cache_path.stat().st_mode) == 0o600
    assert "mode set to 0600" in caplog.text


def test_a_symlinked_cache_is_refused(config: AuthConfig, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    config.cache_path.parent.mkdir(parents=True)
    config.cache_path.symlink_to(target)
    with pytest.raises(AuthError, match="symlink"):
        open_token_store(config).refresh()


def test_a_damaged_cache_says_so(config: AuthConfig) -> None:
    config.cache_path.parent.mkdir(parents=True)
    config.cache_path.write_text("[1, 2, 3]")
    os.chmod(config.cache_path, 0o600)
    with pytest.raises(AuthError) as caught:
        open_token_store(config).refresh()
    assert caught.value.code == "cache_unusable"
    assert "damaged" in caught.value.message


def test_a_held_lock_times_out_with_a_clear_error(config: AuthConfig) -> None:
    import fcntl

    config = AuthConfig(**{**_fields(config), "lock_timeout_seconds": 0.2})
    store = open_token_store(config)
    store.cache.modify("AppMetadata", {"client_id": "x", "environment": "e"}, {"x": 1})
    lock = config.cache_path.with_name(config.cache_path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(AuthError) as caught:
            store.commit()
        assert caught.value.code == "cache_locked"
    finally:
        os.close(fd)
    assert store.commit()  # the change was kept and is written once the lock is free


def test_concurrent_writers_keep_each_others_changes(config: AuthConfig) -> None:
    first, second = open_token_store(config), open_token_store(config)
    first.refresh()
    second.refresh()
    first.cache.modify("AppMetadata", {"client_id": "a", "environment": "one"}, {"n": 1})
    assert first.commit()
    second.cache.modify("AppMetadata", {"client_id": "b", "environment": "two"}, {"n": 2})
    assert second.commit()
    reader = open_token_store(config)
    reader.refresh()
    names = {(e["client_id"], e["environment"]) for e in reader.cache.snapshot("AppMetadata")}
    assert names == {("a", "one"), ("b", "two")}
    assert not reader.commit()  # nothing changed: nothing written


def test_plaintext_cache_is_refused_without_opt_in(config: AuthConfig, idp: FakeIdP) -> None:
    config = AuthConfig(**{**_fields(config), "allow_plaintext_cache": False})
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 1
    text = out.getvalue()
    assert "no encrypted token storage" in text
    assert "--allow-plaintext-cache" in text and "MFC_ALLOW_PLAINTEXT_CACHE=1" in text
    assert not config.cache_path.exists()
    assert idp.requests == []  # refused before anything was asked of the identity provider
    out = io.StringIO()
    assert commands.status(config, stream=out) == 1
    assert "--allow-plaintext-cache" in out.getvalue()


async def test_plaintext_refusal_reaches_the_server(config: AuthConfig, idp: FakeIdP) -> None:
    config = AuthConfig(**{**_fields(config), "allow_plaintext_cache": False})
    provider = MsalTokenProvider(config, http_client=idp)
    with pytest.raises(AuthError) as caught:
        await provider.get_token()
    assert caught.value.code == "cache_encryption_unavailable"
    facts = await provider.describe()
    assert facts["signedIn"] is False
    assert "no encrypted token storage" in facts["error"]
    assert "--allow-plaintext-cache" in facts["hint"]


@pytest.mark.usefixtures("real_machine")
def test_this_headless_machine_needs_the_plaintext_opt_in(cache_path: Path) -> None:
    from msal_extensions import build_encrypted_persistence

    try:
        build_encrypted_persistence(str(cache_path.parent / "probe"))
    except (ImportError, RuntimeError):
        pass
    else:
        pytest.skip("this machine has an encrypted token store")
    with pytest.raises(AuthError) as caught:
        open_token_store(AuthConfig(client_id=CLIENT_ID, cache_path=cache_path))
    assert caught.value.code == "cache_encryption_unavailable"
    store = open_token_store(
        AuthConfig(client_id=CLIENT_ID, cache_path=cache_path, allow_plaintext_cache=True)
    )
    assert store.encrypted is False


def test_an_encrypted_store_is_used_when_the_platform_has_one(
    config: AuthConfig, idp: FakeIdP, monkeypatch: pytest.MonkeyPatch
) -> None:
    import msal_extensions
    from msal_extensions import FilePersistence

    class PretendEncrypted(FilePersistence):  # type: ignore[misc]
        is_encrypted = True

        def __init__(self, location: str, **kwargs: Any) -> None:
            super().__init__(location)

    store = ENCRYPTED_STORES["linux" if sys.platform.startswith("linux") else sys.platform]
    monkeypatch.setattr(msal_extensions, store.class_name, PretendEncrypted)
    config = AuthConfig(**{**_fields(config), "allow_plaintext_cache": False})
    text = sign_in(config, idp)
    assert f"(encrypted: {store.description})" in text
    out = io.StringIO()
    assert commands.status(config, stream=out) == 0
    assert f"(encrypted: {store.description})" in out.getvalue()
    assert "not encrypted" not in out.getvalue()


def test_status_says_the_plaintext_cache_is_not_encrypted(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    out = io.StringIO()
    assert commands.status(config, stream=out) == 0
    text = out.getvalue()
    assert "not encrypted" in text
    assert "adele.vance@contoso.example" in text
    assert TENANT_ID in text
    assert "https://login.microsoftonline.com/common" in text
    assert "Files.Read Mail.Read MailboxSettings.Read User.Read" in text
    assert str(config.cache_path) in text


def test_status_when_nobody_signed_in(config: AuthConfig) -> None:
    out = io.StringIO()
    assert commands.status(config, stream=out) == 1
    assert "signed in:" in out.getvalue() and "no" in out.getvalue()
    assert LOGIN in out.getvalue()


def test_logout_removes_the_account_and_its_tokens(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    out = io.StringIO()
    assert commands.logout(config, stream=out) == 0
    assert "Signed out adele.vance@contoso.example" in out.getvalue()
    text = config.cache_path.read_text()
    assert not any(secret in text for secret in idp.secrets())
    assert cache_state(config.cache_path).get("Account") == {}
    out = io.StringIO()
    assert commands.logout(config, stream=out) == 0
    assert "No account was signed in" in out.getvalue()
    assert commands.status(config, stream=io.StringIO()) == 1


def test_run_command_reports_bad_settings_without_a_traceback(
    cache_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parse("--tenant", "bad/tenant", "login")
    assert commands.run_command("status", args, {"MFC_CACHE_PATH": str(cache_path)}) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: tenant 'bad/tenant' is not a tenant")
    assert "Traceback" not in captured.err


def test_run_command_status_reads_env(cache_path: Path) -> None:
    out = io.StringIO()
    env = {"MFC_CACHE_PATH": str(cache_path), "MFC_ALLOW_PLAINTEXT_CACHE": "1"}
    assert commands.run_command("status", parse(), env, stream=out) == 1
    assert "not encrypted" in out.getvalue()
    assert not cache_path.exists()
    assert list(cache_path.parent.iterdir()) == []  # looking leaves no lock file behind


# --- the server's provider ----------------------------------------------------------------------


async def test_provider_is_lazy_and_serves_from_the_cache_without_rewriting_it(
    config: AuthConfig, idp: FakeIdP
) -> None:
    sign_in(config, idp)
    before = config.cache_path.stat()
    seen = len(idp.requests)
    provider = build_token_provider(config, http_client=idp)
    assert len(idp.requests) == seen  # no msal app (and no network) before the first call
    for _ in range(3):
        assert await provider.get_token() == idp.access_tokens[-1]
    after = config.cache_path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    new = idp.requests[seen:]
    assert idp.token_requests("refresh_token") == []
    assert [r.path for r in new] == ["/common/v2.0/.well-known/openid-configuration"]
    assert all(r.thread != threading.main_thread().name for r in new)


async def test_silent_refresh_persists_the_rotated_refresh_token(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, access_token_lifetime=60)  # msal refreshes under 5 min
    sign_in(config, idp)
    first_rt = idp.refresh_tokens[-1]
    token = await MsalTokenProvider(config, http_client=idp).get_token()
    assert token == idp.access_tokens[-1]
    rotated = idp.refresh_tokens[-1]
    assert rotated != first_rt
    assert idp.token_requests("refresh_token")[-1].data["refresh_token"] == first_rt
    assert refresh_secrets(config.cache_path) == [rotated]
    # A new server process reads the file and uses the rotated token (the old one is spent).
    token = await MsalTokenProvider(config, http_client=idp).get_token()
    assert token == idp.access_tokens[-1]
    assert idp.token_requests("refresh_token")[-1].data["refresh_token"] == rotated


async def test_two_servers_sharing_a_cache_follow_each_others_rotation(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, access_token_lifetime=60)
    sign_in(config, idp)
    one = MsalTokenProvider(config, http_client=idp)
    two = MsalTokenProvider(config, http_client=idp)
    await one.get_token()
    await two.get_token()  # loaded the cache before? It re-reads it when it changed.
    await one.get_token()
    assert len(idp.token_requests("refresh_token")) == 3
    assert refresh_secrets(config.cache_path) == [idp.refresh_tokens[-1]]


async def test_force_refresh_gets_a_new_token(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    provider = MsalTokenProvider(config, http_client=idp)
    cached = await provider.get_token()
    fresh = await provider.get_token(force_refresh=True)
    assert fresh != cached
    assert fresh == idp.access_tokens[-1]
    assert len(idp.token_requests("refresh_token")) == 1
    assert await provider.get_token() == fresh  # and it is cached from then on


@pytest.mark.parametrize("claims", [CLAIMS_JSON, CLAIMS_B64])
async def test_claims_challenge_is_passed_to_msal(
    config: AuthConfig, idp: FakeIdP, claims: str
) -> None:
    sign_in(config, idp)
    provider = MsalTokenProvider(config, http_client=idp)
    token = await provider.get_token(force_refresh=True, claims=claims)
    assert token == idp.access_tokens[-1]
    (refresh,) = idp.token_requests("refresh_token")
    sent = json.loads(refresh.data["claims"])
    assert sent["access_token"]["acrs"] == {"essential": True, "value": "cp1"}
    assert sent["access_token"]["xms_cc"] == {"values": ["CP1"]}


async def test_expired_refresh_token_says_run_login(config: AuthConfig) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, access_token_lifetime=60)
    sign_in(config, idp)
    idp.refresh_error = "refresh_expired"
    provider = MsalTokenProvider(config, http_client=idp)
    with pytest.raises(AuthError) as caught:
        await provider.get_token()
    error = caught.value
    assert error.message == f"sign-in expired: {LOGIN} (AADSTS700082)"
    assert error.code == "signin_expired"
    assert error.hint and "mfconnector login" in error.hint
    facts = await provider.describe()
    assert facts["error"] == error.message
    assert facts["errorCode"] == "signin_expired"
    # Signing in again clears it.
    idp.refresh_error = None
    sign_in(config, idp)
    await provider.get_token()
    assert "error" not in await provider.describe()


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("grant_expired", "signin_expired"),
        ("mfa_required", "signin_expired"),
        ("consent_required", "consent_required"),
    ],
)
async def test_refresh_failures_through_msal(config: AuthConfig, error: str, code: str) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, access_token_lifetime=60)
    sign_in(config, idp)
    idp.refresh_error = error
    with pytest.raises(AuthError) as caught:
        await MsalTokenProvider(config, http_client=idp).get_token()
    assert caught.value.code == code
    assert LOGIN in caught.value.message


async def test_not_signed_in(config: AuthConfig, idp: FakeIdP) -> None:
    provider = MsalTokenProvider(config, http_client=idp)
    with pytest.raises(AuthError) as caught:
        await provider.get_token()
    assert caught.value.code == "not_signed_in"
    assert LOGIN in caught.value.message
    assert idp.requests == []  # an empty cache needs no network to say so
    facts = await provider.describe()
    assert facts["signedIn"] is False


async def test_logout_while_the_server_runs_is_seen_at_once(
    config: AuthConfig, idp: FakeIdP
) -> None:
    sign_in(config, idp)
    provider = MsalTokenProvider(config, http_client=idp)
    await provider.get_token()
    assert commands.logout(config, stream=io.StringIO()) == 0
    with pytest.raises(AuthError) as caught:
        await provider.get_token()  # msal's copy in memory is not used after the file changed
    assert caught.value.code == "not_signed_in"
    assert (await provider.describe())["signedIn"] is False


async def test_describe_reports_facts_and_never_a_token(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    facts = await MsalTokenProvider(config, http_client=idp).describe()
    (at,) = cache_state(config.cache_path)["AccessToken"].values()
    expected_expiry = datetime.fromtimestamp(int(at["expires_on"]), UTC)
    assert facts == {
        "signedIn": True,
        "account": "adele.vance@contoso.example",
        "tenantId": TENANT_ID,
        "authority": "https://login.microsoftonline.com/common",
        "cloud": "global",
        "graphRoot": "https://graph.microsoft.com/v1.0",
        "clientId": CLIENT_ID,
        "scopes": ["Files.Read", "Mail.Read", "MailboxSettings.Read", "User.Read"],
        "requestedScopes": ["User.Read", "Mail.Read", "MailboxSettings.Read", "Files.Read"],
        "cacheLocation": str(config.cache_path),
        "cacheEncrypted": False,
        "cacheStorage": "plaintext file, mode 0600",
        "expiresOn": expected_expiry.isoformat().replace("+00:00", "Z"),
        "mode": "delegated",
        "network": {
            "proxy": None,
            "proxySource": "none (environment proxy variables ignored)",
            "trust": "operating system trust store",
        },
    }
    dumped = json.dumps(facts)
    assert not any(secret in dumped for secret in idp.secrets())
    assert expected_expiry - datetime.now(UTC) > timedelta(minutes=50)


async def test_network_failure_is_named_without_library_text(
    config: AuthConfig, idp: FakeIdP
) -> None:
    sign_in(config, idp)
    idp.offline = True
    with pytest.raises(AuthError) as caught:
        await MsalTokenProvider(config, http_client=idp).get_token()
    assert caught.value.code == "network"
    assert "login.microsoftonline.com" in caught.value.message
    assert "cannot connect" not in caught.value.message


@pytest.mark.slow
async def test_a_slow_sign_in_service_hits_the_deadline_and_msal_stays_serialized(
    config: AuthConfig, idp: FakeIdP
) -> None:
    sign_in(config, idp)
    config = AuthConfig(**{**_fields(config), "call_timeout_seconds": 0.2})
    provider = MsalTokenProvider(config, http_client=idp)
    idp.delay_seconds = 0.6
    started = trio.current_time()
    with pytest.raises(AuthError) as caught:
        await provider.get_token()
    assert caught.value.code == "timeout"
    assert "did not answer in time" in caught.value.message
    assert trio.current_time() - started < 0.5
    # The abandoned msal call still holds the limiter, so the next one waits (and, being
    # under the same deadline, times out too) instead of running msal concurrently.
    idp.delay_seconds = 0.0
    with pytest.raises(AuthError):
        await provider.get_token()
    await trio.sleep(1.0)
    assert await provider.get_token() == idp.access_tokens[-1]
    assert idp.max_in_flight == 1


async def test_concurrent_requests_run_msal_one_at_a_time(config: AuthConfig, idp: FakeIdP) -> None:
    sign_in(config, idp)
    provider = MsalTokenProvider(config, http_client=idp)
    idp.delay_seconds = 0.02
    tokens: list[str] = []

    async def one() -> None:
        tokens.append(await provider.get_token(force_refresh=True))

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(one)
    assert len(set(tokens)) == 5
    assert idp.max_in_flight == 1


# --- national clouds and app-only -----------------------------------------------------------------


@pytest.mark.parametrize("cloud", ["usgov", "china"])
async def test_national_cloud_sign_in_stays_on_its_hosts(config: AuthConfig, cloud: str) -> None:
    chosen = CLOUDS[cloud]
    config = AuthConfig(**{**_fields(config), "cloud": chosen})
    idp = FakeIdP(
        client_id=CLIENT_ID,
        host=chosen.authority_host,
        graph_host=chosen.graph_host.removeprefix("https://"),
        access_token_lifetime=60,
    )
    sign_in(config, idp)
    provider = MsalTokenProvider(config, http_client=idp)
    assert await provider.get_token() == idp.access_tokens[-1]
    assert {r.host for r in idp.requests} == {chosen.authority_host}
    facts = await provider.describe()
    assert facts["signedIn"] and facts["graphRoot"] == chosen.graph_root


def app_only_config(cache_path: Path, **extra: Any) -> AuthConfig:
    return AuthConfig(
        client_id=CLIENT_ID,
        tenant=TENANT_ID,
        cache_path=cache_path,
        app_only=True,
        user="adele@contoso.example",
        **extra,
    )


async def test_app_only_with_a_secret(cache_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "Qx8~app-secret-value-" + "z" * 20
    idp = FakeIdP(client_id=CLIENT_ID, client_secret=secret)
    config = app_only_config(cache_path, client_secret=secret)
    assert config.user_path == "/users/adele@contoso.example"
    provider = MsalTokenProvider(config, http_client=idp)
    first = await provider.get_token()
    assert await provider.get_token() == first  # from msal's memory cache
    (request,) = idp.token_requests("client_credentials")
    assert request.data["scope"] == "https://graph.microsoft.com/.default"
    assert request.path == f"/{TENANT_ID}/oauth2/v2.0/token"
    fresh = await provider.get_token(force_refresh=True)
    assert fresh != first
    await provider.get_token(force_refresh=True, claims=CLAIMS_B64)
    assert "acrs" in idp.token_requests("client_credentials")[-1].data["claims"]
    facts = await provider.describe()
    assert facts["mode"] == "app-only" and facts["account"] == "adele@contoso.example"
    assert facts["expiresOn"] is not None
    assert not await trio.Path(cache_path).exists()  # app tokens never reach the disk
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=out) == 0
    assert "Client credential works" in out.getvalue()
    everything = caplog.text + out.getvalue() + json.dumps(facts)
    assert not any(s in everything for s in idp.secrets())


async def test_app_only_with_a_wrong_secret(cache_path: Path) -> None:
    idp = FakeIdP(client_id=CLIENT_ID, client_secret="the-right-one")
    config = app_only_config(cache_path, client_secret="a-wrong-one")
    with pytest.raises(AuthError) as caught:
        await MsalTokenProvider(config, http_client=idp).get_token()
    assert caught.value.code == "invalid_client_credential"
    assert "a-wrong-one" not in caught.value.message


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from tests.support.app_certs import self_signed

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = self_signed(key, "mfconnector test")
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ) + cert.public_bytes(serialization.Encoding.PEM)
    path = tmp_path_factory.mktemp("cert") / "app.pem"
    path.write_bytes(pem)
    return path, cert.fingerprint(hashes.SHA1()).hex()


def _assertion_header(request: Any) -> dict[str, Any]:
    assertion = request.data["client_assertion"]
    if isinstance(assertion, bytes):
        assertion = assertion.decode("ascii")
    head = assertion.split(".")[0]
    header: dict[str, Any] = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return header


@pytest.mark.parametrize("with_thumbprint", [True, False])
async def test_app_only_with_a_certificate(
    cache_path: Path, certificate: tuple[Path, str], with_thumbprint: bool
) -> None:
    from cryptography import x509

    path, thumbprint = certificate
    registered = x509.load_pem_x509_certificate(path.read_bytes())
    idp = FakeIdP(client_id=CLIENT_ID, client_certificate=registered)
    config = app_only_config(
        cache_path,
        client_cert_path=path,
        client_cert_thumbprint=thumbprint if with_thumbprint else None,
    )
    assert await MsalTokenProvider(config, http_client=idp).get_token() == idp.access_tokens[-1]
    (request,) = idp.token_requests("client_credentials")
    assert "client_secret" not in request.data
    header = _assertion_header(request)
    assert ("x5t" in header) if with_thumbprint else ("x5t#S256" in header)
    assert idp.client_assertion_headers == [header], "FakeIdP checked signature and thumbprint"


async def test_a_certificate_entra_does_not_know_is_refused(
    cache_path: Path, certificate: tuple[Path, str], tmp_path: Path
) -> None:
    """The assertion is signed by the file's key; the app registration holds another
    certificate, so Entra refuses it (AADSTS700027) and the token is never issued."""
    path, _ = certificate
    other = write_app_certificate(tmp_path / "other.pem", key=app_key(1))
    idp = FakeIdP(client_id=CLIENT_ID, client_certificate=other.certificate)
    config = app_only_config(cache_path, client_cert_path=path)
    with pytest.raises(AuthError):
        await MsalTokenProvider(config, http_client=idp).get_token()
    assert not idp.access_tokens and not idp.client_assertion_headers


@pytest.mark.parametrize("slack", [-1, 0, 1])
async def test_a_certificate_file_is_read_up_to_its_size_limit(
    cache_path: Path, tmp_path: Path, certificate: tuple[Path, str], slack: int
) -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    source, _ = certificate
    pem = source.read_bytes()
    path = tmp_path / "padded.pem"
    path.write_bytes(pem + b"\n" * (DEFAULT_LIMITS.cert_file_bytes + slack - len(pem)))
    assert path.stat().st_size == DEFAULT_LIMITS.cert_file_bytes + slack
    idp = FakeIdP(client_id=CLIENT_ID)
    config = app_only_config(cache_path, client_cert_path=path)
    provider = MsalTokenProvider(config, http_client=idp)
    if slack <= 0:
        assert await provider.get_token() == idp.access_tokens[-1]
    else:
        with pytest.raises(AuthError, match="no PEM private key"):
            await provider.get_token()
        assert idp.token_requests("client_credentials") == []


async def test_app_only_certificate_without_a_key(cache_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "cert-only.pem"
    path.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    config = app_only_config(cache_path, client_cert_path=path)
    with pytest.raises(AuthError, match="no PEM private key"):
        await MsalTokenProvider(config, http_client=FakeIdP(client_id=CLIENT_ID)).get_token()


# --- error mapping ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "code", "fragment"),
    [
        ("expired_token", "device_code_expired", "code expired"),
        ("authorization_declined", "declined", "declined"),
        ("refresh_expired", "signin_expired", f"sign-in expired: {LOGIN}"),
        ("grant_expired", "signin_expired", f"sign-in expired: {LOGIN}"),
        ("mfa_required", "signin_expired", f"sign-in expired: {LOGIN}"),
        ("consent_required", "consent_required", "consent required"),
        ("public_client_disabled", "public_client_disabled", "Allow public client flows"),
        ("unknown_client", "unknown_client", "unknown client id"),
        ("personal_account_wrong_tenant", "wrong_tenant", "--tenant consumers (or common)"),
        ("msa_only_app", "wrong_tenant", "--tenant consumers"),
        ("bad_secret", "invalid_client_credential", "client secret is wrong"),
    ],
)
def test_aadsts_answers_map_to_specific_errors(key: str, code: str, fragment: str) -> None:
    _, body = ERRORS[key]
    error = auth_error_from_result(body)
    assert error.code == code
    assert fragment in error.message
    assert f"(AADSTS{body['error_codes'][0]})" in error.message
    assert error.hint
    assert "Trace ID" not in error.message + error.hint


@pytest.mark.parametrize(
    ("result", "code"),
    [
        ({"error": "interaction_required"}, "signin_expired"),
        (
            {"error": "invalid_grant", "error_description": "AADSTS70000: bad grant"},
            "signin_expired",
        ),
        ({"error": "authorization_declined", "error_description": "AADSTS70000: no"}, "declined"),
        (
            {"error": "invalid_request", "error_description": "AADSTS50020: User account"},
            "wrong_tenant",
        ),
        (
            {"error": "invalid_request", "error_description": "AADSTS9002331: MSA only"},
            "wrong_tenant",
        ),
        (
            {"error": "invalid_client", "error_description": "AADSTS7000218: body"},
            "public_client_disabled",
        ),
        ({"error": "expired_token"}, "device_code_expired"),
        (
            {"error": "invalid_grant", "error_description": "AADSTS65001: no consent"},
            "consent_required",
        ),
    ],
)
def test_mapping_by_description_or_error_alone(result: dict[str, Any], code: str) -> None:
    assert auth_error_from_result(result).code == code


def test_unknown_codes_keep_a_bounded_first_sentence() -> None:
    result = {
        "error": "invalid_request",
        "error_description": "AADSTS123456: Something new happened.\x1b[31m Trace ID: abc "
        "Correlation ID: def Timestamp: now\r\nmore lines",
        "error_codes": [123456],
    }
    error = auth_error_from_result(result, action="token refresh")
    assert error.code == "signin_failed"
    assert error.message.startswith("token refresh failed: invalid_request: AADSTS123456")
    assert "Trace ID" not in error.message and "\x1b" not in error.message
    assert "more lines" not in error.message
    assert aadsts_codes(result) == [123456]
    assert auth_error_from_result({}).code == "signin_failed"


# --- nothing secret anywhere ----------------------------------------------------------------------


async def test_no_token_or_secret_reaches_any_output_or_log(
    config: AuthConfig, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    idp = FakeIdP(client_id=CLIENT_ID, access_token_lifetime=60)
    printed = io.StringIO()
    assert commands.login(config, method="device-code", http_client=idp, stream=printed) == 0
    provider = MsalTokenProvider(config, http_client=idp)
    await provider.get_token()
    await provider.get_token(force_refresh=True, claims=CLAIMS_JSON)
    facts = await provider.describe()
    assert commands.status(config, stream=printed) == 0
    assert commands.status(config) == 0  # to the real stderr, captured by capsys
    idp.refresh_error = "refresh_expired"
    with pytest.raises(AuthError) as caught:
        await provider.get_token()
    assert commands.logout(config, stream=printed) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    everything = "\n".join(
        [
            printed.getvalue(),
            captured.err,
            caplog.text,
            *(r.getMessage() for r in caplog.records),
            json.dumps(facts),
            caught.value.message,
            caught.value.hint or "",
        ]
    )
    secrets = idp.secrets()
    assert len(secrets) >= 7  # 3 access, 3 refresh, 3 id tokens, a device code
    leaked = [s[:12] + "..." for s in secrets if s in everything]
    assert leaked == []
    # Not even the random signature part of any JWT-shaped token.
    assert not any(s.rsplit(".", 1)[-1] in everything for s in secrets if s.count(".") == 2)


def test_msal_logs_stay_debug_and_on_stderr(
    config: AuthConfig, idp: FakeIdP, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.DEBUG)
    try:
        sign_in(config, idp)
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert not any(s in captured.err for s in idp.secrets())
