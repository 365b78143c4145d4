"""An IMAP account from ``--accounts FILE`` beside a Graph (demo) account, in one real
server process over pipes against Dovecot: each call reaches its own account, references
of one are refused for the other, and the IMAP password comes from the environment
variable named after the account (never the file)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.imap.test_imap_tools import Server
from tests.support.mailservers import Dovecot

pytestmark = pytest.mark.slow


@pytest.fixture
def server(dovecot: Dovecot, tmp_path: Path) -> Iterator[Server]:
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        '[[account]]\nname = "work"\nprovider = "graph"\n\n'
        '[[account]]\nname = "home"\nprovider = "imap"\n'
        f'imap = "127.0.0.1:{dovecot.imap_port}"\nimap_security = "plain"\n'
        'imap_user = "alice"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    env["MFC_IMAP_PASSWORD_HOME"] = dovecot.password
    running = Server(["--demo", "--allow-partial", "--accounts", str(accounts)], env)
    yield running
    said = running.close()
    assert dovecot.password not in said


def test_an_imap_and_a_graph_account_each_answer_for_themselves(
    dovecot: Dovecot, server: Server
) -> None:
    dovecot.deliver(
        b"From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: Home mail\r\n"
        b"Message-ID: <home-1@example.org>\r\n\r\nHello from home\r\n"
    )
    status = server.call("account_status", {})
    assert [a["provider"] for a in status["accounts"]] == ["graph", "imap"]
    home = server.call("mail_list", {"account": "home", "limit": 50})
    work = server.call("mail_list", {"account": "work", "limit": 5})
    home_ref = next(row[0] for row in home["messages"] if row[1] == "Home mail")
    assert home_ref.startswith("i") and home_ref.endswith(".INBOX")
    assert all(row[0].startswith("m") for row in work["messages"])
    assert "Hello from home" in json.dumps(
        server.call("mail_read", {"account": "home", "message_id": home_ref})
    )
    refused = server.send(
        "tools/call",
        {"name": "mail_read", "arguments": {"account": "work", "message_id": home_ref}},
    )["result"]
    assert refused["isError"] is True
    assert json.loads(refused["content"][0]["text"])["error"]["error_code"] == "stale_reference"
