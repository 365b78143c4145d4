"""Interop: the official MCP SDK client drives every tool of a real ``mfconnector --demo
gmail`` process (the Gmail emulator) with every gate on, in each protocol era: the reads
(folders, list with filters and a cursor, search, read, attachments, account status) and the
acting tools (labels, copy, drafts and their revision, flags, move, rename, trash, permanent
deletion, a prepared send confirmed once and found in SENT, the review)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import trio
from mcp import Client, ClientSession, StdioServerParameters

from tests.process.test_interop_sdk import (
    ALL_VERSIONS,
    MODERN,
    READ_TIMEOUT_SECONDS,
    REPO_ROOT,
    TEST_SECONDS,
    Wire,
    initialize_at,
    recorded_stdio,
    server_stderr,
)

pytestmark = pytest.mark.slow

GATES = ["--enable-writes", "--enable-send", "--enable-delete"]
CLIENT = types.Implementation(name="mfconnector-gmail-interop", version="1")


def gmail_parameters(home: Path, switches: list[str]) -> StdioServerParameters:
    home.mkdir(exist_ok=True)
    private = str(home)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mfconnector", "--demo", "gmail", *switches],
        cwd=REPO_ROOT,
        env={"HOME": private, "XDG_CONFIG_HOME": private, "XDG_STATE_HOME": private},
    )


@asynccontextmanager
async def gmail_sdk(
    tmp_path: Path, era: str, switches: list[str], wire: Wire | None = None
) -> AsyncIterator[Any]:
    """The SDK on the real server in ``era``: ``Client`` for 2026-07-28 and 2025-11-25,
    ``ClientSession`` with a 2025-06-18 handshake (the SDK offers no older version itself).
    Both answer ``list_tools()`` and ``call_tool(name, arguments)``; ``wire`` records the
    JSON-RPC messages."""
    wire = wire if wire is not None else Wire()
    with server_stderr(tmp_path) as errlog:
        transport = recorded_stdio(gmail_parameters(tmp_path / "home", switches), errlog, wire)
        if era == "2025-06-18":
            async with (
                transport as (read_stream, write_stream),
                ClientSession(
                    read_stream,
                    write_stream,
                    read_timeout_seconds=READ_TIMEOUT_SECONDS,
                    client_info=CLIENT,
                ) as session,
            ):
                await initialize_at(session, era)
                assert session.protocol_version == era
                yield session
        else:
            async with Client(
                transport,
                mode=MODERN if era == MODERN else "legacy",
                read_timeout_seconds=READ_TIMEOUT_SECONDS,
                client_info=CLIENT,
            ) as client:
                yield client
    handshakes = [m for m in wire.sent if m.get("method") == "initialize"]
    if era == MODERN:
        assert not handshakes
    else:
        assert handshakes and handshakes[0]["params"]["protocolVersion"] == era


async def ok(sdk: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await sdk.call_tool(tool, arguments)
    assert result.is_error is False, (tool, arguments, result.content)
    data: dict[str, Any] = result.structured_content
    return data


async def refused(sdk: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool error: an ``isError`` result whose text is the one error shape."""
    result = await sdk.call_tool(tool, arguments)
    assert result.is_error is True, (tool, arguments, result.content)
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    assert {"error_code", "message", "retry_safe"} <= set(error), error
    assert "Traceback" not in error["message"]
    return error


def ids(listing: dict[str, Any]) -> list[str]:
    column = listing["columns"].index("id")
    return [row[column] for row in listing["messages"]]


def cell(row: list[Any], column: int) -> Any:
    """A compact row's value; trailing empty cells are left off the row."""
    return row[column] if column < len(row) else None


def rows_by_subject(listing: dict[str, Any]) -> dict[str, list[Any]]:
    column = listing["columns"].index("subject")
    return {row[column]: row for row in listing["messages"]}


