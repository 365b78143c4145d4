"""Every tool on the canned fixture file (``fixtures/canned.json``), through the real stack.

The canned file is the 0.1 demo recording, kept for the strict ``--fixtures`` mode: it
carries cases a well-behaved server never sends (a page of 51, download URLs in a
``$select``ed list, canned 429/401 entries). The live-like demo is the emulator
(``test_demo_tools.py``).

The context is built the way ``mfconnector --fixtures PATH`` builds it
(``wiring.build_context``): the real GraphClient over the real FixtureTransport, wrapped
only to record which requests left.
Requests go through the real Runtime + McpServer over in-memory streams, in each protocol
era. Every reply is validated against the official MCP schema of its era, and every
``structuredContent`` against the tool's own published ``outputSchema``.

Ids are not copied from fixtures/README.md: they are looked up in ``demo.json`` by what
makes each case interesting (a body of exactly 10,001 characters, a folder of 51 items, ...),
so the tests follow the demo when its generator changes.

Every byte the server writes in this module is scanned for pre-authenticated URLs and
tokens (see ``assert_no_secrets`` and the last test).
"""

from __future__ import annotations

import base64
import dataclasses
import gc
import itertools
import json
import logging
import re
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from jsonschema import Draft202012Validator

from mfconnector.auth import StaticTokenProvider
from mfconnector.cli import build_parser
from mfconnector.entry.account_builders import FIXTURE_TOKEN
from mfconnector.entry.wiring import build_context
from mfconnector.graph.client import GraphClient
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import FixtureSet, RepeatBody, load_fixtures
from mfconnector.graph.urls import is_graph_url
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.refs import Reference, account_tag
from mfconnector.textconv import html_to_text
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.base import ToolContext
from tests.support.harness import MODERN, graph_accounts, initialize, open_session, request, rows
from tests.support.mcp_schemas import assert_valid

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
CANNED = Path(__file__).resolve().parents[2] / "fixtures" / "canned.json"
FAST = dataclasses.replace(
    DEFAULT_LIMITS,
    graph_retry_after_max_seconds=1.0,  # the demo's 429 says 2.128 s: fail fast, never sleep
    graph_retry_total_seconds=2.0,
    graph_request_seconds=20.0,
)
CAP = DEFAULT_LIMITS.list_items
BODY = DEFAULT_LIMITS.body_chars
TEST_SECONDS = 30
OUTPUT_VALIDATORS = {tool.name: Draft202012Validator(tool.output_schema) for tool in ALL_TOOLS}

FORBIDDEN = (
    "tempauth",
    "bearer",
    FIXTURE_TOKEN.lower(),
    "not-a-token",  # the fake credential part of every demo download URL
    "download.aspx",  # the demo's SharePoint download endpoint
    "_layouts/15/download",
    "mediap.svc.ms",  # the thumbnail host
    "sharepoint.com/personal/adelev_contoso_onmicrosoft_com/_layouts",
)
"""Never in any byte the server writes (checked case-insensitively). ``webUrl`` values
(``https://contoso-my.sharepoint.com/personal/.../Documents/...``) are browser links that
need a sign-in, not download URLs, so the bare host is not on this list."""

WIRE: list[bytes] = []
"""Every byte the server wrote in this module, session by session."""
LOG_LINES: list[str] = []


# --- the demo data, looked up by purpose ---------------------------------------------------


@cache
def demo_set() -> FixtureSet:
    return load_fixtures(CANNED)


@cache
def demo_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(CANNED.read_text(encoding="utf-8"))
    return doc


