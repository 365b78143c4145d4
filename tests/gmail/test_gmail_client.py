"""The Gmail client's bounds: where the token may go, bytes, concurrency, retries, scopes.

Over real loopback HTTP against the emulator, except where a test needs an answer Google
would never give (a redirect, a compressed body, a stall): those come from an httpx
transport, the seam where the network is.
"""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest
import trio

from mfconnector.auth import StaticTokenProvider
from mfconnector.gmail.api_root import ApiRootError, checked_api_root
from mfconnector.gmail.client import GmailClient
from mfconnector.gmail_emulator import READONLY, GmailTransport
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.failures import ActionFailure, InsufficientScope, Throttled
from mfconnector.mail.query import MessageFilter, PageRequest
from mfconnector.mail.refs import Reference
from tests.support.gmail_loopback import TOKEN, backend_for, demo_emulator, empty_emulator, served

FAST = dataclasses.replace(DEFAULT_LIMITS, graph_retry_total_seconds=5.0)


@pytest.mark.parametrize(
    "root",
    ["https://gmail.googleapis.com", "https://proxy.example/gmail/", "http://127.0.0.1:8080",
     "http://[::1]:9000", "http://localhost:1234"],
)  # fmt: skip
def test_accepted_api_roots(root: str) -> None:
    assert checked_api_root(root) == root.rstrip("/")


@pytest.mark.parametrize(
    ("root", "words"),
    [
        ("http://gmail.example", "loopback"),
        ("http://10.0.0.1", "loopback"),
        ("ftp://127.0.0.1", "https"),
        ("https://user:pw@gmail.example", "password"),
        ("https://gmail.example/?q=1", "query"),
        ("not a url", "https"),
    ],
)
def test_refused_api_roots_say_why(root: str, words: str) -> None:
    with pytest.raises(ApiRootError, match=words):
        checked_api_root(root)


def _client(transport: httpx.AsyncBaseTransport, limits: Limits = FAST) -> GmailClient:
    return GmailClient(
        token_provider=StaticTokenProvider(TOKEN),
        limits=limits,
        root="https://gmail.googleapis.com",
        transport=transport,
    )


async def test_a_redirect_is_not_followed_and_the_token_goes_nowhere_else() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            302,
            headers={"Location": "https://elsewhere.example/steal"},
            stream=httpx.ByteStream(b""),
        )

    client = _client(httpx.MockTransport(answer))
    with pytest.raises(ActionFailure, match="redirect"):
        await client.get("labels")
    await client.aclose()
    assert [r.url.host for r in seen] == ["gmail.googleapis.com"]


async def test_a_compressed_answer_is_refused_not_inflated() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept-encoding"] == "identity"
        return httpx.Response(
            200, headers={"Content-Encoding": "gzip"}, stream=httpx.ByteStream(b"\x1f\x8b")
        )

    client = _client(httpx.MockTransport(answer))
    with pytest.raises(ActionFailure, match="gzip"):
        await client.get("labels")
    await client.aclose()


