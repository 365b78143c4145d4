"""``mfconnector login|status|logout --provider imap``: the password goes into the OS keyring
(asked on the terminal, never a flag, never printed) and a server started without
``MFC_IMAP_PASSWORD`` finds it there and reads the mailbox on Dovecot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.imap.test_imap_tools import Server
from tests.support.mailservers import Dovecot

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    env["PYTHON_KEYRING_BACKEND"] = "tests.support.file_keyring.FileKeyring"
    env["MFC_TEST_KEYRING_FILE"] = str(tmp_path / "keyring.json")
    env["PYTHONPATH"] = str(REPO)
    return env


def _auth(command: str, where: list[str], env: dict[str, str], stdin: str = "") -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", command, "--provider", "imap", *where],
        input=stdin.encode(),
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert done.stdout == b"", "stdout is the protocol: nothing else is written there"
    return done.returncode, done.stderr.decode()


def test_a_password_stored_by_login_is_what_the_server_signs_in_with(
    dovecot: Dovecot, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    where = ["--imap", f"127.0.0.1:{dovecot.imap_port}", "--imap-user", "alice"]
    where += ["--imap-security", "plain"]
    code, said = _auth("status", where, env)
    assert code == 0 and "is not stored" in said
    code, said = _auth("login", where, env, stdin=dovecot.password + "\n")
    assert code == 0 and "alice@127.0.0.1" in said and dovecot.password not in said
    code, said = _auth("status", where, env)
    assert code == 0 and "is stored" in said and dovecot.password not in said

    server = Server(where, env)
    folders = server.call("mail_folders", {})
    assert "INBOX" in [row[1] for row in folders["folders"]]
    assert dovecot.password not in server.close()

    code, said = _auth("logout", where, env)
    assert code == 0 and "removed" in said
    code, said = _auth("status", where, env)
    assert "is not stored" in said


def test_login_without_the_account_is_a_usage_error(tmp_path: Path) -> None:
    code, said = _auth("login", ["--imap", "imap.example.org"], _env(tmp_path))
    assert code == 2 and "--imap-user" in said