def entry(path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    """The response of the demo entry for ``path`` with exactly ``query``."""
    for item in demo_doc()["responses"]:
        req = item["request"]
        if req.get("path") == path and req.get("query", {}) == (query or {}):
            response: dict[str, Any] = item["response"]
            return response
    raise LookupError(f"no demo entry for {path} {query}")


TAG = account_tag("graph", "default")


def ref(native: str) -> str:
    """The reference the server hands out for a Graph id of the one account, ``default``."""
    return str(Reference(TAG, native))


def body_json(path: str, query: dict[str, str] | None = None) -> Any:
    return entry(path, query)["json"]


def ids_of(path: str, query: dict[str, str] | None = None) -> list[str]:
    return [item["id"] for item in body_json(path, query)["value"]]


def refs_of(path: str, query: dict[str, str] | None = None) -> list[str]:
    """The ids of a mail listing as the server hands them out: references."""
    return [ref(native) for native in ids_of(path, query)]


@cache
def demo_messages() -> dict[str, dict[str, Any]]:
    """Every message served on a single GET, by id."""
    out = {}
    for item in demo_doc()["responses"]:
        path = item["request"].get("path") or ""
        match = re.fullmatch(r"/me/messages/([^/]+)", path)
        doc = item["response"].get("json")
        if match and item["response"].get("status", 200) == 200 and isinstance(doc, dict):
            out[match.group(1)] = doc
    return out


def message_where(predicate: Any) -> str:
    found = [mid for mid, doc in demo_messages().items() if predicate(doc)]
    assert len(found) == 1, f"expected one demo message, found {len(found)}"
    return found[0]


def body_of(doc: dict[str, Any]) -> tuple[str, str]:
    body = doc.get("body") or {}
    return str(body.get("contentType", "")).lower(), str(body.get("content", ""))


def text_body_of_length(length: int) -> str:
    return message_where(lambda d: body_of(d)[0] == "text" and len(body_of(d)[1]) == length)


def emoji_boundary_message() -> str:
    def at_boundary(doc: dict[str, Any]) -> bool:
        kind, text = body_of(doc)
        return kind == "text" and text[BODY - 1 : BODY + 1] == "\U0001f389\U0001f60a"

    return message_where(at_boundary)


def longest_html_message() -> str:
    html = {mid: body_of(d)[1] for mid, d in demo_messages().items() if body_of(d)[0] == "html"}
    return max(html, key=lambda mid: len(html[mid]))


def expected_body_text(message_id: str) -> str:
    """What the whole body reads as once served as text (HTML converted, text as Graph sent it)."""
    kind, content = body_of(demo_messages()[message_id])
    return html_to_text(content) if kind == "html" else content


def attachments_of(message_id: str) -> list[dict[str, Any]]:
    values: list[dict[str, Any]] = body_json(f"/me/messages/{message_id}/attachments")["value"]
    return values


def message_with_attachment_bytes() -> str:
    found = [
        mid
        for mid, doc in demo_messages().items()
        if doc.get("hasAttachments") and any("contentBytes" in a for a in attachments_of(mid))
    ]
    assert found, "the demo should have an attachment that still carries contentBytes"
    return sorted(found)[0]


def folder_id(display_name: str, parent_path: str = "/me/mailFolders") -> str:
    for folder in body_json(parent_path)["value"]:
        if folder["displayName"] == display_name:
            return str(folder["id"])
    raise LookupError(display_name)


def projects_child(display_name: str) -> str:
    projects = folder_id("Projects")
    return folder_id(display_name, f"/me/mailFolders/{projects}/childFolders")


def error_path(status: int, prefix: str) -> str:
    for item in demo_doc()["responses"]:
        path = item["request"].get("path") or ""
        if item["response"].get("status") == status and re.fullmatch(prefix + r"[^/]+", path):
            return path.rsplit("/", 1)[1]
    raise LookupError((status, prefix))


def drive_item_by_path(path: str) -> dict[str, Any]:
    doc: dict[str, Any] = body_json(f"/me/drive/root:/{path}")
    return doc


def download_bytes(item_id: str) -> bytes:
    """The bytes the demo serves for a file, following its 302 like the client does."""
    location = entry(f"/me/drive/items/{item_id}/content")["headers"]["Location"]
    found = demo_set().match("GET", location)
    assert found is not None
    body = found.response.body
    if isinstance(body, RepeatBody):
        unit = body.text.encode("utf-8")
        return (unit * (body.total_bytes // len(unit) + 1))[: body.total_bytes]
    return body


def root_ids() -> list[str]:
    first = body_json("/me/drive/root/children")
    token = re.search(r"%24skiptoken=([^&]+)", first["@odata.nextLink"])
    assert token is not None
    second = body_json("/me/drive/root/children", {"$skiptoken": token.group(1)})
    return [item["id"] for item in first["value"] + second["value"]]


# --- recording the transport, the wire and the logs ------------------------------------------


class RecordingTransport(httpx.AsyncBaseTransport):
    """The real FixtureTransport, with a note of every request that reached it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    def urls(self) -> list[str]:
        return [str(r.url) for r in self.requests]


class Tap:
    """Wraps the harness's receive stream so that every byte the server wrote is kept."""

    def __init__(self, inner: Any, sink: bytearray) -> None:
        self._inner = inner
        self._sink = sink

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data: bytes = await self._inner.receive_some(max_bytes)
        self._sink.extend(data)
        return data


_DOWNLOAD_URL_KEY = re.compile(rb'downloadurl\\*"\s*:', re.IGNORECASE)
_REMOVED_PATH = re.compile(r"^[^\s\"]*\.@microsoft\.graph\.downloadUrl$")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def assert_no_secrets(data: bytes) -> None:
    """No download URL, thumbnail URL, tempauth value or token in ``data``.

    The literal ``downloadUrl`` may appear only as a path in ``skipped.removed.paths``
    (``items[3].@microsoft.graph.downloadUrl``: the report that it was removed), never as a
    key with a value.
    """
    lowered = data.lower()
    for word in FORBIDDEN:
        assert word.encode() not in lowered, f"{word!r} reached the wire"
    assert not _DOWNLOAD_URL_KEY.search(data), "a downloadUrl key reached the wire"
    for line in data.splitlines():
        if b"downloadurl" not in line.lower():
            continue
        message = json.loads(line)
        result = message.get("result") or {}
        texts = [block.pop("text") for block in result.get("content", []) if "text" in block]
        strings = list(_strings(message))
        for text in texts:
            strings.extend(_strings(json.loads(text)))
        legit = [s for s in strings if "downloadurl" in s.lower()]
        assert all(_REMOVED_PATH.match(s) for s in legit), legit
        removed = [
            p
            for sc in (result.get("structuredContent"),)
            if isinstance(sc, dict)
            for p in sc.get("skipped", {}).get("removed", {}).get("paths", [])
        ]
        assert all(s in removed for s in legit)
        # raw occurrences: each removed path appears in structuredContent and in the text copy
        assert line.lower().count(b"downloadurl") == len(legit)


class _ListHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG_LINES.append(self.format(record))


@pytest.fixture(autouse=True, scope="module")
def capture_logs() -> Iterator[None]:
    """Every log record of the module, at DEBUG: none may carry a secret either."""
    handler = _ListHandler(logging.DEBUG)
    root = logging.getLogger()
    ours = logging.getLogger("mfconnector")
    old_level = ours.level
    root.addHandler(handler)
    ours.setLevel(logging.DEBUG)
    yield
    ours.setLevel(old_level)
    root.removeHandler(handler)


# --- a client speaking one era ------------------------------------------------------------


def validate_reply(era: str, reply: dict[str, Any]) -> None:
    if era == MODERN:
        assert_valid(
            MODERN, "CallToolResultResponse" if "result" in reply else "JSONRPCErrorResponse", reply
        )
        if "result" in reply:
            assert reply["result"]["resultType"] == "complete"
            assert "ttlMs" not in reply["result"] and "cacheScope" not in reply["result"]
        return
    if "result" not in reply:
        assert_valid(era, "JSONRPCError" if era == "2025-06-18" else "JSONRPCErrorResponse", reply)
        return
    assert_valid(era, "JSONRPCResponse" if era == "2025-06-18" else "JSONRPCResultResponse", reply)
    assert_valid(era, "CallToolResult", reply["result"])
    for modern_key in ("resultType", "ttlMs", "cacheScope", "_meta"):
        assert modern_key not in reply["result"]


class DemoClient:
    def __init__(self, session: Any, era: str, transport: RecordingTransport, ctx: ToolContext):
        self.session = session
        self.era = era
        self.transport = transport
        self.ctx = ctx
        self._ids = itertools.count(1)
        self.wire = bytearray()
        """Every byte the server wrote in this session."""

    async def start(self) -> None:
        if self.era != MODERN:
            reply = await self.session.call(initialize(0, self.era))
            assert reply["result"]["protocolVersion"] == self.era
            await self.session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def reply(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC reply to one tools/call, checked against the era's schema."""
        message = request(
            next(self._ids),
            "tools/call",
            {"name": name, "arguments": arguments},
            modern=self.era == MODERN,
        )
        reply = await self.session.call(message)
        validate_reply(self.era, reply)
        return reply

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The CallToolResult, with the completeness contract checked."""
        reply = await self.reply(name, arguments or {})
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        check_result(name, result, allow_partial=self.ctx.allow_partial)
        return result

    async def structured(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert "structuredContent" in result, result["content"][0]["text"][:500]
        data: dict[str, Any] = result["structuredContent"]
        return data

    async def error(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``error`` payload of an isError result without structured data."""
        result = await self.call(name, arguments)
        assert result["isError"] is True
        assert "structuredContent" not in result, result["structuredContent"]
        payload: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
        return payload

    async def requests_during(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], list[str]]:
        before = len(self.transport.requests)
        result = await self.call(name, arguments)
        return result, self.transport.urls()[before:]


def check_result(name: str, result: dict[str, Any], *, allow_partial: bool) -> None:
    """Shape of every tool result: data twice, the completeness fields, the isError rule."""
    content = result["content"]
    assert len(content) == 1 and content[0]["type"] == "text"
    if "structuredContent" not in result:
        assert result["isError"] is True
        payload = json.loads(content[0]["text"])
        assert set(payload) == {"error"}
        error = payload["error"]
        assert error["error_code"] and error["message"]
        assert isinstance(error["retry_safe"], bool)
        assert all(key == key.lower() for key in error), f"one key style: {sorted(error)}"
        return
    data = result["structuredContent"]
    errors = [e.message for e in OUTPUT_VALIDATORS[name].iter_errors(data)]
    assert not errors, f"{name} output breaks its own outputSchema: {errors[:3]}"
    assert json.loads(content[0]["text"]) == data
    if data.get("incomplete") is True:
        assert data["skipped"], "incomplete without saying what was skipped"
        assert result["isError"] is (not allow_partial)
    else:
        assert "incomplete" not in data and "skipped" not in data
        assert result["isError"] is False


def demo_context(
    *, allow_partial: bool = False, limits: Limits = FAST
) -> tuple[ToolContext, GraphClient, RecordingTransport]:
    """What ``wiring.build_context`` builds for ``--fixtures CANNED``, transport recorded."""
    fixture_set = demo_set()
    tokens = StaticTokenProvider(FIXTURE_TOKEN, account="fixture account")
    transport = RecordingTransport(FixtureTransport(fixture_set))
    client = GraphClient(
        token_provider=tokens, limits=limits, root=fixture_set.graph_root, transport=transport
    )

    async def graph() -> GraphClient:
        return client

    ctx = ToolContext(
        accounts=graph_accounts(graph, limits, all_files=True),
        limits=limits,
        mode="fixtures",
        allow_partial=allow_partial,
        sign_in=tokens,
        user_path="/me",
        source=str(CANNED),
        # The canned recording has no mailboxSettings: name the zone, so that request
        # counts here stay those of the tool itself (mailboxSettings: test_reads_loopback.py).
        time_zone="UTC",
    )
    return ctx, client, transport


@asynccontextmanager
async def demo_client(
    era: str = MODERN, *, allow_partial: bool = False
) -> AsyncIterator[DemoClient]:
    ctx, graph, transport = demo_context(allow_partial=allow_partial)
    wire = bytearray()
    with trio.fail_after(TEST_SECONDS):
        async with graph, open_session(context=ctx, limits=FAST) as session:
            session._from_server = Tap(session._from_server, wire)
            client = DemoClient(session, era, transport, ctx)
            client.wire = wire
            await client.start()
            yield client
    WIRE.append(bytes(wire))
    assert_no_secrets(bytes(wire))
    for sent in transport.requests:
        if not is_graph_url(str(sent.url), demo_set().graph_root):
            assert "authorization" not in sent.headers, "the token went to a download host"
            assert sent.url.host == "contoso-my.sharepoint.com", "a request left for a foreign host"


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


def skipped_items(data: dict[str, Any]) -> dict[str, Any]:
    items: dict[str, Any] = data["skipped"]["items"]
    return items


# --- the context the CLI builds -------------------------------------------------------------


@pytest.mark.slow
async def test_cli_demo_context_is_what_these_tests_use() -> None:
    canned = ["--fixtures", str(CANNED)]
    for flags, partial in ((canned, False), ([*canned, "--allow-partial"], True)):
        ctx, lazy = build_context(build_parser().parse_args(flags), FAST)
        ours, graph, _ = demo_context(allow_partial=partial)
        try:
            assert (ctx.mode, ctx.allow_partial, ctx.user_path, ctx.source, ctx.limits) == (
                ours.mode,
                ours.allow_partial,
                ours.user_path,
                ours.source,
                ours.limits,
            )
            assert await ctx.sign_in.describe() == await ours.sign_in.describe()
            real = await lazy()
            assert real.root == graph.root
            async with open_session(context=ctx, limits=FAST) as session:
                reply = await session.call(
                    request(1, "tools/call", {"name": "account_status", "arguments": {}})
                )
            data = reply["result"]["structuredContent"]
            assert data["mode"] == "fixtures" and data["signed_in"] is True
            assert data["allow_partial"] is partial
            assert data["profile"]["address"] == body_json("/me")["mail"]
            assert [(a["name"], a["provider"]) for a in data["accounts"]] == [("default", "graph")]
        finally:
            await lazy.aclose()
            await graph.aclose()


async def test_account_status(era: str) -> None:
    async with demo_client(era) as client:
        data = await client.structured("account_status")
    assert data["mode"] == "fixtures"
    assert data["signed_in"] is True
    assert data["profile"]["name"] == body_json("/me")["displayName"]
    (account,) = data["accounts"]
    assert account["tag"] == TAG.tag and account["capabilities"]["search_syntax"] == "kql"
    assert data["limits"]["list_items"] == CAP
    assert "problem" not in data


# --- lists: the 50-item cap at 49 / 50 / 51 ----------------------------------------------------


@pytest.mark.parametrize(("name", "count"), [("Contoso Launch", 49), ("Budget 2027", 50)])
async def test_folder_at_or_under_the_cap_is_complete(era: str, name: str, count: int) -> None:
    folder = projects_child(name)
    expected = refs_of(f"/me/mailFolders/{folder}/messages")
    assert len(expected) == count
    async with demo_client(era) as client:
        result, sent = await client.requests_during("mail_list", {"folder": ref(folder)})
    data = result["structuredContent"]
    assert [m["id"] for m in rows(data)] == expected
    assert "incomplete" not in data and result["isError"] is False
    assert len(sent) == 1


async def test_folder_of_51_in_one_page_shows_50_and_a_cursor_for_the_last(era: str) -> None:
    archive = folder_id("Archive")
    expected = refs_of(f"/me/mailFolders/{archive}/messages")
    assert len(expected) == CAP + 1
    assert "@odata.nextLink" not in body_json(f"/me/mailFolders/{archive}/messages")
    async with demo_client(era) as client:
        result, sent = await client.requests_during("mail_list", {"folder": ref(archive)})
        first = result["structuredContent"]
        assert result["isError"] is True
        assert len(rows(first)) == CAP
        items = skipped_items(first)
        assert items["more_pages"] is False and items["count"] == 1
        assert isinstance(items["cursor"], str)
        assert len(sent) == 1
        rest, sent = await client.requests_during(
            "mail_list", {"folder": ref(archive), "cursor": items["cursor"]}
        )
    second = rest["structuredContent"]
    assert len(sent) == 1
    assert [m["id"] for m in rows(second)] == expected[CAP:]
    assert "incomplete" not in second and rest["isError"] is False
    assert [m["id"] for m in rows(first) + rows(second)] == expected


async def test_inbox_two_pages_via_cursor_lose_nothing(era: str) -> None:
    page1 = body_json("/me/mailFolders/inbox/messages")
    inbox = refs_of("/me/mailFolders/inbox/messages") + refs_of(
        "/me/mailFolders/inbox/messages", {"$skip": "50"}
    )
    assert "@odata.nextLink" in page1 and len(inbox) > CAP
    seen: list[str] = []
    async with demo_client(era) as client:
        result, sent = await client.requests_during("mail_list", {})
        data = result["structuredContent"]
        assert len(sent) == 1, "no extra page may be fetched without the cursor"
        assert len(rows(data)) == CAP
        assert skipped_items(data)["more_pages"] is True
        assert "count" not in skipped_items(data)
        seen += [m["id"] for m in rows(data)]
        pages = 1
        while "skipped" in data:
            cursor = skipped_items(data)["cursor"]
            result, sent = await client.requests_during("mail_list", {"cursor": cursor})
            assert len(sent) == 1 and "%24skip=50" in sent[0]
            data = result["structuredContent"]
            seen += [m["id"] for m in rows(data)]
            pages += 1
            assert pages <= 3
    assert pages == 2
    assert result["isError"] is False
    assert len(seen) == len(set(seen))
    assert seen == inbox


async def test_small_limit_pages_through_the_whole_inbox_by_cursor() -> None:
    inbox = refs_of("/me/mailFolders/inbox/messages") + refs_of(
        "/me/mailFolders/inbox/messages", {"$skip": "50"}
    )
    seen: list[str] = []
    async with demo_client() as client:
        arguments: dict[str, Any] = {"limit": 20}
        for _ in range(10):
            data = await client.structured("mail_list", arguments)
            assert len(rows(data)) <= 20
            seen += [m["id"] for m in rows(data)]
            if "skipped" not in data:
                break
            arguments = {"limit": 20, "cursor": skipped_items(data)["cursor"]}
    assert seen == inbox


async def test_limit_from_1_to_50(era: str) -> None:
    launch = projects_child("Contoso Launch")
    expected = refs_of(f"/me/mailFolders/{launch}/messages")
    async with demo_client(era) as client:
        for limit in (1, 2, 25, 48, 49, 50):
            result, sent = await client.requests_during(
                "mail_list", {"folder": ref(launch), "limit": limit}
            )
            data = result["structuredContent"]
            assert [m["id"] for m in rows(data)] == expected[:limit]
            assert len(sent) == 1 and f"$top={limit}" in sent[0]
            if limit < len(expected):
                assert skipped_items(data)["count"] == len(expected) - limit
            else:
                assert "skipped" not in data


@pytest.mark.slow
async def test_every_limit_1_to_50_is_accepted() -> None:
    budget = projects_child("Budget 2027")
    async with demo_client() as client:
        for limit in range(1, CAP + 1):
            data = await client.structured("mail_folders", {"limit": limit})
            assert len(data["folders"]) == min(limit, len(body_json("/me/mailFolders")["value"]))
            data = await client.structured("mail_list", {"folder": ref(budget), "limit": limit})
            assert len(rows(data)) == limit


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("mail_list", {"limit": 0}),
        ("mail_list", {"limit": CAP + 1}),
        ("mail_folders", {"limit": 0}),
        ("mail_folders", {"limit": CAP + 1}),
        ("mail_search", {"query": "budget", "limit": CAP + 1}),
        ("files_list", {"limit": 0}),
        ("files_search", {"query": "budget", "limit": CAP + 1}),
        ("mail_list", {"limit": "10"}),
        ("mail_list", {"folder": "inbox", "colour": "red"}),
        ("mail_read", {"message_id": "has space"}),
        ("mail_read", {"message_id": "msb.AAMkAGI2x", "body_offset": -1}),
        ("mail_read", {"message_id": "AAMkAGI2x"}),
        ("files_read", {"item_id": "../../etc/passwd"}),
        ("files_read", {"offset": 1.5}),
    ],
)
async def test_arguments_outside_the_schema_are_rejected(
    era: str, tool: str, arguments: dict[str, Any]
) -> None:
    async with demo_client(era) as client:
        reply = await client.reply(tool, arguments)
        assert client.transport.requests == []
    if era == "2025-06-18":
        assert reply["error"]["code"] == -32602
        assert f"Invalid arguments for {tool}" in reply["error"]["message"]
        return
    result = reply["result"]
    check_result(tool, result, allow_partial=False)
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["error_code"] == "invalid_arguments"
    assert f"Invalid arguments for {tool}" in error["message"]
    assert error["hint"]
    if "limit" in arguments and isinstance(arguments["limit"], int):
        assert "limit" in error["message"]


# --- mail folders and names -----------------------------------------------------------------


async def test_mail_folders_top_level_and_children(era: str) -> None:
    top = body_json("/me/mailFolders")["value"]
    projects = folder_id("Projects")
    async with demo_client(era) as client:
        data = await client.structured("mail_folders", {"detail": "full"})
        children = await client.structured(
            "mail_folders", {"parent": ref(projects), "detail": "full"}
        )
        inbox_children = await client.structured(
            "mail_folders", {"parent": "Inbox", "detail": "full"}
        )
    assert [f["id"] for f in data["folders"]] == [ref(f["id"]) for f in top]
    assert data["parent"] == "(top level)"
    by_name = {f["name"]: f for f in children["folders"]}
    assert by_name["Budget 2027"]["total"] == CAP
    assert by_name["Budget 2027"]["path"] == "Projects/Budget 2027"
    assert by_name["Contoso Launch"]["total"] == CAP - 1
    assert [f["name"] for f in inbox_children["folders"]] == ["Receipts"]
    for folder in data["folders"]:
        assert set(folder) == {
            "id",
            "name",
            "path",
            "role",
            "parent",
            "children",
            "unread",
            "total",
            "hidden",
        }


@pytest.mark.parametrize(
    "name",
    ["inbox", "sentitems", "drafts", "archive", "deleteditems", "junkemail", "Inbox", "ARCHIVE"],
)
async def test_well_known_folder_names(name: str) -> None:
    expected = refs_of(f"/me/mailFolders/{name.lower()}/messages")
    async with demo_client() as client:
        data = await client.structured("mail_list", {"folder": name})
    assert [m["id"] for m in rows(data)] == expected[:CAP]
    assert data["folder"] == name


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("mail_list", {"folder": "outbox"}),
        ("mail_search", {"query": "invoice", "folder": "outbox"}),
        ("mail_folders", {"parent": "msgfolderroot"}),
    ],
)
async def test_other_graph_well_known_folder_names(tool: str, arguments: dict[str, Any]) -> None:
    """Graph's longer list of well-known names is passed through, not refused as a typo."""
    name = arguments.get("folder") or arguments["parent"]
    async with demo_client() as client:
        await client.call(tool, arguments)
        sent = [str(request.url) for request in client.transport.requests]
    assert len(sent) == 1 and f"/mailFolders/{name}/" in sent[0]


