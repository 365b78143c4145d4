"""GraphClient against real HTTP servers on 127.0.0.1 (tests/support/loopback.py).

Nothing of ours is mocked: the only fake is a token provider at the auth seam.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import logging
import re
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from email.utils import formatdate
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from mfconnector.errors import (
    LOGIN_HINT,
    AuthError,
    GraphError,
    GraphThrottledError,
    GraphTimeoutError,
    ResponseTooLargeError,
    ToolInputError,
)
from mfconnector.graph.body import parse_json_strict
from mfconnector.graph.client import Download, GraphClient, GraphResponse
from mfconnector.limits import DEFAULT_LIMITS, Limits
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.shared_paths import GRAPH_SAMPLES

SAMPLES = GRAPH_SAMPLES
CAP = DEFAULT_LIMITS.graph_body_bytes
FAST = dataclasses.replace(
    DEFAULT_LIMITS,
    graph_request_seconds=10.0,
    graph_connect_timeout_seconds=5.0,
    graph_read_timeout_seconds=5.0,
    graph_retry_after_max_seconds=1.0,
    graph_retry_total_seconds=2.0,
)
SECRET_QUERY = "tempauth=SECRET-CAPABILITY"
SECRET_PATH = "/y23vmagahszhxzlcvhasdhas"
TEST_SECONDS = 20


class RecordingTokens:
    """The seam fake: hands out tokens in order and records how it was asked."""

    def __init__(self, *tokens: str) -> None:
        self.tokens = tokens or ("token-1", "token-2", "token-3")
        self.calls: list[tuple[bool, str | None]] = []

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        """The n-th call gets the n-th token (the last one repeats)."""
        self.calls.append((force_refresh, claims))
        return self.tokens[min(len(self.calls), len(self.tokens)) - 1]

    async def describe(self) -> dict[str, Any]:
        return {"signedIn": True}


@asynccontextmanager
async def client_for(
    server: LoopbackServer,
    limits: Limits = FAST,
    tokens: Any = None,
    test_seconds: float = TEST_SECONDS,
) -> AsyncIterator[GraphClient]:
    """A client rooted at ``server``; the block must end within ``test_seconds``."""
    client = GraphClient(
        token_provider=tokens or RecordingTokens(), limits=limits, root=f"{server.url}/v1.0"
    )
    async with client:
        with trio.fail_after(test_seconds):
            yield client


def json_of_size(size: int) -> bytes:
    """A valid JSON document of exactly ``size`` bytes."""
    body = b'{"v":"' + b"x" * (size - 8) + b'"}'
    assert len(body) == size
    return body


def sample(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return doc


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def bytes_read(message: str) -> int:
    match = re.search(r"read ([\d,]+) bytes", message)
    assert match, message
    return int(match.group(1).replace(",", ""))


# --- plain JSON ------------------------------------------------------------------------


async def test_get_json_returns_body_status_and_useful_headers(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/me",
        Reply.json(
            {"id": "1"},
            headers=[("request-id", "rid-1"), ("Preference-Applied", "x"), ("X-Other", "no")],
        ),
    )
    async with client_for(graph) as client:
        answer = await client.get_json("/me")
    assert answer == GraphResponse(
        body={"id": "1"},
        status=200,
        headers={
            "request-id": "rid-1",
            "content-type": "application/json",
            "preference-applied": "x",
        },
    )
    [request] = graph.requests
    assert request.header("authorization") == "Bearer token-1"
    assert request.header("accept") == "application/json"
    assert request.header("accept-encoding") == "identity"
    assert request.header("cookie") is None


async def test_query_reaches_graph_with_percent20_not_plus(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me/messages", Reply.json({"value": []}))
    async with client_for(graph) as client:
        await client.get_json(
            ["me", "messages"],
            query={"$filter": "isRead eq false", "$orderby": "receivedDateTime desc"},
        )
    [request] = graph.requests
    assert "+" not in request.query
    assert "isRead%20eq%20false" in request.query
    assert "receivedDateTime%20desc" in request.query


async def test_path_segments_are_encoded_so_a_hash_stays_in_the_path(
    graph: LoopbackServer,
) -> None:
    graph.route("GET", "/v1.0/me/drive/root:/a%23b%20c.txt:", Reply.json({"name": "a#b c.txt"}))
    async with client_for(graph) as client:
        answer = await client.get_json(["me", "drive", "root:", "a#b c.txt:"])
    assert answer.body == {"name": "a#b c.txt"}


async def test_empty_success_body_is_none(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me", Reply(204))
    async with client_for(graph) as client:
        answer = await client.get_json("/me")
    assert (answer.status, answer.body) == (204, None)


async def test_environment_proxies_are_ignored(
    graph: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, dead)
    graph.route("GET", "/v1.0/me", Reply.json({"id": "1"}))
    async with client_for(graph) as client:
        assert (await client.get_json("/me")).body == {"id": "1"}


async def test_cookies_set_by_graph_are_never_sent_back(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me", Reply.json({}, headers=[("Set-Cookie", "s=1; Path=/")]))
    async with client_for(graph) as client:
        await client.get_json("/me")
        await client.get_json("/me")
    assert [r.header("cookie") for r in graph.requests] == [None, None]


# --- the byte cap ----------------------------------------------------------------------

FRAMINGS: dict[str, dict[str, Any]] = {
    "content-length": {},
    "chunked": {"chunked": True},
    "close-delimited": {"content_length": None},
}


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("size", [CAP - 1, CAP])
async def test_body_at_or_under_the_cap_is_parsed(
    graph: LoopbackServer, size: int, framing: str
) -> None:
    graph.route("GET", "/v1.0/big", Reply(200, body=json_of_size(size), **FRAMINGS[framing]))
    async with client_for(graph) as client:
        answer = await client.get_json("/big")
    assert len(answer.body["v"]) == size - 8


@pytest.mark.parametrize("framing", ["chunked", "close-delimited"])
async def test_body_one_byte_past_the_cap_is_refused_while_counting(
    graph: LoopbackServer, framing: str
) -> None:
    graph.route("GET", "/v1.0/big", Reply(200, body=json_of_size(CAP + 1), **FRAMINGS[framing]))
    async with client_for(graph) as client:
        with pytest.raises(ResponseTooLargeError) as caught:
            await client.get_json("/big")
    assert str(caught.value) == (
        "Graph answer is larger than the 2,000,000-byte limit "
        "(read 2,000,001 bytes before stopping)"
    )
    assert caught.value.status == 200


async def test_declared_length_one_past_the_cap_is_refused_before_reading(
    graph: LoopbackServer,
) -> None:
    graph.route("GET", "/v1.0/big", Reply(200, body=json_of_size(CAP + 1)))
    async with client_for(graph) as client:
        with pytest.raises(ResponseTooLargeError, match=r"declared 2,000,001 bytes; nothing"):
            await client.get_json("/big")


async def test_declared_length_past_the_cap_is_refused_without_waiting_for_the_body(
    graph: LoopbackServer,
) -> None:
    """The body would trickle for ever: only an up-front refusal can answer in time."""
    trickle = Reply(200, body=iter(lambda: b" ", None), content_length=50_000_000, chunk_delay=0.05)
    graph.route("GET", "/v1.0/big", trickle)
    limits = dataclasses.replace(FAST, graph_request_seconds=2.0)
    async with client_for(graph, limits) as client:
        with pytest.raises(ResponseTooLargeError, match="declared 50,000,000 bytes"):
            await client.get_json("/big")


async def test_lying_small_content_length_reads_only_what_was_declared(
    graph: LoopbackServer,
) -> None:
    body = b'{"a":1}' + b"x" * 3_000_000
    graph.route("GET", "/v1.0/lie", Reply(200, body=body, content_length=7))
    async with client_for(graph) as client:
        answer = await client.get_json("/lie")
    assert answer.body == {"a": 1}


@pytest.mark.parametrize("framing", ["chunked", "close-delimited"])
async def test_endless_body_stops_within_one_chunk_of_the_cap(
    graph: LoopbackServer, framing: str
) -> None:
    graph.route(
        "GET",
        "/v1.0/endless",
        Reply(200, body=iter(lambda: b"x" * 65_536, None), **FRAMINGS[framing]),
    )
    async with client_for(graph) as client:
        with pytest.raises(ResponseTooLargeError) as caught:
            await client.get_json("/endless")
    assert CAP < bytes_read(str(caught.value)) <= CAP + 65_536


# --- compression -----------------------------------------------------------------------


def gzip_bomb(decoded: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"\0" * 1_000_000
    parts = [compressor.compress(block) for _ in range(decoded // len(block))]
    return b"".join([*parts, compressor.flush()])


async def test_gzip_bomb_never_expands_past_the_cap(graph: LoopbackServer) -> None:
    bomb = gzip_bomb(50_000_000)
    assert len(bomb) < 100_000
    graph.route("GET", "/v1.0/bomb", Reply(200, [("Content-Encoding", "gzip")], bomb))
    async with client_for(graph) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLargeError) as caught:
                await client.get_json("/bomb")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    match = re.search(r"decoded ([\d,]+) bytes from ([\d,]+) compressed", str(caught.value))
    assert match, caught.value
    decoded = int(match.group(1).replace(",", ""))
    assert CAP < decoded <= CAP + DEFAULT_LIMITS.graph_inflate_step_bytes
    assert peak < 3 * CAP  # 50 MB if inflated unbounded; the cap plus working buffers here


@pytest.mark.parametrize(("size", "accepted"), [(CAP - 1, True), (CAP, True), (CAP + 1, False)])
async def test_gzip_decoded_size_is_capped_at_the_limit(
    graph: LoopbackServer, size: int, accepted: bool
) -> None:
    graph.route(
        "GET",
        "/v1.0/gz",
        Reply(200, [("Content-Encoding", "gzip")], gzip.compress(json_of_size(size))),
    )
    async with client_for(graph) as client:
        if accepted:
            assert len((await client.get_json("/gz")).body["v"]) == size - 8
        else:
            with pytest.raises(ResponseTooLargeError, match="decoded 2,000,001 bytes"):
                await client.get_json("/gz")


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib", "raw"])
async def test_deflate_both_flavours_decode(graph: LoopbackServer, wbits: int) -> None:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    body = compressor.compress(b'{"ok": true}') + compressor.flush()
    graph.route("GET", "/v1.0/d", Reply(200, [("Content-Encoding", "deflate")], body))
    async with client_for(graph) as client:
        assert (await client.get_json("/d")).body == {"ok": True}


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, gzip", "compress"])
async def test_unboundable_encodings_are_refused(graph: LoopbackServer, encoding: str) -> None:
    graph.route("GET", "/v1.0/e", Reply(200, [("Content-Encoding", encoding)], b"{}"))
    async with client_for(graph) as client:
        with pytest.raises(GraphError, match="Content-Encoding") as caught:
            await client.get_json("/e")
    assert caught.value.status == 200


async def test_truncated_gzip_is_an_error(graph: LoopbackServer) -> None:
    body = gzip.compress(b'{"a": "' + b"y" * 10_000 + b'"}')[:-20]
    graph.route("GET", "/v1.0/g", Reply(200, [("Content-Encoding", "gzip")], body))
    async with client_for(graph) as client:
        with pytest.raises(GraphError, match="could not be decoded"):
            await client.get_json("/g")


# --- time ------------------------------------------------------------------------------


async def test_slow_trickle_hits_the_whole_request_deadline(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/slow",
        Reply(200, body=iter(lambda: b" ", None), chunked=True, chunk_delay=0.05),
    )
    limits = dataclasses.replace(FAST, graph_request_seconds=0.5)
    async with client_for(graph, limits) as client:
        start = trio.current_time()
        with pytest.raises(GraphTimeoutError) as caught:
            await client.get_json("/slow", query={"$select": "secretField"})
    assert 0.5 <= trio.current_time() - start < 3
    message = str(caught.value)
    assert message.startswith("Microsoft Graph did not finish answering within 0.5 s")
    assert "/v1.0/slow" in message
    assert "secretField" not in message and "?" not in message
    assert caught.value.retry_safe


async def test_answer_within_the_deadline_is_not_cut(graph: LoopbackServer) -> None:
    body = [b'{"a":', b" ", b" ", b"1}"]
    graph.route("GET", "/v1.0/slowish", Reply(200, body=body, chunked=True, chunk_delay=0.05))
    limits = dataclasses.replace(FAST, graph_request_seconds=2.0)
    async with client_for(graph, limits) as client:
        assert (await client.get_json("/slowish")).body == {"a": 1}


async def test_silence_longer_than_the_read_timeout(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/stall",
        Reply(200, body=[b"{", b"}"], content_length=2, chunk_delay=5.0),
    )
    limits = dataclasses.replace(FAST, graph_read_timeout_seconds=0.2)
    async with client_for(graph, limits) as client:
        with pytest.raises(GraphTimeoutError, match="stopped sending data"):
            await client.get_json("/stall")


# --- connections -----------------------------------------------------------------------


async def test_connection_dropped_mid_body(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/drop", Reply(200, body=json_of_size(100_000), drop_after=50_000))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/drop")
    error = caught.value
    assert type(error) is GraphError
    assert error.retry_safe
    assert str(error) == "Microsoft Graph: the connection broke or the answer was malformed"
    assert error.__cause__ is None and error.__context__ is None


async def test_connection_refused() -> None:
    root = f"http://127.0.0.1:{free_port()}/v1.0"
    async with GraphClient(token_provider=RecordingTokens(), limits=FAST, root=root) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me")
    assert str(caught.value) == "Microsoft Graph: could not connect"
    assert caught.value.retry_safe


# --- invalid JSON ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b'{"a": SECRETBODY', b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": "\xff\xfe"}', b"[" * 100_000],
    ids=["syntax", "nan", "infinity", "bad-utf8", "deep"],
)
async def test_invalid_json_is_an_error_that_does_not_echo_the_body(
    graph: LoopbackServer, body: bytes
) -> None:
    graph.route("GET", "/v1.0/bad", Reply(200, [("request-id", "rid-9")], body))
    async with client_for(graph) as client:
        with pytest.raises(GraphError, match=r"^invalid JSON from Graph") as caught:
            await client.get_json("/bad")
    assert "SECRETBODY" not in str(caught.value)
    assert (caught.value.status, caught.value.request_id) == (200, "rid-9")


# --- error answers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "code", "hint_part"),
    [
        ("http-400-invalid-filter.json", "BadRequest", "check the ids"),
        ("http-400-search-with-orderby.json", "SearchWithOrderBy", "cannot be combined"),
    ],
)
async def test_graph_error_samples_are_mapped(
    graph: LoopbackServer, name: str, code: str, hint_part: str
) -> None:
    doc = sample(name)
    graph.route("GET", "/v1.0/x", Reply.json(doc["body"], status=doc["status"]))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/x")
    error = caught.value
    assert (error.status, error.code) == (doc["status"], code)
    assert doc["body"]["error"]["message"] in error.message
    assert error.request_id == doc["body"]["error"].get("innerError", {}).get("request-id")
    assert hint_part in (error.hint or "")
    assert not error.retry_safe


async def test_onedrive_nested_error_keeps_top_code_and_innermost_code(
    graph: LoopbackServer,
) -> None:
    graph.route(
        "GET",
        "/v1.0/x",
        Reply.json(sample("error-onedrive-nested-innererror.json"), status=416),
    )
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/x")
    assert caught.value.code == "invalidRange"
    assert caught.value.extra == {"inner_code": "fragmentOverlap"}


async def test_html_gateway_error_is_mapped_without_its_body(graph: LoopbackServer) -> None:
    html = b"<html><body><h1>502 Bad Gateway</h1>https://proxy/?token=abc</body></html>"
    graph.route("GET", "/v1.0/x", Reply(502, [("Content-Type", "text/html")], html))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/x")
    error = caught.value
    assert str(error) == "Microsoft Graph answered 502 Bad Gateway"
    assert error.code is None and error.retry_safe
    assert "transient" in (error.hint or "")


async def test_error_body_past_the_cap_still_reports_the_status(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/x", Reply(500, body=json_of_size(CAP + 1), chunked=True))
    async with client_for(graph) as client:
        with pytest.raises(GraphError, match=r"^Microsoft Graph answered 500") as caught:
            await client.get_json("/x")
    assert type(caught.value) is GraphError


async def test_redirect_on_a_json_call_is_not_followed_and_not_shown(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    location = f"{files.url}{SECRET_PATH}?{SECRET_QUERY}"
    graph.route("GET", "/v1.0/me", Reply(302, [("Location", location)]))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me")
    assert caught.value.status == 302
    assert "SECRET" not in repr(caught.value) and SECRET_PATH not in str(caught.value)
    assert files.requests == []


# --- throttling ------------------------------------------------------------------------


def throttled(retry_after: str | None, status: int = 429) -> Reply:
    doc = sample("http-429-throttled.json")
    headers = [("Retry-After", retry_after)] if retry_after is not None else []
    return Reply.json(doc["body"], status=status, headers=headers)


async def test_429_with_fractional_retry_after_then_success(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me", throttled("0.05"), Reply.json({"id": "1"}))
    async with client_for(graph) as client:
        start = trio.current_time()
        answer = await client.get_json("/me")
    assert answer.body == {"id": "1"}
    assert trio.current_time() - start >= 0.05
    assert len(graph.requests) == 2


async def test_429_with_http_date_retry_after(
    graph: LoopbackServer, mock_clock: trio.testing.MockClock
) -> None:
    mock_clock.rate = 20  # virtual seconds per real second: a 2 s wait takes 0.1 s
    graph.route(
        "GET", "/v1.0/me", throttled(formatdate(time.time() + 2, usegmt=True)), Reply.json({})
    )
    limits = dataclasses.replace(
        FAST, graph_request_seconds=60.0, graph_retry_after_max_seconds=30.0
    )
    async with client_for(graph, limits, test_seconds=200) as client:
        start = trio.current_time()
        await client.get_json("/me")
    assert 0.9 <= trio.current_time() - start <= 10
    assert len(graph.requests) == 2


async def test_retry_after_past_the_max_fails_fast_without_sleeping(
    graph: LoopbackServer,
) -> None:
    graph.route("GET", "/v1.0/me", throttled("120"), Reply.json({}))
    async with client_for(graph) as client:
        start = trio.current_time()
        with pytest.raises(GraphThrottledError) as caught:
            await client.get_json("/me")
    assert trio.current_time() - start < 1
    assert len(graph.requests) == 1
    error = caught.value
    assert error.retry_after_seconds == 120
    assert str(error).startswith("throttled by Microsoft Graph: retry in 120 s")
    assert error.request_id == "94fb3b52-452a-4535-a601-69e0a90e3aa2"
    assert error.retry_safe and error.status == 429


@pytest.mark.parametrize(("retry_after", "requests"), [("0.09", 2), ("0.1", 2), ("0.11", 1)])
async def test_single_retry_after_max_boundary(
    graph: LoopbackServer, retry_after: str, requests: int
) -> None:
    graph.route("GET", "/v1.0/me", throttled(retry_after), Reply.json({}))
    limits = dataclasses.replace(FAST, graph_retry_after_max_seconds=0.1)
    async with client_for(graph, limits) as client:
        if requests == 2:
            await client.get_json("/me")
        else:
            with pytest.raises(GraphThrottledError):
                await client.get_json("/me")
    assert len(graph.requests) == requests


@pytest.mark.parametrize(("total", "requests"), [(0.09, 2), (0.1, 3), (0.11, 3)])
async def test_total_retry_wait_boundary(
    graph: LoopbackServer, total: float, requests: int
) -> None:
    graph.route("GET", "/v1.0/me", throttled("0.05"), throttled("0.05"), Reply.json({}))
    limits = dataclasses.replace(FAST, graph_retry_total_seconds=total)
    async with client_for(graph, limits) as client:
        if requests == 3:
            await client.get_json("/me")
        else:
            with pytest.raises(GraphThrottledError) as caught:
                await client.get_json("/me")
            assert caught.value.retry_after_seconds == 0.05
    assert len(graph.requests) == requests


@pytest.mark.parametrize(("throttles", "succeeds"), [(1, True), (2, True), (3, False)])
async def test_retry_count_boundary(graph: LoopbackServer, throttles: int, succeeds: bool) -> None:
    graph.route("GET", "/v1.0/me", *[throttled("0")] * throttles, Reply.json({}))
    limits = dataclasses.replace(FAST, graph_retries=2)
    async with client_for(graph, limits) as client:
        if succeeds:
            await client.get_json("/me")
        else:
            with pytest.raises(GraphThrottledError):
                await client.get_json("/me")
    assert len(graph.requests) == min(throttles + 1, 3)


async def test_retry_after_beyond_the_request_deadline_fails_fast(
    graph: LoopbackServer,
) -> None:
    graph.route("GET", "/v1.0/me", throttled("0.8"), Reply.json({}))
    limits = dataclasses.replace(FAST, graph_request_seconds=0.5, graph_retry_after_max_seconds=5.0)
    async with client_for(graph, limits) as client:
        with pytest.raises(GraphThrottledError, match="retry in 1 s"):
            await client.get_json("/me")
    assert len(graph.requests) == 1


@pytest.mark.parametrize("status", [503, 504])
async def test_503_and_504_are_retried(graph: LoopbackServer, status: int) -> None:
    graph.route("GET", "/v1.0/me", throttled("0", status), Reply.json({"ok": 1}))
    async with client_for(graph) as client:
        assert (await client.get_json("/me")).body == {"ok": 1}
    assert len(graph.requests) == 2


async def test_backoff_without_retry_after_is_1_then_2_seconds(
    graph: LoopbackServer, mock_clock: trio.testing.MockClock
) -> None:
    mock_clock.rate = 20
    graph.route("GET", "/v1.0/me", Reply(503), Reply(503), Reply(503))
    limits = dataclasses.replace(
        FAST,
        graph_request_seconds=60.0,
        graph_retry_after_max_seconds=30.0,
        graph_retry_total_seconds=45.0,
    )
    async with client_for(graph, limits, test_seconds=200) as client:
        start = trio.current_time()
        with pytest.raises(GraphThrottledError) as caught:
            await client.get_json("/me")
    assert 3.0 <= trio.current_time() - start < 10
    assert len(graph.requests) == 3
    assert caught.value.retry_after_seconds == 4.0  # the next backoff step


async def test_504_exhausted_is_a_retry_safe_graph_error(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me", Reply(504, [("Retry-After", "0")]))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me")
    assert type(caught.value) is GraphError
    assert caught.value.retry_safe and caught.value.status == 504
    assert len(graph.requests) == 3


@pytest.mark.parametrize("status", [400, 404, 500, 502])
async def test_nothing_else_is_retried(graph: LoopbackServer, status: int) -> None:
    graph.route("GET", "/v1.0/me", Reply(status, [("Retry-After", "0")]), Reply.json({}))
    async with client_for(graph) as client:
        with pytest.raises(GraphError):
            await client.get_json("/me")
    assert len(graph.requests) == 1


# --- 401 -------------------------------------------------------------------------------


def answer_401(name: str) -> Reply:
    doc = sample(name)
    body = json.dumps(doc["body"]).encode() if doc["body"] is not None else b""
    return Reply(401, list(doc["headers"].items()), body)


async def test_expired_token_is_refreshed_once_and_retried(graph: LoopbackServer) -> None:
    tokens = RecordingTokens("old", "new")
    graph.route("GET", "/v1.0/me", answer_401("http-401-expired-token.json"), Reply.json({}))
    async with client_for(graph, tokens=tokens) as client:
        await client.get_json("/me")
    assert tokens.calls == [(False, None), (True, None)]
    assert [r.header("authorization") for r in graph.requests] == ["Bearer old", "Bearer new"]


async def test_claims_challenge_passes_decoded_claims(graph: LoopbackServer) -> None:
    tokens = RecordingTokens()
    graph.route("GET", "/v1.0/me", answer_401("http-401-claims-challenge.json"), Reply.json({}))
    async with client_for(graph, tokens=tokens) as client:
        await client.get_json("/me")
    claims = '{"access_token":{"acrs":{"essential":true,"value":"cp1"}}}'
    assert tokens.calls == [(False, None), (True, claims)]


async def test_second_401_gives_the_login_hint(graph: LoopbackServer) -> None:
    tokens = RecordingTokens()
    graph.route("GET", "/v1.0/me", answer_401("http-401-expired-token.json"))
    async with client_for(graph, tokens=tokens) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me")
    assert len(graph.requests) == 2 and len(tokens.calls) == 2
    assert caught.value.status == 401 and caught.value.code == "InvalidAuthenticationToken"
    assert caught.value.hint == LOGIN_HINT
    assert "old" not in str(caught.value) and "token-" not in str(caught.value)


async def test_mailbox_not_enabled_401_is_never_retried(graph: LoopbackServer) -> None:
    tokens = RecordingTokens()
    body = {
        "error": {
            "code": "MailboxNotEnabledForRESTAPI",
            "message": "REST API is not yet supported for this mailbox.",
        }
    }
    graph.route("GET", "/v1.0/me/messages", Reply.json(body, status=401), Reply.json({}))
    async with client_for(graph, tokens=tokens) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me/messages")
    assert len(graph.requests) == 1 and tokens.calls == [(False, None)]
    assert "on-premises" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("body", "www_authenticate", "retried"),
    [
        (b"", None, True),
        (b"<html>401</html>", None, True),
        (b'{"error": {"code": "Authorization_RequestDenied", "message": "no"}}', None, False),
        (b'{"error": {"code": "Other"}}', 'Bearer error="invalid_token"', True),
    ],
    ids=["empty", "html", "other-code", "invalid-token-challenge"],
)
async def test_only_token_shaped_401s_refresh(
    graph: LoopbackServer, body: bytes, www_authenticate: str | None, retried: bool
) -> None:
    headers = [("WWW-Authenticate", www_authenticate)] if www_authenticate else []
    graph.route("GET", "/v1.0/me", Reply(401, headers, body), Reply.json({}))
    tokens = RecordingTokens()
    async with client_for(graph, tokens=tokens) as client:
        if retried:
            await client.get_json("/me")
        else:
            with pytest.raises(GraphError):
                await client.get_json("/me")
    assert len(graph.requests) == (2 if retried else 1)


# --- continuation URLs -----------------------------------------------------------------


async def test_get_json_url_follows_a_link_under_the_root(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me/messages", Reply.json({"value": [1]}))
    async with client_for(graph) as client:
        answer = await client.get_json_url(f"{graph.url}/v1.0/me/messages?%24skip=10")
    assert answer.body == {"value": [1]}
    assert graph.requests[0].query == "%24skip=10"


@pytest.mark.parametrize(
    "make_url",
    [
        lambda url, port: f"https://127.0.0.1:{port}/v1.0/me/messages",
        lambda url, port: f"http://127.0.0.1:{free_port()}/v1.0/me/messages",
        lambda url, port: f"http://localhost:{port}/v1.0/me/messages",
        lambda url, port: f"http://evil.example/v1.0/me/messages?{port}",
        lambda url, port: f"http://user:pw@127.0.0.1:{port}/v1.0/me/messages",
        lambda url, port: f"{url}/beta/me/messages",
        lambda url, port: f"{url}/v1.0/../beta/me",
        lambda url, port: f"{url}/v1.0/me/messages#frag",
        lambda url, port: f"ftp://127.0.0.1:{port}/v1.0/me",
        lambda url, port: f"//127.0.0.1:{port}/v1.0/me",
        lambda url, port: "",
        lambda url, port: f"{url}/v1.0/me/mess\tages",
        lambda url, port: f"{url}/v1.0/me/messages?\x01",
        lambda url, port: f"{url}/v1.0/%2e%2e/beta/me",
        lambda url, port: f"{url}/v1.0/me/%2E%2e/%2e%2E/beta/me",
        lambda url, port: f"{url}/v1.0/%252e%252e/beta/me",
        lambda url, port: f"{url}/v1.0/.%2e/beta/me",
        lambda url, port: f"{url}/v1.0/me/..%5c..%5cbeta",
        lambda url, port: f"{url}/v1.0/%2e%2e;x/beta/me",
        lambda url, port: f"{url}/v1.0/me/%252525252e%252525252e/beta",
    ],
    ids=[
        "scheme",
        "port",
        "host-alias",
        "host",
        "userinfo",
        "outside-root",
        "dot-dot",
        "fragment",
        "ftp",
        "scheme-relative",
        "empty",
        "tab",
        "control",
        "encoded-dot-dot",
        "encoded-dot-dot-mixed-case",
        "double-encoded-dot-dot",
        "half-encoded-dot-dot",
        "backslash-dot-dot",
        "dot-dot-with-params",
        "encoded-past-the-rounds",
    ],
)
async def test_get_json_url_refuses_foreign_links_and_sends_nothing(
    graph: LoopbackServer, make_url: Callable[[str, int], str]
) -> None:
    graph.route("GET", "/v1.0/me/messages", Reply.json({}))
    async with client_for(graph) as client:
        with pytest.raises(ToolInputError, match="nothing was sent"):
            await client.get_json_url(make_url(graph.url, graph.port))
    assert graph.requests == []


async def test_get_json_refuses_a_path_that_leaves_the_root(graph: LoopbackServer) -> None:
    async with client_for(graph) as client:
        with pytest.raises(ToolInputError):
            await client.get_json("/../beta/me")
    assert graph.requests == []


# --- concurrency -----------------------------------------------------------------------


@pytest.mark.parametrize(("calls", "expected"), [(1, 1), (2, 2), (3, 2)])
async def test_concurrency_limit(graph: LoopbackServer, calls: int, expected: int) -> None:
    lock = threading.Lock()
    state = {"active": 0, "peak": 0}

    def slow(request: RecordedRequest) -> Reply:
        with lock:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
        time.sleep(0.15)
        with lock:
            state["active"] -= 1
        return Reply.json({})

    graph.route("GET", "/v1.0/me", slow)
    limits = dataclasses.replace(FAST, graph_concurrency=2)
    async with client_for(graph, limits) as client, trio.open_nursery() as nursery:
        for _ in range(calls):
            nursery.start_soon(client.get_json, "/me")
    assert state["peak"] == expected
    assert len(graph.requests) == calls


# --- logging ---------------------------------------------------------------------------


async def test_debug_log_names_path_status_and_request_id_only(
    graph: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    throttle = Reply(429, [("Retry-After", "0"), ("request-id", "94fb3b52")])
    graph.route("GET", "/v1.0/me/messages", throttle, Reply.json({"value": "BODYTEXT"}))
    caplog.set_level(logging.DEBUG, logger="mfconnector.graph")
    tokens = RecordingTokens("TOKEN-VALUE")
    async with client_for(graph, tokens=tokens) as client:
        await client.get_json("/me/messages", query={"$filter": "subject eq 'QUERYTEXT'"})
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "GET /v1.0/me/messages -> 429 request-id=94fb3b52" in text
    assert "GET /v1.0/me/messages -> 200" in text
    for secret in ("TOKEN-VALUE", "QUERYTEXT", "BODYTEXT", "?", "filter"):
        assert secret not in text


# --- downloads -------------------------------------------------------------------------

CONTENT = "/v1.0/me/drive/items/item-1/content"


def ranged(data: bytes) -> Callable[[RecordedRequest], Reply]:
    """A download host that honours ``Range: bytes=a-b`` the way SharePoint does."""

    def reply(request: RecordedRequest) -> Reply:
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", request.header("range") or "")
        if not match:
            return Reply(200, [("Content-Type", "application/pdf")], data)
        first, last = int(match.group(1)), min(int(match.group(2)), len(data) - 1)
        return Reply(
            206,
            [
                ("Content-Type", "application/pdf"),
                ("Content-Range", f"bytes {first}-{last}/{len(data)}"),
            ],
            data[first : last + 1],
        )

    return reply


def redirect_to(files: LoopbackServer) -> Reply:
    location = f"{files.url}{SECRET_PATH}?UniqueId=1&{SECRET_QUERY}&ApiVersion=2.0"
    return Reply(
        302,
        [("Location", location), ("Set-Cookie", "graph=1; Path=/"), ("request-id", "rid-302")],
        f"<a href='{location}'>moved</a>".encode(),
    )


def assert_no_secret(*things: object) -> None:
    for thing in things:
        for text in (str(thing), repr(thing)):
            assert "SECRET" not in text and SECRET_PATH not in text, text


async def test_download_follows_302_without_authorization(
    graph: LoopbackServer, files: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mfconnector.graph")
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, ranged(b"%PDF-1.7 hello"))
    async with client_for(graph) as client:
        result = await client.download(["me", "drive", "items", "item-1", "content"])
    assert result == Download(b"%PDF-1.7 hello", "application/pdf", True, 14)
    [to_graph] = graph.requests
    assert to_graph.header("authorization") == "Bearer token-1"
    assert to_graph.header("range") is None
    [to_files] = files.requests
    assert to_files.header("authorization") is None
    assert to_files.header("cookie") is None
    assert to_files.header("range") == f"bytes=0-{CAP - 1}"
    assert to_files.header("accept-encoding") == "identity"
    assert SECRET_QUERY in to_files.target  # the capability itself did reach its host
    assert_no_secret(result, *[r.getMessage() for r in caplog.records])


@pytest.mark.parametrize(
    ("size", "complete"), [(99, True), (100, True), (101, False)], ids=["L-1", "L", "L+1"]
)
@pytest.mark.parametrize("honours_range", [True, False], ids=["206", "200"])
async def test_download_cap_boundaries(
    graph: LoopbackServer,
    files: LoopbackServer,
    size: int,
    complete: bool,
    honours_range: bool,
) -> None:
    data = bytes(range(256)) * 1
    data = (data * 2)[:size]
    graph.route("GET", CONTENT, redirect_to(files))
    files.route(
        "GET",
        SECRET_PATH,
        ranged(data) if honours_range else Reply(200, [("Content-Type", "text/plain")], data),
    )
    async with client_for(graph) as client:
        result = await client.download(CONTENT.removeprefix("/v1.0"), max_bytes=100)
    assert result.data == data[:100]
    assert result.complete is complete
    assert result.total_size == size
    assert files.requests[0].header("range") == "bytes=0-99"


async def test_download_larger_than_the_default_cap_is_partial_not_an_error(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    data = b"z" * (CAP + 500_000)
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, Reply(200, body=data, chunked=True))
    async with client_for(graph) as client:
        result = await client.download(CONTENT.removeprefix("/v1.0"))
    assert len(result.data) == CAP and not result.complete and result.total_size is None


async def test_download_with_unknown_total_in_content_range(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, Reply(206, [("Content-Range", "bytes 0-9/*")], b"0123456789"))
    async with client_for(graph) as client:
        short = await client.download(CONTENT.removeprefix("/v1.0"), max_bytes=20)
        exact = await client.download(CONTENT.removeprefix("/v1.0"), max_bytes=10)
    assert (short.complete, short.total_size) == (True, 10)
    assert (exact.complete, exact.total_size) == (False, None)


async def test_download_of_an_empty_file(graph: LoopbackServer, files: LoopbackServer) -> None:
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, Reply(416, [("Content-Range", "bytes */0")]))
    async with client_for(graph) as client:
        result = await client.download(CONTENT.removeprefix("/v1.0"))
    assert result == Download(b"", None, True, 0)


async def test_download_answered_directly_by_graph(graph: LoopbackServer) -> None:
    path = "/v1.0/me/messages/m1/attachments/a1/$value"
    graph.route("GET", path, Reply(200, [("Content-Type", "message/rfc822")], b"x" * 150))
    async with client_for(graph) as client:
        result = await client.download(path.removeprefix("/v1.0"), max_bytes=100)
    assert result == Download(b"x" * 100, "message/rfc822", False, 150)


async def test_download_gzip_from_the_host_is_decoded_under_the_cap(
    graph: LoopbackServer, files: LoopbackServer
) -> None:
    graph.route("GET", CONTENT, redirect_to(files))
    files.route(
        "GET", SECRET_PATH, Reply(200, [("Content-Encoding", "gzip")], gzip_bomb(10_000_000))
    )
    async with client_for(graph) as client:
        result = await client.download(CONTENT.removeprefix("/v1.0"), max_bytes=1000)
    assert result == Download(b"\0" * 1000, None, False, None)


@pytest.mark.parametrize("max_bytes", [0, CAP + 1])
async def test_download_max_bytes_out_of_range(graph: LoopbackServer, max_bytes: int) -> None:
    async with client_for(graph) as client:
        with pytest.raises(ToolInputError, match="max_bytes"):
            await client.download(CONTENT.removeprefix("/v1.0"), max_bytes=max_bytes)
    assert graph.requests == []


@pytest.mark.parametrize(
    "location",
    [
        "ftp://files.example/x?tempauth=SECRET",
        "",
        "https://user:SECRET@files.example/x",
        "http://[bad",
    ],
    ids=["ftp", "missing", "userinfo", "unparseable"],
)
async def test_download_refuses_bad_locations_without_showing_them(
    graph: LoopbackServer, location: str
) -> None:
    headers = [("Location", location)] if location else []
    graph.route("GET", CONTENT, Reply(302, headers))
    async with client_for(graph) as client:
        with pytest.raises(GraphError, match="refuses") as caught:
            await client.download(CONTENT.removeprefix("/v1.0"))
    assert_no_secret(caught.value)


async def test_download_refuses_plain_http_when_graph_is_https() -> None:
    """Only an http (loopback) root may redirect to http. No TLS here, so Graph and the
    download host are played by one in-process transport at the seam."""
    hosts: list[str] = []

    def graph_and_files(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        location = f"http://files.example{SECRET_PATH}?{SECRET_QUERY}"
        return httpx.Response(302, headers={"Location": location})

    transport = httpx.MockTransport(graph_and_files)
    client = GraphClient(token_provider=RecordingTokens(), limits=FAST, transport=transport)
    async with client:
        with pytest.raises(GraphError, match="refuses") as caught:
            await client.download("/me/drive/items/1/content")
    assert hosts == ["graph.microsoft.com"]
    assert_no_secret(caught.value)


DOWNLOAD_FAILURES: dict[str, Callable[[], Reply]] = {
    "403": lambda: Reply.json({"error": {"message": f"bad {SECRET_QUERY}"}}, 403),
    "500": lambda: Reply(500, body=SECRET_QUERY.encode()),
    "drop": lambda: Reply(200, body=b"x" * 5000, drop_after=10),
    "bad-range": lambda: Reply(206, [("Content-Range", "bytes 5-9/10")], b"56789"),
    "throttled": lambda: Reply(503, [("Retry-After", "300")], SECRET_QUERY.encode()),
    "stall": lambda: Reply(200, body=iter(lambda: b"x", None), chunked=True, chunk_delay=0.1),
}


@pytest.mark.parametrize("failure", DOWNLOAD_FAILURES)
async def test_download_host_failures_never_show_the_location(
    graph: LoopbackServer,
    files: LoopbackServer,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, DOWNLOAD_FAILURES[failure]())
    limits = dataclasses.replace(FAST, graph_request_seconds=0.5)
    async with client_for(graph, limits) as client:
        with pytest.raises(GraphError) as caught:
            await client.download(CONTENT.removeprefix("/v1.0"))
    error = caught.value
    assert_no_secret(error, error.to_payload(), error.__cause__, error.__context__)
    assert_no_secret(*[r.getMessage() for r in caplog.records])


async def test_download_host_refusing_connections(graph: LoopbackServer) -> None:
    location = f"http://127.0.0.1:{free_port()}{SECRET_PATH}?{SECRET_QUERY}"
    graph.route("GET", CONTENT, Reply(302, [("Location", location)]))
    async with client_for(graph) as client:
        with pytest.raises(GraphError) as caught:
            await client.download(CONTENT.removeprefix("/v1.0"))
    assert str(caught.value) == "the file's download host: could not connect"
    assert_no_secret(caught.value, caught.value.__context__)


# --- smaller contracts -----------------------------------------------------------------


class SignedOut(RecordingTokens):
    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        raise AuthError("not signed in", hint="run `mfconnector login` in a terminal")


async def test_no_token_means_no_request(graph: LoopbackServer) -> None:
    async with client_for(graph, tokens=SignedOut()) as client:
        with pytest.raises(AuthError):
            await client.get_json("/me")
    assert graph.requests == []


async def test_root_has_no_trailing_slash() -> None:
    root = "https://graph.microsoft.us/v1.0/"
    async with GraphClient(token_provider=RecordingTokens(), root=root) as client:
        assert client.root == "https://graph.microsoft.us/v1.0"


@pytest.mark.parametrize(
    ("data", "parsed"),
    [(b'\xef\xbb\xbf{"a": 1}', {"a": 1}), (b'{"a": "\\ud83d\\ude0a"}', {"a": "😊"}), (b"[]", [])],
    ids=["bom", "surrogate-pair", "array"],
)
def test_parse_json_strict_accepts(data: bytes, parsed: Any) -> None:
    assert parse_json_strict(data) == parsed


@pytest.mark.parametrize("data", [b"", b"{", b"1" * 5_000, b"Infinity", b"\xc3\x28"])
def test_parse_json_strict_refuses(data: bytes) -> None:
    with pytest.raises(GraphError, match=r"^invalid JSON from Graph"):
        parse_json_strict(data)


async def test_an_overflowing_number_from_graph_is_invalid_json(graph: LoopbackServer) -> None:
    """1e999 would become infinity, which no reply could carry: refused at the parse."""
    graph.route(
        "GET", "/v1.0/me", Reply(200, [("Content-Type", "application/json")], b'{"a": 1e999}')
    )
    async with GraphClient(token_provider=RecordingTokens(), root=f"{graph.url}/v1.0") as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("/me")
    assert "not valid JSON" in caught.value.message


# --- what a body costs once parsed: graph_body_values at L-1, L, L+1 ---------------------


def zeros_body(values: int) -> bytes:
    """``{"value":[0,0,...]}`` holding exactly ``values`` JSON values (keys included)."""
    return b'{"value":[' + b",".join([b"0"] * (values - 3)) + b"]}"


@pytest.mark.parametrize(("values", "parsed"), [(99, True), (100, True), (101, False)])
async def test_a_graph_body_past_the_value_limit_is_refused_unparsed(
    graph: LoopbackServer, values: int, parsed: bool
) -> None:
    limits = dataclasses.replace(FAST, graph_body_values=100)
    graph.route("GET", "/v1.0/me/messages", Reply(200, body=zeros_body(values)))
    async with client_for(graph, limits) as client:
        if parsed:
            answer = await client.get_json("/me/messages")
            assert answer.body == {"value": [0] * (values - 3)}
        else:
            with pytest.raises(ResponseTooLargeError, match="101 JSON values, more than the 100"):
                await client.get_json("/me/messages")


async def test_two_mb_of_empty_objects_is_refused_before_it_costs_100_mb(
    graph: LoopbackServer,
) -> None:
    """0.2.0 parsed it into about 104 MB of dicts; now the count refuses it first."""
    body = b'{"value":[' + b",".join([b"{}"] * 666_000) + b"]}"
    assert len(body) <= DEFAULT_LIMITS.graph_body_bytes
    graph.route("GET", "/v1.0/me/messages", Reply(200, body=body))
    async with client_for(graph) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLargeError, match="JSON values"):
                await client.get_json("/me/messages")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 16_000_000  # the body and one blanked copy, never the parsed objects


@pytest.mark.parametrize(
    ("extra", "kept_whole"), [(-1, True), (0, True), (1, False)], ids=["L-1", "L", "L+1"]
)
async def test_a_download_content_type_is_cut_at_its_limit(
    graph: LoopbackServer, files: LoopbackServer, extra: int, kept_whole: bool
) -> None:
    limit = 40  # the server's limit, not the default: the reader must take the one it has
    limits = dataclasses.replace(FAST, content_type_chars=limit)
    given = "text/plain; name=" + "n" * (limit + extra - len("text/plain; name="))
    graph.route("GET", CONTENT, redirect_to(files))
    files.route("GET", SECRET_PATH, Reply(200, [("Content-Type", given)], b"abc"))
    async with client_for(graph, limits) as client:
        result = await client.download(CONTENT.removeprefix("/v1.0"))
    assert result.data == b"abc"  # the file itself is read either way
    if kept_whole:
        assert result.content_type == given
    else:
        assert result.content_type is not None
        assert len(result.content_type) == limit
        assert result.content_type == given[: limit - 1] + "…"