async def check_reads(sdk: Any) -> None:
    folders = await ok(sdk, "mail_folders", {})
    names = {row[1]: row for row in folders["folders"]}
    assert {"Inbox", "Sent", "Drafts", "Trash", "Finance"} <= set(names)
    assert names["Inbox"][0].startswith("g") and names["Inbox"][0].endswith(".INBOX")
    under = await ok(sdk, "mail_folders", {"parent": "Finance"})
    assert [row[1] for row in under["folders"]] == ["Invoices"]

    inbox = await ok(sdk, "mail_list", {"folder": "inbox", "limit": 50})
    everything = ids(inbox)
    assert len(everything) == names["Inbox"][3]  # every message of the label, one page
    flags = inbox["columns"].index("flags")
    unread = await ok(sdk, "mail_list", {"folder": "inbox", "unread_only": True, "limit": 50})
    assert len(ids(unread)) == names["Inbox"][2]
    assert all("unread" in (cell(row, flags) or "") for row in unread["messages"])
    with_files = await ok(sdk, "mail_list", {"folder": "inbox", "has_attachments": True})
    # Gmail's has:attachment also matches a message whose only part is an inline image,
    # which the flags column does not call an attachment: every file-carrying message is in.
    carrying = {row[0] for row in inbox["messages"] if "attachments" in (cell(row, flags) or "")}
    assert carrying and carrying <= set(ids(with_files)) <= set(everything)
    assert len(ids(with_files)) < len(everything)
    sender = await ok(sdk, "mail_list", {"folder": "inbox", "from": "lee.gu@fabrikam.example"})
    column = sender["columns"].index("from")
    assert sender["messages"] and all(
        "lee.gu@fabrikam.example" in row[column] for row in sender["messages"]
    )

    first = await sdk.call_tool("mail_list", {"folder": "inbox", "limit": 3})
    page: dict[str, Any] = first.structured_content
    cursor = page["skipped"]["items"]["cursor"]
    assert page["skipped"]["items"]["more_pages"] is True and cursor
    second = await sdk.call_tool("mail_list", {"folder": "inbox", "limit": 3, "cursor": cursor})
    assert ids(page) + ids(second.structured_content) == everything[:6]  # newest first

    found = await ok(sdk, "mail_search", {"query": "invoice", "limit": 10})
    assert "Invoice 2026-0412 for November" in rows_by_subject(found)

    contract = rows_by_subject(with_files)["Contract draft and budget"][0]
    read = await ok(sdk, "mail_read", {"message_id": contract})
    assert read["message"]["subject"] == "Contract draft and budget"
    assert read["message"]["body"].strip()
    listed = await ok(sdk, "mail_attachment", {"message_id": contract})
    assert listed["attachments"] and all(a["id"].startswith("g") for a in listed["attachments"])
    one = listed["attachments"][0]
    got = await ok(sdk, "mail_attachment", {"message_id": contract, "attachment_id": one["id"]})
    assert json.dumps(got) != json.dumps(listed)  # the attachment itself, not the list
    stale = await refused(sdk, "mail_read", {"message_id": "msb.AAMkAGI2-a-graph-id"})
    assert stale["error_code"] == "stale_reference"

    no_files = await refused(sdk, "files_list", {})
    assert no_files["error_code"] == "unsupported" and "no account" in no_files["message"]

    status = await ok(sdk, "account_status", {})
    (account,) = status["accounts"]
    assert account["provider"] == "gmail" and set(account["gates"]) == {"writes", "send", "delete"}
    assert account["capabilities"]["conditional_flags"] is False and account["files"] is False
    server = status["capabilities"]  # the server's summary follows the Gmail account
    assert server["shared_mailboxes"] is False and server["other_drives"] is False
    assert not [r for r in server["reads"] if "files" in r or "unique_body" in r]