@pytest.mark.parametrize("folder", ["inbx", "Sent Itemz", "junkmail"])
async def test_unknown_folder_name_is_an_actionable_error(era: str, folder: str) -> None:
    async with demo_client(era) as client:
        error = await client.error("mail_list", {"folder": folder})
        asked = [str(sent.url.path) for sent in client.transport.requests]
        assert asked and all(path.endswith(("/mailFolders", "/childFolders")) for path in asked), (
            "a name is looked up among the folders; no messages are asked for"
        )
    assert error["error_code"] == "not_found"
    assert repr(folder) in error["message"]
    assert "inbox" in error["hint"] and "mail_folders" in error["hint"]


@pytest.mark.parametrize("role", ["sent", "trash", "junk"])
async def test_neutral_roles_mean_graph_well_known_folders(role: str) -> None:
    graph_name = {"sent": "sentitems", "trash": "deleteditems", "junk": "junkemail"}[role]
    expected = refs_of(f"/me/mailFolders/{graph_name}/messages")
    async with demo_client() as client:
        result, sent = await client.requests_during("mail_list", {"folder": role})
    assert [m["id"] for m in rows(result["structuredContent"])] == expected[:CAP]
    assert len(sent) == 1 and f"/mailFolders/{graph_name}/messages" in sent[0]


