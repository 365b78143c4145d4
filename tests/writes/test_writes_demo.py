"""The acting tools end to end on the demo (``--demo`` with every switch on): the context
the CLI builds, the Graph emulator behind it, and what a user would check afterwards with
the read tools — a sent message is in the sandbox's Sent Items, a deleted one is gone."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mfconnector.cli import build_parser
from mfconnector.entry.wiring import build_context
from mfconnector.tools.gated import hidden_tools, listed_tools
from mfconnector.writes.gates import gates_from_args
from tests.support.acting_harness import FAST, Caller
from tests.support.harness import open_session, request

SWITCHES = ["--demo", "--enable-writes", "--enable-send", "--enable-delete"]


@asynccontextmanager
async def demo_tools() -> AsyncIterator[Caller]:
    args = build_parser().parse_args(SWITCHES)
    gates = gates_from_args(args, {})
    ctx, graph = build_context(args, FAST, gates)
    assert ctx.writes is not None and ctx.writes.store.store.path is None, "demo: memory"
    try:
        with trio.fail_after(60):
            async with open_session(
                tools=listed_tools(gates), context=ctx, limits=FAST, hidden=hidden_tools(gates)
            ) as session:
                yield Caller(session)
    finally:
        await graph.aclose()


async def sent_subjects(tools: Caller) -> list[str]:
    listed = await tools.data("mail_list", {"folder": "sentitems", "limit": 50, "detail": "full"})
    return [m.get("subject") for m in listed["messages"]]


def confirm(prepared: dict[str, Any]) -> dict[str, Any]:
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


async def test_a_new_message_is_sent_once_into_sent_items() -> None:
    async with demo_tools() as tools:
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "new",
                "to": ["megan@fabrikam.example"],
                "bcc": ["audit@fabrikam.example"],
                "subject": "Demo send 7f3a",
                "text": "Lunch at noon?",
            },
        )
        assert prepared["message"]["bcc"][0]["address"] == "audit@fabrikam.example"
        assert "Demo send 7f3a" not in await sent_subjects(tools)
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
        again = await tools.ok("mail_send_confirmed", confirm(prepared))
        subjects = await sent_subjects(tools)
    assert sent["status"] == "verified"
    assert again["resent"] is False
    assert subjects.count("Demo send 7f3a") == 1


async def test_a_reply_uses_outlooks_threading_and_is_sent() -> None:
    async with demo_tools() as tools:
        inbox = await tools.data("mail_list", {"limit": 5, "detail": "full"})
        original = inbox["messages"][0]
        prepared = await tools.ok(
            "mail_prepare",
            {"action": "reply", "message_id": original["id"], "comment": "Thanks, agreed."},
        )
        message = prepared["message"]
        assert message["subject"].startswith("RE:")
        assert [a["address"] for a in message["to"]] == [original["from"]["address"]]
        assert "Thanks, agreed." in message["text"]
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
        assert sent["status"] == "verified"
        assert message["subject"] in await sent_subjects(tools)


async def test_draft_attachment_review_revise_prepare_send() -> None:
    data = b"%PDF-1.7 demo numbers\n" * 50
    async with demo_tools() as tools:
        created = await tools.ok(
            "mail_create",
            {
                "action": "draft",
                "to": ["megan@fabrikam.example"],
                "subject": "Numbers 19c2",
                "html": "<p>See the <b>numbers</b>.</p>",
                "attachments": [
                    {
                        "name": "numbers.pdf",
                        "content_base64": base64.b64encode(data).decode(),
                        "content_type": "application/pdf",
                    }
                ],
            },
        )
        draft_id = created["draft"]["id"]
        read = await tools.ok("mail_review", {"action": "draft", "message_id": draft_id})
        (attachment,) = read["message"]["attachments"]
        assert attachment["sha256"] == hashlib.sha256(data).hexdigest()
        assert attachment["size"] == len(data)
        revised = await tools.ok(
            "mail_create",
            {
                "action": "revise_draft",
                "message_id": draft_id,
                "source_digest": read["source_digest"],
                "cc": ["lee@fabrikam.example"],
            },
        )
        new_id = revised["revision"]["id"]
        review = await tools.ok("mail_review", {"action": "draft", "message_id": new_id})
        assert review["message"]["attachments"][0]["sha256"] == attachment["sha256"]
        prepared = await tools.ok(
            "mail_prepare",
            {"action": "draft", "message_id": new_id, "source_digest": review["source_digest"]},
        )
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
        original = await tools.ok("mail_review", {"action": "draft", "message_id": draft_id})
    assert sent["status"] == "verified"
    assert original["source_digest"] == read["source_digest"], "the source draft is kept"


async def test_folders_flags_move_and_permanent_delete() -> None:
    async with demo_tools() as tools:
        folder = (await tools.ok("mail_create", {"action": "folder", "name": "Receipts"}))[
            "created"
        ]
        renamed = await tools.ok(
            "mail_modify", {"action": "rename", "folder": folder["id"], "name": "Receipts 26"}
        )
        assert renamed["renamed"]["name"] == "Receipts 26"
        refused = await tools.fail(
            "mail_modify", {"action": "rename", "folder": "inbox", "name": "Mine"}
        )
        assert refused["error_code"] == "unsupported"
        message = (await tools.data("mail_list", {"limit": 1, "detail": "full"}))["messages"][0]
        flagged = await tools.ok(
            "mail_modify",
            {
                "action": "flags",
                "message_id": message["id"],
                "read": True,
                "flag": "flagged",
                "categories_add": ["Receipts"],
            },
        )
        key = flagged["updated"]["change_token"]
        assert flagged["updated"]["categories"][-1] == "Receipts"
        await tools.ok(
            "mail_modify",
            {"action": "flags", "message_id": message["id"], "read": False, "unchanged_since": key},
        )
        stale = await tools.fail(
            "mail_modify",
            {"action": "flags", "message_id": message["id"], "read": True, "unchanged_since": key},
        )
        assert stale["error_code"] == "conflict"
        moved = await tools.ok(
            "mail_modify",
            {"action": "move", "message_id": message["id"], "destination": folder["id"]},
        )
        assert moved["moved"]["folder"] == folder["id"]
        in_folder = await tools.data("mail_list", {"folder": folder["id"], "detail": "full"})
        assert [m["id"] for m in in_folder["messages"]] == [message["id"]]
        deleted = await tools.ok("mail_delete_permanently", {"message_id": message["id"]})
        assert deleted["deleted"]["subject"] == message["subject"]
        gone = await tools.call("mail_read", {"message_id": message["id"]})
        assert gone["isError"] is True
        assert (await tools.data("mail_list", {"folder": folder["id"], "detail": "full"}))[
            "messages"
        ] == []


@pytest.mark.slow
def test_the_demo_process_sends_into_its_sandbox() -> None:
    prepare = request(
        1,
        "tools/call",
        {
            "name": "mail_prepare",
            "arguments": {
                "action": "new",
                "to": ["megan@fabrikam.example"],
                "subject": "From a real process",
                "text": "hello",
            },
        },
    )
    with subprocess.Popen(
        [sys.executable, "-m", "mfconnector", *SWITCHES],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:

        def call(message: dict[str, Any]) -> dict[str, Any]:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            result: dict[str, Any] = json.loads(process.stdout.readline())["result"]
            return result

        prepared = call(prepare)["structuredContent"]
        sent = call(
            request(
                2, "tools/call", {"name": "mail_send_confirmed", "arguments": confirm(prepared)}
            )
        )["structuredContent"]
        listed = call(
            request(
                3,
                "tools/call",
                {"name": "mail_list", "arguments": {"folder": "sentitems", "detail": "full"}},
            )
        )["structuredContent"]
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
    assert sent["status"] == "verified"
    assert "From a real process" in [m["subject"] for m in listed["messages"]]


async def test_account_status_names_the_switches_and_the_state_store() -> None:
    async with demo_tools() as tools:
        status = await tools.ok("account_status", {})
    assert status["acting"] == {
        "writes": True,
        "send": True,
        "delete": True,
        "state_file": "memory",
    }


async def test_revising_a_reply_keeps_its_thread_and_replaces_attachments() -> None:
    async with demo_tools() as tools:
        original = (await tools.data("mail_list", {"limit": 1, "detail": "full"}))["messages"][0]
        reply = await tools.ok(
            "mail_prepare", {"action": "reply", "message_id": original["id"], "comment": "Ok."}
        )
        reply_id = reply["message"]["id"]
        revised = await tools.ok(
            "mail_create",
            {
                "action": "revise_draft",
                "message_id": reply_id,
                "source_digest": reply["digest"],
                "cc": ["lee@fabrikam.example"],
                "attachments": [
                    {"name": "b.txt", "content_base64": base64.b64encode(b"B").decode()}
                ],
            },
        )
        new_id = revised["revision"]["id"]
        review = await tools.ok("mail_review", {"action": "draft", "message_id": new_id})
        read = await tools.data("mail_read", {"message_id": new_id, "detail": "full"})
        source_after = await tools.ok("mail_review", {"action": "draft", "message_id": reply_id})
    assert new_id != reply_id
    assert read["message"]["thread"] == original["thread"]
    assert review["message"]["subject"] == reply["message"]["subject"]
    assert [a["address"] for a in review["message"]["cc"]] == ["lee@fabrikam.example"]
    assert [a["name"] for a in review["message"]["attachments"]] == ["b.txt"]
    assert source_after["source_digest"] == reply["digest"], "the source is untouched"


async def test_unchanged_since_works_straight_from_a_full_read_or_list() -> None:
    """Issue 17: the change key comes from a read, not only from an earlier write."""
    async with demo_tools() as tools:
        listed = (await tools.data("mail_list", {"limit": 1, "detail": "full"}))["messages"][0]
        read = (await tools.data("mail_read", {"message_id": listed["id"], "detail": "full"}))[
            "message"
        ]
        assert read["change_token"] == listed["change_token"] and listed["change_token"]
        flags = {"action": "flags", "message_id": listed["id"], "flag": "flagged"}
        updated = await tools.ok("mail_modify", {**flags, "unchanged_since": read["change_token"]})
        stale = await tools.fail("mail_modify", {**flags, "unchanged_since": read["change_token"]})
        fresh = (await tools.data("mail_read", {"message_id": listed["id"], "detail": "full"}))[
            "message"
        ]
    assert stale["error_code"] == "conflict"
    assert fresh["change_token"] == updated["updated"]["change_token"] != read["change_token"]


async def test_acting_tools_take_folders_by_name_and_path_as_the_read_tools_do() -> None:
    """Issue 17: destinations and parents by well-known name, display name or path."""
    async with demo_tools() as tools:
        created = await tools.ok(
            "mail_create", {"action": "folder", "name": "Q3 receipts", "parent": "Projects"}
        )
        listed = await tools.data("mail_list", {"limit": 1, "detail": "full"})
        message_id = listed["messages"][0]["id"]
        moved = await tools.ok(
            "mail_modify",
            {"action": "move", "message_id": message_id, "destination": "Projects/Q3 receipts"},
        )
        copied = await tools.ok(
            "mail_create",
            {"action": "copy", "message_id": message_id, "destination": "Contoso Launch"},
        )
        launch = await tools.data(
            "mail_list", {"folder": "Projects/Contoso Launch", "detail": "full"}
        )
        missing = await tools.fail(
            "mail_modify",
            {"action": "move", "message_id": message_id, "destination": "Projects/Nowhere"},
        )
    assert moved["moved"]["folder"] == created["created"]["id"]
    in_launch = {m["id"]: m["folder"] for m in launch["messages"]}
    assert in_launch[copied["copied"]["id"]] == copied["copied"]["folder"]
    assert missing["error_code"] == "not_found" and "Nowhere" in missing["message"]


@pytest.mark.parametrize(
    ("argv", "env", "outcome"),
    [
        (["--confirm", "user"], {}, "confirmation_required"),
        ([], {"MFC_CONFIRM": "user"}, "confirmation_required"),
        (["--confirm", "assistant"], {"MFC_CONFIRM": "user"}, "assistant"),
        ([], {}, "assistant"),
    ],
)
async def test_the_confirm_switch_from_the_command_line(
    argv: list[str], env: dict[str, str], outcome: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that declares no elicitation: --confirm user refuses, else the assistant."""
    monkeypatch.delenv("MFC_CONFIRM", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    args = build_parser().parse_args([*SWITCHES, *argv])
    gates = gates_from_args(args, {})
    ctx, graph = build_context(args, FAST, gates)
    try:
        with trio.fail_after(60):
            async with open_session(
                tools=listed_tools(gates), context=ctx, limits=FAST, hidden=hidden_tools(gates)
            ) as session:
                tools = Caller(session)
                prepared = await tools.ok(
                    "mail_prepare",
                    {
                        "action": "new",
                        "to": ["megan@fabrikam.example"],
                        "subject": "c",
                        "text": "x",
                    },
                )
                result = await tools.call("mail_send_confirmed", confirm(prepared))
    finally:
        await graph.aclose()
    if outcome == "assistant":
        assert result["structuredContent"]["confirmed_by"] == "assistant"
    else:
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["error_code"] == outcome and "nothing was sent" in error["message"]
