"""The Gmail wiring: ``--demo gmail`` serves the Gmail emulator through GmailMailBackend
(plain ``--demo`` stays Microsoft 365), ``--gmail`` builds one account by flags, and a
refused ``--gmail-api-root`` stops the server with our words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from mfconnector.cli import build_parser
from mfconnector.entry.wiring import build_context as _context
from mfconnector.gmail.backend import GmailMailBackend
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.query import MessageFilter, PageRequest
from mfconnector.writes.gates import Gates


async def test_demo_gmail_serves_the_gmail_emulator_through_the_backend() -> None:
    context, wiring = _context(build_parser().parse_args(["--demo", "gmail"]), DEFAULT_LIMITS)
    try:
        assert context.mode == "demo" and context.accounts is not None
        (account,) = list(context.accounts)
        assert account.provider == "gmail" and account.tag.tag.startswith("g")
        backend = context.mail({})
        assert isinstance(backend, GmailMailBackend)
        inbox = await backend.resolve_folder("inbox", "folder")
        page = await backend.list_messages(inbox, MessageFilter(), PageRequest(limit=5))
        assert len(page.items) == 5 and all(str(m.ref).startswith("g") for m in page.items)
        assert not backend.capabilities.permanent_delete  # no --enable-delete
    finally:
        await wiring.aclose()


def test_plain_demo_stays_microsoft_365() -> None:
    context, _ = _context(build_parser().parse_args(["--demo"]), DEFAULT_LIMITS)
    assert context.mode == "demo" and context.accounts is not None
    assert [account.provider for account in context.accounts] == ["graph"]


def test_the_delete_gate_asks_for_the_full_mail_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MFC_GMAIL_ACCESS_TOKEN", "operator-token")
    args = build_parser().parse_args(["--gmail", "--gmail-api-root", "http://127.0.0.1:9"])
    gates = Gates(writes=True, delete=True)
    context, _ = _context(args, DEFAULT_LIMITS, gates)
    assert context.accounts is not None
    (account,) = list(context.accounts)
    assert account.mail.capabilities.permanent_delete
    assert account.settings["api_root"] == "http://127.0.0.1:9"


def _message(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _initialize(request_id: int) -> dict[str, Any]:
    hello = {"name": "test", "version": "1"}
    return _message(
        request_id,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": hello},
    )


def _run(args: list[str], lines: list[dict[str, Any]], env: dict[str, str]) -> Any:
    data = "".join(json.dumps(line) + "\n" for line in lines)
    return subprocess.run(
        [sys.executable, "-m", "mfconnector", *args],
        input=data.encode(),
        capture_output=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_a_plain_http_api_root_off_loopback_stops_the_server_in_our_words() -> None:
    done = _run(
        ["--gmail", "--gmail-api-root", "http://gmail.example"],
        [],
        {"MFC_GMAIL_ACCESS_TOKEN": "operator-token"},
    )
    assert done.returncode == 2
    assert b"loopback" in done.stderr and b"Traceback" not in done.stderr
    assert b"operator-token" not in done.stderr + done.stdout


@pytest.mark.slow
def test_demo_gmail_serves_the_protocol_and_keeps_serving() -> None:
    done = _run(
        ["--demo", "gmail"],
        [
            _initialize(1),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            _message(2, "tools/list", {}),
            _message(3, "tools/call", {"name": "nope", "arguments": {}}),
        ],
        {},
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[1]["result"]["tools"]
    assert b"Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("no_keyring")
def test_status_and_login_for_gmail_say_what_blocks_in_our_words(tmp_path: Any) -> None:
    env = {"MFC_CACHE_PATH": str(tmp_path / "cache.json"), "MFC_GOOGLE_CLIENT_ID": ""}
    blocked = _run(["status", "--provider", "gmail"], [], env)
    assert blocked.returncode == 2
    assert b"MFC_GOOGLE_CLIENT_ID" in blocked.stderr and b"Traceback" not in blocked.stderr
    env |= {"MFC_GOOGLE_CLIENT_ID": "abc.apps.googleusercontent.example"}
    refused = _run(["status", "--provider", "gmail"], [], env)
    assert refused.returncode != 0 and b"--allow-plaintext-cache" in refused.stderr
    env |= {"MFC_ALLOW_PLAINTEXT_CACHE": "1"}
    status = _run(["status", "--provider", "gmail", "--enable-writes"], [], env)
    assert status.returncode == 0, status.stderr
    assert b"Gmail: not signed in" in status.stderr and status.stdout == b""


@pytest.mark.slow
def test_serve_http_refuses_the_gmail_demo() -> None:
    required = [
        "--public-url", "https://mcp.example/mcp", "--oauth-issuer", "https://idp.example/",
        "--oauth-scope", "mcp.read",
    ]  # fmt: skip
    done = _run(["serve-http", "--demo", "gmail", *required], [], {})
    assert done.returncode == 2 and b"no Gmail yet" in done.stderr