async def test_mail_list_filters(era: str) -> None:
    async with demo_client(era) as client:
        unread, sent = await client.requests_during("mail_list", {"unread_only": True})
        attached = await client.structured("mail_list", {"has_attachments": True})
    assert "receivedDateTime%20ge%20" in sent[0] and "isRead%20eq%20false" in sent[0]
    data = unread["structuredContent"]
    assert rows(data) and all("unread" in m["flags"].split() for m in rows(data))
    assert rows(attached) and all("attachments" in m["flags"].split() for m in rows(attached))


# --- search ---------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["budget", "invoice", "launch"])
async def test_mail_search(era: str, word: str) -> None:
    expected = refs_of("/me/messages", {"$search": f'"{word}"'})
    async with demo_client(era) as client:
        result, sent = await client.requests_during("mail_search", {"query": word})
    data = result["structuredContent"]
    assert [m["id"] for m in rows(data)] == expected
    assert data["query"] == word
    assert "orderby" not in sent[0] and f"$search=%22{word}%22" in sent[0]


async def test_mail_search_in_a_folder() -> None:
    expected = refs_of("/me/mailFolders/inbox/messages", {"$search": '"invoice"'})
    async with demo_client() as client:
        data = await client.structured("mail_search", {"query": "invoice", "folder": "inbox"})
    assert [m["id"] for m in rows(data)] == expected