async def check_acting(sdk: Any) -> None:
    inbox = await ok(sdk, "mail_list", {"folder": "inbox", "has_attachments": True})
    subjects = rows_by_subject(inbox)
    contract = subjects["Contract draft and budget"][0]
    launch = subjects["Launch deck for Monday"][0]

    label = await ok(sdk, "mail_create", {"action": "folder", "name": "Interop"})
    assert label["created"]["name"] == "Interop"
    copied = await ok(
        sdk, "mail_create", {"action": "copy", "message_id": contract, "destination": "Interop"}
    )
    assert copied["copied"]["id"] == contract  # a label more, the same message
    in_label = await ok(sdk, "mail_list", {"folder": "Interop"})
    assert ids(in_label) == [contract]
    assert contract in ids(await ok(sdk, "mail_list", {"folder": "inbox", "limit": 50}))

    attachment = (await ok(sdk, "mail_attachment", {"message_id": contract}))["attachments"][0]
    drafted = await ok(
        sdk,
        "mail_create",
        {
            "action": "draft",
            "to": ["megan@fabrikam.example"],
            "subject": "Interop draft",
            "text": "First words.",
            "attachments": [{"message_id": contract, "attachment_id": attachment["id"]}],
        },
    )
    draft = drafted["draft"]["id"]
    assert drafted["draft"]["attached"][0]["size"] == attachment["size"]
    # A drive file by reference: a reference of this account (files_list hands such ones out
    # where an account has files), refused because a Gmail account has no drive.
    drive_file = contract.split(".", 1)[0] + ".01AB"
    drive = await refused(
        sdk,
        "mail_create",
        {
            "action": "draft",
            "to": ["megan@fabrikam.example"],
            "attachments": [{"item_id": drive_file}],
        },
    )
    assert drive["error_code"] == "unsupported"

    reviewed = await ok(sdk, "mail_review", {"action": "draft", "message_id": draft})
    assert reviewed["message"]["attachments"][0]["name"] == attachment["name"]
    revised = await ok(
        sdk,
        "mail_create",
        {
            "action": "revise_draft",
            "message_id": draft,
            "source_digest": reviewed["source_digest"],
            "text": "Better words.",
        },
    )
    new_draft = json.dumps(revised)
    kept = await ok(sdk, "mail_review", {"action": "draft", "message_id": draft})
    assert kept["message"]["text"].strip() == "First words."  # the source draft stays
    drafts = await ok(sdk, "mail_list", {"folder": "drafts", "limit": 50})
    texts = [json.dumps(row) for row in drafts["messages"]]
    assert sum("Interop draft" in text for text in texts) == 2, new_draft

    flagged = await ok(
        sdk,
        "mail_modify",
        {"action": "flags", "message_id": launch, "read": False, "flag": "flagged"},
    )
    assert flagged["updated"]["id"] == launch
    starred = await ok(sdk, "mail_list", {"folder": "inbox", "flagged": True, "limit": 50})
    assert launch in ids(starred)
    conditional = await refused(
        sdk,
        "mail_modify",
        {"action": "flags", "message_id": launch, "flag": "none", "unchanged_since": "1"},
    )
    assert conditional["error_code"] == "unsupported"
    assert launch in ids(await ok(sdk, "mail_list", {"folder": "inbox", "flagged": True}))

    rename = {"action": "rename", "folder": "Interop", "name": "Kept"}
    renamed = await ok(sdk, "mail_modify", rename)
    assert renamed["renamed"]["name"] == "Kept"
    moved = await ok(
        sdk, "mail_modify", {"action": "move", "message_id": launch, "destination": "Kept"}
    )
    assert moved["moved"]["id"] == launch
    assert launch not in ids(await ok(sdk, "mail_list", {"folder": "inbox", "limit": 50}))
    assert set(ids(await ok(sdk, "mail_list", {"folder": "Kept"}))) == {contract, launch}
    await ok(sdk, "mail_modify", {"action": "trash", "message_id": launch})
    assert launch in ids(await ok(sdk, "mail_list", {"folder": "trash", "limit": 50}))
    deleted = await ok(sdk, "mail_delete_permanently", {"message_id": launch})
    assert deleted["recoverable"] is False
    gone = await refused(sdk, "mail_read", {"message_id": launch})
    assert gone["error_code"] == "not_found"

    prepared = await ok(
        sdk,
        "mail_prepare",
        {"action": "new", "to": ["megan@fabrikam.example"], "subject": "Interop send", "text": "x"},
    )
    confirm = {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}
    sent = await ok(sdk, "mail_send_confirmed", confirm)
    again = await ok(sdk, "mail_send_confirmed", confirm)
    assert sent["status"] == "verified" and sent["in_sent_items"] is True
    assert again["resent"] is False
    in_sent = await ok(sdk, "mail_search", {"query": "Interop send", "folder": "sent"})
    assert len(ids(in_sent)) == 1  # sent once
    status = await ok(
        sdk, "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
    )
    assert status["status"] == "verified"
    recent = await ok(sdk, "mail_review", {"action": "recent"})
    assert recent["recent"][0]["tool"] == "mail_send_confirmed"


@pytest.mark.parametrize("era", ALL_VERSIONS)
async def test_every_gmail_tool_works_through_the_sdk(tmp_path: Path, era: str) -> None:
    with trio.fail_after(TEST_SECONDS * 2):
        async with gmail_sdk(tmp_path, era, GATES) as sdk:
            listed = {tool.name for tool in (await sdk.list_tools()).tools}
            assert {
                "mail_folders",
                "mail_list",
                "mail_search",
                "mail_read",
                "mail_attachment",
                "account_status",
                "mail_create",
                "mail_modify",
                "mail_delete_permanently",
                "mail_prepare",
                "mail_send_confirmed",
                "mail_review",
            } <= listed
            await check_reads(sdk)
            await check_acting(sdk)
