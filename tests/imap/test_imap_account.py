"""IMAP/SMTP settings (issue 19): flags and environment, the loopback rule for ``plain``,
passwords only from the environment or the keyring, and the real server process started
with ``--imap`` against Dovecot."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from mfconnector.cli import build_parser
from mfconnector.imap.account import imap_account, imap_settings_from
from mfconnector.imap.errors import MailSettingsError
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.mailservers import Dovecot

SECRET = "s3cr3t-Pa55"


def args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def no_keyring(user: str, host: str) -> str | None:
    return None


def test_defaults_are_tls_993_and_starttls_587_with_the_imap_user_and_password() -> None:
    found = imap_settings_from(
        args(
            "--imap",
            "mail.example.org",
            "--imap-user",
            "ann@example.org",
            "--smtp",
            "smtp.example.org",
        ),
        {"MFC_IMAP_PASSWORD": SECRET},
        password_lookup=no_keyring,
    )
    assert found is not None
    assert (found.imap.host, found.imap.port, found.imap.security) == (
        "mail.example.org",
        993,
        "tls",
    )
    assert found.smtp is not None
    assert (found.smtp.port, found.smtp.security, found.smtp.user) == (
        587,
        "starttls",
        "ann@example.org",
    )
    assert found.smtp.password == SECRET and found.sender.address == "ann@example.org"
    assert SECRET not in repr(found) and SECRET not in json.dumps(dict(found.shown))


def test_the_environment_names_the_account_and_ports_and_v6_hosts_parse() -> None:
    found = imap_settings_from(
        args("--imap-security", "starttls"),
        {
            "MFC_IMAP": "[::1]:1143",
            "MFC_IMAP_USER": "ann",
            "MFC_IMAP_PASSWORD": SECRET,
            "MFC_FROM": "Ann@example.org",
        },
        password_lookup=no_keyring,
    )
    assert found is not None and (found.imap.host, found.imap.port) == ("::1", 1143)
    assert found.sender.address == "Ann@example.org" and found.smtp is None
    assert imap_settings_from(args(), {}, password_lookup=no_keyring) is None


def test_plain_is_refused_for_a_host_that_is_not_loopback() -> None:
    for flags in (
        ("--imap", "mail.example.org", "--imap-security", "plain"),
        (
            "--imap",
            "127.0.0.1:1143",
            "--imap-security",
            "plain",
            "--smtp",
            "10.0.0.5",
            "--smtp-security",
            "plain",
        ),
    ):
        with pytest.raises(MailSettingsError, match="only to a loopback address"):
            imap_settings_from(
                args(*flags, "--imap-user", "ann"),
                {"MFC_IMAP_PASSWORD": SECRET},
                password_lookup=no_keyring,
            )


def test_passwords_come_from_the_environment_or_the_keyring_never_a_flag() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--imap", "h", "--imap-password", SECRET])
    asked: list[tuple[str, str]] = []

    def keyring(user: str, host: str) -> str | None:
        asked.append((user, host))
        return "from-keyring"

    found = imap_settings_from(
        args("--imap", "h.example.org", "--imap-user", "ann"), {}, password_lookup=keyring
    )
    assert found is not None and found.imap.password == "from-keyring"
    assert asked == [("ann", "h.example.org")]
    with pytest.raises(MailSettingsError, match="MFC_IMAP_PASSWORD") as caught:
        imap_settings_from(
            args("--imap", "h.example.org", "--imap-user", "ann"), {}, password_lookup=no_keyring
        )
    assert "keyring" in str(caught.value)
    with pytest.raises(MailSettingsError, match="HOST:PORT"):
        imap_settings_from(
            args("--imap", "h:port", "--imap-user", "ann"), {"MFC_IMAP_PASSWORD": "x"}
        )


def test_the_account_is_an_imap_account_with_its_own_reference_tag() -> None:
    found = imap_settings_from(
        args("--imap", "h.example.org", "--imap-user", "ann"),
        {"MFC_IMAP_PASSWORD": SECRET},
        password_lookup=no_keyring,
    )
    assert found is not None
    account = imap_account(found, DEFAULT_LIMITS)
    assert account.provider == "imap" and account.tag.tag.startswith("i")
    caps = account.mail.capabilities  # before any login: only what every server can do
    assert not caps.conditional_flags and not caps.permanent_delete and not caps.sending


def server_run(
    argv: list[str], env: dict[str, str], stdin: bytes
) -> subprocess.CompletedProcess[bytes]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")} | env
    return subprocess.run(
        [sys.executable, "-m", "mfconnector", *argv],
        input=stdin,
        capture_output=True,
        env=full,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_the_server_process_logs_in_with_imap_and_keeps_the_password_out_of_its_output(
    dovecot: Dovecot,
) -> None:
    hello = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    done = server_run(
        [
            "--imap",
            f"127.0.0.1:{dovecot.imap_port}",
            "--imap-security",
            "plain",
            "--imap-user",
            "alice",
            "--log-level",
            "debug",
        ],
        {"MFC_IMAP_PASSWORD": dovecot.password},
        (hello + "\n" + listing + "\n").encode(),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[1]["result"]["tools"]
    assert dovecot.password.encode() not in done.stdout + done.stderr
    assert "user=<alice>" in dovecot.log()  # it logged in at start, to learn capabilities


def test_the_server_process_refuses_plain_to_a_remote_host_in_our_words() -> None:
    done = server_run(
        ["--imap", "mail.example.org", "--imap-security", "plain", "--imap-user", "ann"],
        {"MFC_IMAP_PASSWORD": SECRET},
        b"",
    )
    assert done.returncode != 0
    said = done.stderr.decode()
    assert "only to a loopback address" in said and "Traceback" not in said
    assert SECRET not in said


def test_an_accounts_file_table_takes_the_same_settings_and_never_a_password() -> None:
    import tomllib

    from mfconnector.imap.account import imap_settings_from_table

    parsed = tomllib.loads(
        """
        [accounts.home-mail]
        provider = "imap"
        imap = "imap.example.org"
        imap_user = "ann@example.org"
        smtp = "smtp.example.org:465"
        smtp_security = "tls"
        append_sent = false
        """
    )
    table = parsed["accounts"]["home-mail"]
    found = imap_settings_from_table(
        "home-mail", table, {"MFC_IMAP_PASSWORD_HOME_MAIL": SECRET}, password_lookup=no_keyring
    )
    assert (found.imap.port, found.smtp.port if found.smtp else None) == (993, 465)
    assert found.imap.password == SECRET and not found.append_sent
    with pytest.raises(MailSettingsError, match="never go in the accounts file") as caught:
        imap_settings_from_table(
            "home-mail", {**table, "password": SECRET}, {}, password_lookup=no_keyring
        )
    assert SECRET not in str(caught.value)
    with pytest.raises(MailSettingsError, match="unknown settings colour"):
        imap_settings_from_table(
            "x", {"imap": "h", "colour": "red"}, {}, password_lookup=no_keyring
        )
    with pytest.raises(MailSettingsError, match="MFC_IMAP_PASSWORD_HOME_MAIL"):
        imap_settings_from_table("home-mail", table, {}, password_lookup=no_keyring)
    with pytest.raises(MailSettingsError, match="only to a loopback address"):
        imap_settings_from_table(
            "x",
            {"imap": "mail.example.org", "imap_security": "plain", "imap_user": "a"},
            {"MFC_IMAP_PASSWORD_X": SECRET},
            password_lookup=no_keyring,
        )
