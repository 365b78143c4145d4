"""The files tools behind the seam: references in and out, checked before any request, and
an account without files that does not offer them (issue 18 §1 and §3).

The real server stack over the real Graph client on a loopback Graph (tests/support/
loopback.py); the only fake is the token provider.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mfconnector.auth import StaticTokenProvider
from mfconnector.entry.wiring import build_server
from mfconnector.graph.client import GraphClient
from mfconnector.graph.files_backend import GraphFilesBackend
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.accounts import AccountSet
from mfconnector.mail.backend import FilesBackend
from mfconnector.runtime import Runtime
from mfconnector.writes.gates import Gates
from tests.support.harness import Session, client_context, request, rows
from tests.support.loopback import LoopbackServer, Reply

TEST_SECONDS = 10
OWN = "msb"
"""The reference tag of the one account, ``default``, at Graph."""
FILES_TOOLS = {"files_list", "files_search", "files_read"}
ITEM = {
    "id": "01FILESEAMITEM",
    "name": "notes.txt",
    "size": 5,
    "file": {"mimeType": "text/plain"},
    "parentReference": {"id": "01FILESEAMROOT", "path": "/drive/root:/Team%20notes"},
    "lastModifiedDateTime": "2026-11-30T09:00:00Z",
    "lastModifiedBy": {"user": {"displayName": "Adele Vance"}},
    "webUrl": "https://contoso-my.sharepoint.com/personal/u/Documents/Team%20notes/notes.txt",
    "@microsoft.graph.downloadUrl": "https://contoso-my.sharepoint.com/d?tempauth=SECRET",
}


@asynccontextmanager
async def session_on(graph: LoopbackServer, *, files: bool = True) -> AsyncIterator[Any]:
    """The server ``build_server`` makes, its one account with or without files."""
    tokens = StaticTokenProvider("t", account="test")
    client = GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens)
    ctx = client_context(client, DEFAULT_LIMITS, mode="live", tokens=tokens, time_zone="UTC")
    if not files:
        (account,) = ctx.accounts or ()
        ctx.accounts = AccountSet([dataclasses.replace(account, files=None)])
    server = build_server(ctx, Gates())
    to_server, server_in = trio.testing.memory_stream_one_way_pair()
    server_out, from_server = trio.testing.memory_stream_one_way_pair()

    async def run() -> None:
        await Runtime(server, DEFAULT_LIMITS).serve(server_in, server_out)
        await server_out.aclose()

    with trio.fail_after(TEST_SECONDS):
        async with client, trio.open_nursery() as nursery:
            nursery.start_soon(run)
            session = Session(to_server, from_server)
            await session.call(
                request(
                    0,
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                )
            )
            yield session
            nursery.cancel_scope.cancel()


async def call(session: Any, request_id: int, name: str, arguments: dict[str, Any]) -> Any:
    reply = await session.call(
        request(request_id, "tools/call", {"name": name, "arguments": arguments})
    )
    return reply["result"]


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True and "structuredContent" not in result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


async def test_an_account_without_files_does_not_offer_them_and_a_call_is_unsupported(
    graph: LoopbackServer,
) -> None:
    async with session_on(graph, files=False) as session:
        listed = await session.call(request(1, "tools/list", {}))
        names = {tool["name"] for tool in listed["result"]["tools"]}
        result = await call(session, 2, "files_list", {"path": "Documents"})
        status = await call(session, 3, "account_status", {})
        after = await call(session, 4, "account_status", {})
    assert not names & FILES_TOOLS and "mail_list" in names
    error = error_of(result)
    assert error["error_code"] == "unsupported" and "files" in error["message"]
    assert error["retry_safe"] is False and error["hint"]
    assert [a["files"] for a in status["structuredContent"]["accounts"]] == [False]
    assert status["structuredContent"]["capabilities"]["other_drives"] is False
    assert after["isError"] is False, "serving goes on"
    assert not [r for r in graph.requests if "/drive" in r.path], "nothing was asked of Graph"


async def test_an_account_with_files_lists_them_and_ids_are_references(
    graph: LoopbackServer,
) -> None:
    graph.route("GET", "/v1.0/me/drive/root:/Team%20notes:/children", Reply.json({"value": [ITEM]}))
    graph.route("GET", "/v1.0/me/drive/items/01FILESEAMITEM", Reply.json(ITEM))
    graph.route("GET", "/v1.0/me/drive/items/01FILESEAMITEM/content", Reply(200, (), b"hello"))
    async with session_on(graph) as session:
        listed = await session.call(request(1, "tools/list", {}))
        page = await call(session, 2, "files_list", {"path": "Team notes"})
        (row,) = rows(page["structuredContent"], "items")
        read = await call(session, 3, "files_read", {"item_id": row["id"]})
    assert {tool["name"] for tool in listed["result"]["tools"]} >= FILES_TOOLS
    assert row["id"] == f"{OWN}.01FILESEAMITEM" and row["type"] == "text/plain"
    assert row["parent"] == "/Team notes" and row["modified_by"] == "Adele Vance"
    item = read["structuredContent"]["item"]
    assert item == {
        "id": f"{OWN}.01FILESEAMITEM",
        "name": "notes.txt",
        "kind": "file",
        "path": "/Team notes/notes.txt",
        "parent": "/Team notes",
        "parent_id": f"{OWN}.01FILESEAMROOT",
        "size": 5,
        "mime_type": "text/plain",
        "modified": "2026-11-30T09:00:00Z",
        "modified_by": "Adele Vance",
        "web_link": ITEM["webUrl"],
    }
    assert read["structuredContent"]["content"]["text"] == "hello"
    wire = json.dumps([page, read]).lower()
    assert "tempauth" not in wire and "downloadurl" not in wire


@pytest.mark.parametrize(
    ("item_id", "says"),
    [
        ("mzz.01FILESEAMITEM", "another account"),  # another account's reference
        ("isb.01FILESEAMITEM", "another account"),  # another provider's
        (f"{OWN}.01FILE/../../me/messages", "drive item id"),  # a path smuggled in
        (f"{OWN}.01FILE?select=*", "drive item id"),
    ],
)
async def test_a_foreign_or_malformed_reference_is_stale_before_any_request(
    graph: LoopbackServer, item_id: str, says: str
) -> None:
    async with session_on(graph) as session:
        result = await call(session, 1, "files_read", {"item_id": item_id})
        listed = await call(session, 2, "files_list", {"item_id": item_id})
        after = await call(session, 3, "account_status", {})
    for error in (error_of(result), error_of(listed)):
        assert error["error_code"] == "stale_reference", error
        assert says in error["message"] and error["hint"]
    assert after["isError"] is False
    assert not [r for r in graph.requests if "/drive" in r.path]


def test_the_graph_files_backend_is_a_files_backend() -> None:
    accounts = client_context(object(), DEFAULT_LIMITS).accounts
    (account,) = accounts or ()
    assert isinstance(account.files, GraphFilesBackend)
    assert isinstance(account.files, FilesBackend)
    assert account.files.tag == account.mail.tag
    assert account.files.capabilities.other_drives is False
    assert dict(account.files.capabilities.missing)["other_drives"].startswith("other drives")
