"""A client that stops reading its answer: the connection is closed after
``http_send_stall_seconds`` and what it held (its request slot, the unsent bytes) is freed.

The real app under real hypercorn (``hypercorn_config``, as ``serve-http`` builds it) on a
loopback port, driven by raw sockets whose receive buffer is small and which read nothing
after the response headers; the tool answers a progress stream of about 300 KB, far more
than the kernel buffers of such a connection hold. Without the bound the server's write
waits forever, and with every request slot taken by stalled readers everyone else is
answered 503 for good.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from hypercorn.trio import serve

from mfconnector.hosted.bearer import BearerVerifier, Subject
from mfconnector.hosted.http_app import McpHttpApp
from mfconnector.hosted.jwks import JwksCache
from mfconnector.hosted.listeners import hypercorn_config
from mfconnector.hosted.resource import ResourceSettings
from mfconnector.hosted.tenants import Tenant, TenantPool
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.server import McpServer
from mfconnector.tools.base import Tool, ToolContext
from tests.support.harness import modern_meta, plain_context
from tests.support.loopback import LoopbackServer
from tests.support.oauth_issuer import SCOPE, LocalIssuer

pytestmark = pytest.mark.slow

PUBLIC_URL = "https://mail.example.test/mcp"
ANSWER_CHARS = 300_000
RCVBUF = 4096


async def big_answer(context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    context.report_progress(1, 2, "half way")
    return {"text": "x" * ANSWER_CHARS}


BIG = Tool(
    name="big",
    title="Big",
    description="Answers about 300 KB after one progress report.",
    input_schema={"type": "object"},
    output_schema=None,
    handler=big_answer,
)


@pytest.fixture
def issuer() -> Iterator[LocalIssuer]:
    with LoopbackServer() as server:
        local = LocalIssuer(server)
        local.publish()
        yield local


@asynccontextmanager
async def serving(issuer: LocalIssuer, limits: Limits) -> AsyncIterator[tuple[int, Any]]:
    """The app under hypercorn on a free loopback port: (port, token for a user)."""
    async with httpx.AsyncClient(trust_env=False) as client, trio.open_nursery() as nursery:
        resource = ResourceSettings.build(
            public_url=PUBLIC_URL, issuer=issuer.issuer, scope=SCOPE, jwks_url=issuer.jwks_url
        )
        verifier = BearerVerifier(resource, JwksCache(resource, client, limits), limits)
        context = plain_context(limits)

        def tenant(subject: Subject) -> Tenant:
            def new_server() -> McpServer:
                return McpServer([BIG], context)

            async def close() -> None:
                return None

            return Tenant(new_server(), new_server, close)

        app = McpHttpApp(resource, verifier, TenantPool(tenant, limits.http_subjects), limits)
        stop = trio.Event()
        config = hypercorn_config("127.0.0.1:0", limits)
        binds = await nursery.start(
            functools.partial(serve, app, config, shutdown_trigger=stop.wait)
        )
        port = int(binds[0].rsplit(":", 1)[1])

        def token(user: str) -> str:
            return issuer.token(PUBLIC_URL, oid=f"00000000-0000-0000-0000-{user:0>12}")

        try:
            yield port, token
        finally:
            stop.set()


def request_bytes(port: int, token: str) -> bytes:
    """The big call with a progressToken, from a client that takes SSE: a streamed answer."""
    params = {"name": "big", "arguments": {}, "_meta": {**modern_meta(), "progressToken": "p1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n"
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: big\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body.encode()


async def stalled_reader(port: int, token: str) -> tuple[trio.socket.SocketType, bytes]:
    """Sends the big streamed call, reads the response headers, then reads nothing."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    await sock.connect(("127.0.0.1", port))
    await sock.send(request_bytes(port, token))
    head = b""
    while b"\r\n\r\n" not in head:
        head += await sock.recv(256)
    return sock, head


async def fresh_status(port: int, token: str) -> int:
    params = {"name": "big", "arguments": {}, "_meta": modern_meta()}
    headers = {
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "big",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        response = await http.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers)
    return response.status_code


@pytest.mark.parametrize("stall_seconds", [1.0, 2.0])
async def test_stalled_readers_are_cut_and_their_slots_freed(
    issuer: LocalIssuer, stall_seconds: float
) -> None:
    limits = dataclasses.replace(
        DEFAULT_LIMITS, http_requests=2, http_send_stall_seconds=stall_seconds
    )
    async with serving(issuer, limits) as (port, token):
        stalled = [await stalled_reader(port, token(f"s{n}")) for n in range(2)]
        try:
            assert all(head.startswith(b"HTTP/1.1 200") for _, head in stalled)
            started = time.monotonic()
            # both slots are held by readers that take nothing: everyone else waits
            assert await fresh_status(port, token("fresh")) == 503
            with trio.move_on_after(stall_seconds + 10):
                while True:
                    status = await fresh_status(port, token("fresh"))
                    if status != 503:
                        break
                    await trio.sleep(0.2)
            freed_after = time.monotonic() - started
            assert status == 200, f"still 503 after {freed_after:.1f} s"
            assert freed_after >= stall_seconds * 0.5, "cut before the limit"
            # both slots are free again: two new streams open at once
            with trio.move_on_after(stall_seconds + 10):
                while True:
                    again = [await stalled_reader(port, token(f"t{n}")) for n in range(2)]
                    stalled += again
                    if all(head.startswith(b"HTTP/1.1 200") for _, head in again):
                        break
                    for sock, _ in again:  # one still held: give back what was taken
                        sock.close()
                    await trio.sleep(0.2)
            assert all(head.startswith(b"HTTP/1.1 200") for _, head in stalled[-2:])
        finally:  # a reader gone for good frees a stuck server too (a reset)
            for sock, _ in stalled:
                sock.close()


async def test_a_reader_that_pauses_under_the_limit_gets_the_whole_stream(
    issuer: LocalIssuer,
) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, http_send_stall_seconds=3.0)
    async with serving(issuer, limits) as (port, token):
        sock, head = await stalled_reader(port, token("slow"))
        await trio.sleep(1.0)  # a pause shorter than the limit
        data = head.split(b"\r\n\r\n", 1)[1]
        with trio.fail_after(10):
            while chunk := await sock.recv(65536):
                data += chunk
                if data.endswith(b"\r\n0\r\n\r\n"):  # the chunked body's end
                    break
        sock.close()
        events = [line for line in data.split(b"\n") if line.startswith(b"data: ")]
        last = json.loads(events[-1].removeprefix(b"data: "))
        assert last["id"] == 7
        assert len(last["result"]["structuredContent"]["text"]) == ANSWER_CHARS


@pytest.mark.parametrize("seconds", [0.999, 1.0, 1.001])
def test_the_listeners_carry_the_bound_in_milliseconds(seconds: float) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, http_send_stall_seconds=seconds)
    sockets = hypercorn_config("127.0.0.1:0", limits).create_sockets()
    try:
        for sock in sockets.insecure_sockets:
            value = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
            assert value == round(seconds * 1000)
            sock.listen()
            client = socket.create_connection(sock.getsockname())
            accepted, _ = sock.accept()
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == value
            client.close()
            accepted.close()
    finally:
        for sock in sockets.insecure_sockets:
            sock.close()
