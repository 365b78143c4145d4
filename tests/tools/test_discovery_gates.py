"""Discovery with the gates on: the whole ``tools`` array within its own budget and
byte-for-byte the reviewed snapshot, each acting tool carrying its risk class's hints,
and the default listing unchanged (read tools only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.gated import listed_tools
from tests.support.acting_harness import ALL_GATES, acting_session
from tests.support.harness import MODERN, initialize, request
from tests.support.loopback import LoopbackServer
from tests.support.mcp_schemas import assert_valid

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "tools_list_all_gates.json"
REGENERATE = (
    '.venv/bin/python -c "import json; from mfconnector.tools.gated import listed_tools; '
    "from mfconnector.writes.gates import Gates; open('tests/snapshots/tools_list_all_gates"
    ".json', 'w').write(json.dumps([t.definition() for t in listed_tools(Gates(True, True, "
    "True))], separators=(',', ':'), ensure_ascii=True))\""
)
MCP_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
RISK = {
    # tool: (readOnly, destructive, openWorld) as a client reads them, defaults applied
    "mail_review": (True, False, True),
    "mail_create": (False, False, False),
    "mail_modify": (False, True, False),
    "mail_delete_permanently": (False, True, False),
    "mail_prepare": (False, False, False),
    "mail_send_confirmed": (False, True, True),
}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


async def all_gates_listing(server: LoopbackServer, era: str) -> list[dict[str, Any]]:
    async with acting_session(server, gates=ALL_GATES) as tools:
        session = tools.session
        if era == MODERN:
            await session.send(request(1, "tools/list"))
            reply = await session.receive()
            assert_valid(MODERN, "ListToolsResultResponse", reply)
        else:
            await session.send(initialize(0, era))
            await session.receive()
            await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await session.send(request(1, "tools/list", modern=False))
            reply = await session.receive()
            assert_valid(era, "ListToolsResult", reply["result"])
    tools_array: list[dict[str, Any]] = reply["result"]["tools"]
    return tools_array


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25", "2025-06-18"])
async def test_every_gate_on_fits_its_budget_and_is_the_snapshot(
    graph: LoopbackServer, era: str
) -> None:
    listed = await all_gates_listing(graph, era)
    wire = compact(listed)
    assert len(wire) <= DEFAULT_LIMITS.tools_list_all_gates_bytes, (
        f"{len(wire):,} bytes with every gate on, over "
        f"{DEFAULT_LIMITS.tools_list_all_gates_bytes:,}"
    )
    assert wire == SNAPSHOT.read_text(encoding="ascii"), (
        f"the all-gates listing changed; regenerate and review:\n  {REGENERATE}"
    )
    for tool in listed:
        assert_valid(era, "Tool", tool)
        Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["inputSchema"]["additionalProperties"] is False


async def test_each_acting_tool_carries_its_risk_class(graph: LoopbackServer) -> None:
    listed = await all_gates_listing(graph, MODERN)
    acting = {t["name"]: t for t in listed if t["name"] in RISK}
    assert list(acting) == list(RISK)
    for name, (read_only, destructive, open_world) in RISK.items():
        hints = {**MCP_DEFAULTS, **acting[name]["annotations"]}
        assert hints["readOnlyHint"] is read_only, name
        assert hints["openWorldHint"] is open_world, name
        if not read_only:  # MCP: the other two hints mean something only when not read-only
            assert hints["destructiveHint"] is destructive, name
            assert hints["idempotentHint"] is False, name


def test_the_default_listing_is_the_read_tools_alone() -> None:
    from mfconnector.writes.gates import Gates

    assert listed_tools(Gates()) == ALL_TOOLS
    assert not {t.name for t in ALL_TOOLS} & set(RISK)