@pytest.mark.parametrize("word", ["budget", "report", "launch"])
async def test_files_search(era: str, word: str) -> None:
    expected = ids_of(f"/me/drive/root/search(q='{word}')")
    async with demo_client(era) as client:
        result = await client.call("files_search", {"query": word})
    data = result["structuredContent"]
    assert [i["id"] for i in rows(data, "items")] == [ref(native) for native in expected]
    # the demo sends download and thumbnail URLs with search hits: the backend never picks
    # them, so they are not in the result (nor reported as cut) and the result is complete
    assert "incomplete" not in data and "removed" not in data.get("skipped", {})
    assert result["isError"] is False
    assert "downloadurl" not in result["content"][0]["text"].lower()


# --- mail_read: bodies at the 10,000-character cap -----------------------------------------------


@pytest.mark.parametrize("length", [BODY - 1, BODY])
async def test_body_at_or_under_the_cap_is_complete(era: str, length: int) -> None:
    message_id = text_body_of_length(length)
    async with demo_client(era) as client:
        result = await client.call("mail_read", {"message_id": ref(message_id)})
    data = result["structuredContent"]
    assert result["isError"] is False and "incomplete" not in data
    assert data["message"]["body"] == expected_body_text(message_id)


async def test_body_one_over_the_cap_is_clipped_then_continued(era: str) -> None:
    message_id = text_body_of_length(BODY + 1)
    full = body_of(demo_messages()[message_id])[1]
    async with demo_client(era) as client:
        first = await client.structured("mail_read", {"message_id": ref(message_id)})
        assert first["skipped"]["text"]["total_chars"] == BODY + 1
        assert first["skipped"]["text"]["next_offset"] == BODY
        rest = await client.call("mail_read", {"message_id": ref(message_id), "body_offset": BODY})
    assert rest["isError"] is False
    assert rest["structuredContent"]["message"]["body"] == full[-1]


async def test_body_over_the_cap_is_clipped_and_continued(era: str) -> None:
    """The longest text body of the demo, served in 10,000-character windows."""
    candidates = {
        mid: expected_body_text(mid)
        for mid, doc in demo_messages().items()
        if body_of(doc)[0] == "text"
    }
    message_id = max(candidates, key=lambda mid: len(candidates[mid]))
    full = candidates[message_id]
    assert len(full) > BODY
    async with demo_client(era) as client:
        first = await client.call("mail_read", {"message_id": ref(message_id)})
        data = first["structuredContent"]
        assert first["isError"] is True and data["incomplete"] is True
        text = data["skipped"]["text"]
        assert text == {
            "field": "message.body",
            "total_chars": len(full),
            "offset": 0,
            "returned_chars": BODY,
            "next_offset": BODY,
        }
        assert data["message"]["body"] == full[:BODY]
        rest = await client.structured(
            "mail_read", {"message_id": ref(message_id), "body_offset": BODY}
        )
    assert rest["message"]["body"] == full[BODY:]
    assert "incomplete" not in rest


def _lone_surrogates(line: bytes) -> list[bytes]:
    high = re.compile(rb"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})", re.IGNORECASE)
    low = re.compile(rb"(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}", re.IGNORECASE)
    return high.findall(line) + low.findall(line)


async def test_emoji_body_is_clipped_on_a_code_point_and_round_trips(era: str) -> None:
    message_id = emoji_boundary_message()
    full = expected_body_text(message_id)
    assert len(full) > BODY
    async with demo_client(era) as client:
        wire_before = len(client.wire)
        first = await client.structured("mail_read", {"message_id": ref(message_id)})
        line = bytes(client.wire[wire_before:])
        rest = await client.structured(
            "mail_read",
            {"message_id": ref(message_id), "body_offset": first["skipped"]["text"]["next_offset"]},
        )
    assert b"\\ud83c\\udf89" in line or "\U0001f389".encode() in line
    assert _lone_surrogates(line) == []
    window = first["message"]["body"]
    assert len(window) == BODY
    window.encode("utf-8")  # strict: a lone surrogate would raise
    assert json.loads(json.dumps(window, ensure_ascii=True)) == window
    assert window + rest["message"]["body"] == full
    assert "incomplete" not in rest


async def test_emoji_boundary_falls_between_the_two_emoji() -> None:
    message_id = emoji_boundary_message()
    async with demo_client() as client:
        first = await client.structured("mail_read", {"message_id": ref(message_id)})
        rest = await client.structured(
            "mail_read", {"message_id": ref(message_id), "body_offset": BODY}
        )
    assert first["message"]["body"].endswith("\U0001f389")
    assert rest["message"]["body"].startswith("\U0001f60a")


