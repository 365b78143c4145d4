"""Fixture mode: the loader's refusals, the transport's answers, and the bundled demo."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mfconnector.errors import FixtureError
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import (
    FIXTURE_SCHEMA,
    FixtureSet,
    load_fixtures,
    parse_fixtures,
)
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import DEFAULT_LIMITS

CHUNK_BYTES = DEFAULT_LIMITS.fixture_chunk_bytes
DELAY_MAX_MS = DEFAULT_LIMITS.fixture_delay_max_ms

ROOT = DEFAULT_GRAPH_ROOT
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "canned.json"
"""The 0.1 demo recording, kept as canned test data for fixture mode (``--demo`` is the
emulator since 0.2)."""
DOWNLOAD = (
    "https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/_layouts/15/"
    "download.aspx?UniqueId=1234&Translate=false&tempauth=FAKE.SECRET&ApiVersion=2.0"
)


# --- helpers ------------------------------------------------------------------------------


def write(tmp_path: Path, doc: Any, name: str = "fx.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def get(path: str, response: dict[str, Any] | None = None, **request: Any) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "path": path, **request},
        "response": response if response is not None else {"json": {"ok": True}},
    }


def refusal(tmp_path: Path, doc: Any) -> str:
    path = write(tmp_path, doc)
    with pytest.raises(FixtureError) as caught:
        load_fixtures(path)
    message = str(caught.value)
    assert str(path) in message
    assert "\n" not in message
    return message


def transport(*entries: dict[str, Any], root: str | None = None) -> FixtureTransport:
    doc: dict[str, Any] = {"responses": list(entries)}
    if root is not None:
        doc["graphRoot"] = root
    return FixtureTransport(parse_fixtures(json.dumps(doc).encode()))


@pytest.fixture(scope="module")
def demo_set() -> FixtureSet:
    return load_fixtures(DEMO)


@pytest.fixture(scope="module")
def demo_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DEMO.read_text(encoding="utf-8"))
    return doc


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                yield key, item
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)


def json_body(doc: dict[str, Any], path: str, query: dict[str, str] | None = None) -> Any:
    for item in doc["responses"]:
        request = item["request"]
        if request.get("path") == path and request.get("query", {}) == (query or {}):
            return item["response"].get("json")
    raise AssertionError(f"no entry for {path} {query}")


# --- the transport ------------------------------------------------------------------------


async def test_inbox_first_page_ignores_select_top_orderby(demo_set: FixtureSet) -> None:
    url = (
        f"{ROOT}/me/mailFolders/inbox/messages?%24select=id%2Csubject&%24top=50"
        "&%24orderby=receivedDateTime%20desc"
    )
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        response = await client.get(url)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert int(response.headers["content-length"]) == len(response.content)
    assert response.headers["request-id"].startswith("fixture-")
    page = response.json()
    assert len(page["value"]) == 50
    assert page["@odata.nextLink"].endswith("%24skip=50")


async def test_inbox_second_page_via_next_link(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        first = (await client.get(f"{ROOT}/me/mailFolders/inbox/messages")).json()
        second = (await client.get(first["@odata.nextLink"])).json()
    assert "@odata.nextLink" not in second
    assert 10 <= len(second["value"]) < 50
    ids = [m["id"] for m in first["value"] + second["value"]]
    assert len(ids) == len(set(ids)) >= 60
    dates = [m["receivedDateTime"] for m in first["value"] + second["value"]]
    assert dates == sorted(dates, reverse=True)


async def test_folder_by_id_and_by_well_known_name_agree(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        inbox = (await client.get(f"{ROOT}/me/mailFolders/inbox")).json()
        by_id = (await client.get(f"{ROOT}/me/mailFolders/{inbox['id']}")).json()
        named = (await client.get(f"{ROOT}/me/mailFolders/inbox/messages")).json()
        quoted = inbox["id"].replace("=", "%3D")
        listed = (await client.get(f"{ROOT}/me/mailFolders/{quoted}/messages")).json()
    assert by_id == inbox
    assert [m["id"] for m in listed["value"]] == [m["id"] for m in named["value"]]
    assert quoted in listed["@odata.nextLink"]


async def test_significant_query_keys_must_be_named(demo_set: FixtureSet) -> None:
    base = f"{ROOT}/me/mailFolders/inbox/messages"
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        unread = await client.get(f"{base}?$filter=isRead%20eq%20false&$top=50")
        plus = await client.get(f"{base}?$filter=isRead+eq+false")
        other = await client.get(f"{base}?$filter=importance%20eq%20'high'")
    assert unread.status_code == 200
    assert unread.json()["value"]
    assert all(not m["isRead"] for m in unread.json()["value"])
    # '+' is not a space to Graph, so the canned '%20' filter does not answer it.
    assert plus.status_code == 404
    assert other.status_code == 404
    assert "$filter=\"importance eq 'high'\"" in other.json()["error"]["message"]


async def test_unfiltered_entry_never_answers_a_filtered_request() -> None:
    fixtures = transport(get("/me/messages", {"json": {"value": []}}))
    async with httpx.AsyncClient(transport=fixtures) as client:
        plain = await client.get(f"{ROOT}/me/messages?$top=5&$select=id&$count=true")
        searched = await client.get(f'{ROOT}/me/messages?$search="budget"')
        skipped = await client.get(f"{ROOT}/me/messages?%24skip=50")
    assert plain.status_code == 200
    assert searched.status_code == 404
    assert skipped.status_code == 404
    assert '$search="\\"budget\\""' in searched.json()["error"]["message"]


async def test_entry_naming_more_query_keys_wins() -> None:
    fixtures = transport(
        get("/me/messages", {"json": {"value": [], "which": "plain"}}),
        get("/me/messages", {"json": {"value": [], "which": "top"}}, query={"$top": "5"}),
        get("/me/messages", {"json": {"which": "both"}}, query={"$top": "5", "$count": "true"}),
    )
    async with httpx.AsyncClient(transport=fixtures) as client:
        assert (await client.get(f"{ROOT}/me/messages")).json()["which"] == "plain"
        assert (await client.get(f"{ROOT}/me/messages?$top=5")).json()["which"] == "top"
        both = await client.get(f"{ROOT}/me/messages?$count=true&$top=5")
        assert both.json()["which"] == "both"
        assert (await client.get(f"{ROOT}/me/messages?$top=9")).json()["which"] == "plain"


async def test_drive_paths_are_matched_percent_decoded(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        hashed = await client.get(f"{ROOT}/me/drive/root:/Project%20%2342%20notes.md")
        accents = await client.get(
            f"{ROOT}/me/drive/root:/Caf%C3%A9%20menu%20%E2%80%93%20f%C3%A9vrier.txt"
        )
        nested = await client.get(f"{ROOT}/me/drive/root:/Documents/Reports:/children")
        search = await client.get(f"{ROOT}/me/drive/root/search(q='budget')")
    assert hashed.json()["name"] == "Project #42 notes.md"
    assert accents.json()["name"] == "Café menu – février.txt"
    assert {item["name"] for item in nested.json()["value"]} >= {"2026"}
    assert "Budget 2027 draft.xlsx" in {hit["name"] for hit in search.json()["value"]}


async def test_item_path_with_or_without_closing_colon() -> None:
    fixtures = transport(get("/me/drive/root:/Documents/a b.txt", {"json": {"id": "1"}}))
    async with httpx.AsyncClient(transport=fixtures) as client:
        bare = await client.get(f"{ROOT}/me/drive/root:/Documents/a%20b.txt")
        closed = await client.get(f"{ROOT}/me/drive/root:/Documents/a%20b.txt:")
        other = await client.get(f"{ROOT}/me/drive/root:/Documents/a%20b.txt::")
    assert bare.json() == closed.json() == {"id": "1"}
    assert other.status_code == 404


def test_closing_colon_variants_are_duplicates(tmp_path: Path) -> None:
    entries = [get("/me/drive/root:/a.txt"), get("/me/drive/root:/a.txt:")]
    assert "duplicate of responses[0]" in refusal(tmp_path, {"responses": entries})


async def test_root_children_second_page_via_skiptoken(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        first = (await client.get(f"{ROOT}/me/drive/root/children?$top=50")).json()
        second = (await client.get(first["@odata.nextLink"])).json()
    assert len(first["value"]) == 50
    assert "%24skiptoken=" in first["@odata.nextLink"]
    assert len(first["value"]) + len(second["value"]) >= 62
    assert "@odata.nextLink" not in second


async def test_content_redirect_then_download_without_token(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        item = (await client.get(f"{ROOT}/me/drive/root:/Documents/forecast.py")).json()
        redirect = await client.get(
            f"{ROOT}/me/drive/items/{item['id']}/content",
            headers={"Authorization": "Bearer t0ken"},
        )
        assert redirect.status_code == 302
        location = redirect.headers["location"]
        assert "tempauth=" in location
        assert location == item["@microsoft.graph.downloadUrl"]
        download = await client.get(location)
    assert download.status_code == 200
    assert download.text.startswith("def forecast(")
    assert int(download.headers["content-length"]) == item["size"] == len(download.content)


async def test_binary_download_is_served_decoded(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        item = (await client.get(f"{ROOT}/me/drive/root:/Org chart.png")).json()
        download = await client.get(item["@microsoft.graph.downloadUrl"])
    assert download.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(download.content) == item["size"]


async def test_repeat_body_streams_in_bounded_chunks(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        item = (await client.get(f"{ROOT}/me/drive/root:/server.log")).json()
        sizes: list[int] = []
        async with client.stream("GET", item["@microsoft.graph.downloadUrl"]) as response:
            assert "content-length" not in response.headers  # like a chunked answer
            head = b""
            async for chunk in response.aiter_raw():
                sizes.append(len(chunk))
                if len(head) < 200:
                    head += chunk[:200]
    assert sum(sizes) == item["size"] == 2_600_000
    assert max(sizes) == CHUNK_BYTES
    assert head.startswith(b"2026-03-05T09:14:07Z INFO")


@settings(max_examples=30, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40).filter(lambda t: not re.search("[\ud800-\udfff]", t)),
    size=st.integers(min_value=0, max_value=3 * CHUNK_BYTES + 7),
)
async def test_repeat_body_is_the_exact_cycle_prefix(text: str, size: int) -> None:
    fixtures = transport(
        {
            "request": {"method": "GET", "url": "https://files.example.com/x.bin"},
            "response": {"repeat": {"text": text, "bytes": size}},
        }
    )
    unit = text.encode("utf-8")
    expected = (unit * (size // len(unit) + 1))[:size]
    async with httpx.AsyncClient(transport=fixtures) as client:
        chunks: list[bytes] = []
        async with client.stream("GET", "https://files.example.com/x.bin") as response:
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
    assert b"".join(chunks) == expected
    assert all(0 < len(chunk) <= CHUNK_BYTES for chunk in chunks)


async def test_miss_is_a_graph_shaped_404() -> None:
    fixtures = transport(get("/me", {"json": {"id": "x"}}))
    async with httpx.AsyncClient(transport=fixtures) as client:
        mail = await client.get(
            f"{ROOT}/me/messages/AAMk%3D?$select=id", headers={"client-request-id": "abc"}
        )
        folder = await client.get(f"{ROOT}/me/mailFolders/inbox/messages?$skip=50")
        drive = await client.get(f"{ROOT}/me/drive/items/01ABC")
        other = await client.get(f"{ROOT}/me/events")
    assert mail.status_code == 404
    error = mail.json()["error"]
    assert error["code"] == "ErrorItemNotFound"
    assert error["message"] == (
        "fixture mode: no canned response for GET /me/messages/AAMk= (no significant query options)"
    )
    assert error["innerError"]["request-id"] == mail.headers["request-id"]
    assert error["innerError"]["request-id"].startswith("fixture-")
    assert error["innerError"]["client-request-id"] == "abc"
    assert folder.json()["error"]["code"] == "ErrorItemNotFound"
    assert '($skip="50")' in folder.json()["error"]["message"]
    assert drive.json()["error"]["code"] == "itemNotFound"
    assert other.json()["error"]["code"] == "ResourceNotFound"
    ids = {r.headers["request-id"] for r in (mail, folder, drive, other)}
    assert len(ids) == 4


async def test_miss_on_a_download_host_never_echoes_the_url() -> None:
    fixtures = transport(get("/me"))
    async with httpx.AsyncClient(transport=fixtures) as client:
        response = await client.get(DOWNLOAD)
    assert response.status_code == 404
    message = response.json()["error"]["message"]
    assert "tempauth" not in message
    assert "FAKE.SECRET" not in message
    assert "download.aspx" not in message
    assert "contoso-my.sharepoint.com" in message


async def test_authorization_to_a_foreign_host_is_refused() -> None:
    download = {
        "request": {"method": "GET", "url": DOWNLOAD},
        "response": {"text": "secret file"},
    }
    fixtures = transport(get("/me"), download)
    async with httpx.AsyncClient(transport=fixtures) as client:
        leaked = await client.get(DOWNLOAD, headers={"Authorization": "Bearer t0ken"})
        clean = await client.get(DOWNLOAD)
        graph = await client.get(f"{ROOT}/me", headers={"Authorization": "Bearer t0ken"})
        http_graph = await client.get(
            "http://graph.microsoft.com/v1.0/me", headers={"Authorization": "Bearer t0ken"}
        )
    assert leaked.status_code == 400
    assert leaked.json()["error"]["code"] == "fixtureAuthorizationLeak"
    assert "tempauth" not in leaked.text
    assert clean.text == "secret file"
    assert clean.headers["content-type"] == "text/plain; charset=utf-8"
    assert graph.status_code == 200
    assert http_graph.json()["error"]["code"] == "fixtureAuthorizationLeak"


async def test_url_entries_match_the_whole_query_decoded() -> None:
    fixtures = transport(
        {
            "request": {"method": "GET", "url": "https://Files.Example.com:443/a%20b?x=1&y=%C3%A9"},
            "response": {"text": "hit"},
        }
    )
    async with httpx.AsyncClient(transport=fixtures) as client:
        reordered = await client.get("https://files.example.com/a b?y=é&x=1")
        extra = await client.get("https://files.example.com/a%20b?x=1&y=%C3%A9&z=2")
        missing = await client.get("https://files.example.com/a%20b?x=1")
    assert reordered.text == "hit"
    assert extra.status_code == missing.status_code == 404


async def test_custom_graph_root_and_headers() -> None:
    fixtures = transport(
        get(
            "/me",
            {
                "status": 203,
                "headers": {"Content-Type": "application/x-custom", "request-id": "r1"},
                "json": {"id": "x"},
            },
        ),
        get("/empty", {"status": 204}),
        get("/bin", {"base64": base64.b64encode(b"\x00\xff").decode()}),
        root="https://graph.microsoft.us/v1.0/",
    )
    async with httpx.AsyncClient(transport=fixtures) as client:
        me = await client.get("https://graph.microsoft.us/v1.0/me")
        empty = await client.get("https://graph.microsoft.us/v1.0/empty")
        binary = await client.get("https://graph.microsoft.us/v1.0/bin")
        global_cloud = await client.get(f"{ROOT}/me")
    assert me.status_code == 203
    assert me.headers["content-type"] == "application/x-custom"
    assert me.headers["request-id"] == "r1"
    assert empty.status_code == 204
    assert empty.headers["content-length"] == "0"
    assert binary.content == b"\x00\xff"
    assert global_cloud.status_code == 404


async def test_demo_error_entries(demo_set: FixtureSet) -> None:
    async with httpx.AsyncClient(transport=FixtureTransport(demo_set)) as client:
        throttled = await client.get(f"{ROOT}/me/messages/AAMkAGI2THROTTLED")
        expired = await client.get(f"{ROOT}/me/drive/items/01BYE5RZEXPIRED")
        missing = await client.get(f"{ROOT}/me/messages/AAMkAGI2MISSING")
    assert throttled.status_code == 429
    assert throttled.headers["retry-after"] == "2.128"
    assert throttled.json()["error"]["code"] == "TooManyRequests"
    assert expired.status_code == 401
    assert expired.json()["error"]["code"] == "InvalidAuthenticationToken"
    assert "www-authenticate" in expired.headers
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "ErrorItemNotFound"


# --- loading: what is accepted ------------------------------------------------------------


def test_minimal_file_loads_with_defaults(tmp_path: Path) -> None:
    loaded = load_fixtures(write(tmp_path, {"responses": [get("/me")]}))
    assert loaded.graph_root == ROOT
    (entry,) = loaded.entries
    assert entry.response.status == 200
    assert entry.label == "responses[0] (GET /me)"
    assert load_fixtures(write(tmp_path, {"responses": []})).entries == ()


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"responses": [get("/me")]}).encode())
    assert len(load_fixtures(path).entries) == 1


@pytest.mark.parametrize(
    ("size", "accepted"),
    [(1_999_999, True), (2_000_000, True), (2_000_001, False)],
)
def test_file_size_limit(tmp_path: Path, size: int, accepted: bool) -> None:
    assert DEFAULT_LIMITS.fixture_file_bytes == 2_000_000
    body = json.dumps({"responses": [get("/me")]}).encode()
    path = tmp_path / "sized.json"
    path.write_bytes(body + b" " * (size - len(body)))
    assert path.stat().st_size == size
    if accepted:
        assert len(load_fixtures(path).entries) == 1
    else:
        with pytest.raises(FixtureError) as caught:
            load_fixtures(path)
        assert str(caught.value) == (
            f"{path}: fixture file is larger than the 2,000,000-byte limit"
        )


def test_huge_file_is_refused_after_reading_one_byte_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(50_000_000)  # sparse: costs no disk
    reads: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Spy:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def read(self, size: int = -1) -> bytes:
            reads.append(size)
            data: bytes = self.handle.read(size)
            return data

    def spy_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return Spy(real_open(file, mode, *args, **kwargs))

    monkeypatch.setattr("builtins.open", spy_open)
    with pytest.raises(FixtureError, match="larger than the 2,000,000-byte limit"):
        load_fixtures(path)
    assert reads == [2_000_001]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match=r"nope\.json: cannot read fixture file: No such file"):
        load_fixtures(tmp_path / "nope.json")


# --- loading: every refusal names the entry and the problem --------------------------------


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"responses": [], "x": "caf\xe9"}')
    with pytest.raises(FixtureError, match=r"not UTF-8 \(invalid byte at offset 27\)"):
        load_fixtures(path)


def test_malformed_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"responses": [\n  {"request": {}\n]}', encoding="utf-8")
    with pytest.raises(FixtureError) as caught:
        load_fixtures(path)
    assert re.search(r"broken\.json: malformed JSON at line 3 column 1: ", str(caught.value))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"responses": [], "x": NaN}', "NaN is not JSON"),
        ('{"responses": [], "x": -Infinity}', "-Infinity is not JSON"),
        ('{"responses": [], "x": 1e999}', "overflows to infinity"),
        ('{"responses": [], "x": ' + "9" * 5000 + "}", "5,000 digits"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_numbers_and_nesting_that_are_not_json(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "numbers.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FixtureError, match=re.escape(fragment)):
        load_fixtures(path)


@pytest.mark.parametrize(
    ("doc", "fragments"),
    [
        ([], ["the top level must be an object, not an array"]),
        ({"responses": [], "mocks": []}, ['unknown key "mocks"', "allowed: graphRoot, responses"]),
        ({}, ['missing required key "responses"']),
        ({"responses": {}}, ["responses: must be an array, not an object"]),
        ({"responses": [], "graphRoot": 5}, ["graphRoot: must be a string URL"]),
        ({"responses": [], "graphRoot": "ftp://x/v1"}, ["must be an http(s) URL"]),
        ({"responses": [], "graphRoot": "https://h/v1?x=1"}, ["must not carry a query"]),
        ({"responses": [], "graphRoot": "https://h:99999/"}, ["is not a URL"]),
    ],
)
def test_top_level_refusals(tmp_path: Path, doc: Any, fragments: list[str]) -> None:
    message = refusal(tmp_path, doc)
    for fragment in fragments:
        assert fragment in message


def _entry(**changes: Any) -> Callable[[], dict[str, Any]]:
    """An entry for /me/messages with ``changes`` applied ('request.x' / 'response.x' / key)."""

    def build() -> dict[str, Any]:
        entry: dict[str, Any] = get("/me/messages", {"json": {"value": []}})
        for dotted, value in changes.items():
            target: dict[str, Any] = entry
            *parents, leaf = dotted.split("__")
            for parent in parents:
                target = target[parent]
            if value is _DELETE:
                del target[leaf]
            else:
                target[leaf] = value
        return entry

    return build


_DELETE = object()
MESSAGE = {"id": "m1", "subject": "Hi", "body": {"contentType": "text", "content": "x"}}
CASES: list[tuple[str, Any, list[str]]] = [
    ("entry not object", lambda: "GET /me", ["responses[1]: an entry must be an object"]),
    ("entry unknown key", _entry(mock=1), ['responses[1]: unknown key "mock"']),
    ("entry missing response", _entry(response=_DELETE), ['missing required key "response"']),
    ("request not object", _entry(request=[]), ["request must be an object, not an array"]),
    ("request unknown key", _entry(request__headers={}), ['request: unknown key "headers"']),
    ("method missing", _entry(request__method=_DELETE), ['missing required key "method"']),
    ("method POST", _entry(request__method="POST"), ['"GET" (the server is read-only)', '"POST"']),
    ("method lower", _entry(request__method="get"), ['not "get"']),
    (
        "path and url",
        _entry(request__url="https://x.example/a"),
        ['exactly one of "path" or "url"'],
    ),
    ("neither", _entry(request__path=_DELETE), ['exactly one of "path" or "url"']),
    ("path type", _entry(request__path=7), ["request.path must be a string, not a number"]),
    ("path slash", _entry(request__path="me/messages"), ['must start with "/"']),
    (
        "path query",
        _entry(request__path="/me?$top=1"),
        ["must not hold a query; use request.query"],
    ),
    ("query type", _entry(request__query=["a"]), ["request.query must be an object of strings"]),
    ("query value", _entry(request__query={"$top": 5}), ['request.query["$top"] must be a string']),
    ("query key", _entry(request__query={"": "x"}), ["request.query has an empty key"]),
    ("response type", _entry(response=None), ["response must be an object, not null"]),
    (
        "response key",
        _entry(response__body="x"),
        ['(GET /me/messages) response: unknown key "body"'],
    ),
    ("status range", _entry(response__status=600), ["response.status must be an integer 100-599"]),
    ("status bool", _entry(response__status=True), ["not true"]),
    ("status string", _entry(response__status="200"), ['not "200"']),
    ("headers type", _entry(response__headers=[]), ["response.headers must be an object"]),
    (
        "header value",
        _entry(response__headers={"X": 1}),
        ['response.headers["X"] must be a string'],
    ),
    ("header newline", _entry(response__headers={"X": "a\r\nb"}), ["printable ASCII"]),
    ("header unicode", _entry(response__headers={"X": "é"}), ["printable ASCII"]),
    ("header name", _entry(response__headers={"a b": "1"}), ["invalid header name"]),
    ("content-length", _entry(response__headers={"Content-Length": "x"}), ["whole number"]),
    ("two bodies", _entry(response__text="x"), ["more than one body: json, text"]),
    ("text type", lambda: get("/a", {"text": 5}), ["response.text must be a string"]),
    ("base64 bad", lambda: get("/a", {"base64": "***"}), ["response.base64 is not valid base64"]),
    ("base64 type", lambda: get("/a", {"base64": []}), ["response.base64 must be a string"]),
    ("repeat type", lambda: get("/a", {"repeat": "x"}), ["response.repeat must be an object"]),
    (
        "repeat too big",
        lambda: get("/a", {"repeat": {"text": "x", "bytes": 50_000_001}}),
        ["response.repeat.bytes must be an integer 0-50,000,000", "50000001"],
    ),
    (
        "repeat negative",
        lambda: get("/a", {"repeat": {"text": "x", "bytes": -1}}),
        ["response.repeat.bytes must be an integer"],
    ),
    (
        "repeat empty text",
        lambda: get("/a", {"repeat": {"text": "", "bytes": 1}}),
        ["response.repeat.text must be a non-empty UTF-8 string"],
    ),
    (
        "repeat unknown",
        lambda: get("/a", {"repeat": {"text": "x", "bytes": 1, "chunk": 2}}),
        ['response.repeat: unknown key "chunk"'],
    ),
    (
        "repeat missing",
        lambda: get("/a", {"repeat": {"text": "x"}}),
        ['missing required key "bytes"'],
    ),
    (
        "delay too long",
        _entry(response__delayMs=120_001),
        ["response.delayMs must be an integer 0-120,000", "not 120001"],
    ),
    ("delay negative", _entry(response__delayMs=-1), ["response.delayMs must be an integer"]),
    ("delay bool", _entry(response__delayMs=True), ["response.delayMs", "not true"]),
    ("delay fraction", _entry(response__delayMs=1.5), ["response.delayMs", "not 1.5"]),
    ("delay string", _entry(response__delayMs="5"), ["response.delayMs", 'not "5"']),
    (
        "value not array",
        _entry(response__json={"value": {}}),
        ["response.json.value must be an array"],
    ),
    (
        "item not object",
        _entry(response__json={"value": [MESSAGE, 3]}),
        ["response.json.value[1]: collection item must be an object, not a number"],
    ),
    (
        "item without id",
        _entry(response__json={"value": [{"subject": "x"}]}),
        ['response.json.value[0]: collection item has no string "id"'],
    ),
    (
        "item numeric id",
        _entry(response__json={"value": [{"id": 5}]}),
        ['collection item has no string "id"'],
    ),
    (
        "nextLink foreign",
        _entry(response__json={"value": [], "@odata.nextLink": "https://evil.example/v1.0/me"}),
        ["@odata.nextLink must be a URL under https://graph.microsoft.com/v1.0"],
    ),
    (
        "nextLink version",
        _entry(
            response__json={"value": [], "@odata.nextLink": "https://graph.microsoft.com/beta/me"}
        ),
        ["@odata.nextLink must be a URL under"],
    ),
    (
        "nextLink type",
        _entry(response__json={"value": [], "@odata.nextLink": 3}),
        ["@odata.nextLink must be a URL under", "not 3"],
    ),
    (
        "body content type",
        _entry(
            response__json={"value": [{**MESSAGE, "body": {"contentType": "md", "content": ""}}]}
        ),
        ['value[0].body: message body contentType must be "text" or "html", not "md"'],
    ),
    (
        "body content missing",
        _entry(response__json={"value": [{**MESSAGE, "body": {"contentType": "html"}}]}),
        ["response.json.value[0].body: message body content must be a string"],
    ),
    (
        "body by odata type",
        lambda: get(
            "/me/events",
            {"json": {"@odata.type": "#microsoft.graph.eventMessage", "body": {"contentType": 1}}},
        ),
        ["responses[1] (GET /me/events): response.json.body: message body contentType"],
    ),
    (
        "body in messages path",
        lambda: get("/me/messages/m1", {"json": {"id": "m1", "body": {"content": "x"}}}),
        ["(GET /me/messages/m1): response.json.body: message body contentType", "not null"],
    ),
    (
        "nested item attachment",
        lambda: get(
            "/me/messages/m1/attachments",
            {
                "json": {
                    "value": [{"id": "a", "item": {"body": {"contentType": "rtf", "content": ""}}}]
                }
            },
        ),
        ["response.json.value[0].item.body: message body contentType", '"rtf"'],
    ),
    (
        "duplicate json key",
        lambda: {"request": {"method": "GET", "path": "/a", "path ": "/b"}, "response": {}},
        ['request: unknown key "path "'],
    ),
    (
        "url type",
        lambda: {"request": {"method": "GET", "url": 5}, "response": {}},
        ["request.url must be a string"],
    ),
    (
        "url relative",
        lambda: {"request": {"method": "GET", "url": "/x"}, "response": {}},
        ["request.url must be an absolute http(s) URL"],
    ),
    (
        "url under root",
        lambda: {"request": {"method": "GET", "url": f"{ROOT}/me"}, "response": {}},
        ["is under graphRoot; write it as request.path"],
    ),
    (
        "url query repeated",
        lambda: {
            "request": {"method": "GET", "url": "https://x.example/a?k=1", "query": {"k": "2"}},
            "response": {},
        },
        ['request.query repeats "k"'],
    ),
    (
        "nested too deep",
        lambda: get("/a", {"json": json.loads("[" * 70 + "]" * 70)}),
        ["nested deeper than 64 levels"],
    ),
]


@pytest.mark.parametrize(("name", "make", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_entry_refusals_name_the_entry_and_the_problem(
    tmp_path: Path, name: str, make: Callable[[], Any], fragments: list[str]
) -> None:
    message = refusal(tmp_path, {"responses": [get("/me"), make()]})
    assert "responses[1]" in message, message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("delay", [0, 1, DELAY_MAX_MS - 1, DELAY_MAX_MS])
def test_delay_is_loaded_up_to_its_limit(tmp_path: Path, delay: int) -> None:
    entry = get("/me/messages", {"delayMs": delay, "json": {"value": []}})
    fixture_set = load_fixtures(write(tmp_path, {"responses": [entry]}))
    assert fixture_set.entries[0].response.delay_ms == delay


def test_refusal_names_method_and_path(tmp_path: Path) -> None:
    entry = get("/me/messages", {"json": {"value": [{"subject": "x"}]}})
    message = refusal(tmp_path, {"responses": [entry]})
    path = tmp_path / "fx.json"
    assert message == (
        f"{path}: responses[0] (GET /me/messages): response.json.value[0]: "
        'collection item has no string "id"'
    )


def test_download_url_entries_are_labelled_without_their_query(tmp_path: Path) -> None:
    entry = {"request": {"method": "GET", "url": DOWNLOAD}, "response": {"text": 1}}
    message = refusal(tmp_path, {"responses": [entry]})
    assert "download.aspx" in message
    assert "tempauth" not in message


def test_duplicates_are_refused(tmp_path: Path) -> None:
    first = get("/me/messages", query={"$filter": "isRead eq false", "$top": "5"})
    same = get("/me/messages", query={"$top": "5", "$filter": "isRead eq false"})
    message = refusal(tmp_path, {"responses": [get("/me"), first, same]})
    assert "responses[2] (GET /me/messages): duplicate of responses[1]" in message
    url = {"request": {"method": "GET", "url": DOWNLOAD}, "response": {}}
    reordered = dict(
        url, request={"method": "GET", "url": DOWNLOAD.replace("https://c", "HTTPS://C")}
    )
    assert "duplicate of responses[0]" in refusal(tmp_path, {"responses": [url, reordered]})
    # Different queries are different entries.
    other = get("/me/messages", query={"$filter": "isRead eq true", "$top": "5"})
    assert len(load_fixtures(write(tmp_path, {"responses": [first, other]})).entries) == 2


def test_duplicate_json_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(
        '{"responses": [{"request": {"method": "GET", "path": "/a"}, '
        '"response": {"json": {"id": 1, "id": 2}}}]}',
        encoding="utf-8",
    )
    with pytest.raises(FixtureError, match=r'responses\[0\] \(GET /a\): response.json: key "id"'):
        load_fixtures(path)
    path.write_text('{"responses": [], "responses": []}', encoding="utf-8")
    with pytest.raises(FixtureError, match='key "responses" appears twice'):
        load_fixtures(path)


def test_lone_surrogates_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.json"
    path.write_text(
        '{"responses": [{"request": {"method": "GET", "path": "/a"}, '
        '"response": {"text": "\\ud83d"}}]}',
        encoding="utf-8",
    )
    with pytest.raises(FixtureError, match="lone surrogate"):
        load_fixtures(path)


# --- hypothesis: nothing crashes the loader ------------------------------------------------

FORMAT_KEYS = [
    "request",
    "response",
    "method",
    "path",
    "url",
    "query",
    "status",
    "headers",
    "json",
    "text",
    "base64",
    "repeat",
    "bytes",
    "value",
    "id",
    "body",
    "subject",
    "contentType",
    "content",
    "@odata.nextLink",
    "@odata.type",
    "graphRoot",
    "responses",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(FORMAT_KEYS) | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _loads_or_refuses(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        load_fixtures(path)
    except FixtureError as err:
        assert "\n" not in str(err)
        assert str(err).startswith(str(path))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON)
def test_any_json_document_loads_or_refuses(
    tmp_path_factory: pytest.TempPathFactory, value: Any
) -> None:
    path = tmp_path_factory.mktemp("hyp") / "doc.json"
    _loads_or_refuses(path, json.dumps(value).encode())


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=JSON, response=JSON)
def test_any_entry_loads_or_refuses(
    tmp_path_factory: pytest.TempPathFactory, request: Any, response: Any
) -> None:
    path = tmp_path_factory.mktemp("hyp") / "entry.json"
    entries = [
        {"request": request, "response": response},
        {"request": {"method": "GET", "path": "/x"}, "response": response},
    ]
    _loads_or_refuses(path, json.dumps({"responses": entries}).encode())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300))
def test_any_bytes_load_or_refuse(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("hyp") / "bytes.json"
    _loads_or_refuses(path, data)
    _loads_or_refuses(path, b'{"responses": [' + data + b"]}")


# --- the canned mailbox and drive (fixtures/canned.json) ---------------------------------


def test_demo_file_is_within_the_limit() -> None:
    assert DEMO.stat().st_size <= DEFAULT_LIMITS.fixture_file_bytes


def test_demo_is_what_the_generator_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location(
        "build_canned", REPO / "fixtures" / "build_canned.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "build_canned", module)  # dataclasses look it up
    spec.loader.exec_module(module)
    first = module.build()
    assert first == DEMO.read_bytes()
    assert module.build() == first  # no state carried between runs


def test_demo_folders(demo_doc: dict[str, Any]) -> None:
    top = json_body(demo_doc, "/me/mailFolders")["value"]
    names = {folder["displayName"] for folder in top}
    assert len(top) >= 6
    assert {"Inbox", "Drafts", "Sent Items", "Deleted Items", "Junk Email", "Archive"} <= names
    keys = {
        "id",
        "displayName",
        "parentFolderId",
        "childFolderCount",
        "unreadItemCount",
        "totalItemCount",
        "isHidden",
    }
    assert all(set(folder) == keys for folder in top)
    parents = [folder for folder in top if folder["childFolderCount"] > 0]
    assert {folder["displayName"] for folder in parents} >= {"Inbox", "Projects"}
    for folder in parents:
        children = json_body(demo_doc, f"/me/mailFolders/{folder['id']}/childFolders")["value"]
        assert len(children) == folder["childFolderCount"]
    projects = next(f for f in top if f["displayName"] == "Projects")
    children = json_body(demo_doc, f"/me/mailFolders/{projects['id']}/childFolders")["value"]
    counts = {child["displayName"]: child["totalItemCount"] for child in children}
    assert counts == {"Contoso Launch": 49, "Budget 2027": 50}
    for name in ("inbox", "sentitems", "drafts", "archive", "deleteditems", "junkemail"):
        assert json_body(demo_doc, f"/me/mailFolders/{name}")["displayName"]


def test_demo_cap_test_folders(demo_doc: dict[str, Any]) -> None:
    archive = json_body(demo_doc, "/me/mailFolders/archive/messages")
    assert len(archive["value"]) == 51
    assert "@odata.nextLink" not in archive
    top = {f["displayName"]: f["id"] for f in json_body(demo_doc, "/me/mailFolders")["value"]}
    projects = json_body(demo_doc, f"/me/mailFolders/{top['Projects']}/childFolders")["value"]
    sizes = {
        child["displayName"]: len(
            json_body(demo_doc, f"/me/mailFolders/{child['id']}/messages")["value"]
        )
        for child in projects
    }
    assert sizes == {"Contoso Launch": 49, "Budget 2027": 50}


def test_demo_inbox_spans_two_pages(demo_doc: dict[str, Any]) -> None:
    first = json_body(demo_doc, "/me/mailFolders/inbox/messages")
    second = json_body(demo_doc, "/me/mailFolders/inbox/messages", {"$skip": "50"})
    assert len(first["value"]) == 50
    assert len(first["value"]) + len(second["value"]) >= 60
    assert first["@odata.nextLink"].startswith(f"{ROOT}/me/mailFolders/inbox/messages?%24select=")


def test_demo_every_listed_message_can_be_opened(
    demo_set: FixtureSet, demo_doc: dict[str, Any]
) -> None:
    listed: set[str] = set()
    for item in demo_doc["responses"]:
        path = item["request"].get("path", "")
        body = item["response"].get("json")
        if path.endswith("/messages") and isinstance(body, dict) and "value" in body:
            listed.update(message["id"] for message in body["value"])
    assert len(listed) > 200
    for message_id in listed:
        quoted = message_id.replace("=", "%3D")
        opened = demo_set.match("GET", f"{ROOT}/me/messages/{quoted}?$select=body")
        attachments = demo_set.match("GET", f"{ROOT}/me/messages/{quoted}/attachments")
        assert opened is not None and attachments is not None, message_id


def test_demo_every_next_link_and_redirect_is_answered(
    demo_set: FixtureSet, demo_doc: dict[str, Any]
) -> None:
    links = [v for k, v in walk(demo_doc) if k == "@odata.nextLink"]
    assert len(links) >= 3
    for link in links:
        assert demo_set.match("GET", link) is not None, link
    locations = [
        item["response"]["headers"]["Location"]
        for item in demo_doc["responses"]
        if item["response"].get("status") == 302
    ]
    assert len(locations) >= 20
    for location in locations:
        entry = demo_set.match("GET", location)
        assert entry is not None and entry.response.status == 200, location


def test_demo_download_urls_are_fake_and_pre_authenticated(demo_doc: dict[str, Any]) -> None:
    urls = [v for k, v in walk(demo_doc) if k == "@microsoft.graph.downloadUrl"]
    assert len(urls) > 50
    assert all("tempauth=FAKE" in url for url in urls)
    thumbnails = [v for k, v in walk(demo_doc) if k == "url" and "svc.ms" in str(v)]
    assert thumbnails and all("tempauth=FAKE" in url for url in thumbnails)


def test_demo_big_log_is_a_repeat_over_the_cap(demo_doc: dict[str, Any]) -> None:
    repeats = [
        item["response"]["repeat"] for item in demo_doc["responses"] if "repeat" in item["response"]
    ]
    assert repeats and all(r["bytes"] > DEFAULT_LIMITS.graph_body_bytes for r in repeats)


def test_demo_bodies_at_the_interesting_lengths(demo_doc: dict[str, Any]) -> None:
    bodies = [
        body["body"]
        for _, body in walk(demo_doc)
        if isinstance(body, dict) and isinstance(body.get("body"), dict) and "subject" in body
    ]
    text = [b["content"] for b in bodies if b["contentType"] == "text"]
    assert {9_999, 10_000, 10_001} <= {len(content) for content in text}
    assert any(len(c) > 10_001 and c[9_999] == "🎉" and c[10_000] == "😊" for c in text)
    long_html = [b for b in bodies if b["contentType"] == "html" and len(b["content"]) > 12_000]
    assert len({b["content"][:200] for b in long_html}) >= 3


def test_demo_subjects_recipients_and_scripts(demo_doc: dict[str, Any]) -> None:
    messages = [m for _, m in walk(demo_doc) if isinstance(m, dict) and "subject" in m]
    assert max(len(m["subject"]) for m in messages) > 1_000
    assert max(len(m["toRecipients"]) + len(m["ccRecipients"]) for m in messages) >= 60
    everything = json.dumps(messages, ensure_ascii=False)
    for sample in ("Réunion", "Müller", "日本語の件名", "🎉", "😊", "مرحبا", "שלום"):
        assert sample in everything, sample


def test_demo_attachments_of_every_kind(demo_doc: dict[str, Any]) -> None:
    attachments = [
        a
        for item in demo_doc["responses"]
        if item["request"].get("path", "").endswith("/attachments")
        for a in (item["response"].get("json") or {}).get("value", [])
    ]
    kinds = {a["@odata.type"] for a in attachments}
    assert kinds == {
        "#microsoft.graph.fileAttachment",
        "#microsoft.graph.itemAttachment",
        "#microsoft.graph.referenceAttachment",
    }
    assert sum("contentBytes" in a for a in attachments) == 1


def test_demo_search_results_are_consistent(demo_doc: dict[str, Any]) -> None:
    for term in ("budget", "invoice", "launch"):
        found = json_body(demo_doc, "/me/messages", {"$search": f'"{term}"'})["value"]
        assert found, term
        for message in found:
            text = json.dumps(message, ensure_ascii=False).lower()
            opened = json_body(demo_doc, f"/me/messages/{message['id']}")
            assert term in text or term in opened["body"]["content"].lower(), (term, message["id"])
    inbox = json_body(demo_doc, "/me/mailFolders/inbox/messages", {"$search": '"invoice"'})["value"]
    inbox_id = json_body(demo_doc, "/me/mailFolders/inbox")["id"]
    assert inbox and all(m["parentFolderId"] == inbox_id for m in inbox)
    for term in ("budget", "report", "launch"):
        hits = json_body(demo_doc, f"/me/drive/root/search(q='{term}')")["value"]
        assert hits and all("searchResult" in hit for hit in hits)


def test_demo_drive_text_file_of_10001_characters(
    demo_set: FixtureSet, demo_doc: dict[str, Any]
) -> None:
    texts = [
        item["response"]["text"]
        for item in demo_doc["responses"]
        if "url" in item["request"] and "text" in item["response"]
    ]
    assert any(len(t) == 10_001 and any(ord(c) > 127 for c in t) for t in texts)


def test_readme_ids_exist_in_the_demo(demo_doc: dict[str, Any]) -> None:
    readme = (REPO / "fixtures" / "README.md").read_text(encoding="utf-8")
    ids = set(re.findall(r"`((?:AAMkAGI2|AQMkAGI2|01BYE5RZ)[A-Za-z0-9_=-]+)`", readme))
    assert len(ids) >= 15
    paths = {item["request"].get("path", "") for item in demo_doc["responses"]}
    text = DEMO.read_text(encoding="utf-8")
    for known in ids:
        assert known in text, known
        assert any(known in path for path in paths), known


def test_readme_ids_are_what_the_readme_says(demo_doc: dict[str, Any]) -> None:
    readme = (REPO / "fixtures" / "README.md").read_text(encoding="utf-8")
    rows = dict(
        (match.group(1), match.group(2))
        for match in re.finditer(r"^\| (.+?) \| `(AAMkAGI2[A-Za-z0-9_=-]+)` \|$", readme, re.M)
    )

    def message(phrase: str) -> dict[str, Any]:
        (purpose,) = [purpose for purpose in rows if phrase in purpose]
        body: dict[str, Any] = json_body(demo_doc, f"/me/messages/{rows[purpose]}")
        return body

    def attachment_types(phrase: str) -> list[dict[str, Any]]:
        (purpose,) = [purpose for purpose in rows if phrase in purpose]
        listed: list[dict[str, Any]] = json_body(
            demo_doc, f"/me/messages/{rows[purpose]}/attachments"
        )["value"]
        return listed

    def visible(html: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"(?s)<style.*?</style>|<[^>]+>", " ", html))

    for length in ("9,999", "10,000", "10,001"):
        body = message(f"exactly **{length}**")["body"]
        assert body["contentType"] == "text"
        assert len(body["content"]) == int(length.replace(",", ""))
    content = message("boundary on emoji")["body"]["content"]
    assert (content[9_999], content[10_000]) == ("🎉", "😊")
    assert len(message("subject of 1,715")["subject"]) == 1_715
    assert len(message("66 `toRecipients`")["toRecipients"]) == 66
    for phrase in ("HTML newsletter", "HTML thread", "HTML contract"):
        body = message(phrase)["body"]
        assert body["contentType"] == "html"
        assert len(visible(body["content"])) > 10_000, phrase
    assert any("contentBytes" in a for a in attachment_types("still carries `contentBytes`"))
    kinds = {a["@odata.type"] for a in attachment_types("itemAttachment (")}
    assert kinds == {"#microsoft.graph.itemAttachment"}
    kinds = {a["@odata.type"] for a in attachment_types("referenceAttachment")}
    assert kinds == {"#microsoft.graph.referenceAttachment"}
    newsletter = message("HTML newsletter")
    assert newsletter["hasAttachments"] is False
    assert [a["isInline"] for a in attachment_types("HTML newsletter")] == [True]


def test_the_format_is_a_valid_json_schema_that_the_demo_meets(demo_doc: dict[str, Any]) -> None:
    import copy

    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(FIXTURE_SCHEMA)
    assert Draft202012Validator(FIXTURE_SCHEMA).is_valid(demo_doc)
    broken = copy.deepcopy(demo_doc)
    broken["responses"][0]["response"]["delayMs"] = DELAY_MAX_MS + 1
    assert not Draft202012Validator(FIXTURE_SCHEMA).is_valid(broken)


def _nested(depth: int) -> object:
    """A JSON body whose deepest value sits ``depth`` levels below the body itself."""
    return json.loads("[" * (depth + 1) + "]" * (depth + 1))


@pytest.mark.parametrize("slack", [-1, 0])
def test_json_nested_up_to_the_limit_loads(tmp_path: Path, slack: int) -> None:
    depth = DEFAULT_LIMITS.fixture_json_depth + slack
    entry = get("/a", {"json": _nested(depth)})
    body = load_fixtures(write(tmp_path, {"responses": [entry]})).entries[0].response.body
    assert isinstance(body, bytes) and json.loads(body) == _nested(depth)


@pytest.mark.parametrize("slack", [-1, 0, 1])
def test_integer_digits_at_the_limit(tmp_path: Path, slack: int) -> None:
    digits = DEFAULT_LIMITS.fixture_integer_digits + slack
    number = -int("7" * digits)  # the sign is not a digit
    path = write(tmp_path, {"responses": [get("/a", {"json": {"n": number}})]})
    if slack <= 0:
        (entry,) = load_fixtures(path).entries
        assert json.loads(entry.response.body or b"") == {"n": number}
        return
    with pytest.raises(FixtureError) as caught:
        load_fixtures(path)
    assert f"an integer has {digits:,} digits, more than the 4,000" in str(caught.value)


def test_json_nested_one_past_the_limit_is_refused(tmp_path: Path) -> None:
    depth = DEFAULT_LIMITS.fixture_json_depth + 1
    message = refusal(tmp_path, {"responses": [get("/a", {"json": _nested(depth)})]})
    assert f"nested deeper than {DEFAULT_LIMITS.fixture_json_depth} levels" in message, message


def test_delay_one_past_its_limit_is_refused(tmp_path: Path) -> None:
    entry = get("/me/messages", {"delayMs": DELAY_MAX_MS + 1, "json": {"value": []}})
    message = refusal(tmp_path, {"responses": [entry]})
    assert "responses[0]" in message and "delayMs" in message, message
    assert f"{DELAY_MAX_MS:,}" in message, message
