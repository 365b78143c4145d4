"""Issue 16 section 3: protocol edges, through the real server (Runtime + McpServer) on the demo.

A lone UTF-16 surrogate in tool arguments is an invalid argument, never ``-32603``; a
duplicate key anywhere in a request is refused before anything runs; and generated
arguments of every shape (lone surrogates, huge integers, deep nesting, the tools' own
property names with hostile values) sent to every read tool never reach ``-32603`` or a
traceback, and serving goes on.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.harness import initialize, modern_meta
from tests.support.mcp_schemas import assert_valid
from tests.tools.test_reads_demo import demo

MODERN = "2026-07-28"


def call_line(request_id: int, name: str, arguments_json: str, *, modern: bool = True) -> bytes:
    """A tools/call line written by hand, so that it can carry what json.dumps would not."""
    meta = f'"_meta":{json.dumps(modern_meta())},' if modern else ""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{{meta}'
        f'"name":{json.dumps(name)},"arguments":{arguments_json}}}}}\n'
    ).encode()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("mail_search", '{"query":"\\ud83d"}'),
        ("mail_list", '{"folder":"in\\udc00box"}'),
        ("files_list", '{"path":"\\ud83d"}'),
        ("mail_read", '{"id":"\\ud800"}'),
    ],
)
async def test_a_lone_surrogate_in_arguments_is_an_invalid_argument(
    tool: str, arguments: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with demo() as client:
        await client.session.send_raw(call_line(1, tool, arguments))
        reply = await client.session.receive()
        assert_valid(MODERN, "CallToolResultResponse", reply)
        result = reply["result"]
        assert result["isError"] is True
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["error_code"] == "invalid_arguments"
        assert "lone UTF-16 surrogate" in error["message"] and "U+D" in error["message"]
        # serving goes on, and a valid pair (an emoji) is still a character
        await client.session.send_raw(call_line(2, "mail_search", '{"query":"\\ud83d\\ude00"}'))
        again = await client.session.receive()
        assert again["id"] == 2 and "error" not in again
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_lone_surrogate_is_minus_32602_in_2025_06_18() -> None:
    async with demo() as client:
        await client.session.send(initialize(0, "2025-06-18"))
        await client.session.receive()
        await client.session.send_raw(
            call_line(1, "mail_search", '{"query":"\\ud83d"}', modern=False)
        )
        reply = await client.session.receive()
        assert reply["id"] == 1 and reply["error"]["code"] == -32602
        assert "lone UTF-16 surrogate" in reply["error"]["message"]
        assert_valid("2025-06-18", "JSONRPCError", reply)


async def test_a_duplicate_tool_name_never_runs_either_tool() -> None:
    """A gateway reading the first "name" sees a read tool; the last would be mail_create."""
    async with demo("--enable-writes") as client:
        line = (
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":'
            + json.dumps(modern_meta()).encode()
            + b',"name":"account_status","name":"mail_create",'
            + b'"arguments":{"action":"draft","subject":"dup-key-canary"}}}\n'
        )
        await client.session.send_raw(line)
        reply = await client.session.receive()
        assert reply["id"] == 5 and reply["error"]["code"] == -32600
        assert '"name" appears twice' in reply["error"]["message"]
        assert_valid(MODERN, "JSONRPCErrorResponse", reply)
        drafts = await client.data("mail_list", {"folder": "drafts", "limit": 50})
        assert "dup-key-canary" not in json.dumps(drafts)


# --- fuzz ----------------------------------------------------------------------------------

hostile_text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        ["\ud83d", "\udc00", "\ud83d\ude00", "\u202egpj.exe", "\x00", "%2e%2e/", "../..", "\ufeff"]
    ),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
)
hostile_numbers = st.one_of(
    st.integers(-(10**30), 10**30),
    st.sampled_from([0, -1, 2**31, 2**63, 10**99, 10**100, 1.5, -0.0, 1e308]),
)
hostile_values = st.recursive(
    st.none() | st.booleans() | hostile_numbers | hostile_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=8,
)


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The tool's own property names (so the call gets past the names) with hostile values."""
    names = sorted(schema.get("properties", {})) or ["x"]
    return st.dictionaries(st.sampled_from(names) | hostile_text, hostile_values, max_size=4)


