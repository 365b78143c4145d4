"""Interop: the official MCP SDK client's elicitation callback is the person, in each era.

The real server process (``tests/write_server.py``: every gate on, a loopback Graph, the
SQLite state file) is driven by ``mcp`` 2.3.0 over real pipes: ``Client(mode="2026-07-28")``
(the SDK's multi round-trip driver answers ``input_required`` through the callback),
``Client(mode="legacy")`` (2025-11-25; the server sends ``elicitation/create``), and the
lower-level ``ClientSession`` handshaking 2025-06-18. The callback sees the exact message
and answers accept (Send), decline or cancel; send requests are counted at the loopback
Graph. A forged ``requestState`` is sent with the SDK's own manual retry.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import trio
from acting import Draft, ScriptedMailbox, outlook_id, ref
from loopback import LoopbackServer
from mcp import Client, ClientSession, StdioServerParameters
from test_interop_sdk import (
    READ_TIMEOUT_SECONDS,
    REPO_ROOT,
    TEST_SECONDS,
    Wire,
    recorded_stdio,
    server_stderr,
)

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parent / "write_server.py"
ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
INFO = types.Implementation(name="mfconnector-interop", version="1")


class Person:
    """The elicitation callback: records what was shown and answers as told."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.shown: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.shown.append(params.message)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content={"decision": "Send"})
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


@asynccontextmanager
async def connected(
    tmp_path: Path, graph: LoopbackServer, era: str, person: Person
) -> AsyncIterator[Any]:
    """Something with ``call_tool`` on the real server process, in ``era``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER), f"{graph.url}/v1.0", str(tmp_path)],
        cwd=REPO_ROOT,
        env={"HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).parent)},
    )
    wire = Wire()
    with server_stderr(tmp_path) as errlog:
        transport = recorded_stdio(params, errlog, wire)
        if era == "2025-06-18":
            async with (
                transport as (read_stream, write_stream),
                ClientSession(
                    read_stream,
                    write_stream,
                    read_timeout_seconds=READ_TIMEOUT_SECONDS,
                    client_info=INFO,
                    elicitation_callback=person,
                ) as session,
            ):
                result = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version=era,
                            capabilities=types.ClientCapabilities(
                                elicitation=types.ElicitationCapability()
                            ),
                            client_info=INFO,
                        )
                    ),
                    types.InitializeResult,
                )
                session.adopt(result)
                await session.send_notification(types.InitializedNotification())
                yield session
        else:
            async with Client(
                transport,
                mode="legacy" if era == "2025-11-25" else era,
                read_timeout_seconds=READ_TIMEOUT_SECONDS,
                client_info=INFO,
                elicitation_callback=person,
            ) as client:
                yield client


async def prepare(client: Any, draft: Draft) -> dict[str, Any]:
    read = await client.call_tool("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    digest = read.structured_content["source_digest"]
    prepared = await client.call_tool(
        "mail_prepare", {"action": "draft", "message_id": ref(draft.id), "source_digest": digest}
    )
    data = prepared.structured_content
    return {"prepared_id": data["prepared_id"], "confirmed_digest": data["digest"]}


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
@pytest.mark.parametrize("era", ERAS)
async def test_the_sdk_callback_is_asked_and_only_its_accept_sends(
    tmp_path: Path, graph: LoopbackServer, era: str, action: str
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(
        Draft(outlook_id(f"sdk{era}{action}"), subject="Board pack", cc=["lee@contoso.com"])
    )
    person = Person(action)
    with trio.fail_after(TEST_SECONDS):
        async with connected(tmp_path, graph, era, person) as client:
            arguments = await prepare(client, draft)
            result = await client.call_tool("mail_send_confirmed", arguments)
    assert len(person.shown) == 1, "the person was asked once"
    shown = person.shown[0]
    assert "megan@contoso.com" in shown and "lee@contoso.com" in shown and "Board pack" in shown
    if action == "accept":
        assert result.is_error is False
        assert result.structured_content["confirmed_by"] == "person"
        assert len(mailbox.sends()) == 1
    else:
        assert result.is_error is True
        assert "nothing was sent" in result.content[0].text
        assert mailbox.sends() == []


async def test_a_forged_request_state_through_the_sdk_is_refused_and_nothing_is_sent(
    tmp_path: Path, graph: LoopbackServer
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("sdkforged")))
    person = Person("accept")
    accept = {"confirm": types.ElicitResult(action="accept", content={"decision": "Send"})}
    with trio.fail_after(TEST_SECONDS):
        async with connected(tmp_path, graph, "2026-07-28", person) as client:
            arguments = await prepare(client, draft)
            first = await client.session.call_tool(
                "mail_send_confirmed", arguments, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            state = first.request_state
            assert state is not None
            forged = state[:-3] + ("AAA" if not state.endswith("AAA") else "BBB")
            refused = await client.session.call_tool(
                "mail_send_confirmed",
                arguments,
                input_responses=accept,
                request_state=forged,
                allow_input_required=True,
            )
            sent_before = len(mailbox.sends())
            honest = await client.session.call_tool(
                "mail_send_confirmed",
                arguments,
                input_responses=accept,
                request_state=state,
                allow_input_required=True,
            )
    assert isinstance(refused, types.CallToolResult) and refused.is_error is True
    assert "requestState" in refused.content[0].text
    assert sent_before == 0
    assert isinstance(honest, types.CallToolResult) and honest.is_error is False
    assert len(mailbox.sends()) == 1
