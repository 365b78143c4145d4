"""The tools over an IMAP account: the real server process (``--imap``, ``--smtp``) over
real pipes, against Dovecot and an SMTP relay delivering into it. Reads give references
bound to folder and UIDVALIDITY; a prepared message is sent once, filed in Sent and
verified there; a second confirmation sends nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.mailservers import Dovecot, SmtpRelay

pytestmark = pytest.mark.slow

Relay = Callable[..., SmtpRelay]


class Server:
    """One ``python -m mfconnector`` over pipes, one JSON line per call."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mfconnector", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.ids = 0
        self.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.ids += 1
        line = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(line).encode() + b"\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert answer["id"] == self.ids, answer
        return answer

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.send("tools/call", {"name": name, "arguments": arguments})["result"]
        assert not result.get("isError"), result["content"][0]["text"][:2000]
        data: dict[str, Any] = result["structuredContent"]
        return data

    def close(self) -> str:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        said = self.process.stderr.read().decode(errors="replace")
        self.process.stderr.close()
        return said


@pytest.fixture
def server(dovecot: Dovecot, smtp_relay: Relay, tmp_path: Path) -> Iterator[Server]:
    relay = smtp_relay()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    env |= {"MFC_IMAP_PASSWORD": dovecot.password, "MFC_SMTP_PASSWORD": "unused"}
    argv = [
        "--imap", f"127.0.0.1:{dovecot.imap_port}", "--imap-security", "plain",
        "--imap-user", "alice", "--from", "alice@example.org",
        "--smtp", f"127.0.0.1:{relay.port}", "--smtp-security", "plain", "--smtp-user", "",
        "--enable-writes", "--enable-send", "--confirm", "assistant",
        "--state-dir", str(tmp_path / "state"),
    ]  # fmt: skip
    running = Server(argv, env)
    running.relay = relay  # type: ignore[attr-defined]
    yield running
    said = running.close()
    assert dovecot.password not in said


def test_reads_over_imap_hand_out_references_bound_to_folder_and_uidvalidity(
    dovecot: Dovecot, server: Server
) -> None:
    dovecot.deliver(
        b"From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: Tools over IMAP\r\n"
        b"Message-ID: <tools-1@example.org>\r\nContent-Type: text/html\r\n\r\n"
        b"<p>Hello <b>Alice</b></p>\r\n"
    )
    folders = server.call("mail_folders", {})
    names = [row[1] for row in folders["folders"]]
    assert {"INBOX", "Sent", "Drafts", "Trash"} <= set(names)
    listed = server.call("mail_list", {"limit": 50})
    row = next(r for r in listed["messages"] if r[1] == "Tools over IMAP")
    ref = row[0]
    assert ref.startswith("i") and ref.endswith(".INBOX") and len(ref.split(".")) == 4
    read = server.call("mail_read", {"message_id": ref})
    assert "Hello Alice" in json.dumps(read)
    found = server.call("mail_search", {"query": "Tools over IMAP"})
    assert ref in json.dumps(found)
    status = server.call("account_status", {})
    assert status["accounts"][0]["provider"] == "imap"


def test_a_message_prepared_over_imap_is_sent_once_filed_and_verified(
    dovecot: Dovecot, server: Server
) -> None:
    prepared = server.call(
        "mail_prepare",
        {
            "action": "new",
            "to": ["bob@example.org"],
            "subject": "Sent through the tools",
            "text": "Once, and only once.",
        },
    )
    confirm = {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}
    sent = server.call("mail_send_confirmed", confirm)
    again = server.call("mail_send_confirmed", confirm)
    assert sent["status"] in ("sent", "verified"), sent
    assert again.get("resent") is False
    relay: SmtpRelay = server.relay  # type: ignore[attr-defined]
    assert len(relay.received) == 1
    copies = [m for m in dovecot.inbox_messages("bob") if b"Sent through the tools" in m]
    assert len(copies) == 1
    filed = [m for m in dovecot.inbox_messages("alice", "Sent") if b"Sent through the tools" in m]
    assert len(filed) == 1


