"""The tools against a real HTTP stand-in for Graph on 127.0.0.1 (tests/support/loopback.py).

What the tools put on the wire (query strings, headers, how many requests), what they do
with Graph's pages and errors, and where the bearer token may go. The server stack is the
real one (Runtime + McpServer over in-memory streams, modern era); the Graph client is the
real GraphClient over real sockets. The only fake is the token provider.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.graph.cursor import canonical_link
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import ToolContext
from mfconnector.tools.text_window import TOKEN_EDGE_BYTES
from tests.support.harness import MODERN, client_context, open_session, ref, request, rows
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.mcp_schemas import assert_valid

FILE_REF = "msb.01LOOPBACKFILE"
"""The loopback drive file as the server hands it out: a reference of account ``default``."""


FAST = dataclasses.replace(
    DEFAULT_LIMITS,
    graph_request_seconds=10.0,
    graph_connect_timeout_seconds=5.0,
    graph_read_timeout_seconds=5.0,
    graph_retry_after_max_seconds=0.5,
    graph_retry_total_seconds=1.0,
)
CAP = DEFAULT_LIMITS.list_items
BODY = DEFAULT_LIMITS.body_chars
TOKEN = "t"
TEST_SECONDS = 20
OUTPUT_VALIDATORS = {tool.name: Draft202012Validator(tool.output_schema) for tool in ALL_TOOLS}


@pytest.fixture
def elsewhere() -> Iterator[LoopbackServer]:
    """A host the bearer token must never reach."""
    with LoopbackServer() as server:
        yield server


class Caller:
    def __init__(self, session: Any, allow_partial: bool, ctx: ToolContext) -> None:
        self.session = session
        self.allow_partial = allow_partial
        self.ctx = ctx
        self._ids = 0

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self._ids += 1
        reply = await self.session.call(
            request(self._ids, "tools/call", {"name": name, "arguments": arguments or {}})
        )
        assert_valid(MODERN, "CallToolResultResponse", reply)
        result: dict[str, Any] = reply["result"]
        content = result["content"]
        assert len(content) == 1 and content[0]["type"] == "text"
        if "structuredContent" in result:
            data = result["structuredContent"]
            assert not list(OUTPUT_VALIDATORS[name].iter_errors(data))
            assert json.loads(content[0]["text"]) == data
            if data.get("incomplete") is True:
                assert data["skipped"] and result["isError"] is (not self.allow_partial)
            else:
                assert "skipped" not in data and result["isError"] is False
        else:
            assert result["isError"] is True
        return result

    async def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert "structuredContent" in result, result["content"][0]["text"]
        data: dict[str, Any] = result["structuredContent"]
        return data

    async def error(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert result["isError"] is True and "structuredContent" not in result
        error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
        return error


@asynccontextmanager
async def tools_on(
    server: LoopbackServer,
    *,
    limits: Limits = FAST,
    allow_partial: bool = False,
    **options: Any,
) -> AsyncIterator[Caller]:
    """The real server stack on ``server``. Times in UTC unless ``options`` say otherwise
    (``time_zone=None`` makes the tools read mailboxSettings, one more request)."""
    options.setdefault("time_zone", "UTC")
    tokens = StaticTokenProvider(TOKEN, account="test")
    client = GraphClient(
        root=f"{server.url}/v1.0", token_provider=tokens, limits=limits, transport=None
    )

    ctx = client_context(
        client, limits, mode="live", allow_partial=allow_partial, tokens=tokens, **options
    )
    with trio.fail_after(TEST_SECONDS):
        async with client, open_session(context=ctx, limits=limits) as session:
            yield Caller(session, allow_partial, ctx)


def query_of(recorded: RecordedRequest) -> dict[str, str]:
    """The query as Graph reads it: split on ``&``, percent-decoded, ``+`` kept as ``+``."""
    out = {}
    for part in recorded.query.split("&"):
        if part:
            key, _, value = part.partition("=")
            out[unquote(key)] = unquote(value)
    return out


def messages(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"AAMkAGI2-message-{index:04d}=",
            "subject": f"message {index}",
            "receivedDateTime": f"2026-03-{1 + index % 28:02d}T10:00:00Z",
            "isRead": index % 2 == 0,
            "from": {"emailAddress": {"name": "A", "address": "a@contoso.com"}},
        }
        for index in range(count)
    ]


def drive_items(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"01LOOPBACK{index:04d}", "name": f"file {index}.txt", "size": index, "file": {}}
        for index in range(count)
    ]


def graph_collection(
    server: LoopbackServer, path: str, items: list[dict[str, Any]], *, honour_top: bool = True
) -> None:
    """Serve ``items`` at ``path`` the way Graph pages: ``$top`` items, then a nextLink."""

    def answer(recorded: RecordedRequest) -> Reply:
        query = query_of(recorded)
        skip = int(query.get("$skip", "0"))
        if not honour_top:
            return Reply.json({"value": items})
        top = int(query["$top"])
        doc: dict[str, Any] = {"value": items[skip : skip + top]}
        if skip + top < len(items):
            kept = "&".join(
                part for part in recorded.query.split("&") if not part.startswith("$skip=")
            )
            doc["@odata.nextLink"] = f"{server.url}{recorded.path}?{kept}&$skip={skip + top}"
        return Reply.json(doc, headers=(("request-id", f"rid-{skip}"),))

    server.route("GET", path, answer)


LISTS = [
    ("mail_list", {}, "/v1.0/me/mailFolders/inbox/messages", "messages", messages),
    ("mail_search", {"query": "x"}, "/v1.0/me/messages", "messages", messages),
    ("files_list", {}, "/v1.0/me/drive/root/children", "items", drive_items),
    ("files_search", {"query": "x"}, "/v1.0/me/drive/root/search(q='x')", "items", drive_items),
]


# --- the 50-item cap, with a Graph that honours $top ------------------------------------------


@pytest.mark.parametrize(("tool", "arguments", "path", "key", "make"), LISTS)
@pytest.mark.parametrize("count", [CAP - 1, CAP])
async def test_lists_at_or_under_the_cap_are_complete_in_one_request(
    graph: LoopbackServer,
    tool: str,
    arguments: dict[str, Any],
    path: str,
    key: str,
    make: Callable[[int], list[dict[str, Any]]],
    count: int,
) -> None:
    items = make(count)
    graph_collection(graph, path, items)
    async with tools_on(graph) as tools:
        data = await tools.data(tool, arguments)
    assert [item["id"] for item in rows(data, key)] == [ref(item["id"]) for item in items]
    assert "incomplete" not in data
    assert len(graph.requests) == 1
    assert query_of(graph.requests[0])["$top"] == str(CAP)


@pytest.mark.parametrize(("tool", "arguments", "path", "key", "make"), LISTS)
async def test_51_items_fetch_one_page_and_the_cursor_fetches_the_next_link(
    graph: LoopbackServer,
    tool: str,
    arguments: dict[str, Any],
    path: str,
    key: str,
    make: Callable[[int], list[dict[str, Any]]],
) -> None:
    items = make(CAP + 1)
    graph_collection(graph, path, items)
    async with tools_on(graph) as tools:
        first = await tools.call(tool, arguments)
        data = first["structuredContent"]
        assert len(graph.requests) == 1, "no extra page is fetched on the caller's behalf"
        assert first["isError"] is True and data["incomplete"] is True
        assert len(rows(data, key)) == CAP
        skipped = data["skipped"]["items"]
        assert skipped["more_pages"] is True and "count" not in skipped
        rest = await tools.data(tool, {**arguments, "cursor": skipped["cursor"]})
    assert len(graph.requests) == 2
    assert query_of(graph.requests[1])["$skip"] == str(CAP)
    assert graph.requests[1].path == path
    assert [i["id"] for i in rows(data, key) + rows(rest, key)] == [ref(i["id"]) for i in items]
    assert "incomplete" not in rest


async def test_a_page_larger_than_asked_is_cut_and_continued_by_skip(
    graph: LoopbackServer,
) -> None:
    """A Graph that ignores $top: 51 items in one page, no nextLink."""
    items = messages(CAP + 1)
    graph_collection(graph, "/v1.0/me/mailFolders/inbox/messages", items, honour_top=False)
    async with tools_on(graph) as tools:
        data = await tools.data("mail_list", {})
        skipped = data["skipped"]["items"]
        assert skipped["more_pages"] is False and skipped["count"] == 1
        rest = await tools.data("mail_list", {"cursor": skipped["cursor"]})
    assert [m["id"] for m in rows(data) + rows(rest)] == [ref(m["id"]) for m in items]
    assert [r.target for r in graph.requests] == [graph.requests[0].target] * 2
    assert "incomplete" not in rest


async def test_limit_is_sent_as_top(graph: LoopbackServer) -> None:
    items = messages(10)
    graph_collection(graph, "/v1.0/me/mailFolders/inbox/messages", items)
    async with tools_on(graph) as tools:
        for limit in (1, 7, CAP):
            data = await tools.data("mail_list", {"limit": limit})
            assert len(rows(data)) == min(limit, 10)
    assert [query_of(r)["$top"] for r in graph.requests] == ["1", "7", str(CAP)]


# --- the queries actually sent -----------------------------------------------------------------


def assert_graph_encoding(recorded: RecordedRequest) -> None:
    """Spaces as %20 (never +), which Graph requires in $filter, $orderby and $search."""
    assert "+" not in recorded.query
    assert " " not in recorded.target


async def test_mail_list_query(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me/mailFolders/inbox/messages", Reply.json({"value": []}))
    async with tools_on(graph) as tools:
        await tools.data(
            "mail_list",
            {
                "since": "2026-03-01",
                "before": "2026-03-05T12:00:00+02:00",
                "unread_only": True,
                "from": "o'brien@contoso.com",
                "has_attachments": True,
                "limit": 7,
            },
        )
        await tools.data("mail_list", {"unread_only": True})
        await tools.data("mail_list", {})
    full, unread, plain = graph.requests
    for recorded in graph.requests:
        assert_graph_encoding(recorded)
        query = query_of(recorded)
        assert query["$orderby"] == "receivedDateTime desc"
        selected = query["$select"].split(",")
        assert "id" in selected and "subject" in selected and "receivedDateTime" in selected
        assert "body" not in selected, "a list never asks for bodies"
        assert recorded.header("authorization") == f"Bearer {TOKEN}"
    assert "%20" in full.query
    assert query_of(full)["$top"] == "7"
    assert query_of(full)["$filter"] == (
        "receivedDateTime ge 2026-03-01T00:00:00Z and receivedDateTime lt 2026-03-05T10:00:00Z"
        " and isRead eq false and from/emailAddress/address eq 'o''brien@contoso.com'"
        " and hasAttachments eq true"
    )
    # Outlook wants the $orderby property first in $filter (else InefficientFilter)
    assert query_of(unread)["$filter"].startswith("receivedDateTime ge ")
    assert query_of(unread)["$filter"].endswith(" and isRead eq false")
    assert "$filter" not in query_of(plain)


async def test_mail_search_query(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me/messages", Reply.json({"value": []}))
    graph.route("GET", "/v1.0/me/mailFolders/inbox/messages", Reply.json({"value": []}))
    async with tools_on(graph) as tools:
        await tools.data("mail_search", {"query": 'budget "Q3" report', "limit": 5})
        await tools.data("mail_search", {"query": "from:alice", "folder": "Inbox"})
    whole, in_folder = graph.requests
    for recorded in graph.requests:
        assert_graph_encoding(recorded)
        query = query_of(recorded)
        assert "$orderby" not in query and "$filter" not in query  # SearchWithOrderBy
        assert "$select" in query
    assert query_of(whole)["$search"] == '"budget \\"Q3\\" report"'
    assert query_of(whole)["$top"] == "5"
    assert "%22budget%20" in whole.query
    assert query_of(in_folder)["$search"] == '"from:alice"'
    assert in_folder.path == "/v1.0/me/mailFolders/inbox/messages"


def message_doc(
    body: str, *, content_type: str = "text", attachments: bool = False
) -> dict[str, Any]:
    return {
        "id": "AAMkAGI2-read-0001=",
        "subject": "hello",
        "hasAttachments": attachments,
        "body": {"contentType": content_type, "content": body},
    }


async def test_mail_read_asks_for_text_and_attachment_metadata_only(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/me/messages/AAMkAGI2-read-0001=",
        Reply.json(message_doc("hi", attachments=True)),
    )
    attachment = {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "id": "AAMkAGI2-att-1=",
        "name": "invoice.pdf",
        "contentType": "application/pdf",
        "size": 12,
        "isInline": False,
        "contentBytes": base64.b64encode(b"%PDF-1.4 secret").decode(),
    }
    graph.route(
        "GET",
        "/v1.0/me/messages/AAMkAGI2-read-0001=/attachments",
        Reply.json({"value": [attachment]}),
    )
    async with tools_on(graph) as tools:
        result = await tools.call(
            "mail_read", {"message_id": ref("AAMkAGI2-read-0001="), "detail": "full"}
        )
    data = result["structuredContent"]
    message, attachments = graph.requests
    assert message.header("prefer") == 'outlook.body-content-type="text", IdType="ImmutableId"'
    assert "body" in query_of(message)["$select"].split(",")
    selected = query_of(attachments)["$select"].split(",")
    assert "contentBytes" not in selected and "name" in selected
    assert data["attachments"] == [
        {
            "id": ref("AAMkAGI2-att-1="),
            "name": "invoice.pdf",
            "kind": "file",
            "content_type": "application/pdf",
            "size": 12,
            "inline": False,
            "content_id": None,
        }
    ]
    assert "contentbytes" not in result["content"][0]["text"].lower()
    assert attachment["contentBytes"] not in result["content"][0]["text"]


async def test_drive_paths_are_encoded_per_segment(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/me/drive/root:/Documents/Q3%20%231%20plan%20%E2%80%93%20r%C3%A9sum%C3%A9:/children",
        Reply.json({"value": []}),
    )
    async with tools_on(graph) as tools:
        data = await tools.data("files_list", {"path": "Documents/Q3 #1 plan – résumé"})
    assert data["items"] == []
    assert len(graph.requests) == 1
    assert "$select" in query_of(graph.requests[0])


# --- cursors: accepted back whatever shape Graph chose, refused when changed ------------------


def cursor_payload(cursor: str) -> dict[str, Any]:
    payload = cursor.partition(".")[0]
    doc: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return doc


async def test_a_signed_cursor_re_pointed_at_another_server_sends_nothing(
    graph: LoopbackServer, elsewhere: LoopbackServer
) -> None:
    """Even a cursor signed with the server's own key: the token goes only under the root."""
    graph_collection(graph, "/v1.0/me/mailFolders/inbox/messages", messages(CAP + 1))
    elsewhere.route("GET", "/v1.0/me/mailFolders/inbox/messages", Reply.json({"value": []}))
    async with tools_on(graph) as tools:
        data = await tools.data("mail_list", {})
        url = cursor_payload(data["skipped"]["items"]["cursor"])["p"]["link"]
        assert url.startswith(f"{graph.url}/v1.0/")
        scope = {"account": tools.ctx.account({}).tag.tag, "mailbox": None}
        cases = [
            url.replace(graph.url, elsewhere.url),
            url.replace("127.0.0.1", "localhost"),
            url.replace("http://", "https://"),
            url.replace("http://", f"http://127.0.0.1:{graph.port}@").replace(
                graph.url.removeprefix("http://"), elsewhere.url.removeprefix("http://"), 1
            ),
            url.replace("/v1.0/", "/beta/"),
        ]
        for forged_url in cases:
            signed = tools.ctx.cursors.issue(
                tool="mail_list", scope=scope, arguments={}, position={"link": forged_url}
            )
            error = await tools.error("mail_list", {"cursor": signed})
            assert error["error_code"] == "invalid_arguments"
            assert "does not point into Microsoft Graph" in error["message"]
    assert elsewhere.requests == []
    assert len(graph.requests) == 1, "a refused cursor sends nothing, not even to Graph"


