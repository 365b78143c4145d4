"""MCP in both eras, over the real runtime, each reply checked against the official schemas."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.harness import MODERN, initialize, modern_meta, open_session, request
from tests.support.mcp_schemas import assert_valid

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"]


def assert_modern_result(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO_KEY] == {
        "name": "mfconnector",
        "version": result["_meta"][SERVER_INFO_KEY]["version"],
    }
    return result


async def test_discover_reports_versions_capabilities_and_server_info() -> None:
    async with open_session() as session:
        reply = await session.call(request(1, "server/discover"))
    assert_valid(MODERN, "DiscoverResultResponse", reply)
    result = assert_modern_result(reply)
    assert result["supportedVersions"] == ALL_VERSIONS
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert "serverInfo" not in result


async def test_modern_tools_list_and_call_carry_the_modern_fields() -> None:
    async with open_session() as session:
        listed = await session.call(request(2, "tools/list"))
        called = await session.call(
            request(3, "tools/call", {"name": "account_status", "arguments": {}})
        )
    assert_valid(MODERN, "ListToolsResultResponse", listed)
    result = assert_modern_result(listed)
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert "account_status" in [tool["name"] for tool in result["tools"]]
    for tool in result["tools"]:
        assert tool["annotations"]["readOnlyHint"] is True
        assert_valid(MODERN, "Tool", tool)
    assert_valid(MODERN, "CallToolResultResponse", called)
    call_result = assert_modern_result(called)
    assert "ttlMs" not in call_result and "cacheScope" not in call_result
    assert call_result["isError"] is False
    assert call_result["structuredContent"]["mode"] == "live"


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_legacy_handshake_and_results_have_no_modern_fields(version: str) -> None:
    async with open_session() as session:
        init = await session.call(initialize(0, version))
        await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ping = await session.call(request("p", "ping", modern=False))
        listed = await session.call(request(1, "tools/list", modern=False))
        called = await session.call(
            request(2, "tools/call", {"name": "account_status"}, modern=False)
        )
    assert init["result"]["protocolVersion"] == version
    assert init["result"]["serverInfo"]["name"] == "mfconnector"
    envelope = "JSONRPCResponse" if version == "2025-06-18" else "JSONRPCResultResponse"
    for reply, definition in (
        (init, "InitializeResult"),
        (ping, "EmptyResult"),
        (listed, "ListToolsResult"),
        (called, "CallToolResult"),
    ):
        assert_valid(version, envelope, reply)
        assert_valid(version, definition, reply["result"])
        for modern_key in ("resultType", "ttlMs", "cacheScope", "_meta"):
            assert modern_key not in reply["result"]
    for tool in listed["result"]["tools"]:
        assert_valid(version, "Tool", tool)


@pytest.mark.parametrize("offered", ["2026-07-28", "2025-03-26", "2024-11-05", "garbage", ""])
async def test_initialize_counter_offers_the_newest_legacy_version(offered: str) -> None:
    async with open_session() as session:
        reply = await session.call(initialize(0, offered))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


async def test_modern_request_after_legacy_handshake_is_still_modern() -> None:
    async with open_session() as session:
        await session.call(initialize(0, "2025-06-18"))
        reply = await session.call(request(1, "tools/list"))
    assert_modern_result(reply)


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({"io.modelcontextprotocol/protocolVersion": MODERN}, -32602),
        (
            {
                "io.modelcontextprotocol/protocolVersion": 20260728,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            -32602,
        ),
        (
            {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": [],
            },
            -32602,
        ),
        ({**modern_meta(), "io.modelcontextprotocol/logLevel": "loud"}, -32602),
        ({**modern_meta(), "io.modelcontextprotocol/logLevel": []}, -32602),
        ({**modern_meta(), "io.modelcontextprotocol/logLevel": {"level": "info"}}, -32602),
    ],
)
async def test_malformed_modern_meta_is_invalid_params(meta: dict[str, Any], code: int) -> None:
    async with open_session() as session:
        reply = await session.call(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta}}
        )
    assert reply["error"]["code"] == code
    assert reply["id"] == 9
    assert_valid(MODERN, "JSONRPCErrorResponse", reply)


@pytest.mark.parametrize("version", ["2099-01-01", "2025-11-25", "2025-06-18", "x" * 500])
async def test_unsupported_modern_version_is_32022_with_supported_and_requested(
    version: str,
) -> None:
    async with open_session() as session:
        reply = await session.call(
            request(4, "server/discover") | {"params": {"_meta": modern_meta(version)}}
        )
    assert_valid(MODERN, "UnsupportedProtocolVersionError", reply)
    assert reply["id"] == 4
    error = reply["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == ALL_VERSIONS
    assert error["data"]["requested"] == version
    # A client that retries a listed version must learn how to reach it, or it loops.
    reach = error["data"]["reach"]
    assert set(reach) == set(ALL_VERSIONS)
    assert all("initialize" in reach[legacy] for legacy in ALL_VERSIONS[1:])
    assert "_meta" in reach[MODERN] and "initialize" not in reach[MODERN]
    assert "2025-11-25 and 2025-06-18 are reached through initialize" in error["message"]


async def test_following_the_32022_advice_reaches_the_legacy_version() -> None:
    async with open_session() as session:
        refused = await session.call(
            request(1, "tools/list") | {"params": {"_meta": modern_meta("2025-11-25")}}
        )
        assert refused["error"]["code"] == -32022
        assert "initialize" in refused["error"]["data"]["reach"]["2025-11-25"]
        accepted = await session.call(initialize(2, "2025-11-25"))
        listed = await session.call(request(3, "tools/list", modern=False))
    assert accepted["result"]["protocolVersion"] == "2025-11-25"
    assert "tools" in listed["result"]


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/list", "prompts/list", "nope"]
)
async def test_removed_and_unknown_modern_methods_are_method_not_found(method: str) -> None:
    async with open_session() as session:
        reply = await session.call(request(5, method))
    assert reply["error"]["code"] == -32601
    assert_valid(MODERN, "JSONRPCErrorResponse", reply)


async def test_before_initialize_only_ping_works_without_meta() -> None:
    async with open_session() as session:
        ping = await session.call(request(1, "ping", modern=False))
        listed = await session.call(request(2, "tools/list", modern=False))
    assert ping == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert listed["error"]["code"] == -32602


async def test_legacy_unknown_methods_and_bad_initialize() -> None:
    async with open_session() as session:
        bad_init = await session.call(
            request(1, "initialize", {"protocolVersion": "2025-11-25"}, modern=False)
        )
        await session.call(initialize(2))
        set_level = await session.call(
            request(3, "logging/setLevel", {"level": "info"}, modern=False)
        )
        discover = await session.call(request(4, "server/discover", modern=False))
    assert bad_init["error"]["code"] == -32602
    assert set_level["error"]["code"] == -32601
    assert discover["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"name": "nope"}, -32602),
        ({}, -32602),
        ({"name": 5}, -32602),
        ({"name": "account_status", "arguments": [1]}, -32602),
    ],
)
async def test_bad_tools_call_params_are_invalid_params(params: dict[str, Any], code: int) -> None:
    async with open_session() as session:
        reply = await session.call(request(6, "tools/call", params))
    assert reply["error"]["code"] == code


@pytest.mark.parametrize(
    ("version", "expect_error"), [(MODERN, False), ("2025-11-25", False), ("2025-06-18", True)]
)
async def test_arguments_failing_the_schema_per_era(version: str, expect_error: bool) -> None:
    params = {"name": "account_status", "arguments": {"unexpected": 1}}
    async with open_session() as session:
        if version == MODERN:
            reply = await session.call(request(7, "tools/call", params))
        else:
            await session.call(initialize(0, version))
            reply = await session.call(request(7, "tools/call", params, modern=False))
    if expect_error:
        assert reply["error"]["code"] == -32602
        assert "unexpected" in reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True
        assert "unexpected" in reply["result"]["content"][0]["text"]
        assert "structuredContent" not in reply["result"]


async def test_params_that_are_not_an_object_are_invalid_params() -> None:
    async with open_session() as session:
        reply = await session.call(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}
        )
    assert reply["error"]["code"] == -32602


async def test_subscriptions_listen_is_acknowledged_without_a_reply() -> None:
    async with open_session() as session:
        await session.send(
            request(11, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        )
        ack = await session.receive()
        await session.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}
        )
        after = await session.call(request(12, "server/discover"))
    assert_valid(MODERN, "SubscriptionsAcknowledgedNotification", ack)
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 11
    assert ack["params"]["notifications"] == {}
    assert after["id"] == 12


async def test_notifications_and_client_responses_never_get_a_reply() -> None:
    async with open_session() as session:
        for message in (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "unknown/notification", "params": 5},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "bad"},
            {"jsonrpc": "2.0", "id": 5, "result": {}},
            {"jsonrpc": "2.0", "id": 6, "error": {"code": 1, "message": "x"}},
        ):
            await session.send(message)
        reply = await session.call(request("after", "server/discover"))
    assert reply["id"] == "after"


async def test_string_and_integer_ids_are_echoed_with_their_type() -> None:
    async with open_session() as session:
        as_string = await session.call(request("1", "server/discover"))
        as_int = await session.call(request(1, "server/discover"))
    assert as_string["id"] == "1" and as_int["id"] == 1


async def test_error_replies_validate_in_every_era() -> None:
    async with open_session() as session:
        await session.send_raw(b"{oops\n")
        parse = await session.receive()
        unknown = await session.call(request(2, "nope"))
    assert "id" not in parse and parse["error"]["code"] == -32700
    assert_valid(MODERN, "ParseError", parse["error"])
    assert_valid(MODERN, "JSONRPCErrorResponse", parse)
    assert_valid(MODERN, "JSONRPCErrorResponse", unknown)
    assert_valid("2025-11-25", "JSONRPCErrorResponse", unknown)
    assert_valid("2025-06-18", "JSONRPCError", unknown)


@pytest.mark.parametrize("params", [{}, {"notifications": 7}, {"notifications": []}])
async def test_subscriptions_listen_needs_a_notifications_filter(params: dict[str, Any]) -> None:
    async with open_session() as session:
        reply = await session.call(request(13, "subscriptions/listen", params))
        after = await session.call(request(14, "server/discover"))
    assert reply["error"]["code"] == -32602
    assert after["id"] == 14


@pytest.mark.parametrize(("version", "expect_error"), [(MODERN, False), ("2025-06-18", True)])
async def test_a_whole_number_written_as_a_float_is_refused(
    version: str, expect_error: bool
) -> None:
    params = {"name": "mail_list", "arguments": {"limit": 5.0}}
    async with open_session() as session:
        if version == MODERN:
            reply = await session.call(request(8, "tools/call", params))
        else:
            await session.call(initialize(0, version))
            reply = await session.call(request(8, "tools/call", params, modern=False))
    if expect_error:
        assert reply["error"]["code"] == -32602 and "limit" in reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True
        assert "integer" in reply["result"]["content"][0]["text"]