@pytest.mark.parametrize("gated", [False, True])
def test_discovery_for_an_imap_only_server_stays_within_the_budgets(
    dovecot: Dovecot, tmp_path: Path, gated: bool
) -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    env["MFC_IMAP_PASSWORD"] = dovecot.password
    argv = ["--imap", f"127.0.0.1:{dovecot.imap_port}", "--imap-security", "plain",
            "--imap-user", "alice", "--state-dir", str(tmp_path / "state")]  # fmt: skip
    if gated:
        argv += ["--enable-writes", "--enable-send", "--enable-delete", "--confirm", "assistant"]
    running = Server(argv, env)
    try:
        tools = running.send("tools/list", {})["result"]["tools"]
    finally:
        running.close()
    wire = json.dumps(tools, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    budget = DEFAULT_LIMITS.tools_list_all_gates_bytes if gated else DEFAULT_LIMITS.tools_list_bytes
    assert len(wire) <= budget, f"{len(wire):,} bytes over {budget:,}"
    names = {tool["name"] for tool in tools}
    assert {"mail_list", "mail_read", "account_status"} <= names
    if gated:
        assert {"mail_prepare", "mail_send_confirmed", "mail_delete_permanently"} <= names


def test_a_flag_change_after_another_clients_change_is_a_conflict_through_the_tools(
    dovecot: Dovecot, server: Server
) -> None:
    dovecot.deliver(
        b"From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: Contested flags\r\n"
        b"Message-ID: <contested@example.org>\r\n\r\nBody.\r\n"
    )
    listed = server.call("mail_list", {"limit": 50, "detail": "full"})
    item = next(m for m in listed["messages"] if m["subject"] == "Contested flags")
    token = item["change_token"]
    imap = dovecot.imaplib()  # another client marks it read meanwhile
    imap.select("INBOX")
    _, found = imap.uid("SEARCH", "HEADER", "Message-ID", "<contested@example.org>")
    imap.uid("STORE", found[0].decode(), "+FLAGS", "(\\Seen)")
    imap.logout()
    result = server.send(
        "tools/call",
        {
            "name": "mail_modify",
            "arguments": {
                "action": "flags",
                "message_id": item["id"],
                "flag": "flagged",
                "unchanged_since": token,
            },
        },
    )["result"]
    assert result["isError"] is True
    assert '"error_code":"conflict"' in result["content"][0]["text"].replace(" ", "")
    again = server.call("mail_read", {"message_id": item["id"], "detail": "full"})
    message = again["message"]
    assert message["flag"] == "none" and message["unread"] is False  # theirs kept, ours not made
    assert int(message["change_token"]) > int(token)
    moved = server.call("mail_modify", {"action": "trash", "message_id": item["id"]})
    assert moved["trashed"]["id"].endswith(".Trash")  # a reference in Trash, from COPYUID


def test_a_read_cut_at_a_mime_limit_is_marked_incomplete_through_the_tools(
    dovecot: Dovecot, server: Server
) -> None:
    big = b"Start of a long message.\r\n" + b"x" * 76 + b"\r\n"
    raw = (
        b"From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: Six megabytes\r\n"
        b"Message-ID: <six@example.org>\r\n\r\n" + big * 80_000
    )  # about 6.4 MB: past mime_message_bytes (5 MiB)
    imap = dovecot.imaplib()
    imap.append("INBOX", "", None, raw)
    imap.logout()
    listed = server.call("mail_list", {"limit": 50})
    ref = next(r[0] for r in listed["messages"] if r[1] == "Six megabytes")
    result = server.send("tools/call", {"name": "mail_read", "arguments": {"message_id": ref}})
    data = result["result"]["structuredContent"]
    assert result["result"]["isError"] is True  # the completeness contract, without --allow-partial
    assert data["incomplete"] is True
    limits = {f.get("limit") for f in data["skipped"]["fields"]}
    assert "mime_message_bytes" in limits
    assert data["message"]["body"].startswith("Start of a long message.")