GUID = "48d31887-5fad-4d73-a9f5-3c356e68a038"
OUTLOOK_IDS = st.from_regex(r"\AAAMkAGI2[A-Za-z0-9_-]{100,140}=\Z")
DRIVE_IDS = st.from_regex(r"\Ab![A-Za-z0-9_-]{64}\Z") | st.from_regex(r"\A[0-9A-F]{16}\Z")
ITEM_IDS = st.from_regex(r"\A01[A-Z0-9]{32}\Z") | st.from_regex(r"\A[0-9A-F]{16}![0-9]{1,6}\Z")
TOKENS = st.from_regex(r"\A[A-Za-z0-9_-]{8,200}(%3d){0,2}\Z")
SEARCH_TEXT = st.text(
    st.characters(categories=("L", "N"), include_characters=" -.,'"), min_size=1, max_size=40
).map(lambda text: text.replace("'", "''"))
NEXT_LINK_SHAPES = st.one_of(
    st.builds("/me/messages?%24select=sender%2csubject&%24skip={}".format, st.integers(1, 10**5)),
    st.builds(
        "/me/mailFolders/{}/messages?%24top=50&%24skip={}".format,
        st.sampled_from(["inbox", "archive"]) | OUTLOOK_IDS,
        st.integers(1, 10**5),
    ),
    st.builds(
        ("/users/" + GUID + "/mailFolders/{}/messages?$select=id&$skip={}").format,
        OUTLOOK_IDS,
        st.integers(1, 999),
    ),
    st.builds("/me/mailFolders/{}/childFolders?%24top=10&%24skip=10".format, OUTLOOK_IDS),
    st.builds("/me/messages?%24search=%22{}%22&%24skiptoken={}".format, st.just("pizza"), TOKENS),
    st.builds("/me/drive/root/children?%24top=2&%24skiptoken={}".format, TOKENS),
    st.builds("/drives/{}/items/{}/children?$skiptoken={}".format, DRIVE_IDS, ITEM_IDS, TOKENS),
    st.builds(
        "/drives/{}/root/search(q='{}')?$skiptoken={}".format, DRIVE_IDS, SEARCH_TEXT, TOKENS
    ),
    st.builds("/me/drive/root/search(query='{}')&skipToken={}".format, SEARCH_TEXT, TOKENS),
    st.builds(
        (
            "/sites/contoso.sharepoint.com," + GUID + "," + GUID + "/drive/items/{}/children"
            "?%24select=id%2cname&%24skiptoken={}"
        ).format,
        ITEM_IDS,
        TOKENS,
    ),
)
"""Next links in the shapes Graph documents (list messages, mail folders, search, drive
children by /me/drive, /drives/{id} and /sites/{id}, drive search with raw query text)."""


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(shape=NEXT_LINK_SHAPES, tool=st.sampled_from(["mail_list", "files_list", "files_search"]))
async def test_every_documented_next_link_comes_back_and_every_change_is_refused(
    graph: LoopbackServer, shape: str, tool: str
) -> None:
    first_path = {
        "mail_list": "/v1.0/me/mailFolders/inbox/messages",
        "files_list": "/v1.0/me/drive/root/children",
        "files_search": "/v1.0/me/drive/root/search(q='x')",
    }[tool]
    arguments = {"query": "x"} if tool == "files_search" else {}
    key = "messages" if tool == "mail_list" else "items"
    make = messages if tool == "mail_list" else drive_items
    first, second = make(2)
    link = f"{graph.url}/v1.0{shape}"
    page_one = Reply.json({"value": [first], "@odata.nextLink": link})
    page_two = Reply.json({"value": [second]})
    next_path = urlsplit(canonical_link(link)).path
    if next_path == first_path:
        graph.route("GET", first_path, page_one, page_two)
    else:
        graph.route("GET", first_path, page_one)
        graph.route("GET", next_path, page_two)
    before = len(graph.requests)
    async with tools_on(graph) as tools:
        data = await tools.data(tool, arguments)
        cursor = data["skipped"]["items"]["cursor"]
        rest = await tools.data(tool, {**arguments, "cursor": cursor})
        assert rows(rest, key)[0]["id"] == ref(second["id"])
        assert "incomplete" not in rest
        sent = graph.requests[-1]
        assert sent.path == next_path
        assert unquote(sent.query).startswith(unquote(urlsplit(canonical_link(link)).query))
        assert "$select" in query_of(sent), "a continuation asks for no more fields than page 1"
        # every single change to that cursor is refused, before any request
        for position in range(0, len(cursor), max(1, len(cursor) // 12)):
            replacement = "A" if cursor[position] != "A" else "B"
            changed = cursor[:position] + replacement + cursor[position + 1 :]
            error = await tools.error(tool, {**arguments, "cursor": changed})
            assert error["error_code"] == "invalid_arguments" and "cursor" in error["message"]
        for cut in (cursor[:-1], cursor[: len(cursor) // 2], cursor + "A"):
            error = await tools.error(tool, {**arguments, "cursor": cut})
            assert error["error_code"] == "invalid_arguments"
        other_tool = "files_list" if tool != "files_list" else "mail_list"
        error = await tools.error(other_tool, {"cursor": cursor})
        assert f"belongs to `{tool}`" in error["message"]
        changed_arguments = {
            "mail_list": {"unread_only": True},
            "files_list": {"path": "Documents"},
            "files_search": {"query": "y"},
        }[tool]
        filtered = {**arguments, "cursor": cursor, **changed_arguments}
        error = await tools.error(tool, filtered)
        assert "other arguments" in error["message"]
    assert len(graph.requests) == before + 2


async def test_a_next_link_outside_graph_is_not_followed(
    graph: LoopbackServer, elsewhere: LoopbackServer
) -> None:
    graph.route(
        "GET",
        "/v1.0/me/mailFolders/inbox/messages",
        Reply.json(
            {
                "value": messages(3),
                "@odata.nextLink": f"{elsewhere.url}/v1.0/me/mailFolders/inbox/messages?$skip=3",
            }
        ),
    )
    async with tools_on(graph) as tools:
        data = await tools.data("mail_list", {})
    skipped = data["skipped"]["items"]
    assert skipped["more_pages"] is True and skipped["cursor"] is None and skipped["note"]
    assert elsewhere.url not in json.dumps(data)
    assert elsewhere.requests == []


# --- files_read: the download redirect ----------------------------------------------------------


def drive_item(name: str, size: int, *, download_url: str) -> dict[str, Any]:
    return {
        "id": "01LOOPBACKFILE",
        "name": name,
        "size": size,
        "file": {"mimeType": "text/plain", "hashes": {"quickXorHash": "x"}},
        "@microsoft.graph.downloadUrl": download_url,
    }


async def test_files_read_follows_the_redirect_without_the_token(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    text = "Grüße aus Tōkyō 🗼\n" * 700  # ~13,300 characters: two windows
    data_bytes = text.encode("utf-8")
    location = f"{files.url}/personal/u/download.aspx?UniqueId=1&tempauth=SECRET-CAPABILITY"
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE",
        Reply.json(drive_item("notes.txt", len(data_bytes), download_url=location)),
    )
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE/content",
        Reply(302, (("Location", location), ("Content-Length", "0"))),
    )
    files.route(
        "GET",
        "/personal/u/download.aspx",
        Reply(200, (("Content-Type", "text/plain; charset=utf-8"),), data_bytes),
    )
    async with tools_on(graph) as tools:
        first = await tools.call("files_read", {"item_id": FILE_REF})
        data = first["structuredContent"]
        rest = await tools.data(
            "files_read",
            {"item_id": FILE_REF, "offset": data["skipped"]["text"]["next_offset"]},
        )
    assert data["content"]["text"] + rest["content"]["text"] == text
    assert data["content"]["total_bytes"] == len(data_bytes)
    # Graph sends the item's download URL unasked: the backend never picks it
    assert "removed" not in data["skipped"] and "tempauth" not in json.dumps(data).lower()
    window = DEFAULT_LIMITS.text_window_bytes
    cut = data["skipped"]["text"]["next_offset"]
    assert [d.header("range") for d in files.requests] == [
        f"bytes=0-{window - 1}",
        f"bytes={cut - TOKEN_EDGE_BYTES}-{cut + window - 1}",
    ]
    for download in files.requests:
        assert download.header("authorization") is None
        assert download.header("cookie") is None
    assert len(files.requests) == 2
    for recorded in graph.requests:
        assert recorded.header("authorization") == f"Bearer {TOKEN}"
    wire = json.dumps(first) + json.dumps(rest)
    for secret in ("tempauth", "SECRET-CAPABILITY", files.url, "download.aspx"):
        assert secret not in wire


async def test_files_read_download_host_failure_hides_the_url(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    location = f"{files.url}/dl?tempauth=SECRET-CAPABILITY"
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE",
        Reply.json(drive_item("notes.txt", 10, download_url=location)),
    )
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE/content",
        Reply(302, (("Location", location),), b""),
    )
    files.route("GET", "/dl", Reply(403, body=f"expired {location}".encode()))
    async with tools_on(graph) as tools:
        result = await tools.call("files_read", {"item_id": FILE_REF})
    text = result["content"][0]["text"]
    error = json.loads(text)["error"]
    assert error["status"] == 403 and error["retry_safe"] is True and error["hint"]
    assert "tempauth" not in text and files.url not in text


# --- Graph errors in the isError payload --------------------------------------------------------


def graph_error_body(code: str, message: str, request_id: str = "inner-rid") -> bytes:
    return json.dumps(
        {"error": {"code": code, "message": message, "innerError": {"request-id": request_id}}}
    ).encode()


ERRORS = [
    pytest.param(
        [
            Reply(
                404,
                (("Content-Type", "application/json"), ("request-id", "rid-404")),
                graph_error_body(
                    "ErrorItemNotFound", "The specified object was not found in the store."
                ),
            )
        ],
        {
            "error_code": "provider_error",
            "status": 404,
            "provider_code": "ErrorItemNotFound",
            "request_id": "rid-404",
            "retry_safe": False,
        },
        "does not exist",
        1,
        id="404-outlook",
    ),
    pytest.param(
        [
            Reply(
                400,
                (("Content-Type", "application/json"),),
                graph_error_body("ErrorInvalidIdMalformed", "Id is malformed.", "inner-400"),
            )
        ],
        {
            "status": 400,
            "provider_code": "ErrorInvalidIdMalformed",
            "request_id": "inner-400",
            "retry_safe": False,
        },
        "malformed",
        1,
        id="400-malformed",
    ),
    pytest.param(
        [
            Reply(
                429,
                (
                    ("Retry-After", "7"),
                    ("request-id", "rid-429"),
                    ("Content-Type", "application/json"),
                ),
                graph_error_body("TooManyRequests", "Please retry again later."),
            )
        ],
        {
            "error_code": "throttled",
            "status": 429,
            "provider_code": "TooManyRequests",
            "request_id": "rid-429",
            "retry_after_seconds": 7.0,
            "retry_safe": True,
        },
        "retry in 7 s",
        1,
        id="429-over-the-ceiling",
    ),
    pytest.param(
        [Reply(503, (("request-id", "rid-503"),), b"<html>Service Unavailable</html>")],
        {
            "error_code": "throttled",
            "status": 503,
            "request_id": "rid-503",
            "retry_after_seconds": 1.0,
            "retry_safe": True,
        },
        "retry in 1 s",
        1,
        id="503-no-retry-after",
    ),
    pytest.param(
        [
            Reply(
                401,
                (
                    ("WWW-Authenticate", 'Bearer error="invalid_token"'),
                    ("Content-Type", "application/json"),
                ),
                graph_error_body("InvalidAuthenticationToken", "Access token has expired."),
            )
        ],
        {
            "error_code": "provider_error",
            "status": 401,
            "provider_code": "InvalidAuthenticationToken",
            "retry_safe": False,
        },
        "mfconnector login",
        2,  # one forced refresh, then the answer
        id="401-refresh-once",
    ),
    pytest.param(
        [
            Reply(
                403,
                (("Content-Type", "application/json"),),
                json.dumps(
                    {
                        "error": {
                            "code": "accessDenied",
                            "message": "Access denied",
                            "innererror": {"code": "unauthenticated"},
                        }
                    }
                ).encode(),
            )
        ],
        {
            "error_code": "provider_error",
            "status": 403,
            "provider_code": "accessDenied",
            "retry_safe": False,
        },
        "permission",
        1,
        id="403-onedrive",
    ),
    pytest.param(
        [Reply(500, (("Content-Type", "text/html"),), b"<html>oops</html>")],
        {"error_code": "provider_error", "status": 500, "retry_safe": False},
        "retry later",
        1,
        id="500-html",
    ),
]


@pytest.mark.parametrize(("replies", "expected", "hint", "requests"), ERRORS)
async def test_graph_errors_become_actionable_is_error_results(
    graph: LoopbackServer,
    replies: list[Reply],
    expected: dict[str, Any],
    hint: str,
    requests: int,
) -> None:
    graph.route("GET", "/v1.0/me/messages/AAMkAGI2-err-0001=", *replies)
    async with tools_on(graph) as tools:
        error = await tools.error("mail_read", {"message_id": ref("AAMkAGI2-err-0001=")})
    for key, value in expected.items():
        assert error[key] == value, (key, error)
    assert hint in error["hint"]
    assert error["message"]
    assert len(graph.requests) == requests


async def test_a_short_retry_after_is_waited_out_and_the_call_succeeds(
    graph: LoopbackServer,
) -> None:
    graph.route(
        "GET",
        "/v1.0/me/messages/AAMkAGI2-read-0001=",
        Reply(429, (("Retry-After", "0.01"),), b""),
        Reply.json(message_doc("hello")),
    )
    async with tools_on(graph) as tools:
        data = await tools.data("mail_read", {"message_id": ref("AAMkAGI2-read-0001=")})
    assert data["message"]["body"] == "hello"
    assert len(graph.requests) == 2


async def test_list_errors_carry_provider_codes_too(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/me/mailFolders/inbox/messages",
        Reply(
            400,
            (("Content-Type", "application/json"),),
            graph_error_body("InefficientFilter", "The restriction or sort order is too complex"),
        ),
    )
    async with tools_on(graph) as tools:
        error = await tools.error("mail_list", {"unread_only": True})
    assert error["provider_code"] == "InefficientFilter" and "simplify" in error["hint"]


# --- bodies at the cap, exactly ----------------------------------------------------------------


def body_of_length(length: int) -> str:
    line = "All work and no play. "
    return (line * (length // len(line) + 1))[:length]


@pytest.mark.parametrize("length", [BODY - 1, BODY, BODY + 1])
async def test_body_at_the_cap(graph: LoopbackServer, length: int) -> None:
    text = body_of_length(length)
    graph.route("GET", "/v1.0/me/messages/AAMkAGI2-read-0001=", Reply.json(message_doc(text)))
    async with tools_on(graph) as tools:
        first = await tools.call("mail_read", {"message_id": ref("AAMkAGI2-read-0001=")})
        data = first["structuredContent"]
        if length <= BODY:
            assert data["message"]["body"] == text
            assert "incomplete" not in data and first["isError"] is False
            return
        assert first["isError"] is True
        assert data["skipped"]["text"]["next_offset"] == BODY
        assert data["skipped"]["text"]["total_chars"] == length
        assert data["message"]["body"] == text[:BODY]
        rest = await tools.call(
            "mail_read", {"message_id": ref("AAMkAGI2-read-0001="), "body_offset": BODY}
        )
    assert rest["isError"] is False
    assert rest["structuredContent"]["message"]["body"] == text[-1]


async def test_emoji_at_the_boundary_is_never_split(graph: LoopbackServer) -> None:
    text = body_of_length(BODY - 1) + "\U0001f389\U0001f60a" + " end"
    graph.route("GET", "/v1.0/me/messages/AAMkAGI2-read-0001=", Reply.json(message_doc(text)))
    async with tools_on(graph) as tools:
        first = await tools.data("mail_read", {"message_id": ref("AAMkAGI2-read-0001=")})
        rest = await tools.data(
            "mail_read", {"message_id": ref("AAMkAGI2-read-0001="), "body_offset": BODY}
        )
    assert first["message"]["body"].endswith("\U0001f389")
    assert rest["message"]["body"] == "\U0001f60a end"


async def test_html_body_is_read_as_text(graph: LoopbackServer) -> None:
    html = (
        "<html><head><style>p{color:red}</style></head><body><p>Hello&nbsp;Adele,</p>"
        "<script>alert(1)</script><ul><li>one</li><li>two</li></ul>"
        '<img src="https://t.example/pixel.gif" width="1"></body></html>'
    )
    graph.route(
        "GET",
        "/v1.0/me/messages/AAMkAGI2-read-0001=",
        Reply.json(message_doc(html, content_type="html")),
    )
    async with tools_on(graph) as tools:
        data = await tools.data("mail_read", {"message_id": ref("AAMkAGI2-read-0001=")})
    assert data["message"]["body"] == "Hello Adele,\n\n- one\n- two"


async def test_a_safe_links_wrapped_download_url_in_a_body_is_redacted(
    graph: LoopbackServer,
) -> None:
    wrapped = (
        "https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fcontoso-my.sharepoint"
        ".com%2Fpersonal%2Fu%2F_layouts%2F15%2Fdownload.aspx%3FUniqueId%3D1%26tempauth%3DSECRET"
        "&data=05%7C02&reserved=0"
    )
    graph.route(
        "GET",
        "/v1.0/me/messages/AAMkAGI2-read-0001=",
        Reply.json(message_doc(f"Here is the file: {wrapped}\r\nThanks")),
    )
    async with tools_on(graph) as tools:
        result = await tools.call("mail_read", {"message_id": ref("AAMkAGI2-read-0001=")})
    assert "tempauth" not in result["content"][0]["text"].lower()


def cjk_message(index: int) -> dict[str, Any]:
    """A Japanese message, heavy but ordinary: 20 named recipients, a long subject."""
    name = "山田太郎（営業本部　第一営業部　東日本担当課長代理）" * 2
    return {
        "id": f"AAMkAGI2-cjk-{index:04d}=",
        "subject": "【重要】来期予算の件について（再送）" * 10,
        "bodyPreview": "いつもお世話になっております。" * 17,
        "receivedDateTime": "2026-03-01T10:00:00Z",
        "toRecipients": [
            {"emailAddress": {"name": name, "address": f"user{n}@contoso.co.jp"}}
            for n in range(DEFAULT_LIMITS.list_field_items)
        ],
    }


async def test_a_full_page_of_cjk_messages_still_fits_one_reply(graph: LoopbackServer) -> None:
    items = [cjk_message(i) for i in range(CAP)]
    graph.route("GET", "/v1.0/me/mailFolders/inbox/messages", Reply.json({"value": items}))
    assert (
        len(json.dumps({"value": items}, ensure_ascii=False).encode())
        < DEFAULT_LIMITS.graph_body_bytes
    )
    async with tools_on(graph) as tools:
        reply = await tools.session.call(
            request(1, "tools/call", {"name": "mail_list", "arguments": {}})
        )
    assert "result" in reply, reply.get("error")


async def test_mail_lists_ask_for_immutable_ids_on_every_page(graph: LoopbackServer) -> None:
    """Ids from a list must stay readable after a move, on the first page and the next."""
    path = "/v1.0/me/mailFolders/inbox/messages"
    graph_collection(graph, path, messages(51))
    async with tools_on(graph) as tools:
        first = await tools.data("mail_list", {})
        await tools.data("mail_list", {"cursor": first["skipped"]["items"]["cursor"]})
    sent = graph.requests_to(path)
    assert len(sent) == 2
    prefer = 'IdType="ImmutableId"'  # times come back in UTC; the tools show them in the zone
    assert all(request.header("prefer") == prefer for request in sent)


async def test_a_cursor_into_another_drive_is_accepted_only_when_signed(
    graph: LoopbackServer,
) -> None:
    """Graph's own /drives/{id} next links come back; a made-up one never reaches Graph."""
    other = f"{graph.url}/v1.0/drives/b!someone-else/root/children?$skiptoken=x"
    graph.route(
        "GET",
        "/v1.0/me/drive/root/children",
        Reply.json({"value": drive_items(1), "@odata.nextLink": other}),
    )
    graph.route("GET", "/v1.0/drives/b!someone-else/root/children", Reply.json({"value": []}))
    async with tools_on(graph) as tools:
        data = await tools.data("files_list", {})
        cursor = data["skipped"]["items"]["cursor"]
        doc = cursor_payload(cursor)
        forged_doc = {**doc, "p": {"link": doc["p"]["link"].replace("someone-else", "victim")}}
        raw = json.dumps(forged_doc, separators=(",", ":")).encode()
        forged = (
            base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + cursor.partition(".")[2]
        )
        error = await tools.error("files_list", {"cursor": forged})
        assert error["error_code"] == "invalid_arguments" and "altered" in error["message"]
        assert len(graph.requests) == 1
        await tools.data("files_list", {"cursor": cursor})
    assert [r.path for r in graph.requests] == [
        "/v1.0/me/drive/root/children",
        "/v1.0/drives/b!someone-else/root/children",
    ]


# --- $select everywhere: Graph is asked only for what a tool returns ---------------------------

SECRET = "tempauth=SELECT-SECRET"


def full_drive_item(index: int) -> dict[str, Any]:
    """A driveItem as Graph sends it when nothing is selected: URLs that are credentials."""
    return {
        "@odata.etag": f'"{{etag-{index}}},1"',
        "id": f"01SELECT{index:026d}",
        "name": f"budget {index}.xls",
        "size": 1000 + index,
        "createdDateTime": "2026-03-01T10:00:00Z",
        "lastModifiedDateTime": "2026-03-02T10:00:00Z",
        "webUrl": f"https://contoso-my.sharepoint.com/personal/u/Documents/budget%20{index}.xls",
        "file": {"mimeType": "application/vnd.ms-excel", "hashes": {"quickXorHash": "x"}},
        "parentReference": {"driveId": "b!drive", "id": "01ROOT", "path": "/drive/root:"},
        "@microsoft.graph.downloadUrl": f"https://contoso-my.sharepoint.com/dl?{SECRET}",
        "thumbnails": [{"small": {"url": f"https://t.svc.ms/thumb?{SECRET}"}}],
        "cTag": "adDpGMEI",
    }


def full_message(index: int) -> dict[str, Any]:
    return {
        "@odata.etag": 'W/"CQAAABYAAAC"',
        "id": f"AAMkAGI2-select-{index:04d}=",
        "subject": f"Budget {index}",
        "receivedDateTime": "2026-03-02T10:00:00Z",
        "isRead": False,
        "from": {"emailAddress": {"name": "A", "address": "a@contoso.com"}},
        "bodyPreview": "see the budget",
        "hasAttachments": index == 0,
        "body": {
            "contentType": "html",
            "content": f'<a href="https://contoso.sharepoint.com/d?{SECRET}">budget</a>',
        },
        "uniqueBody": {"contentType": "html", "content": f"https://x/?{SECRET}"},
    }


def full_attachment() -> dict[str, Any]:
    return {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "id": "AAMkAGI2-select-att=",
        "name": "budget.pdf",
        "contentType": "application/pdf",
        "size": 12,
        "isInline": False,
        "lastModifiedDateTime": "2026-03-02T10:00:00Z",
        "contentBytes": base64.b64encode(b"%PDF secret").decode(),
        "contentId": "x",
    }


def selected(doc: dict[str, Any], recorded: RecordedRequest) -> dict[str, Any]:
    """What Graph returns under the request's $select: those fields and OData annotations."""
    fields = set(query_of(recorded)["$select"].split(","))
    return {k: v for k, v in doc.items() if k in fields or k.startswith("@odata.")}


def selecting_graph(server: LoopbackServer) -> None:
    """A Graph that honours $select (and pages once, with a next link without $select)."""

    def collection(items: list[dict[str, Any]], path: str) -> Callable[[RecordedRequest], Reply]:
        def answer(recorded: RecordedRequest) -> Reply:
            if "$select" not in query_of(recorded):
                return Reply.json({"value": items})  # everything, download URLs included
            skip = int(query_of(recorded).get("$skip", "0"))
            page = [selected(item, recorded) for item in items[skip : skip + 2]]
            doc: dict[str, Any] = {"value": page}
            if skip + 2 < len(items):
                doc["@odata.nextLink"] = f"{server.url}{path}?$skip={skip + 2}"
            return Reply.json(doc)

        return answer

    drive = [full_drive_item(index) for index in range(3)]
    mail = [full_message(index) for index in range(3)]
    for path, items in (
        ("/v1.0/me/drive/root/children", drive),
        ("/v1.0/me/drive/root/search(q='budget')", drive),
        ("/v1.0/me/mailFolders/inbox/messages", mail),
        ("/v1.0/me/messages", mail),
        ("/v1.0/me/mailFolders", [{"id": "AAMkAGI2-folder=", "displayName": "Inbox"}]),
        ("/v1.0/me/messages/AAMkAGI2-select-0000=/attachments", [full_attachment()]),
    ):
        server.route("GET", path, collection(items, path))

    def one(doc: dict[str, Any]) -> Callable[[RecordedRequest], Reply]:
        return lambda recorded: Reply.json(
            selected(doc, recorded) if "$select" in query_of(recorded) else doc
        )

    text_body = {**full_message(0), "body": {"contentType": "text", "content": "see budget"}}
    server.route("GET", "/v1.0/me/messages/AAMkAGI2-select-0000=", one(text_body))
    server.route("GET", f"/v1.0/me/drive/items/{drive[0]['id']}", one(drive[0]))
    server.route("GET", "/v1.0/me", one({"id": "1", "displayName": "A", "mail": "a@contoso.com"}))


SELECT_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("mail_folders", {}),
    ("mail_list", {}),
    ("mail_search", {"query": "budget"}),
    ("mail_read", {"message_id": ref("AAMkAGI2-select-0000=")}),
    ("files_list", {}),
    ("files_search", {"query": "budget"}),
    ("files_read", {"item_id": ref(full_drive_item(0)["id"])}),
    ("account_status", {}),
]


async def test_every_request_carries_select_and_a_complete_result_is_complete(
    graph: LoopbackServer,
) -> None:
    """Against a Graph that honours $select, nothing that must be stripped ever arrives, so
    results whose every item and character was shown are complete (isError false), pages
    reached by cursor included; nothing secret reaches the wire."""
    selecting_graph(graph)
    async with tools_on(graph) as tools:
        for tool, arguments in SELECT_CALLS:
            result = await tools.call(tool, arguments)
            data = result["structuredContent"]
            while "skipped" in data:  # only further pages may be left: follow them
                assert set(data["skipped"]) == {"items"}, (tool, data["skipped"])
                assert data["skipped"]["items"]["more_pages"] is True
                result = await tools.call(
                    tool, {**arguments, "cursor": data["skipped"]["items"]["cursor"]}
                )
                data = result["structuredContent"]
            assert result["isError"] is False and "incomplete" not in data, (tool, data)
            assert "SELECT-SECRET" not in json.dumps(result)
    assert len(graph.requests) >= len(SELECT_CALLS) + 4
    for recorded in graph.requests:
        query = query_of(recorded)
        assert "$select" in query, recorded.target
        fields = query["$select"].split(",")
        assert not any(
            "download" in f.lower() or f in ("thumbnails", "contentBytes", "uniqueBody")
            for f in fields
        ), recorded.target
        assert "$expand" not in query, recorded.target


async def test_a_url_graph_sends_anyway_is_never_picked(
    graph: LoopbackServer,
) -> None:
    """The same items from a Graph that ignores $select: the backend picks the neutral
    fields only, so the download and thumbnail URLs are never part of the result (0.2
    stripped them from the raw item and reported the result incomplete)."""
    graph.route(
        "GET",
        "/v1.0/me/drive/root/children",
        Reply.json({"value": [full_drive_item(0)]}),
    )
    async with tools_on(graph) as tools:
        result = await tools.call("files_list", {})
    data = result["structuredContent"]
    assert result["isError"] is False and "incomplete" not in data and "skipped" not in data
    assert rows(data, "items")[0]["id"] == ref(full_drive_item(0)["id"])
    assert "SELECT-SECRET" not in json.dumps(result)
    assert "thumbnail" not in json.dumps(result).lower()


# --- files_read: byte windows with Range requests (issue 22 §4) ----------------------------------

RANGE_HEADER = re.compile(r"^bytes=(\d+)-(\d+)$")


def ranged(data: bytes) -> Callable[[RecordedRequest], Reply]:
    """A download host that honours ``Range: bytes=a-b`` as SharePoint does (RFC 9110 §14)."""

    def answer(request: RecordedRequest) -> Reply:
        match = RANGE_HEADER.match(request.header("range") or "")
        if match is None:
            return Reply(200, (("Content-Type", "text/plain"),), data)
        first, last = int(match.group(1)), min(int(match.group(2)), len(data) - 1)
        if first >= len(data):
            return Reply(416, (("Content-Range", f"bytes */{len(data)}"),), b"")
        headers = (
            ("Content-Type", "text/plain"),
            ("Content-Range", f"bytes {first}-{last}/{len(data)}"),
        )
        return Reply(206, headers, data[first : last + 1])

    return answer


def big_log(size: int) -> bytes:
    line = b"2026-03-05T00:00:00Z INFO sync ok caf\xc3\xa9\n"
    body = (line * (size // len(line) + 1))[: size - 40]
    return body + b"\xe2\x82\xac the last line: disk full \xe2\x82\xac\n".rjust(40, b"-")


def route_log(graph: LoopbackServer, files: LoopbackServer, data: bytes, host: Any) -> None:
    location = f"{files.url}/dl?tempauth=SECRET-CAPABILITY"
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE",
        Reply.json(drive_item("server.log", len(data), download_url=location)),
    )
    graph.route(
        "GET",
        "/v1.0/me/drive/items/01LOOPBACKFILE/content",
        Reply(302, (("Location", location),), b""),
    )
    files.route("GET", "/dl", host)


async def test_files_read_reaches_the_end_of_a_2_6_mb_log_one_window_a_call(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    """0.2 downloaded the first 2,000,000 bytes on every call and never reached the rest."""
    data = big_log(2_600_000)
    route_log(graph, files, data, ranged(data))
    async with tools_on(graph) as tools:
        tail = await tools.data("files_read", {"item_id": FILE_REF, "offset": -1_000})
        middle = await tools.data("files_read", {"item_id": FILE_REF, "offset": 2_300_038})
        after = await tools.data(
            "files_read",
            {"item_id": FILE_REF, "offset": middle["skipped"]["text"]["next_offset"]},
        )
    window = DEFAULT_LIMITS.text_window_bytes
    edge = TOKEN_EDGE_BYTES
    # -1,000 falls inside a word: the window starts at that word, never in its middle
    tail_start = tail["content"]["from_byte"]
    assert len(data) - 1_000 - 60 < tail_start <= len(data) - 1_000
    assert data[tail_start - 1 : tail_start] in (b" ", b"\n")
    assert tail["content"]["text"] == data[tail_start:].decode("utf-8")
    assert tail["content"]["text"].endswith("the last line: disk full €\n")
    assert tail["skipped"]["text"]["bytes_before"] == tail_start
    assert "next_offset" not in tail["skipped"]["text"]
    # 2,300,038 is the second byte of the "é" of "café": the window starts at "café"
    start = middle["content"]["from_byte"]
    assert data[start : start + 5] == "café".encode() and data[start - 1 : start] == b" "
    end = middle["content"]["to_byte"]
    assert middle["content"]["text"] == data[start:end].decode("utf-8")
    assert len(middle["content"]["text"]) <= DEFAULT_LIMITS.body_chars
    assert data[end - 1 : end] in (b" ", b"\n"), "a window ends between words"
    assert after["content"]["from_byte"] == end, "the next window starts where this one ended"
    assert [r.header("range") for r in files.requests] == [
        f"bytes={len(data) - 1_000 - edge}-{len(data) - 1_000 + window - 1}",
        f"bytes={2_300_038 - edge}-{2_300_038 + window - 1}",
        f"bytes={end - edge}-{end + window - 1}",
    ], "one window fetched per call, once (with the bytes before it, to find a word's start)"


async def test_files_read_from_a_host_that_ignores_range_is_still_one_bounded_window(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    data = big_log(300_000)
    route_log(graph, files, data, Reply(200, (("Content-Type", "text/plain"),), data))
    async with tools_on(graph) as tools:
        tail = await tools.call("files_read", {"item_id": FILE_REF, "offset": -500})
        head = await tools.data("files_read", {"item_id": FILE_REF})
    content = tail["structuredContent"]["content"]
    assert content["text"] == data[-500:].decode("utf-8")
    assert content["from_byte"] == len(data) - 500 and content["total_bytes"] == len(data)
    assert head["content"]["text"] == data[: head["content"]["to_byte"]].decode("utf-8")
    chars = DEFAULT_LIMITS.body_chars
    assert chars - 60 < len(head["content"]["text"]) <= chars


@pytest.mark.parametrize("offset", [300, 301, 10_000])
async def test_files_read_offset_at_or_past_the_end_is_a_clear_error(
    graph: LoopbackServer, files: LoopbackServer, offset: int
) -> None:
    data = b"x" * 300
    route_log(graph, files, data, ranged(data))
    async with tools_on(graph) as tools:
        refused = await tools.call("files_read", {"item_id": FILE_REF, "offset": offset})
        last = await tools.data("files_read", {"item_id": FILE_REF, "offset": 299})
    error = json.loads(refused["content"][0]["text"])["error"]
    assert refused["isError"] is True and "past the end of the file (300 bytes)" in error["message"]
    assert (
        files.requests[0].header("range") == f"bytes=0-{299 + DEFAULT_LIMITS.text_window_bytes - 1}"
    )
    # the last byte is inside a 300-byte word, read whole: serving goes on
    assert last["content"]["text"] == "x" * 300 and last["content"]["from_byte"] == 0


async def test_a_negative_offset_on_a_document_is_refused_in_our_words(
    graph: LoopbackServer,
) -> None:
    item = {"id": "01LOOPBACKFILE", "name": "plan.docx", "size": 900, "file": {"mimeType": "x"}}
    graph.route("GET", "/v1.0/me/drive/items/01LOOPBACKFILE", Reply.json(item))
    async with tools_on(graph) as tools:
        refused = await tools.call("files_read", {"item_id": FILE_REF, "offset": -10})
    error = json.loads(refused["content"][0]["text"])["error"]
    assert "negative `offset` reads a text file from its end" in error["message"]
    assert [r.path for r in graph.requests] == ["/v1.0/me/drive/items/01LOOPBACKFILE"]


WINDOW = 1_000


@pytest.mark.parametrize("cut", [10, 25, 40, 55])
async def test_a_secret_link_is_never_split_between_two_windows(
    graph: LoopbackServer, files: LoopbackServer, cut: int
) -> None:
    """Wherever a window edge or an offset falls in a pre-authenticated link, no part of
    its credential is shown: the link is read whole by one window and redacted there."""
    link = "https://contoso.sharepoint.com/_layouts/15/download.aspx?tempauth=eyJ0eXAiOiJKV1QiLCJh"
    prefix = b"word " * 190  # 950 bytes, so the 1,000-byte window ends inside the link
    data = prefix + link.encode() + b" done\n"
    limits = dataclasses.replace(FAST, text_window_bytes=WINDOW)
    route_log(graph, files, data, ranged(data))
    async with tools_on(graph, limits=limits) as tools:
        first = await tools.data("files_read", {"item_id": FILE_REF})
        follow = await tools.data(
            "files_read",
            {"item_id": FILE_REF, "offset": first["skipped"]["text"]["next_offset"]},
        )
        inside = await tools.data("files_read", {"item_id": FILE_REF, "offset": len(prefix) + cut})
    shown = first["content"]["text"] + follow["content"]["text"] + inside["content"]["text"]
    for secret in ("tempauth", "eyJ0eXAiOiJKV1QiLCJh", "JKV1Qi", "download.aspx?"):
        assert secret not in shown
    assert first["content"]["to_byte"] == len(prefix), "the first window ends before the link"
    assert inside["content"]["from_byte"] == len(prefix), "an offset inside it moves to its start"


@pytest.mark.parametrize("size", [WINDOW - 1, WINDOW, WINDOW + 1])
async def test_one_window_is_text_window_bytes_at_most(
    graph: LoopbackServer, files: LoopbackServer, size: int
) -> None:
    """``text_window_bytes`` at L-1, L and L+1 (a small window, so its edge is in view)."""
    data = bytes(ord("a") + n % 26 for n in range(size))
    limits = dataclasses.replace(FAST, text_window_bytes=WINDOW)
    route_log(graph, files, data, Reply(200, (("Content-Type", "text/plain"),), data))
    async with tools_on(graph, limits=limits) as tools:
        first = await tools.call("files_read", {"item_id": FILE_REF})
    data_out = first["structuredContent"]
    assert data_out["content"]["text"] == data[:WINDOW].decode("ascii")
    assert data_out["content"]["to_byte"] == min(size, WINDOW)
    if size > WINDOW:
        assert data_out["skipped"]["text"]["next_offset"] == WINDOW
        assert data_out["skipped"]["text"]["bytes_after"] == 1
    else:
        assert "text" not in data_out.get("skipped", {}), "the whole file was read"
