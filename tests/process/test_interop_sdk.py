"""Interop: the official MCP Python SDK (``mcp`` 2.3.0) as the client of the real server process.

Every test spawns ``sys.executable -m mfconnector`` (live mode, not signed in, with a private
empty HOME; and ``--demo``, the built-in Graph emulator) through the SDK's
own ``stdio_client`` over real pipes, and drives it with the SDK's client classes. A small
recording wrapper around that transport keeps every JSON-RPC message in both directions, so
the tests can also check the wire fields the SDK's typed models hide (``resultType`` has a
default in the SDK models, for example). Each test runs under ``trio.fail_after``.

What the SDK 2.3.0 client supports, and how each era is driven here:

* **2025-11-25** (legacy): ``Client(..., mode="legacy")``. The SDK's ``initialize()`` always
  offers ``LATEST_HANDSHAKE_VERSION`` = 2025-11-25, then sends ``notifications/initialized``.
* **2025-06-18** (legacy): the SDK has no option to offer an older handshake version, so the
  test uses the public lower-level ``ClientSession``: it sends the SDK's own
  ``InitializeRequest`` with ``protocolVersion: 2025-06-18``, installs the answer with
  ``session.adopt()`` (after which the SDK validates every result against the 2025-06-18
  schema surface) and sends ``InitializedNotification`` itself.
* **2026-07-28** (modern): fully supported by the SDK. ``mode="auto"`` (the default) probes
  ``server/discover`` and adopts the result; ``mode="2026-07-28"`` skips the probe and stamps
  ``io.modelcontextprotocol/protocolVersion``, ``clientInfo`` and ``clientCapabilities`` into
  ``params._meta`` of every request. Both paths are tested; ``session.send_discover(v)``
  covers ``-32022`` negotiation (typed as ``UnsupportedProtocolVersionErrorData``).

In every era the test lists the tools and calls EVERY tool from ``tools/list``: with the
arguments in ``TOOL_CALLS``, or, for a tool missing from that table, with arguments built
from its input schema (required properties only, simple types); a tool for which neither
works fails the test and asks for a table entry, and the arguments must pass the tool's own
published input schema (checked client-side with jsonschema), so an ``isError`` result is
never an argument mistake of the test. Each result must parse as the SDK's
``CallToolResult`` under the negotiated version (the SDK also checks ``structuredContent``
against the tool's ``outputSchema`` on success), carry a JSON text block equal to
``structuredContent`` whenever both are present, and ``account_status`` must succeed with
``signed_in`` false in live mode.

Also covered: invalid arguments (``-32602`` in 2025-06-18, an ``isError`` result in
2025-11-25 and 2026-07-28), an unknown tool (``-32602`` in every era), both eras on one
stream (a legacy handshake followed by a modern ``server/discover`` and modern calls), and
the modern/legacy wire fields (``resultType``, ``ttlMs``/``cacheScope``, serverInfo
``_meta``) as the SDK saw them.

Not covered here (the SDK has no client API for them, and other tests drive them with raw
JSON-RPC): ``ping`` in the modern era, ``subscriptions/listen``, cancellation races.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types as types
import pytest
import trio
from jsonschema import Draft202012Validator
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

pytestmark = pytest.mark.slow

TEST_SECONDS = 60
"""Upper bound for one test (a spawn takes well under a second; the machine may be busy)."""
READ_TIMEOUT_SECONDS = 20.0
MODERN = "2026-07-28"
ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"]
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
MODERN_ONLY_RESULT_FIELDS = {"resultType", "ttlMs", "cacheScope"}

TOOL_CALLS: dict[str, dict[str, Any]] = {
    "account_status": {},
    "mail_folders": {},
    "mail_list": {"limit": 5},
    "mail_search": {"query": "launch", "limit": 5},
    "mail_read": {"message_id": "msb.AAMkAGI2-not-a-real-message"},
    "mail_attachment": {"message_id": "msb.AAMkAGI2-not-a-real-message"},
    "files_list": {"limit": 5},
    "files_search": {"query": "report", "limit": 5},
    "files_read": {"path": "Documents/readme.txt"},
}
"""Arguments for each tool's call. Add a row when a tool needs arguments the schema-based
fallback (``simple_arguments``) cannot build."""

REPO_ROOT = Path(__file__).resolve().parents[2]


SERVER_MODES = ["live", "demo"]
"""Both always run: a missing demo mailbox is a failure, never a skip."""


# --- the real server through the SDK's stdio transport, recorded ----------------------


@dataclass
class Wire:
    """Every JSON-RPC message on the pipes, as JSON values, in order."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            m for m in self.sent if "id" in m and "method" in m and method in (None, m["method"])
        ]

    def result_for(self, request_id: Any) -> dict[str, Any]:
        replies = [m for m in self.received if m.get("id") == request_id and "method" not in m]
        assert len(replies) == 1, f"expected one reply to {request_id!r}, got {replies}"
        return replies[0]

    def results_of(self, method: str) -> list[dict[str, Any]]:
        """The raw ``result`` objects answering every ``method`` request sent so far."""
        out = []
        for req in self.requests(method):
            reply = self.result_for(req["id"])
            assert "result" in reply, f"{method} failed on the wire: {reply}"
            out.append(reply["result"])
        return out


