"""Tool schemas come from the limits the server runs with, and each argument limit holds
at L-1 and L and refuses L+1 before any Graph request (through real tool calls)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
import trio

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.tools import ALL_TOOLS
from tests.support.harness import client_context, open_session, request
from tests.support.loopback import LoopbackServer

ACTIVE = dataclasses.replace(
    DEFAULT_LIMITS,
    list_items=7,
    cursor_chars=300,
    query_chars=20,
    path_chars=30,
    outlook_id_chars=40,
    drive_id_chars=25,
    body_chars=1_234,
    argument_errors_listed=2,
)
TEST_SECONDS = 20


async def serve(graph: LoopbackServer, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    tokens = StaticTokenProvider("t")
    client = GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens, limits=ACTIVE)
    ctx = client_context(client, ACTIVE, mode="live", tokens=tokens, time_zone="UTC")
    replies = []
    with trio.fail_after(TEST_SECONDS):
        async with client, open_session(context=ctx, limits=ACTIVE) as session:
            replies.append(await session.call(request(0, "tools/list")))
            for index, (name, arguments) in enumerate(calls, 1):
                params = {"name": name, "arguments": arguments}
                replies.append(await session.call(request(index, "tools/call", params)))
    return replies


def schema_of(listing: dict[str, Any], tool: str) -> dict[str, Any]:
    tools = {entry["name"]: entry for entry in listing["result"]["tools"]}
    schema: dict[str, Any] = tools[tool]["inputSchema"]["properties"]
    return schema


async def test_tools_list_publishes_the_active_limits(graph: LoopbackServer) -> None:
    (listing,) = await serve(graph, [])
    for tool in ("mail_list", "mail_search", "mail_folders", "files_list", "files_search"):
        properties = schema_of(listing, tool)
        assert properties["limit"]["maximum"] == 7 and properties["limit"]["default"] == 7
        assert properties["cursor"]["maxLength"] == 300
    assert schema_of(listing, "mail_search")["query"]["maxLength"] == 20
    assert schema_of(listing, "files_list")["path"]["maxLength"] == 30
    assert schema_of(listing, "mail_list")["folder"]["maxLength"] == 30
    assert schema_of(listing, "mail_read")["message_id"]["maxLength"] == 40
    assert schema_of(listing, "files_read")["item_id"]["maxLength"] == 25
    descriptions = {entry["name"]: entry["description"] for entry in listing["result"]["tools"]}
    assert "1,234 characters" in descriptions["mail_read"]
    assert "1,234 characters" in descriptions["files_read"]
    assert "10,000" not in json.dumps(listing)
    # and the default server publishes the defaults
    default = [tool.definition() for tool in ALL_TOOLS]
    assert default[1]["inputSchema"]["properties"]["limit"]["maximum"] == DEFAULT_LIMITS.list_items


def outlook_id(length: int) -> str:
    """A reference of ``length`` characters (``outlook_id_chars`` bounds the whole id)."""
    return ("msb.AAMkAGI2" + "x" * length)[:length]


ARGUMENT_LIMITS: list[tuple[str, str, Callable[[int], dict[str, Any]], int]] = [
    ("mail_list", "limit", lambda n: {"limit": n}, ACTIVE.list_items),
    ("mail_search", "query", lambda n: {"query": "q" * n}, ACTIVE.query_chars),
    ("files_search", "query", lambda n: {"query": "q" * n}, ACTIVE.query_chars),
    ("files_list", "path", lambda n: {"path": "d" * n}, ACTIVE.path_chars),
    ("mail_list", "folder", lambda n: {"folder": outlook_id(n)}, ACTIVE.path_chars),
    ("mail_read", "message_id", lambda n: {"message_id": outlook_id(n)}, ACTIVE.outlook_id_chars),
    ("files_read", "item_id", lambda n: {"item_id": "msb." + "0" * (n - 4)}, ACTIVE.drive_id_chars),
]


@pytest.mark.parametrize(
    ("tool", "argument", "make", "limit"),
    ARGUMENT_LIMITS,
    ids=[f"{tool}.{argument}" for tool, argument, _, _ in ARGUMENT_LIMITS],
)
async def test_argument_limits_at_l_minus_1_l_and_l_plus_1(
    graph: LoopbackServer,
    tool: str,
    argument: str,
    make: Callable[[int], dict[str, Any]],
    limit: int,
) -> None:
    calls = [(tool, make(limit - 1)), (tool, make(limit)), (tool, make(limit + 1))]
    _, below, at, above = await serve(graph, calls)
    sent_for_allowed = len(graph.requests)
    for reply in (below, at):  # past validation: Graph was asked (it may answer 404 here)
        assert "Invalid arguments" not in reply["result"]["content"][0]["text"], argument
    assert sent_for_allowed == 2
    assert above["result"]["isError"] is True
    text = json.loads(above["result"]["content"][0]["text"])["error"]["message"]
    assert text.startswith(f"Invalid arguments for {tool}: argument `{argument}`"), text


async def test_argument_errors_listed_names_at_most_that_many(graph: LoopbackServer) -> None:
    bad = {"limit": 0, "cursor": "", "folder": "", "unread_only": "yes"}
    _, reply = await serve(graph, [("mail_list", bad)])
    message = json.loads(reply["result"]["content"][0]["text"])["error"]["message"]
    assert message.count("argument `") == ACTIVE.argument_errors_listed == 2
    assert graph.requests == []
