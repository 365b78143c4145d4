"""Attachments by reference on the demo (``--demo`` with every switch on, the CLI's own
context, the runtime and the Graph emulator): a workbook from the demo drive, and the demo's
3.3 MB scan (an attachment of another message) through an upload session, each named in the
preview with the size and SHA-256 that the emulator's copy on the draft has, then sent."""

from __future__ import annotations

from typing import Any

from tests.support.harness import modern_meta, rows
from tests.writes.test_writes_demo import confirm, demo_tools

WORKBOOK = "Budget 2027 draft.xlsx"
SCAN = "Site survey – raw scan.png"


async def drive_item(tools: Any, name: str) -> dict[str, Any]:
    listed = await tools.data("files_list", {"limit": 50, "detail": "full"})
    return next(item for item in rows(listed, "items") if item["name"] == name)


async def scan_attachment(tools: Any) -> tuple[str, dict[str, Any]]:
    found = await tools.data("mail_search", {"query": "attachment:scan", "limit": 5})
    for row in found["messages"]:
        message_id = row[0] if isinstance(row, list) else row["id"]
        listed = await tools.data("mail_attachment", {"message_id": message_id})
        for attachment in listed["attachments"]:
            if attachment["name"] == SCAN:
                return message_id, attachment
    raise AssertionError("the demo's scan attachment was not found")


async def test_a_workbook_from_the_drive_is_attached_previewed_and_sent() -> None:
    async with demo_tools() as tools:
        item = await drive_item(tools, WORKBOOK)
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "new",
                "to": ["lynne@contoso.example"],
                "subject": "Budget workbook 4d1e",
                "text": "Here is the budget workbook.",
                "attachments": [{"item_id": item["id"]}],
            },
        )
        (shown,) = prepared["message"]["attachments"]
        assert (shown["name"], shown["size"]) == (WORKBOOK, item["size"])
        assert shown["content_type"] == item["mime_type"]
        review = await tools.ok(
            "mail_review", {"action": "draft", "message_id": prepared["message"]["id"]}
        )
        assert review["message"]["attachments"] == prepared["message"]["attachments"]
        assert review["source_digest"] == prepared["digest"]
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
    assert sent["status"] == "verified"


async def test_a_large_attachment_goes_through_an_upload_session_with_progress() -> None:
    async with demo_tools() as tools:
        message_id, scan = await scan_attachment(tools)
        assert scan["size"] > 3_000_000
        await tools.session.send(
            {
                "jsonrpc": "2.0",
                "id": "big",
                "method": "tools/call",
                "params": {
                    "_meta": {**modern_meta(), "progressToken": "upload"},
                    "name": "mail_create",
                    "arguments": {
                        "action": "draft",
                        "to": ["lee@contoso.example"],
                        "attachments": [{"message_id": message_id, "attachment_id": scan["id"]}],
                    },
                },
            }
        )
        lines = [await tools.session.receive(timeout=30)]
        while "method" in lines[-1]:
            lines.append(await tools.session.receive(timeout=30))
        *notes, reply = lines
        created = reply["result"]["structuredContent"]
        (attached,) = created["draft"]["attached"]
        review = await tools.ok(
            "mail_review", {"action": "draft", "message_id": created["draft"]["id"]}
        )
    assert reply["result"]["isError"] is False
    assert attached["source"] == {"message_id": message_id, "attachment_id": scan["id"]}
    (shown,) = review["message"]["attachments"]
    assert (shown["name"], shown["size"], shown["sha256"]) == (
        SCAN,
        attached["size"],
        attached["sha256"],
    )
    assert notes, "no progress for an upload session"
    assert all(n["params"]["progressToken"] == "upload" for n in notes)
    assert notes[0]["params"]["message"].startswith("attached ")