async def test_long_html_body_reads_as_text_and_continues_to_the_end(era: str) -> None:
    message_id = longest_html_message()
    full = expected_body_text(message_id)
    assert len(full) > BODY
    parts = []
    async with demo_client(era) as client:
        offset: int | None = 0
        while offset is not None:
            data = await client.structured(
                "mail_read",
                {"message_id": ref(message_id), "body_offset": offset, "detail": "full"},
            )
            body = data["message"]["body"]
            assert set(body) == {"text", "total_chars"} and body["total_chars"] == len(full)
            assert not re.search(
                r"<\s*/?\s*(html|body|div|p|table|img|a|span|td|style|script)\b",
                body["text"],
                re.I,
            )
            parts.append(body["text"])
            offset = data.get("skipped", {}).get("text", {}).get("next_offset")
            assert len(parts) <= 5
    assert "".join(parts) == full
    assert len(parts) == -(-len(full) // BODY)


async def test_body_offset_past_the_end_is_an_actionable_error(era: str) -> None:
    message_id = longest_html_message()
    total = len(expected_body_text(message_id))
    async with demo_client(era) as client:
        error = await client.error(
            "mail_read", {"message_id": ref(message_id), "body_offset": total}
        )
        far = await client.error("mail_read", {"message_id": ref(message_id), "body_offset": 10**9})
    assert error["error_code"] == "invalid_arguments"
    assert str(total) in error["message"] and "body_offset" in error["hint"]
    assert far["error_code"] == "invalid_arguments"


async def test_mail_read_clips_long_fields_and_lists(era: str) -> None:
    long_subject = message_where(lambda d: len(d.get("subject") or "") > DEFAULT_LIMITS.field_chars)
    many = message_where(
        lambda d: len(d.get("toRecipients") or []) > DEFAULT_LIMITS.list_field_items
    )
    async with demo_client(era) as client:
        subject = await client.structured(
            "mail_read", {"message_id": ref(long_subject), "detail": "full"}
        )
        recipients = await client.structured(
            "mail_read", {"message_id": ref(many), "detail": "full"}
        )
    assert len(subject["message"]["subject"]) == DEFAULT_LIMITS.field_chars
    assert {
        "path": "message.subject",
        "original_chars": len(demo_messages()[long_subject]["subject"]),
        "kept_chars": DEFAULT_LIMITS.field_chars,
    } in subject["skipped"]["fields"]
    assert len(recipients["message"]["to"]) == DEFAULT_LIMITS.list_field_items
    assert {
        "path": "message.to",
        "original_items": len(demo_messages()[many]["toRecipients"]),
        "kept_items": DEFAULT_LIMITS.list_field_items,
    } in recipients["skipped"]["fields"]


# --- mail_read: attachments ---------------------------------------------------------------------


async def test_attachment_bytes_never_reach_the_result(era: str) -> None:
    """The canned file sends ``contentBytes`` although they were not asked for: the backend
    picks the neutral fields by name, so the bytes are never part of the result (0.2
    reported them as removed; now nothing of an unasked field is looked at)."""
    message_id = message_with_attachment_bytes()
    raw = attachments_of(message_id)
    async with demo_client(era) as client:
        result, sent = await client.requests_during("mail_read", {"message_id": ref(message_id)})
    data = result["structuredContent"]
    assert [a["id"] for a in data["attachments"]] == [ref(a["id"]) for a in raw]
    secret_bytes = [a["contentBytes"] for a in raw if "contentBytes" in a]
    assert secret_bytes
    for data_bytes in secret_bytes:
        assert data_bytes[:40] not in result["content"][0]["text"]
    assert "contentbytes" not in result["content"][0]["text"].lower()
    for index, attachment in enumerate(data["attachments"]):
        assert set(attachment) <= {"id", "name", "kind", "content_type", "size", "inline"}
        assert attachment["name"] == raw[index]["name"]
    attachment_requests = [u for u in sent if u.split("?")[0].endswith("/attachments")]
    assert len(attachment_requests) == 1
    assert "contentBytes" not in attachment_requests[0]
    assert "$select=" in attachment_requests[0]


async def test_attachment_kinds_are_listed_as_metadata() -> None:
    with_attachments = [
        mid
        for mid, doc in demo_messages().items()
        if doc.get("hasAttachments") and attachments_of(mid)
    ]
    kinds = {}
    for mid in with_attachments:
        for attachment in attachments_of(mid):
            kinds.setdefault(attachment.get("@odata.type"), mid)
    assert len(kinds) >= 3, kinds
    neutral = {
        "#microsoft.graph.fileAttachment": "file",
        "#microsoft.graph.itemAttachment": "message",
        "#microsoft.graph.referenceAttachment": "reference",
    }
    async with demo_client() as client:
        for kind, mid in sorted(kinds.items()):
            data = await client.structured("mail_read", {"message_id": ref(mid), "detail": "full"})
            listed = {a["kind"] for a in data["attachments"]}
            assert neutral[kind] in listed
            for attachment in data["attachments"]:
                assert set(attachment) == {
                    "id",
                    "name",
                    "kind",
                    "content_type",
                    "size",
                    "inline",
                    "content_id",
                }


async def test_message_without_attachments_asks_for_none() -> None:
    message_id = longest_html_message()
    assert not demo_messages()[message_id].get("hasAttachments")
    async with demo_client() as client:
        result, sent = await client.requests_during("mail_read", {"message_id": ref(message_id)})
    assert "attachments" not in result["structuredContent"]
    assert len(sent) == 1
    assert client.transport.requests[-1].headers["prefer"] == (
        'outlook.body-content-type="text", IdType="ImmutableId"'
    )


# --- files --------------------------------------------------------------------------------------


async def test_files_list_root_two_pages(era: str) -> None:
    expected = root_ids()
    async with demo_client(era) as client:
        result, sent = await client.requests_during("files_list", {})
        first = result["structuredContent"]
        assert len(sent) == 1 and len(first["items"]) == CAP
        items = skipped_items(first)
        assert items["more_pages"] is True and "count" not in items
        result, sent = await client.requests_during("files_list", {"cursor": items["cursor"]})
        second = result["structuredContent"]
    assert len(sent) == 1 and "%24skiptoken=" in sent[0]
    assert "items" not in second.get("skipped", {})
    assert second["folder"] == first["folder"] == "/", "the cursor alone keeps the folder"
    ids = [i["id"] for i in rows(first, "items") + rows(second, "items")]
    assert ids == [ref(native) for native in expected] and len(set(ids)) == len(ids)
    # the demo sends every file's download and thumbnail URLs: never picked, never shown
    for data in (first, second):
        assert "removed" not in data.get("skipped", {})
        assert "downloadurl" not in json.dumps(data).lower()
        assert any(item["type"] != "folder" for item in rows(data, "items"))


async def test_files_list_by_path_and_by_id_agree(era: str) -> None:
    reports = drive_item_by_path("Documents/Reports")
    expected = ids_of("/me/drive/root:/Documents/Reports:/children")
    async with demo_client(era) as client:
        by_path, sent_path = await client.requests_during(
            "files_list", {"path": "Documents/Reports", "detail": "full"}
        )
        by_id, sent_id = await client.requests_during(
            "files_list", {"item_id": ref(reports["id"]), "detail": "full"}
        )
    assert [i["id"] for i in by_path["structuredContent"]["items"]] == [ref(n) for n in expected]
    assert by_id["structuredContent"]["items"] == by_path["structuredContent"]["items"]
    assert "/root:/Documents/Reports:/children" in sent_path[0]
    assert f"/items/{reports['id']}/children" in sent_id[0]
    for item in by_path["structuredContent"]["items"]:
        assert (
            {"id", "name", "kind", "path", "parent", "modified"}
            <= set(item)
            <= {
                "id",
                "name",
                "kind",
                "path",
                "parent",
                "parent_id",
                "size",
                "mime_type",
                "children",
                "created",
                "modified",
                "modified_by",
                "web_link",
            }
        )
        assert item["parent"] == "/Documents/Reports"
        assert item["path"] == f"/Documents/Reports/{item['name']}"
        assert item["parent_id"] == ref(reports["id"])


@pytest.mark.parametrize("path", ["../Documents", "Documents//Reports", "a:b", "/"])
async def test_files_bad_paths_are_actionable_errors(path: str) -> None:
    async with demo_client() as client:
        error = await client.error("files_list", {"path": path})
        assert client.transport.requests == []
    assert error["error_code"] == "invalid_arguments" and error["hint"]


def text_file() -> dict[str, Any]:
    """The demo's text file of exactly 10,001 characters."""
    item = drive_item_by_path("Documents/Notes de réunion – Tōkyō.txt")
    assert len(download_bytes(item["id"]).decode("utf-8")) == BODY + 1
    return item


async def test_files_read_text_and_offset_continuation(era: str) -> None:
    item = text_file()
    full = download_bytes(item["id"]).decode("utf-8")
    async with demo_client(era) as client:
        first, sent = await client.requests_during("files_read", {"item_id": ref(item["id"])})
        data = first["structuredContent"]
        assert data["content"]["returned"] is True
        shown = data["content"]["text"]
        # the window ends between words, at most BODY characters in
        assert full.startswith(shown) and BODY - 60 < len(shown) <= BODY and shown[-1].isspace()
        cut = len(shown.encode("utf-8"))
        total = len(full.encode("utf-8"))
        assert data["skipped"]["text"] == {
            "field": "content.text",
            "next_offset": cut,
            "bytes_after": total - cut,
            "note": "offsets are bytes; a negative offset reads from the end",
        }
        assert (data["content"]["from_byte"], data["content"]["to_byte"]) == (0, cut)
        rest = await client.structured("files_read", {"item_id": ref(item["id"]), "offset": cut})
    assert rest["content"]["text"] == full[len(shown) :]
    assert rest["skipped"]["text"]["bytes_before"] == cut
    assert "next_offset" not in rest["skipped"]["text"]
    assert data["content"]["text"] + rest["content"]["text"] == full
    download = [r for r in client.transport.requests if r.url.host != "graph.microsoft.com"]
    assert download and all("authorization" not in r.headers for r in download)
    assert len(sent) == 3  # the item, its /content (302), the download host


async def test_files_read_by_path(era: str) -> None:
    item = text_file()
    full = download_bytes(item["id"]).decode("utf-8")
    async with demo_client(era) as client:
        result, sent = await client.requests_during(
            "files_read", {"path": "/Documents/Notes de réunion – Tōkyō.txt"}
        )
    data = result["structuredContent"]
    assert data["item"]["id"] == ref(item["id"])
    assert data["item"]["path"] == "/Documents/Notes de réunion – Tōkyō.txt"
    shown = data["content"]["text"]
    assert full.startswith(shown) and BODY - 60 < len(shown) <= BODY
    assert "/root:/Documents/Notes%20de%20r%C3%A9union%20%E2%80%93%20T%C5%8Dky%C5%8D.txt" in sent[0]


@contextmanager
def resource_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record (not raise) ResourceWarnings of the block, garbage included."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield caught
        gc.collect()


async def read_server_log(era: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """files_read of the demo's 2,600,000-byte log: the first window and the last one."""
    log = drive_item_by_path("server.log")
    async with demo_client(era) as client:
        first = await client.call("files_read", {"item_id": ref(log["id"])})
        tail = await client.structured("files_read", {"item_id": ref(log["id"]), "offset": -BODY})
    return log, first, tail


async def test_files_read_reaches_the_end_of_a_file_over_the_byte_cap(era: str) -> None:
    """0.2 read only the first 2,000,000 bytes: the log's last 600 KB could not be reached."""
    with resource_warnings():  # see the next test
        log, first, tail = await read_server_log(era)
    full = download_bytes(log["id"])  # the fixture host ignores Range: 200, the whole body
    assert log["size"] == len(full) > DEFAULT_LIMITS.graph_body_bytes
    assert first["isError"] is True
    data = first["structuredContent"]
    shown = data["content"]["text"]
    assert full.startswith(shown.encode("ascii")) and BODY - 200 < len(shown) <= BODY
    assert data["skipped"]["text"]["next_offset"] == len(shown)
    assert data["skipped"]["text"]["bytes_after"] == log["size"] - len(shown)
    # -BODY falls inside a word: the window starts at that word's first byte
    start = tail["content"]["from_byte"]
    assert (
        log["size"] - BODY - 200 < start <= log["size"] - BODY and full[start - 1 : start].isspace()
    )
    assert tail["content"]["text"] == full[start:].decode("ascii")
    assert tail["content"]["to_byte"] == tail["content"]["total_bytes"] == log["size"]
    assert tail["skipped"]["text"]["bytes_before"] == start
    assert "next_offset" not in tail["skipped"]["text"], "the window ends at the end of the file"


async def test_partial_download_leaves_no_half_read_generators() -> None:
    with resource_warnings() as caught:
        await read_server_log(MODERN)
    assert [str(w.message)[:100] for w in caught] == []


async def test_files_read_of_a_binary_file_is_metadata_only(era: str) -> None:
    png = drive_item_by_path("Documents/Reports/2026/Report chart.png")
    async with demo_client(era) as client:
        result, sent = await client.requests_during("files_read", {"item_id": ref(png["id"])})
    data = result["structuredContent"]
    assert data["item"]["name"] == png["name"] and data["item"]["mime_type"] == "image/png"
    assert data["content"]["returned"] is False and "web_link" in data["content"]["reason"]
    assert len(sent) == 1, "a binary file is never downloaded"
    # the demo sends the item's download URL: never picked, so never shown nor reported
    assert "skipped" not in data and "downloadurl" not in json.dumps(data).lower()


async def test_files_read_of_a_canned_pdf_returns_its_text(era: str) -> None:
    pdf = drive_item_by_path("Documents/Contract – Fabrikam MSA.pdf")
    async with demo_client(era) as client:
        data = await client.structured("files_read", {"item_id": ref(pdf["id"])})
    assert data["content"]["format"] == "pdf"
    assert data["content"]["text"] == "## Page 1\nContract ? Fabrikam MSA\n"
    assert data["content"]["parts"] == [{"name": "Page 1", "offset": 0}]


async def test_files_read_of_a_folder_points_to_files_list() -> None:
    reports = drive_item_by_path("Documents/Reports")
    async with demo_client() as client:
        data = await client.structured("files_read", {"item_id": ref(reports["id"])})
    assert data["content"]["returned"] is False and "files_list" in data["content"]["reason"]


# --- ids and errors ----------------------------------------------------------------------------


async def test_malformed_and_missing_ids_are_errors_with_provider_codes(era: str) -> None:
    malformed = error_path(400, "/me/messages/")
    missing = error_path(404, "/me/messages/")
    async with demo_client(era) as client:
        bad = await client.error("mail_read", {"message_id": ref(malformed)})
        gone = await client.error("mail_read", {"message_id": ref(missing)})
        unknown = await client.error("files_read", {"item_id": ref("01BYE5RZNOSUCHITEM")})
    assert (bad["error_code"], bad["status"], bad["provider_code"]) == (
        "provider_error",
        400,
        "ErrorInvalidIdMalformed",
    )
    assert "malformed" in bad["hint"] and bad["request_id"]
    assert (gone["error_code"], gone["status"], gone["provider_code"]) == (
        "provider_error",
        404,
        "ErrorItemNotFound",
    )
    assert gone["hint"] and gone["request_id"] and gone["retry_safe"] is False
    assert (unknown["status"], unknown["provider_code"]) == (404, "itemNotFound")


async def test_throttled_id_fails_fast_with_retry_after(era: str) -> None:
    throttled = error_path(429, "/me/messages/")
    async with demo_client(era) as client:
        error = await client.error("mail_read", {"message_id": ref(throttled)})
        sent = client.transport.urls()
    assert error["error_code"] == "throttled"
    assert error["status"] == 429 and error["provider_code"] == "TooManyRequests"
    assert error["retry_after_seconds"] == pytest.approx(2.128)
    assert error["retry_safe"] is True and "retry in 3 s" in error["hint"]
    assert len(sent) == 1, "a Retry-After over the ceiling is not waited out"


async def test_expired_token_answer_is_an_auth_hint(era: str) -> None:
    expired = error_path(401, "/me/drive/items/")
    async with demo_client(era) as client:
        error = await client.error("files_read", {"item_id": ref(expired)})
    assert (error["status"], error["provider_code"]) == (401, "InvalidAuthenticationToken")
    assert "mfconnector login" in error["hint"]


# --- cursors: tampered, foreign, another tool's -------------------------------------------------


def cursor_payload(cursor: str) -> dict[str, Any]:
    payload = cursor.partition(".")[0]
    doc: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return doc


def with_payload(cursor: str, doc: dict[str, Any]) -> str:
    """The cursor with its payload rewritten and its tag kept: what a forger can make."""
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + cursor.partition(".")[2]


async def archive_cursor(client: DemoClient) -> str:
    data = await client.structured("mail_list", {"folder": "archive"})
    cursor: str = skipped_items(data)["cursor"]
    return cursor


async def test_tampered_cursors_are_refused_before_any_request(era: str) -> None:
    async with demo_client(era) as client:
        cursor = await archive_cursor(client)
        doc = cursor_payload(cursor)
        link = doc["p"]["link"]
        assert doc["t"] == "mail_list" and link.startswith("https://graph.microsoft.com/v1.0/")
        payload, _, tag = cursor.partition(".")
        flipped = ("f" if cursor[0] != "f" else "g") + cursor[1:]
        forged = {
            "another host": {
                **doc,
                "p": {"link": link.replace("graph.microsoft.com", "evil.example")},
            },
            "another path": {
                **doc,
                "p": {"link": "https://graph.microsoft.com/v1.0/me/drive/root/children"},
            },
            "another tool": {**doc, "t": "mail_search"},
            "another offset": {**doc, "k": doc["k"] + 1},
        }
        cases = {
            "one character changed": (flipped, "altered or cut short"),
            "tag cut short": (cursor[:-2], "altered or cut short"),
            "payload cut short": (payload[:-4] + "." + tag, "altered or cut short"),
            "no tag": (payload, "altered or cut short"),
            "not base64": ("%%%", "not a cursor's text"),
            "an earlier run's": (
                with_payload(cursor, {**doc, "i": "earlier"}),
                "earlier run of the server",
            ),
            **{label: (with_payload(cursor, value), "altered") for label, value in forged.items()},
            "other filters": (cursor, "other arguments"),
        }
        before = len(client.transport.requests)
        for label, (tampered, words) in cases.items():
            arguments = {"folder": "archive", "cursor": tampered}
            if label == "other filters":
                arguments["unread_only"] = True
            result = await client.call("mail_list", arguments)
            assert result["isError"] is True, label
            error = json.loads(result["content"][0]["text"])["error"]
            assert error["error_code"] == "invalid_arguments", label
            assert words in error["message"], (label, error["message"])
            assert "cursor" in error["message"] and error["hint"], label
        assert len(client.transport.requests) == before, "a refused cursor must send nothing"
        # the cursor of one tool is not accepted by another, which names the right one
        error = await client.error("files_list", {"cursor": cursor})
        assert "belongs to `mail_list`" in error["message"]
        assert len(client.transport.requests) == before
        # the untampered cursor, alone or with the same arguments, is accepted
        await client.structured("mail_list", {"cursor": cursor})
        await client.structured("mail_list", {"cursor": cursor, "folder": "archive", "limit": 5})


async def test_a_validly_signed_cursor_still_sends_the_token_only_to_graph() -> None:
    """Belt and braces: even a cursor signed with the server's own key is refused when its
    link leaves the Graph root (the key never leaves the process, but the check stays)."""
    async with demo_client() as client:
        cursor = await archive_cursor(client)
        doc = cursor_payload(cursor)
        before = len(client.transport.requests)
        scope = {"account": TAG.tag, "mailbox": None}
        link = doc["p"]["link"]
        for url in (
            link.replace("graph.microsoft.com", "graph.evil.example"),
            link.replace("https://", "http://"),
            link.replace("graph.microsoft.com", "graph.microsoft.com:8443"),
            link.replace("https://", "https://graph.microsoft.com@evil.example/"),
            link.replace("/v1.0/", "/beta/"),
        ):
            signed = client.ctx.cursors.issue(
                tool="mail_list",
                scope=scope,
                arguments={"folder": "archive"},
                position={"link": url},
            )
            error = await client.error("mail_list", {"cursor": signed})
            assert "does not point into Microsoft Graph" in error["message"], url
        assert len(client.transport.requests) == before


async def test_every_single_character_edit_of_a_cursor_stays_inside_graph() -> None:
    """Each position of a real cursor replaced by another base64url character: the server
    answers (an error or a page) and never sends anything outside the Graph root."""
    async with demo_client() as client:
        cursor = await archive_cursor(client)
        alphabet = "AQgw-_"
        for position in range(0, len(cursor), 3):
            replacement = next(c for c in alphabet if c != cursor[position])
            edited = cursor[:position] + replacement + cursor[position + 1 :]
            result = await client.call("mail_list", {"cursor": edited, "folder": "archive"})
            assert "content" in result
        for sent in client.transport.requests:
            assert is_graph_url(str(sent.url), demo_set().graph_root), sent.url.host


# --- the isError / --allow-partial rule ----------------------------------------------------------


def without_cursor(structured: dict[str, Any]) -> dict[str, Any]:
    items = structured.get("skipped", {}).get("items")
    if isinstance(items, dict) and isinstance(items.get("cursor"), str):
        return {
            **structured,
            "skipped": {**structured["skipped"], "items": {**items, "cursor": "…"}},
        }
    return structured


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("mail_list", {"folder": "archive"}),
        ("files_list", {}),
        ("mail_read", {"message_id": "LONGEST_HTML"}),
        ("files_read", {"item_id": "TEXT_FILE"}),
        ("mail_folders", {}),
    ],
)
async def test_allow_partial_changes_only_is_error(
    era: str, tool: str, arguments: dict[str, Any]
) -> None:
    if arguments.get("message_id") == "LONGEST_HTML":
        arguments = {"message_id": ref(longest_html_message())}
    if arguments.get("item_id") == "TEXT_FILE":
        arguments = {"item_id": ref(text_file()["id"])}
    async with demo_client(era) as strict:
        blocked = await strict.call(tool, arguments)
    async with demo_client(era, allow_partial=True) as lenient:
        allowed = await lenient.call(tool, arguments)
    # Each server process signs cursors with its own key: compare all but the cursor.
    assert without_cursor(allowed["structuredContent"]) == without_cursor(
        blocked["structuredContent"]
    )
    texts = [json.loads(result["content"][0]["text"]) for result in (allowed, blocked)]
    assert without_cursor(texts[0]) == without_cursor(texts[1])
    incomplete = blocked["structuredContent"].get("incomplete") is True
    assert blocked["isError"] is incomplete
    assert allowed["isError"] is False