def wire_json(message: SessionMessage) -> dict[str, Any]:
    """The message as the SDK's stdio transport puts it on (or took it off) the wire."""
    value = json.loads(message.message.model_dump_json(by_alias=True, exclude_unset=True))
    assert isinstance(value, dict)
    return value


@contextmanager
def server_stderr(tmp_path: Path) -> Iterator[TextIO]:
    """A real file for the child's stderr (the SDK hands it to the subprocess as-is)."""
    path = tmp_path / "server-stderr.log"
    with path.open("w+", encoding="utf-8") as errlog:
        try:
            yield errlog
        except BaseException:
            errlog.flush()
            sys.stderr.write(f"--- server stderr ---\n{path.read_text(encoding='utf-8')}\n")
            raise


def server_parameters(mode: str, home: Path) -> StdioServerParameters:
    home.mkdir(exist_ok=True)
    args = ["-m", "mfconnector"] + (["--demo"] if mode == "demo" else [])
    private = str(home)
    return StdioServerParameters(
        command=sys.executable,
        args=args,
        cwd=REPO_ROOT,
        env={"HOME": private, "XDG_CONFIG_HOME": private, "XDG_CACHE_HOME": private},
    )


@asynccontextmanager
async def recorded_stdio(
    params: StdioServerParameters, errlog: TextIO, wire: Wire
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's ``stdio_client`` with a tap on both streams; usable as a ``Client`` transport."""
    async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
        to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        async def pump_in() -> None:
            async with to_session:
                async for item in read_stream:
                    if isinstance(item, SessionMessage):
                        wire.received.append(wire_json(item))
                    try:
                        await to_session.send(item)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return

        async def pump_out() -> None:
            async with from_session:
                async for item in from_session:
                    wire.sent.append(wire_json(item))
                    try:
                        await write_stream.send(item)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return
            await write_stream.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            try:
                yield session_reads, session_writes
            finally:
                session_writes.close()
                session_reads.close()
                tg.cancel_scope.cancel()


@asynccontextmanager
async def sdk_client(tmp_path: Path, mode: str, connect: str, wire: Wire) -> AsyncIterator[Client]:
    """``mcp.Client`` on the real server; ``connect`` is the SDK's ``mode=`` argument."""
    with server_stderr(tmp_path) as errlog:
        transport = recorded_stdio(server_parameters(mode, tmp_path / "home"), errlog, wire)
        async with Client(
            transport,
            mode=connect,
            read_timeout_seconds=READ_TIMEOUT_SECONDS,
            client_info=types.Implementation(name="mfconnector-interop", version="1"),
        ) as client:
            yield client


@asynccontextmanager
async def sdk_session(tmp_path: Path, mode: str, wire: Wire) -> AsyncIterator[ClientSession]:
    """The SDK's lower-level ``ClientSession`` on the real server, before any handshake."""
    with server_stderr(tmp_path) as errlog:
        params = server_parameters(mode, tmp_path / "home")
        async with (
            recorded_stdio(params, errlog, wire) as (read_stream, write_stream),
            ClientSession(
                read_stream,
                write_stream,
                read_timeout_seconds=READ_TIMEOUT_SECONDS,
                client_info=types.Implementation(name="mfconnector-interop", version="1"),
            ) as session,
        ):
            yield session


async def initialize_at(session: ClientSession, version: str) -> types.InitializeResult:
    """The legacy handshake at a chosen version, with the SDK's own request types."""
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="mfconnector-interop", version="1"),
            )
        ),
        types.InitializeResult,
    )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


