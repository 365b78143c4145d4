"""A Gmail account from ``--accounts FILE`` beside a Graph one, both on the demo, in one
real server process over pipes: each answers for itself with its own references, and a
reference of one is refused for the other before any request."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.imap.test_imap_tools import Server

pytestmark = pytest.mark.slow


def test_a_gmail_and_a_graph_account_each_answer_for_themselves(tmp_path: Path) -> None:
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        '[[account]]\nname = "work"\nprovider = "graph"\n\n'
        '[[account]]\nname = "personal"\nprovider = "gmail"\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    server = Server(["--demo", "--allow-partial", "--accounts", str(accounts)], env)
    try:
        status = server.call("account_status", {})
        assert [a["provider"] for a in status["accounts"]] == ["graph", "gmail"]
        personal = server.call("mail_list", {"account": "personal", "limit": 5})
        work = server.call("mail_list", {"account": "work", "limit": 5})
        gmail_ref = personal["messages"][0][0]
        assert gmail_ref.startswith("g") and all(r[0].startswith("m") for r in work["messages"])
        read = server.call("mail_read", {"account": "personal", "message_id": gmail_ref})
        assert read["message"]["id"] == gmail_ref
        refused = server.send(
            "tools/call",
            {"name": "mail_read", "arguments": {"account": "work", "message_id": gmail_ref}},
        )["result"]
        assert refused["isError"] is True
        error = json.loads(refused["content"][0]["text"])["error"]
        assert error["error_code"] == "stale_reference"
    finally:
        server.close()
