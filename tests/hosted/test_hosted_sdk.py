"""Interop over HTTP: the official MCP Python SDK's Streamable HTTP client, with a bearer
token, against the real ``serve-http --demo`` process, in each era the SDK speaks.

The token goes in the SDK's own way: an ``httpx2.AsyncClient`` with an ``Authorization``
header, passed as ``http_client`` to ``streamable_http_client``. 2025-11-25 is the SDK's
``mode="legacy"`` handshake (its session id, its DELETE on close); 2025-06-18 is the
lower-level ``ClientSession`` with the SDK's own ``InitializeRequest`` at that version;
2026-07-28 is ``mode="auto"`` (probes ``server/discover``) and the pinned version.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
import trio
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.hosted_process import HostedServer, hosted_server

pytestmark = pytest.mark.slow

TEST_SECONDS = 60
INFO = types.Implementation(name="mfconnector-http-interop", version="1")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    with hosted_server(tmp_path_factory.mktemp("hosted-sdk")) as running:
        yield running


@asynccontextmanager
async def http_client(server: HostedServer, user: str = "a1") -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(headers=server.auth(user), timeout=30) as client:
        yield client


def messages(result: types.CallToolResult) -> list[Any]:
    assert result.structured_content is not None
    rows: list[Any] = result.structured_content["messages"]
    return rows


@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])
async def test_sdk_client_lists_and_calls_tools(server: HostedServer, mode: str) -> None:
    with trio.fail_after(TEST_SECONDS):
        async with (
            http_client(server) as http,
            Client(
                streamable_http_client(server.url, http_client=http),
                mode=mode,
                client_info=INFO,
                read_timeout_seconds=20,
            ) as client,
        ):
            expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert client.protocol_version == expected
            listed = await client.list_tools()
            names = {tool.name for tool in listed.tools}
            assert {"mail_list", "mail_read", "account_status"} <= names
            result = await client.call_tool("mail_list", {"limit": 3})
            assert len(messages(result)) == 3
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
            assert unknown.value.error.code == -32602


async def test_sdk_session_at_2025_06_18(server: HostedServer) -> None:
    with trio.fail_after(TEST_SECONDS):
        async with (
            http_client(server) as http,
            streamable_http_client(server.url, http_client=http) as (read, write),
            ClientSession(read, write, read_timeout_seconds=20, client_info=INFO) as session,
        ):
            result = await session.send_request(
                types.InitializeRequest(
                    params=types.InitializeRequestParams(
                        protocol_version="2025-06-18",
                        capabilities=types.ClientCapabilities(),
                        client_info=INFO,
                    )
                ),
                types.InitializeResult,
            )
            assert result.protocol_version == "2025-06-18"
            session.adopt(result)
            await session.send_notification(types.InitializedNotification())
            listed = await session.list_tools()
            assert any(tool.name == "mail_list" for tool in listed.tools)
            called = await session.call_tool("mail_list", {"limit": 1})
            assert len(messages(called)) == 1


class Heard:
    """What the SDK handed to one call's progress callback, in order."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.calls.append(progress)


SDK_SSE_GENERATOR_LEFT_OPEN = (
    "ignore:Exception ignored in. <async_generator object "
    r"(EventSource\.__aiter__|PoolByteStream\.__aiter__|Response\.aiter_(bytes|text)) "
    ":pytest.PytestUnraisableExceptionWarning"
)
"""The SDK (2.3.0) stops reading an SSE response at the response event and leaves httpx2's
generators (event source, response and pool streams) to the garbage collector, which warns:
the client's own clean-up, whatever the server sends."""


@pytest.mark.filterwarnings(SDK_SSE_GENERATOR_LEFT_OPEN)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_sdk_progress_arrives_on_the_calls_sse_stream(
    server: HostedServer, mode: str
) -> None:
    with trio.fail_after(TEST_SECONDS):
        async with (
            http_client(server) as http,
            Client(
                streamable_http_client(server.url, http_client=http),
                mode=mode,
                client_info=INFO,
                read_timeout_seconds=20,
            ) as client,
        ):
            heard = Heard()
            result = await client.call_tool(
                "files_read",
                {"path": "Documents/Contract – Fabrikam MSA.pdf"},
                progress_callback=heard,
            )
            assert result.is_error is False
            assert (
                "Master Services Agreement" in (result.structured_content or {})["content"]["text"]
            )
            assert heard.calls, "no progress reached the SDK's callback"
            assert heard.calls == sorted(set(heard.calls))


class Person:
    """The SDK's elicitation callback: records what it was shown and answers as told."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.shown: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.shown.append(params.message)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content={"decision": "Send"})
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def acting_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    flags = ("--enable-writes", "--enable-send", "--confirm", "user")
    with hosted_server(tmp_path_factory.mktemp("hosted-acting"), *flags) as running:
        yield running


@pytest.mark.filterwarnings(SDK_SSE_GENERATOR_LEFT_OPEN)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_2025_session_asks_the_person_over_its_call_stream(
    acting_server: HostedServer, action: str
) -> None:
    """``--confirm user``: only the person may confirm. In a 2025-11-25 session the server's
    ``elicitation/create`` goes out on the call's SSE stream, and the SDK's answer comes
    back in a POST of its own that names the session."""
    person = Person(action)
    with trio.fail_after(TEST_SECONDS):
        async with (
            http_client(acting_server, user=f"p-{action}") as http,
            Client(
                streamable_http_client(acting_server.url, http_client=http),
                mode="legacy",
                client_info=INFO,
                read_timeout_seconds=20,
                elicitation_callback=person,
            ) as client,
        ):
            subject = f"Board pack {action}"
            created = await client.call_tool(
                "mail_create",
                {
                    "action": "draft",
                    "to": ["megan@fabrikam.example"],
                    "subject": subject,
                    "text": "x",
                },
            )
            draft_id = (created.structured_content or {})["draft"]["id"]
            review = await client.call_tool(
                "mail_review", {"action": "draft", "message_id": draft_id}
            )
            digest = (review.structured_content or {})["source_digest"]
            prepared = await client.call_tool(
                "mail_prepare", {"action": "draft", "message_id": draft_id, "source_digest": digest}
            )
            data = prepared.structured_content or {}
            result = await client.call_tool(
                "mail_send_confirmed",
                {"prepared_id": data["prepared_id"], "confirmed_digest": data["digest"]},
            )
    assert len(person.shown) == 1, "the person was asked once"
    assert "megan@fabrikam.example" in person.shown[0] and subject in person.shown[0]
    if action == "accept":
        assert result.is_error is False, result
        assert (result.structured_content or {})["confirmed_by"] == "person"
    else:
        assert result.is_error is True
        assert "nothing was sent" in result.content[0].text  # type: ignore[union-attr]