# --- calling every tool -----------------------------------------------------------------


def simple_arguments(tool: types.Tool) -> dict[str, Any] | None:
    """Arguments for a tool missing from ``TOOL_CALLS``: its required properties, if simple."""
    schema = tool.input_schema
    properties = schema.get("properties", {})
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = properties.get(name, {})
        if prop.get("enum"):
            arguments[name] = prop["enum"][0]
        elif prop.get("type") == "string" and "pattern" not in prop:
            arguments[name] = "x" * max(1, int(prop.get("minLength", 1)))
        elif prop.get("type") in ("integer", "number"):
            arguments[name] = prop.get("minimum", 1)
        elif prop.get("type") == "boolean":
            arguments[name] = False
        else:
            return None
    return arguments


def arguments_for(tool: types.Tool) -> dict[str, Any]:
    """Arguments that the tool's own published input schema accepts."""
    arguments = TOOL_CALLS[tool.name] if tool.name in TOOL_CALLS else simple_arguments(tool)
    assert arguments is not None, (
        f"tools/list has {tool.name!r}, whose required arguments cannot be built from its "
        f"schema; add a row to TOOL_CALLS in {Path(__file__).name}"
    )
    errors = [e.message for e in Draft202012Validator(tool.input_schema).iter_errors(arguments)]
    assert not errors, f"TOOL_CALLS[{tool.name!r}] does not fit the tool's input schema: {errors}"
    return arguments


def check_result(name: str, result: types.CallToolResult, mode: str) -> None:
    """What every tool result must look like, whatever the outcome."""
    assert result.content, f"{name}: no content"
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert texts, f"{name}: no text block"
    if result.structured_content is not None:
        assert json.loads(texts[0]) == result.structured_content, (
            f"{name}: the text block is not the structuredContent JSON"
        )
    if result.is_error:
        assert texts[0].strip(), f"{name}: an error result must say what went wrong"
    if name == "account_status":
        assert result.is_error is False
        status = result.structured_content
        assert isinstance(status, dict)
        assert status["mode"] == mode
        assert status["signed_in"] is (mode == "demo")
        assert status["server"]["name"] == "mfconnector"


async def call_every_tool(
    list_tools: Any, call_tool: Any, mode: str
) -> dict[str, types.CallToolResult]:
    listed = await list_tools()
    assert isinstance(listed, types.ListToolsResult)
    names = [tool.name for tool in listed.tools]
    assert "account_status" in names
    assert len(names) == len(set(names))
    results = {}
    for tool in listed.tools:
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        result = await call_tool(tool.name, arguments_for(tool))
        assert isinstance(result, types.CallToolResult)
        check_result(tool.name, result, mode)
        results[tool.name] = result
    await call_every_read_operation(call_tool, mode)
    return results


