"""Issue 22 §3: drive items and mail folders as compact tables, and continuations that keep
their context, on the demo (the emulator behind ``--demo``) through the real server.

0.2 returned every drive item with its webUrl, parentReference and lastModifiedBy (24,316
bytes for the root's 50 items) and every folder with the same parentFolderId; a page
named only by its cursor lost its folder and triage's page counts. What a user checks: the
page is small, nothing is lost (``detail: "full"`` has the rest, ``omitted`` names it), and
the second page says what it is a page of.
"""

from __future__ import annotations

from typing import Any

from tests.support.harness import rows
from tests.tools.test_reads_demo import demo, text_bytes

DRIVE_PAGE_TEXT_BYTES = 10_000
"""Issue 22's target for a 50-item drive page with real ids."""


def cursor_of(data: dict[str, Any]) -> str:
    cursor: str = data["skipped"]["items"]["cursor"]
    return cursor


async def test_a_50_item_drive_page_is_a_compact_table_within_10000_bytes() -> None:
    async with demo() as client:
        result = await client.call("files_list", {})
        full = await client.data("files_list", {"detail": "full"})
    data = result["structuredContent"]
    assert len(data["items"]) == len(full["items"]) == 50
    assert min(len(item["id"]) for item in full["items"]) >= 34 + 4, "references of real ids"
    assert text_bytes(result) <= DRIVE_PAGE_TEXT_BYTES, text_bytes(result)
    assert data["columns"][:5] == ["id", "name", "size", "type", "modified"]
    assert "sharepoint.com" not in result["content"][0]["text"], "no web addresses"
    assert data["omitted"]["fields"] == ["path", "parent_id", "created", "web_link"]
    assert data["omitted"]["get"] == 'detail: "full"'
    assert data["common"] == {"parent": "/", "modified_by": "Adele Vance"}
    for row, item in zip(rows(data, "items"), full["items"], strict=True):
        assert row["id"] == item["id"] and row["name"] == item["name"]
        assert row["size"] == item["size"]
        assert row["modified"] == item["modified"]
        if item["kind"] == "folder":
            assert row["type"] == "folder"
            assert row.get("children", 0) == item.get("children", 0)
        else:
            assert row["type"] == item["mime_type"]
        assert item["parent"] == data["common"]["parent"]
        assert item["path"] == f"/{item['name']}" and item["web_link"].startswith("https://")


async def test_a_search_across_folders_gives_each_row_its_parent() -> None:
    async with demo() as client:
        data = await client.data("files_search", {"query": "budget"})
        full = await client.data("files_search", {"query": "budget", "detail": "full"})
    assert "parent" in data["columns"] and "parent" not in data.get("common", {})
    found = rows(data, "items")
    assert [r["id"] for r in found] == [i["id"] for i in full["items"]]
    assert [r["parent"] for r in found] == [i["parent"] for i in full["items"]]


async def test_mail_folders_name_the_shared_parent_once() -> None:
    async with demo() as client:
        result = await client.call("mail_folders", {})
        full = await client.data("mail_folders", {"detail": "full"})
    data = result["structuredContent"]
    parents = {f["parent"] for f in full["folders"]}
    assert len(parents) == 1 and data["common"]["parent"] == parents.pop()
    assert result["content"][0]["text"].count(data["common"]["parent"]) == 1
    assert data["columns"] == ["id", "name", "unread", "total", "subfolders"]
    assert "omitted" not in data, "a folder row loses nothing"
    for row, folder in zip(rows(data, "folders"), full["folders"], strict=True):
        assert (row["id"], row["name"]) == (folder["id"], folder["name"])
        assert row.get("unread", 0) == folder["unread"]
        assert row.get("total", 0) == folder["total"]
        assert row.get("subfolders", 0) == folder["children"]


async def test_a_page_named_only_by_its_cursor_keeps_folder_view_and_triage_counts() -> None:
    async with demo() as client:
        triage = await client.data("mail_list", {"triage": True, "limit": 4})
        more = await client.data("mail_list", {"cursor": cursor_of(triage)})
        drive = await client.data("files_list", {"path": "Documents", "limit": 3})
        drive_more = await client.data("files_list", {"cursor": cursor_of(drive)})
        full = await client.data("files_list", {"path": "Documents", "detail": "full", "limit": 2})
        full_more = await client.data("files_list", {"cursor": cursor_of(full)})
    assert more["folder"] == "inbox"
    assert more["page_counts"]["messages"] == len(more["messages"]) > 0
    assert more["page_counts"]["covers"] == "this page only"
    for message in rows(more):
        flags = message.get("flags", "").split()
        assert "unread" in flags or "flagged" in flags
    assert {m["id"] for m in rows(more)}.isdisjoint(m["id"] for m in rows(triage))
    assert drive_more["folder"] == "Documents" and "columns" in drive_more
    assert full_more["folder"] == "Documents" and "columns" not in full_more, "still full"
    assert {i["id"] for i in full_more["items"]}.isdisjoint(i["id"] for i in full["items"])


async def test_a_cursor_with_restated_other_arguments_is_still_refused() -> None:
    async with demo() as client:
        first = await client.data("files_list", {"path": "Documents", "limit": 3})
        refused = await client.call("files_list", {"path": "Projects", "cursor": cursor_of(first)})
        served = await client.data("files_list", {"limit": 1})
    assert refused["isError"] is True
    assert "other arguments" in refused["content"][0]["text"]
    assert served["items"], "serving goes on"
