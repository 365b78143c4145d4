"""``mfconnector serve-http`` as an operator starts it: bad settings exit 2 with one line
that names the setting, warnings go to stderr, and the stdio server never pays for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hosted_process import hosted_server

pytestmark = pytest.mark.slow

BASE = [
    "--public-url",
    "https://mail.example.test/mcp",
    "--oauth-issuer",
    "https://login.example.test/t/v2.0",
    "--oauth-jwks-url",
    "https://login.example.test/keys",
    "--oauth-scope",
    "Mail.Connector",
]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MFC_CLIENT_")}
    return subprocess.run(
        [sys.executable, "-m", "mfconnector", "serve-http", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**clean, **(env or {})},
    )


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"MFC_CLIENT_SECRET": "s3cret-value-never-shown"}, "MFC_CLIENT_ID"),
        ({"MFC_CLIENT_ID": "11111111-2222-3333-4444-555555555555"}, "MFC_CLIENT_SECRET"),
        ({}, "MFC_CLIENT_ID and MFC_CLIENT_SECRET"),
    ],
)
def test_live_mode_without_the_app_registration_exits_2_naming_it(
    env: dict[str, str], missing: str
) -> None:
    result = run(*BASE, env=env)
    assert result.returncode == 2, result.stderr
    assert f"needs {missing}" in result.stderr
    assert "s3cret-value-never-shown" not in result.stderr
    assert result.stdout == ""


def test_live_mode_needs_an_issuer_naming_one_tenant() -> None:
    args = [
        a if a != "https://login.example.test/t/v2.0" else "https://login.example.test/common/v2.0"
        for a in BASE
    ]
    result = run(
        *args, env={"MFC_CLIENT_ID": "id", "MFC_CLIENT_SECRET": "s3cret-value-never-shown"}
    )
    assert result.returncode == 2, result.stderr
    assert "--oauth-issuer must name one tenant" in result.stderr
    assert "s3cret-value-never-shown" not in result.stderr


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_an_imap_account_is_refused_so_no_two_users_share_a_mailbox(how: str) -> None:
    """serve-http serves each signed-in user their own mailbox; one IMAP login is one."""
    flags = ["--imap", "imap.example.org"] if how == "flag" else []
    env = {"MFC_IMAP": "imap.example.org"} if how == "environment" else {}
    result = run("--demo", *BASE, *flags, env=env)
    assert result.returncode == 2, result.stderr
    assert "every user would share" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--listen", "localhost"], "--listen must be HOST:PORT"),
        (["--listen", "127.0.0.1:99999"], "--listen must be HOST:PORT"),
        (["--public-url", "ftp://mail.example.test/mcp"], "--public-url must be an https URL"),
        (["--oauth-scope", "two scopes"], "--oauth-scope must be one scope"),
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--allowed-origins", "not an origin"], "--allowed-origins"),
    ],
)
def test_bad_settings_exit_2_naming_the_setting(args: list[str], named: str) -> None:
    result = run("--demo", *BASE, *args)
    assert result.returncode == 2, result.stderr
    assert named in result.stderr
    assert "Traceback" not in result.stderr


def test_non_loopback_listen_without_tls_warns(tmp_path: Path) -> None:
    with hosted_server(tmp_path, listen="0.0.0.0:0") as server:
        assert "warning: listening on 0.0.0.0 without TLS" in server.stderr()


def test_loopback_listen_does_not_warn_and_env_sets_the_address(tmp_path: Path) -> None:
    with hosted_server(tmp_path, listen=None, env_listen="127.0.0.1:0") as server:
        assert "warning" not in server.stderr()
        assert server.url.startswith("http://127.0.0.1:")


def test_stdio_start_up_does_not_import_the_http_stack() -> None:
    code = (
        "import sys; from mfconnector.cli import build_parser; build_parser(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'hypercorn', 'h11', 'h2', 'jwt'}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr


def test_live_mode_with_a_missing_ca_file_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    app = {"MFC_CLIENT_ID": "id", "MFC_CLIENT_SECRET": "s3cret-value-never-shown"}
    result = run(*BASE, "--ca-file", str(missing), env=app)
    assert result.returncode == 2, result.stderr
    assert f"the CA file {missing} does not exist" in result.stderr
    assert "Traceback" not in result.stderr