def read_operations(ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every read operation of issue 10, with ids taken from a first listing."""
    first = ids[0]
    return [
        ("mail_list", {"limit": 5, "detail": "full"}),
        ("mail_list", {"triage": True, "limit": 5}),
        ("mail_list", {"thread_of": first, "limit": 5}),
        ("mail_list", {"folder": "Projects/Contoso Launch", "limit": 5}),
        ("mail_folders", {"parent": "inbox"}),
        ("mail_search", {"query": "launch", "detail": "full", "limit": 3}),
        ("mail_read", {"message_id": first, "unique_body": True}),
        ("mail_read", {"message_id": first, "detail": "full"}),
        ("mail_read", {"message_ids": ids[:3], "max_response_bytes": 16_384}),
        ("mail_attachment", {"message_id": first}),
        ("mail_list", {"mailbox": "support@contoso.onmicrosoft.com", "limit": 5}),
        ("files_list", {"site": "Marketing/Documents", "limit": 5}),
    ]


ANSWERED_WITHOUT_GRAPH_SITES = {"files_list"}
"""The demo has no SharePoint site search: its site lookup is an error result."""


async def call_every_read_operation(call_tool: Any, mode: str) -> None:
    """Each operation answers a result the SDK accepts (an error result when not signed in)."""
    listed = await call_tool("mail_list", {"limit": 5})
    rows = (listed.structured_content or {}).get("messages") or []
    ids = [row[0] for row in rows if isinstance(row, list)] or ["msb.AAMkAGI2-not-a-real-message"]
    for name, arguments in read_operations(ids):
        result = await call_tool(name, arguments)
        assert isinstance(result, types.CallToolResult)
        check_result(name, result, mode)
        if mode == "live":
            assert result.is_error is True, (name, arguments)
        elif name not in ANSWERED_WITHOUT_GRAPH_SITES:
            assert result.structured_content is not None, (name, arguments, result.content)


# --- checks on the recorded wire --------------------------------------------------------


def assert_legacy_wire(wire: Wire, version: str) -> None:
    init = wire.requests("initialize")
    assert len(init) == 1 and init[0]["params"]["protocolVersion"] == version
    assert wire.result_for(init[0]["id"])["result"]["protocolVersion"] == version
    assert any(m.get("method") == "notifications/initialized" for m in wire.sent)
    assert not wire.requests("server/discover")
    for req in wire.requests():
        assert PROTOCOL_VERSION_KEY not in (req.get("params") or {}).get("_meta", {})
    for method in ("initialize", "tools/list", "tools/call"):
        for result in wire.results_of(method):
            assert not MODERN_ONLY_RESULT_FIELDS & result.keys(), (method, result.keys())
            assert SERVER_INFO_KEY not in result.get("_meta", {})


def assert_modern_wire(wire: Wire, *, probed: bool) -> None:
    assert not wire.requests("initialize")
    assert bool(wire.requests("server/discover")) is probed
    for req in wire.requests():
        meta = req["params"]["_meta"]
        assert meta[PROTOCOL_VERSION_KEY] == MODERN
        assert isinstance(meta[CLIENT_CAPABILITIES_KEY], dict)
    for method in ("server/discover", "tools/list", "tools/call"):
        for result in wire.results_of(method):
            assert result["resultType"] == "complete", (method, result)
            assert result["_meta"][SERVER_INFO_KEY]["name"] == "mfconnector"
            if method == "tools/call":
                assert "ttlMs" not in result and "cacheScope" not in result
            else:
                assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


# --- the tests --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", SERVER_MODES)
async def test_sdk_client_legacy_2025_11_25(tmp_path: Path, mode: str) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_client(tmp_path, mode, "legacy", wire) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None and client.server_info.name == "mfconnector"
            assert client.server_capabilities.tools is not None
            assert client.instructions and "untrusted" in client.instructions
            await call_every_tool(client.list_tools, client.call_tool, mode)
    assert_legacy_wire(wire, "2025-11-25")


@pytest.mark.parametrize("mode", SERVER_MODES)
async def test_sdk_session_legacy_2025_06_18(tmp_path: Path, mode: str) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_session(tmp_path, mode, wire) as session:
            init = await initialize_at(session, "2025-06-18")
            assert init.protocol_version == "2025-06-18"
            assert session.protocol_version == "2025-06-18"
            assert init.server_info.name == "mfconnector"
            await call_every_tool(session.list_tools, session.call_tool, mode)
    assert_legacy_wire(wire, "2025-06-18")


@pytest.mark.parametrize("mode", SERVER_MODES)
async def test_sdk_client_modern_auto_probes_discover(tmp_path: Path, mode: str) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_client(tmp_path, mode, "auto", wire) as client:
            assert client.protocol_version == MODERN
            discovered = client.session.discover_result
            assert discovered is not None
            assert discovered.supported_versions == ALL_VERSIONS
            assert (discovered.ttl_ms, discovered.cache_scope) == (0, "private")
            assert client.server_info is not None and client.server_info.name == "mfconnector"
            assert client.server_capabilities.tools is not None
            await call_every_tool(client.list_tools, client.call_tool, mode)
    assert_modern_wire(wire, probed=True)


async def test_sdk_client_modern_pinned_needs_no_discover(tmp_path: Path) -> None:
    """Stateless: the very first request is a modern tools/list, with no handshake at all."""
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_client(tmp_path, "live", MODERN, wire) as client:
            assert client.protocol_version == MODERN
            await call_every_tool(client.list_tools, client.call_tool, "live")
    assert wire.sent[0]["method"] == "tools/list"
    assert_modern_wire(wire, probed=False)


async def test_sdk_sees_unsupported_versions_as_typed_negotiation_errors(tmp_path: Path) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_session(tmp_path, "live", wire) as session:
            for requested in ("2099-01-01", "2025-11-25"):
                with pytest.raises(MCPError) as caught:
                    await session.send_discover(requested)
                assert caught.value.code == types.UNSUPPORTED_PROTOCOL_VERSION
                data = types.UnsupportedProtocolVersionErrorData.model_validate(
                    caught.value.error.data
                )
                assert data.supported == ALL_VERSIONS
                assert data.requested == requested
            # After the refusals the SDK's own negotiation still lands on the modern era.
            discovered = await session.discover()
            assert session.protocol_version == MODERN
            assert discovered.supported_versions == ALL_VERSIONS


async def test_both_eras_on_one_stream(tmp_path: Path) -> None:
    """A legacy handshake, then modern requests on the same pipes: each answered in its era."""
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_session(tmp_path, "live", wire) as session:
            await initialize_at(session, "2025-11-25")
            legacy_listing = await session.list_tools()
            await session.discover()
            assert session.protocol_version == MODERN
            modern_listing = await session.list_tools()
            status = await session.call_tool("account_status", {})
    assert [t.name for t in legacy_listing.tools] == [t.name for t in modern_listing.tools]
    check_result("account_status", status, "live")
    legacy_raw, modern_raw = wire.results_of("tools/list")
    assert not MODERN_ONLY_RESULT_FIELDS & legacy_raw.keys()
    assert modern_raw["resultType"] == "complete" and modern_raw["ttlMs"] == 0
    assert wire.results_of("tools/call")[0]["resultType"] == "complete"


@pytest.mark.parametrize("era", ["2025-06-18", "2025-11-25", MODERN])
async def test_invalid_arguments_and_unknown_tool_per_era(tmp_path: Path, era: str) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_session(tmp_path, "live", wire) as session:
            if era == MODERN:
                await session.discover()
            else:
                await initialize_at(session, era)
            await session.list_tools()
            if era == "2025-06-18":
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("account_status", {"unexpected": 1})
                assert caught.value.code == types.INVALID_PARAMS
                assert "unexpected" in caught.value.error.message
            else:
                result = await session.call_tool("account_status", {"unexpected": 1})
                assert result.is_error is True
                assert "unexpected" in result.content[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError) as caught:
                await session.call_tool("no_such_tool", {})
            assert caught.value.code == types.INVALID_PARAMS
