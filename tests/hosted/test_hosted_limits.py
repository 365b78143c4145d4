"""Hosted mode's own limits, each at L-1, L and L+1: concurrent requests per user and in
all, the request deadline, legacy sessions and per-user state.

The ASGI app is driven in-process with real bearer tokens (``LocalIssuer`` over a real
loopback JWKS) and a tool that waits until the test lets it go, so "in flight" is exact
without timing guesses. The process-level behaviour is in test_hosted_http.py.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import trio

from mfconnector.hosted.bearer import BearerVerifier, Subject
from mfconnector.hosted.http_app import McpHttpApp
from mfconnector.hosted.jwks import JwksCache
from mfconnector.hosted.resource import ResourceSettings
from mfconnector.hosted.sessions import LegacySessions
from mfconnector.hosted.tenants import Tenant, TenantPool
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.server import McpServer
from mfconnector.tools.base import Tool, ToolContext
from tests.support.harness import plain_context
from tests.support.loopback import LoopbackServer
from tests.support.oauth_issuer import SCOPE, LocalIssuer

PUBLIC_URL = "https://mail.example.test/mcp"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Gate:
    """The waiting tool's control: how many calls are inside, and the event that frees them."""

    def __init__(self) -> None:
        self.inside = 0
        self.seen = 0
        self.cancelled = 0
        self.release = trio.Event()
        self.entered, self.entries = trio.open_memory_channel[None](64)

    async def handler(self, context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        self.inside += 1
        self.entered.send_nowait(None)
        try:
            await self.release.wait()
        except trio.Cancelled:
            self.cancelled += 1
            raise
        return {"done": True}


def waiting_tool(gate: Gate) -> Tool:
    return Tool(
        name="wait",
        title="Wait",
        description="Waits until the test releases it.",
        input_schema={"type": "object"},
        output_schema=None,
        handler=gate.handler,
    )


@pytest.fixture
def issuer() -> Iterator[LocalIssuer]:
    with LoopbackServer() as server:
        local = LocalIssuer(server)
        local.publish()
        yield local


class Harness:
    def __init__(
        self, app: McpHttpApp, issuer: LocalIssuer, gate: Gate, tenants: TenantPool
    ) -> None:
        self.app, self.issuer, self.gate, self.tenants = app, issuer, gate, tenants
        self.chunks_read = 0

    async def post(
        self,
        user: str,
        method: str = "tools/call",
        *,
        body_never_ends: bool = False,
        chunks: list[bytes] | None = None,
        content_length: int | None = None,
        progress: bool = False,
        disconnect: trio.Event | None = None,
        legacy: dict[str, Any] | None = None,
        session: str | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request through the app; ``chunks`` replace the JSON body, and
        ``self.chunks_read`` counts how many of them the app took."""
        params: dict[str, Any] = {"_meta": META}
        headers = {
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
            "content-type": "application/json",
        }
        if method == "tools/call":
            params.update(name="wait", arguments={})
            headers["mcp-name"] = "wait"
        if progress:
            params["_meta"] = {**META, "progressToken": "p1"}
            headers["accept"] = "application/json, text/event-stream"
        token = self.issuer.token(PUBLIC_URL, oid=f"00000000-0000-0000-0000-{user:0>12}")
        headers["authorization"] = f"Bearer {token}"
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        if legacy is not None:  # a 2025 message: no modern headers, maybe a session
            body = json.dumps(legacy).encode()
            del headers["mcp-protocol-version"], headers["mcp-method"]
        if session is not None:
            headers["mcp-session-id"] = session
        pending = list(chunks) if chunks is not None else [body]
        if content_length is not None:
            headers["content-length"] = str(content_length)
        sent: list[dict[str, Any]] = []
        self.chunks_read = 0

        async def receive() -> dict[str, Any]:
            if not pending and disconnect is not None:
                await disconnect.wait()
                return {"type": "http.disconnect"}
            if body_never_ends or not pending:
                await trio.sleep_forever()
            self.chunks_read += 1
            chunk = pending.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
        await self.app(scope, receive, send)
        start, *content = sent
        response_headers = {k.decode(): v.decode() for k, v in start["headers"]}
        return start["status"], response_headers, b"".join(part["body"] for part in content)


@pytest.fixture
async def make(issuer: LocalIssuer) -> AsyncIterator[Any]:
    async with httpx.AsyncClient(trust_env=False) as client:

        def build(limits: Limits, *, broken: bool = False) -> Harness:
            resource = ResourceSettings.build(
                public_url=PUBLIC_URL, issuer=issuer.issuer, scope=SCOPE, jwks_url=issuer.jwks_url
            )
            verifier = BearerVerifier(resource, JwksCache(resource, client, limits), limits)
            gate = Gate()
            context = plain_context(limits)

            def tenant(subject: Subject) -> Tenant:
                if broken:
                    raise RuntimeError("a bug while building a user's state")

                def new_server() -> McpServer:
                    return McpServer([waiting_tool(gate)], context)

                async def close() -> None:
                    return None

                return Tenant(new_server(), new_server, close)

            tenants = TenantPool(tenant, limits.http_subjects)
            return Harness(McpHttpApp(resource, verifier, tenants, limits), issuer, gate, tenants)

        yield build


async def wait_inside(gate: Gate, count: int) -> None:
    with trio.fail_after(10):
        while gate.seen < count:
            await gate.entries.receive()
            gate.seen += 1


async def test_requests_per_subject_at_l_minus_1_l_and_l_plus_1(make: Any) -> None:
    limit = 3
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, http_requests_per_subject=limit))
    statuses: list[int] = []

    async def one(user: str) -> None:
        status, _, _ = await harness.post(user)
        statuses.append(status)

    async with trio.open_nursery() as nursery:
        for _ in range(limit - 1):
            nursery.start_soon(one, "a1")
        await wait_inside(harness.gate, limit - 1)
        nursery.start_soon(one, "a1")  # the L-th is served
        await wait_inside(harness.gate, limit)
        status, headers, body = await harness.post("a1")  # the (L+1)-th is refused
        assert status == 429
        assert headers["retry-after"] == "1"
        assert "too many requests at once" in json.loads(body)["error"]["message"]
        other, _, _ = await harness.post("b2", "tools/list")  # another user is not held up
        assert other == 200
        harness.gate.release.set()
    assert statuses == [200] * limit


async def test_requests_in_all_at_l_minus_1_l_and_l_plus_1(make: Any) -> None:
    limit = 3
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, http_requests=limit))
    statuses: list[int] = []

    async def one(user: str) -> None:
        status, _, _ = await harness.post(user)
        statuses.append(status)

    async with trio.open_nursery() as nursery:
        for index in range(limit - 1):
            nursery.start_soon(one, f"u{index}")
        await wait_inside(harness.gate, limit - 1)
        nursery.start_soon(one, "u8")
        await wait_inside(harness.gate, limit)
        status, headers, _ = await harness.post("u9", "tools/list")
        assert status == 503
        assert headers["retry-after"] == "1"
        harness.gate.release.set()
    assert statuses == [200] * limit
    after, _, _ = await harness.post("u9", "tools/list")
    assert after == 200


@pytest.mark.slow
async def test_a_tool_call_past_the_request_deadline_gets_an_error(make: Any) -> None:
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, http_request_seconds=0.5))
    with trio.fail_after(10):
        status, _, body = await harness.post("a1")
    assert status == 200
    reply = json.loads(body)
    assert reply["id"] == 1
    assert "did not finish within 0.5 s" in reply["error"]["message"]


@pytest.mark.slow
async def test_a_body_that_never_ends_is_408(make: Any) -> None:
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, http_request_seconds=0.5))
    with trio.fail_after(10):
        status, _, body = await harness.post("a1", body_never_ends=True)
    assert status == 408
    assert "did not arrive within 0.5 s" in json.loads(body)["error"]["message"]


async def test_an_unexpected_failure_is_500_in_our_words(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    harness: Harness = make(DEFAULT_LIMITS, broken=True)
    status, _, body = await harness.post("a1", "tools/list")
    assert status == 500
    reply = json.loads(body)
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert "a bug while building" not in body.decode()
    assert "unexpected failure serving POST /mcp" in caplog.text


async def test_closing_a_progress_stream_cancels_the_call(make: Any) -> None:
    harness: Harness = make(DEFAULT_LIMITS)
    gone = trio.Event()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:

            async def streamed() -> None:
                status, headers, _ = await harness.post("a1", progress=True, disconnect=gone)
                assert status == 200
                assert headers["content-type"] == "text/event-stream"

            nursery.start_soon(streamed)
            await wait_inside(harness.gate, 1)
            gone.set()  # the client closes the stream while the tool is still running
    assert harness.gate.cancelled == 1
    after, _, _ = await harness.post("a1", "tools/list")
    assert after == 200


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_body_cap_at_l_minus_1_l_and_l_plus_1(make: Any, delta: int) -> None:
    limit = 200
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, line_bytes=limit))
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META, "pad": ""}}
    )
    body = body.replace('"pad": ""', '"pad": "' + "x" * (limit + delta - len(body)) + '"')
    assert len(body) == limit + delta
    status, _, answer = await harness.post("a1", "tools/list", chunks=[body.encode()])
    assert status == (413 if delta > 0 else 200)
    if delta > 0:
        assert f"{limit}-byte limit" in json.loads(answer)["error"]["message"]


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_refused_body_drained_at_l_minus_1_l_and_l_plus_1(make: Any, delta: int) -> None:
    """A declared body over the cap: drained when the excess is within ``http_drain_bytes``
    (the client can read its 413), left unread past it."""
    limits = dataclasses.replace(DEFAULT_LIMITS, line_bytes=100, http_drain_bytes=50)
    harness: Harness = make(limits)
    total = limits.line_bytes + limits.http_drain_bytes + delta
    chunks = [b"x"] * total
    status, _, _ = await harness.post("a1", "tools/list", chunks=chunks, content_length=total)
    assert status == 413
    assert harness.chunks_read == (total if delta <= 0 else 0)


# --- sessions and per-user state --------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def a_server() -> McpServer:
    return McpServer([], plain_context())


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_sessions_kept_at_l_minus_1_l_and_l_plus_1(delta: int) -> None:
    limit = 4
    clock = Clock()
    sessions = LegacySessions(dataclasses.replace(DEFAULT_LIMITS, http_sessions=limit), clock)
    ids = []
    for _ in range(limit + delta):
        ids.append(sessions.create("owner", a_server(), "2025-11-25"))
        clock.now += 1
    assert len(sessions) == min(limit, limit + delta)
    first_kept = sessions.get(ids[0], "owner") is not None
    assert first_kept == (delta <= 0)
    assert sessions.get(ids[-1], "owner") is not None


def test_session_expires_when_idle_and_use_keeps_it_alive() -> None:
    idle = DEFAULT_LIMITS.http_session_idle_seconds
    clock = Clock()
    sessions = LegacySessions(DEFAULT_LIMITS, clock)
    session_id = sessions.create("owner", a_server(), "2025-11-25")
    clock.now += idle - 1
    assert sessions.get(session_id, "owner") is not None  # used: the idle time starts again
    clock.now += idle - 1
    assert sessions.get(session_id, "owner") is not None
    clock.now += idle
    assert sessions.get(session_id, "owner") is None
    assert len(sessions) == 0


def test_a_session_belongs_to_its_creator() -> None:
    sessions = LegacySessions(DEFAULT_LIMITS)
    session_id = sessions.create("alice", a_server(), "2025-11-25")
    assert sessions.get(session_id, "bob") is None
    assert not sessions.end(session_id, "bob")
    assert sessions.end(session_id, "alice")
    assert sessions.get(session_id, "alice") is None


def subject(user: str) -> Subject:
    return Subject(
        issuer="https://issuer.test",
        tenant="t",
        object_id=user,
        subject=user,
        scopes=frozenset(),
        token="x",
    )


def pool_of(limit: int, built: list[str], closed: list[str]) -> TenantPool:
    def build(who: Subject) -> Tenant:
        built.append(who.subject)

        async def close() -> None:
            closed.append(who.subject)

        return Tenant(a_server(), a_server, close)

    return TenantPool(build, limit)


async def tenant_of(pool: TenantPool, user: str) -> Tenant:
    async with pool.use(subject(user)) as tenant:
        return tenant


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_user_state_kept_at_l_minus_1_l_and_l_plus_1(delta: int) -> None:
    limit = 3
    built: list[str] = []
    closed: list[str] = []
    dropped: list[str] = []
    pool = pool_of(limit, built, closed)
    pool.on_drop = dropped.append
    users = [f"user{index}" for index in range(limit + delta)]
    tenants = [await tenant_of(pool, user) for user in users]
    assert len(pool) == min(limit, limit + delta)
    assert closed == (["user0"] if delta > 0 else [])
    assert dropped == ([subject("user0").key] if delta > 0 else [])
    assert await tenant_of(pool, users[-1]) is tenants[-1]  # kept, not rebuilt
    first = await tenant_of(pool, "user0")
    assert (first is tenants[0]) == (delta <= 0)
    assert built.count("user0") == (2 if delta > 0 else 1)


async def test_user_state_in_use_is_never_dropped() -> None:
    built: list[str] = []
    closed: list[str] = []
    pool = pool_of(1, built, closed)
    async with pool.use(subject("busy")) as busy:
        async with pool.use(subject("other")) as other:
            assert len(pool) == 2  # over capacity while both are in use
            assert closed == []
        # "busy" is the least recently used, but in use: "other" goes instead
        assert closed == ["other"]
        async with pool.use(subject("busy")) as again:
            assert again is busy
    assert other is not busy
    assert len(pool) == 1


async def test_a_dropped_users_sessions_answer_404(make: Any) -> None:
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, http_subjects=1))
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    status, headers, _ = await harness.post("a1", legacy=initialize)
    assert status == 200
    session_id = headers["mcp-session-id"]
    assert (await harness.post("a1", legacy=listing, session=session_id))[0] == 200
    assert (await harness.post("b2", "tools/list"))[0] == 200  # a1's state is dropped
    assert (await harness.post("a1", legacy=listing, session=session_id))[0] == 404


def test_dropped_users_sessions_end() -> None:
    sessions = LegacySessions(DEFAULT_LIMITS)
    mine = [sessions.create("alice", a_server(), "2025-11-25") for _ in range(2)]
    theirs = sessions.create("bob", a_server(), "2025-11-25")
    assert sessions.end_all("alice") == 2
    assert all(sessions.get(session_id, "alice") is None for session_id in mine)
    assert sessions.get(theirs, "bob") is not None


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_request_integer_digits_at_l_minus_1_l_and_l_plus_1(make: Any, delta: int) -> None:
    """The HTTP body is parsed with the server's ``request_integer_digits``, as stdio is."""
    limit = 6
    harness: Harness = make(dataclasses.replace(DEFAULT_LIMITS, request_integer_digits=limit))
    number = "9" * (limit + delta)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META, "n": 0}}
    ).replace('"n": 0', f'"n": {number}')
    status, _, answer = await harness.post("a1", "tools/list", chunks=[body.encode()])
    assert status == (400 if delta > 0 else 200)
    if delta > 0:
        assert json.loads(answer)["error"]["message"].startswith("Invalid params")