@pytest.mark.parametrize(
    "body",
    [
        b'{"labels": NaN, "secret": "hunter2"}',
        b'{"labels": 1e999, "secret": "hunter2"}',
        b'{"labels": [], "secret": "hunter2\xff"}',
        b"[" * 10_000 + b'"hunter2"' + b"]" * 10_000,
        b'{"labels": [], "secret": "hunter2"',
    ],
    ids=["nan", "overflowing-number", "not-utf8", "nested-too-deeply", "cut-short"],
)
async def test_an_answer_that_is_not_standard_json_is_refused_without_echoing_it(
    body: bytes,
) -> None:
    """Gmail's answers are read with the same strict JSON as Graph's (net.capped_body)."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=httpx.ByteStream(body))

    client = _client(httpx.MockTransport(answer))
    with pytest.raises(ActionFailure, match="not valid JSON") as caught:
        await client.get("labels")
    await client.aclose()
    assert "hunter2" not in str(caught.value) and caught.value.retry_safe
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


async def test_an_answer_declaring_more_than_the_cap_is_refused_before_reading() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"Content-Length": str(FAST.graph_body_bytes + 1)},
            stream=httpx.ByteStream(b"{}"),
        )

    client = _client(httpx.MockTransport(answer))
    with pytest.raises(ActionFailure, match="graph_body_bytes"):
        await client.get("labels")
    await client.aclose()
    assert client.counter.bytes_read == 0


@pytest.mark.parametrize("extra", [-1, 0, 1])
async def test_the_body_cap_at_its_limit(extra: int) -> None:
    emulator = empty_emulator()
    probe = _client(GmailTransport(emulator))
    await probe.get("labels")
    size = probe.counter.bytes_read
    await probe.aclose()
    limits = dataclasses.replace(FAST, graph_body_bytes=size + extra)
    client = _client(GmailTransport(emulator), limits)
    if extra < 0:
        with pytest.raises(ActionFailure, match="graph_body_bytes"):
            await client.get("labels")
    else:
        assert "labels" in await client.get("labels")
    await client.aclose()


class _Counting(httpx.AsyncBaseTransport):
    """Answers from the emulator after a pause, counting requests in flight."""

    def __init__(self, inner: GmailTransport) -> None:
        self.inner = inner
        self.now = 0
        self.most = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await trio.sleep(0.01)
            return await self.inner.handle_async_request(request)
        finally:
            self.now -= 1


@pytest.mark.parametrize("limit", [DEFAULT_LIMITS.gmail_concurrency - 1,
                                   DEFAULT_LIMITS.gmail_concurrency,
                                   DEFAULT_LIMITS.gmail_concurrency + 1])  # fmt: skip
async def test_label_counts_are_fetched_at_most_gmail_concurrency_at_once(limit: int) -> None:
    from mfconnector.gmail.account import gmail_account

    counting = _Counting(GmailTransport(demo_emulator()))
    account = gmail_account(
        "gmail",
        token_provider=StaticTokenProvider(TOKEN),
        limits=dataclasses.replace(FAST, gmail_concurrency=limit),
        transport=counting,
    )
    page = await account.mail.folders(None, PageRequest(limit=50))
    assert len([f for f in page.items if f.total is not None]) > limit + 1
    assert counting.most == limit


class _Paths(httpx.AsyncBaseTransport):
    def __init__(self, inner: GmailTransport) -> None:
        self.inner = inner
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await self.inner.handle_async_request(request)


@pytest.mark.parametrize("extra", [-1, 0, 1])
async def test_a_page_s_metadata_goes_in_batches_of_gmail_batch_calls(extra: int) -> None:
    from mfconnector.gmail.account import gmail_account

    page_size = 20
    recording = _Paths(GmailTransport(demo_emulator()))
    account = gmail_account(
        "gmail",
        token_provider=StaticTokenProvider(TOKEN),
        limits=dataclasses.replace(FAST, gmail_batch_calls=page_size + extra),
        transport=recording,
    )
    every = await account.mail.resolve_folder("all", "folder")
    recording.paths.clear()
    page = await account.mail.list_messages(every, MessageFilter(), PageRequest(limit=page_size))
    assert len(page.items) == page_size and len(set(m.ref for m in page.items)) == page_size
    batches = recording.paths.count("/batch")
    assert batches == (2 if extra < 0 else 1)
    assert len(recording.paths) == 1 + batches  # messages.list, then the batches: no gets


async def test_calls_a_batch_could_not_answer_are_asked_again_one_by_one() -> None:
    from mfconnector.gmail.account import gmail_account

    emulator = demo_emulator()
    emulator.add_fault(status=429, retry_after="0", path_contains="/messages/1", times=3)
    recording = _Paths(GmailTransport(emulator))
    account = gmail_account(
        "gmail", token_provider=StaticTokenProvider(TOKEN), limits=FAST, transport=recording
    )
    every = await account.mail.resolve_folder("all", "folder")
    recording.paths.clear()
    page = await account.mail.list_messages(every, MessageFilter(), PageRequest(limit=30))
    assert len(page.items) == 30
    single = [p for p in recording.paths if p.startswith("/gmail/v1/users/me/messages/")]
    assert len(single) == 3  # the three refused inside the batch, each fetched on its own


async def test_a_rate_limit_is_retried_after_its_retry_after() -> None:
    emulator = empty_emulator()
    emulator.add_fault(status=403, reason="userRateLimitExceeded", retry_after="0", times=2)
    client = _client(GmailTransport(emulator))
    assert "labels" in await client.get("labels")
    assert client.counter.requests == 3
    await client.aclose()


@pytest.mark.parametrize(("status", "reason"), [(429, "rateLimitExceeded"),
                                                (403, "rateLimitExceeded"),
                                                (403, "userRateLimitExceeded")])  # fmt: skip
async def test_a_lasting_rate_limit_ends_in_throttled_with_the_wait(
    status: int, reason: str
) -> None:
    emulator = empty_emulator()
    emulator.add_fault(status=status, reason=reason, retry_after="0")
    client = _client(GmailTransport(emulator))
    with pytest.raises(Throttled) as caught:
        await client.get("labels")
    await client.aclose()
    payload = caught.value.to_payload()
    assert caught.value.error_code == "throttled" and caught.value.retry_safe is True
    assert payload["retry_after_seconds"] == 0.0 and payload["provider"] == "gmail"
    assert client.counter.requests == 1 + FAST.graph_retries


async def test_a_retry_after_longer_than_allowed_fails_fast_with_it() -> None:
    emulator = empty_emulator()
    emulator.add_fault(status=429, retry_after="3600")
    client = _client(GmailTransport(emulator))
    with trio.fail_after(5):
        with pytest.raises(Throttled) as caught:
            await client.get("labels")
    await client.aclose()
    assert caught.value.retry_after_seconds == 3600.0 and client.counter.requests == 1


async def test_a_token_without_the_scope_names_the_login_command() -> None:
    emulator = empty_emulator(scopes=[READONLY])
    message = emulator.mailbox.add_message(
        b"From: a@mail.example\r\nTo: me@mail.example\r\nSubject: s\r\n\r\nhi\r\n", ["INBOX"]
    )
    with served(emulator) as server:
        backend = backend_for(server, gates={"writes"})
        with pytest.raises(InsufficientScope) as caught:
            await backend.trash(Reference(backend.tag, message.id))
    payload = caught.value.to_payload()
    assert caught.value.error_code == "insufficient_scope"
    assert "mfconnector login --provider gmail --enable-writes" in payload["hint"]
    assert TOKEN not in json.dumps(payload)


async def test_a_refused_token_is_refreshed_once() -> None:
    class Rotating:
        def __init__(self) -> None:
            self.calls: list[bool] = []

        async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
            self.calls.append(force_refresh)
            return TOKEN if force_refresh else "expired-token"

        async def describe(self) -> dict[str, object]:
            return {}

    tokens = Rotating()
    client = GmailClient(
        token_provider=tokens,
        limits=FAST,
        transport=GmailTransport(empty_emulator()),
    )
    assert "labels" in await client.get("labels")
    await client.aclose()
    assert tokens.calls == [False, True]


async def test_a_stalled_answer_ends_at_the_request_deadline() -> None:
    async def stall(request: httpx.Request) -> httpx.Response:
        await trio.sleep(30)
        return httpx.Response(200)

    class Stalling(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return await stall(request)

    client = _client(Stalling(), dataclasses.replace(FAST, graph_request_seconds=0.2))
    with pytest.raises(ActionFailure, match="did not finish answering") as caught:
        await client.get("labels")
    await client.aclose()
    assert caught.value.retry_safe


@pytest.mark.parametrize(
    "answer",
    [
        b"",  # empty
        # no Content-ID; a call that was not asked; a part that is not JSON
        b"--b\r\nContent-Type: application/http\r\n\r\nnot http at all\r\n--b--",
        b"--b\r\nContent-ID: <response-99>\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{}\r\n--b--",
        b'--b\r\nContent-ID: <response-0>\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{"id": [[[[\r\n--b--',
    ],
)
async def test_a_broken_batch_answer_falls_back_to_single_gets(answer: bytes) -> None:
    from mfconnector.gmail.account import gmail_account

    emulator = demo_emulator()
    inner = GmailTransport(emulator)

    class BrokenBatch(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path == "/batch":
                return httpx.Response(
                    200,
                    headers={"Content-Type": "multipart/mixed; boundary=b"},
                    stream=httpx.ByteStream(answer),
                )
            return await inner.handle_async_request(request)

    account = gmail_account(
        "gmail", token_provider=StaticTokenProvider(TOKEN), limits=FAST, transport=BrokenBatch()
    )
    every = await account.mail.resolve_folder("all", "folder")
    page = await account.mail.list_messages(every, MessageFilter(), PageRequest(limit=5))
    assert len(page.items) == 5  # unanswered calls were asked again one by one
