"""Issue 10's reads on the demo (the emulator behind ``--demo``), through the real server.

The context is the one ``mfconnector --demo`` builds (``wiring.build_context``); ids have the
length of real Outlook immutable ids, so the byte budgets measured here are the ones the
issue sets: a compact 25-message page ≤ 8,000 bytes of text block, 50 messages ≤ 16,000,
and every full page and batch within its limit, stopping early with a cursor or
``next_index`` rather than failing. Nothing is looked up by hand: ids come from listings.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
import trio

from mfconnector.cli import build_parser
from mfconnector.entry.wiring import build_context
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.harness import open_session, request, rows
from tests.support.mcp_schemas import assert_valid

MODERN = "2026-07-28"
LIMITS = DEFAULT_LIMITS
SHARED = "support@contoso.onmicrosoft.com"


class Demo:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.ids = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        reply = await self.session.call(
            request(self.ids, "tools/call", {"name": name, "arguments": arguments})
        )
        assert_valid(MODERN, "CallToolResultResponse", reply)
        result: dict[str, Any] = reply["result"]
        if "structuredContent" in result:
            assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        return result

    async def data(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert "structuredContent" in result, result["content"][0]["text"]
        data: dict[str, Any] = result["structuredContent"]
        return data


@asynccontextmanager
async def demo(*flags: str) -> AsyncIterator[Demo]:
    ctx, graph = build_context(build_parser().parse_args(["--demo", *flags]), LIMITS)
    try:
        with trio.fail_after(60):
            async with open_session(context=ctx, limits=LIMITS) as session:
                yield Demo(session)
    finally:
        await graph.aclose()


def text_bytes(result: dict[str, Any]) -> int:
    return len(result["content"][0]["text"].encode("utf-8"))


@pytest.mark.parametrize(("limit", "budget"), [(25, 8_000), (50, 16_000)])
async def test_compact_pages_fit_the_issue_budget(limit: int, budget: int) -> None:
    async with demo() as client:
        result = await client.call("mail_list", {"limit": limit})
        full = await client.call("mail_list", {"limit": limit, "detail": "full"})
    data = result["structuredContent"]
    assert len(data["messages"]) == limit
    assert min(len(row[0]) for row in data["messages"]) >= 140, "ids of real length"
    assert text_bytes(result) <= budget
    assert text_bytes(full) > 2 * text_bytes(result), "compact is the small view"
    assert [r["id"] for r in rows(data)] == [m["id"] for m in full["structuredContent"]["messages"]]


async def test_full_pages_stay_within_the_result_limit_and_continue() -> None:
    async with demo() as client:
        first = await client.data("mail_list", {"detail": "full"})
        rest = await client.data(
            "mail_list", {"detail": "full", "cursor": first["skipped"]["items"]["cursor"]}
        )
    assert len(first["messages"]) == LIMITS.list_items
    ids = [m["id"] for m in first["messages"] + rest["messages"]]
    assert len(ids) == len(set(ids))


async def test_the_mailbox_zone_is_the_demo_users() -> None:
    async with demo() as client:
        listing = await client.data("mail_list", {"limit": 1, "detail": "full"})
        compact = await client.data("mail_list", {"limit": 1})
        status = await client.data("account_status", {})
    assert listing["time_zone"] == compact["time_zone"] == "Pacific Standard Time"
    instant = datetime.fromisoformat(listing["messages"][0]["received"])
    local = rows(compact)[0]["received"]
    assert instant.utcoffset() in (timedelta(hours=-8), timedelta(hours=-7)), "Pacific time"
    assert instant.isoformat()[:16] == local, "both views in the mailbox's zone"
    assert status["capabilities"]["time_zone"]["source"] == "mailbox settings"


@pytest.mark.slow
async def test_a_thread_spans_folders_oldest_first() -> None:
    async with demo() as client:
        replies = await client.data("mail_search", {"query": "subject:Re", "limit": 25})
        anchor = next(r["id"] for r in rows(replies) if r["subject"].startswith("Re: "))
        thread = await client.data("mail_list", {"thread_of": anchor})
        full = await client.data("mail_list", {"thread_of": anchor, "detail": "full"})
    messages = full["messages"]
    assert len(messages) >= 2
    assert {m["thread"] for m in messages} == {messages[0]["thread"]}
    times = [datetime.fromisoformat(m["received"]) for m in messages]
    assert times == sorted(times)
    assert anchor in [r["id"] for r in rows(thread)]
    assert all(r["folder"] for r in rows(thread))


@pytest.mark.slow
async def test_unique_body_is_the_new_part_of_a_reply() -> None:
    async with demo() as client:
        replies = await client.data("mail_search", {"query": "subject:Re", "limit": 25})
        quoted = []
        for row in rows(replies):
            if not row["subject"].startswith("Re: "):
                continue
            whole = await client.data("mail_read", {"message_id": row["id"]})
            unique = await client.data("mail_read", {"message_id": row["id"], "unique_body": True})
            if "\nFrom: " in whole["message"]["body"]:
                quoted.append((whole["message"]["body"], unique["message"]["unique_body"]))
    assert quoted, "the demo has replies that quote their thread"
    for body, new_part in quoted:
        assert new_part and len(new_part) < len(body) and "\nFrom: " not in new_part


async def test_triage_shows_only_unread_or_flagged() -> None:
    async with demo() as client:
        data = await client.data("mail_list", {"triage": True, "detail": "full"})
    assert data["messages"]
    for message in data["messages"]:
        assert message["unread"] is True or message["flag"] == "flagged"
    assert data["page_counts"]["messages"] == len(data["messages"])


@pytest.mark.parametrize("budget", [8_192, LIMITS.batch_response_bytes_default])
async def test_a_batch_of_ten_demo_messages_keeps_its_budget(budget: int) -> None:
    async with demo() as client:
        listing = await client.data("mail_list", {"limit": 10})
        ids = [r["id"] for r in rows(listing)]
        result = await client.call("mail_read", {"message_ids": ids, "max_response_bytes": budget})
    data = result["structuredContent"]
    assert len(json.dumps(result).encode()) <= budget
    assert [item["id"] for item in data["items"]] == ids
    assert data["items"][0]["status"] == "ok"


async def test_attachments_text_email_and_other() -> None:
    async with demo() as client:
        listing = await client.data("mail_list", {"has_attachments": True, "folder": "inbox"})
        seen: dict[str, dict[str, Any]] = {}
        for row in rows(listing):
            attachments = await client.data("mail_attachment", {"message_id": row["id"]})
            for attachment in attachments["attachments"]:
                kind = attachment["kind"]
                text_like = str(attachment.get("content_type") or "").startswith("text/")
                document = attachment["name"].endswith((".docx", ".xlsx", ".pptx", ".pdf"))
                key = "text" if text_like else "document" if document else kind
                seen.setdefault(key, {"message_id": row["id"], "attachment_id": attachment["id"]})
        results = {key: await client.data("mail_attachment", args) for key, args in seen.items()}
    assert "file" in results and "document" in results
    assert results["file"].get("content", {}).get("returned") is False
    assert results["document"]["content"]["returned"] is True
    assert results["document"]["content"]["format"] in {"docx", "xlsx", "pptx", "pdf"}
    if "text" in results:
        assert results["text"]["content"]["returned"] is True
    if "message" in results:
        assert results["message"]["message"]["subject"]


async def test_a_folder_by_name_and_by_path_is_the_same_folder() -> None:
    async with demo() as client:
        by_name = await client.data("mail_list", {"folder": "Contoso Launch", "limit": 5})
        by_path = await client.data("mail_list", {"folder": "Projects/Contoso Launch", "limit": 5})
        missing = await client.call("mail_list", {"folder": "Projects/Nope"})
    assert by_name["messages"] == by_path["messages"] and by_name["messages"]
    assert missing["isError"] is True and "Nope" in missing["content"][0]["text"]


async def test_the_shared_mailbox_and_its_cursor() -> None:
    async with demo() as client:
        shared = await client.data("mail_list", {"mailbox": SHARED, "limit": 2})
        mine = await client.data("mail_list", {"limit": 2})
        cursor = shared["skipped"]["items"]["cursor"]
        refused = await client.call("mail_list", {"cursor": cursor, "limit": 2})
        more = await client.data("mail_list", {"cursor": cursor, "mailbox": SHARED, "limit": 2})
    assert shared["mailbox"] == SHARED
    assert {r["id"] for r in rows(shared)}.isdisjoint(r["id"] for r in rows(mine))
    assert refused["isError"] is True
    assert len(rows(more)) == 2


async def test_the_server_mailbox_flag() -> None:
    async with demo("--mailbox", SHARED) as client:
        data = await client.data("mail_folders", {})
        status = await client.data("account_status", {})
    assert data["mailbox"] == SHARED
    assert status["capabilities"]["mailbox"] == SHARED


@pytest.mark.parametrize("slack", [-1, 0, 1])
async def test_folder_paths_are_walked_up_to_their_depth_limit(slack: int) -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    depth = DEFAULT_LIMITS.folder_path_depth + slack
    path = "/".join(["Projects", "Contoso Launch", *["Deeper"] * (depth - 2)])
    async with demo() as client:
        answer = await client.call("mail_list", {"folder": path})
        after = await client.data("mail_list", {"folder": "Projects/Contoso Launch", "limit": 1})
    text = answer["content"][0]["text"]
    assert answer["isError"] is True
    if slack <= 0:  # walked: the first missing level is named
        assert "no folder 'Deeper' under Projects/Contoso Launch" in text, text
    else:
        assert "is not a folder name or path" in text, text
    assert rows(after)