# --- the global rule -----------------------------------------------------------------------------


def test_demo_really_carries_the_secrets_that_must_not_leak() -> None:
    text = CANNED.read_text(encoding="utf-8")
    assert text.count("tempauth=FAKE") > 100
    assert '"@microsoft.graph.downloadUrl"' in text and '"contentBytes"' in text
    assert '"thumbnails"' in text and "download.aspx" in text


def test_zz_nothing_the_server_wrote_carried_a_secret() -> None:
    """Runs last: every byte of every session of this module, and every log line."""
    everything = b"".join(WIRE)
    assert len(everything) > 1_000_000, "the scan should cover the whole module's output"
    for key in (b'"items":[', b'"messages":[', b'"attachments":[', b'"content":{"returned":true'):
        assert key in everything, key
    assert_no_secrets(everything)
    logs = "\n".join(LOG_LINES).lower()
    for word in FORBIDDEN:
        assert word not in logs, f"{word!r} reached the logs"


async def test_files_read_needs_an_id_or_a_path(era: str) -> None:
    async with demo_client(era) as client:
        error = await client.error("files_read", {})
        assert client.transport.requests == []
    assert error["error_code"] == "invalid_arguments"
    assert "item_id" in error["message"] and "path" in error["message"]


async def test_a_continued_listing_keeps_the_context_of_the_call_that_began_it(era: str) -> None:
    """0.2 dropped the folder when only the cursor was passed (triage: test_demo_tools.py)."""
    async with demo_client(era) as client:
        first = await client.structured("mail_list", {"folder": "archive", "limit": 5})
        second = await client.structured("mail_list", {"cursor": skipped_items(first)["cursor"]})
    assert first["folder"] == second["folder"] == "archive"
    assert rows(second)[0]["id"] not in {m["id"] for m in rows(first)}


async def test_account_status_shows_the_limits_that_shape_results() -> None:
    async with demo_client() as client:
        status = await client.structured("account_status", {})
    assert status["limits"]["list_items"] == DEFAULT_LIMITS.list_items
    assert status["limits"]["body_chars"] == DEFAULT_LIMITS.body_chars
    assert status["limits"]["result_bytes"] == DEFAULT_LIMITS.result_bytes
    assert "graph_retries" not in status["limits"]