TOOLS: dict[str, dict[str, Any]] = {}


async def _tool_schemas() -> dict[str, dict[str, Any]]:
    async with demo() as client:
        await client.session.send(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}}
        )
        listed = await client.session.receive()
    return {tool["name"]: tool["inputSchema"] for tool in listed["result"]["tools"]}


@pytest.fixture(scope="module")
def tool_schemas() -> dict[str, dict[str, Any]]:
    return trio.run(_tool_schemas)


@pytest.mark.slow
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_generated_arguments_to_every_tool_never_reach_an_internal_error(
    tool_schemas: dict[str, dict[str, Any]], data: st.DataObject
) -> None:
    calls = [
        (name, data.draw(arguments_for(tool_schemas[name]), label=name))
        for name in data.draw(
            st.lists(st.sampled_from(sorted(tool_schemas)), min_size=1, max_size=3)
        )
    ]

    async def run() -> None:
        async with demo() as client:
            for number, (name, arguments) in enumerate(calls, 1):
                await client.session.send_raw(call_line(number, name, json.dumps(arguments)))
                reply = await client.session.receive(timeout=30)
                assert reply["id"] == number
                if "error" in reply:
                    assert reply["error"]["code"] != -32603, reply
                    assert "Traceback" not in reply["error"]["message"]
                    assert_valid(MODERN, "JSONRPCErrorResponse", reply)
                else:
                    assert_valid(MODERN, "CallToolResultResponse", reply)
            await client.session.send(
                {
                    "jsonrpc": "2.0",
                    "id": "p",
                    "method": "tools/list",
                    "params": {"_meta": modern_meta()},
                }
            )
            assert (await client.session.receive())["id"] == "p"

    trio.run(run)


# --- replies that answer no request, per era ------------------------------------------------

ERROR_ENVELOPE = {MODERN: "JSONRPCErrorResponse", "2025-11-25": "JSONRPCErrorResponse"}


async def _unpaired_replies(version: str | None) -> list[dict[str, Any]]:
    """A parse error, an oversized line, a batch, an invalid request and a reused id."""
    from dataclasses import replace

    from mfconnector.limits import DEFAULT_LIMITS
    from tests.protocol.test_runtime import Gate, call, tool
    from tests.support.harness import open_session

    gate = Gate()
    limits = replace(DEFAULT_LIMITS, line_bytes=4_096)
    async with open_session(tools=[tool("gate", gate.handler)], limits=limits) as session:
        if version is not None:
            await session.send(initialize(0, version))
            await session.receive()
        modern = version is None
        gate_call = call("g", "gate")
        if not modern:
            gate_call["params"].pop("_meta")
        await session.send(gate_call)
        await trio.testing.wait_all_tasks_blocked()
        replies = []
        for line in (
            b"{oops",
            b'{"a":"' + b"x" * 5_000 + b'"}',
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}',
            json.dumps(gate_call).encode(),
        ):
            await session.send_raw(line + b"\n")
            replies.append(await session.receive())
        gate.release.set()
        assert (await session.receive())["id"] == "g"
    return replies


@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_unpaired_replies_validate_where_the_schema_allows_it(version: str | None) -> None:
    """2026-07-28 and 2025-11-25 make id optional (string or integer): it is left out."""
    replies = await _unpaired_replies(version)
    assert [reply["error"]["code"] for reply in replies] == [
        -32700,
        -32600,
        -32600,
        -32600,
        -32600,
        -32600,
    ]
    for reply in replies:
        assert "id" not in reply
        assert_valid(version or MODERN, ERROR_ENVELOPE[version or MODERN], reply)
        assert_valid(version or MODERN, "JSONRPCMessage", reply)


async def test_unpaired_replies_keep_json_rpcs_null_in_2025_06_18() -> None:
    """2025-06-18 requires id and allows no null: nothing validates, so JSON-RPC 2.0 decides."""
    from tests.support.mcp_schemas import schema_errors

    replies = await _unpaired_replies("2025-06-18")
    for reply in replies:
        assert reply["id"] is None
        without = {k: v for k, v in reply.items() if k != "id"}
        assert schema_errors("2025-06-18", "JSONRPCError", reply)
        assert schema_errors("2025-06-18", "JSONRPCError", without)
