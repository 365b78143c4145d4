"""``mfconnector serve-http`` as an operator starts it: bad settings exit 2 with one line
that names the setting, warnings go to stderr, and the stdio server never pays for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.app_certs import app_key, write_app_certificate
from tests.support.hosted_process import hosted_server

pytestmark = pytest.mark.slow

BASE = [
    "--public-url",
    "https://mail.example.test/mcp",
    "--oauth-issuer",
    "https://login.microsoftonline.com/t/v2.0",
    "--oauth-jwks-url",
    "https://login.example.test/keys",
    "--oauth-scope",
    "Mail.Connector",
]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("MFC_CLIENT_") and k != "MFC_CLOUD"
    }
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
        (
            {"MFC_CLIENT_ID": "11111111-2222-3333-4444-555555555555"},
            "a client credential (MFC_CLIENT_SECRET or MFC_CLIENT_CERT_PATH)",
        ),
        ({}, "MFC_CLIENT_ID and a client credential"),
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
        a
        if a != "https://login.microsoftonline.com/t/v2.0"
        else "https://login.microsoftonline.com/common/v2.0"
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


APP = {"MFC_CLIENT_ID": "11111111-2222-3333-4444-555555555555"}
SECRET = "s3cret-value-never-shown"


def issuer_is(issuer: str) -> list[str]:
    return [issuer if a == "https://login.microsoftonline.com/t/v2.0" else a for a in BASE]


def test_a_secret_and_a_certificate_together_exit_2(tmp_path: Path) -> None:
    app = write_app_certificate(tmp_path / "app.pem")
    env = {**APP, "MFC_CLIENT_SECRET": SECRET, "MFC_CLIENT_CERT_PATH": str(app.path)}
    result = run(*BASE, env=env)
    assert result.returncode == 2, result.stderr
    assert "both MFC_CLIENT_SECRET and MFC_CLIENT_CERT_PATH are set" in result.stderr
    assert SECRET not in result.stderr and "Traceback" not in result.stderr


def test_cert_settings_without_the_certificate_exit_2_naming_them() -> None:
    env = {**APP, "MFC_CLIENT_SECRET": SECRET, "MFC_CLIENT_CERT_PASSPHRASE": "pw-not-shown"}
    result = run(*BASE, env=env)
    assert result.returncode == 2, result.stderr
    assert "MFC_CLIENT_CERT_PASSPHRASE is set but MFC_CLIENT_CERT_PATH is not" in result.stderr
    assert "pw-not-shown" not in result.stderr


def _pem_case(tmp_path: Path, case: str) -> tuple[dict[str, str], str]:
    path = tmp_path / "app.pem"
    passphrase = "open sesame"
    if case == "missing":
        return {"MFC_CLIENT_CERT_PATH": str(path)}, f"cannot read the client certificate {path}"
    if case == "encrypted":
        write_app_certificate(path, passphrase=passphrase)
        return {"MFC_CLIENT_CERT_PATH": str(path)}, "set MFC_CLIENT_CERT_PASSPHRASE"
    if case == "wrong-passphrase":
        write_app_certificate(path, passphrase=passphrase)
        env = {"MFC_CLIENT_CERT_PATH": str(path), "MFC_CLIENT_CERT_PASSPHRASE": "not it"}
        return env, "MFC_CLIENT_CERT_PASSPHRASE does not open the private key"
    if case == "passphrase-for-a-plain-key":
        write_app_certificate(path)
        env = {"MFC_CLIENT_CERT_PATH": str(path), "MFC_CLIENT_CERT_PASSPHRASE": "not needed"}
        return env, "is not passphrase-protected"
    if case == "mismatched":
        write_app_certificate(path, certificate_key=app_key(1))
        return {"MFC_CLIENT_CERT_PATH": str(path)}, "is not the private key's certificate"
    if case == "no-key":
        full = write_app_certificate(tmp_path / "full.pem")
        path.write_bytes(full.path.read_bytes().split(b"-----END PRIVATE KEY-----\n")[1])
        return {"MFC_CLIENT_CERT_PATH": str(path)}, "holds no PEM private key"
    assert case == "no-certificate"
    full = write_app_certificate(tmp_path / "full.pem")
    path.write_bytes(full.path.read_bytes().split(b"-----BEGIN CERTIFICATE-----")[0])
    return {"MFC_CLIENT_CERT_PATH": str(path)}, "has no certificate"


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "encrypted",
        "wrong-passphrase",
        "passphrase-for-a-plain-key",
        "mismatched",
        "no-key",
        "no-certificate",
    ],
)
def test_a_certificate_msal_could_not_sign_with_exits_2_without_key_material(
    tmp_path: Path, case: str
) -> None:
    env, said = _pem_case(tmp_path, case)
    result = run(*BASE, env={**APP, **env})
    assert result.returncode == 2, result.stderr
    assert "MFC_CLIENT_CERT_PATH" in result.stderr and said in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert "PRIVATE KEY-----" not in result.stderr and "CERTIFICATE-----" not in result.stderr
    passphrase = env.get("MFC_CLIENT_CERT_PASSPHRASE")
    assert not passphrase or passphrase not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize(
    ("issuer", "env", "said"),
    [
        ("https://login.example.test/t/v2.0", {}, "must be an Entra v2 issuer"),
        ("https://accounts.google.com/t/v2.0", {}, "not one on accounts.google.com"),
        ("https://login.microsoftonline.us/t/v2.0", {}, "set MFC_CLOUD to usgov"),
        (
            "https://login.microsoftonline.us/t/v2.0",
            {"MFC_CLOUD": "china"},
            "MFC_CLOUD=china is not the cloud of --oauth-issuer's host login.microsoftonline.us",
        ),
        (
            "https://login.microsoftonline.com/t/v2.0",
            {"MFC_CLOUD": "usgov"},
            "MFC_CLOUD=usgov is not the cloud",
        ),
        ("https://login.microsoftonline.com/t/v2.0", {"MFC_CLOUD": "mars"}, "MFC_CLOUD='mars'"),
    ],
)
def test_an_issuer_whose_cloud_is_unknown_or_ambiguous_exits_2(
    issuer: str, env: dict[str, str], said: str
) -> None:
    result = run(*issuer_is(issuer), env={**APP, "MFC_CLIENT_SECRET": SECRET, **env})
    assert result.returncode == 2, result.stderr
    assert said in result.stderr, result.stderr
    assert SECRET not in result.stderr and "Traceback" not in result.stderr
