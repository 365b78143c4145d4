"""The discovery budget: what ``tools/list`` costs a client before any tool is called.

The whole ``tools`` array, as compact JSON (``separators=(",", ":")``, ASCII-escaped, as it
goes on the wire), must stay within ``Limits.tools_list_bytes``; it must be byte-for-byte
the reviewed snapshot in ``tests/snapshots/tools_list.json`` (a change to a description or
schema is a reviewed change: regenerate the snapshot with the command in the failure
message and read the diff); and it must be the same in every protocol era.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.tools import ALL_TOOLS
from tests.support.harness import MODERN, initialize, open_session, request
from tests.support.mcp_schemas import assert_valid

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "tools_list.json"
REGENERATE = (
    '.venv/bin/python -c "import json; from mfconnector.tools import ALL_TOOLS; '
    "open('tests/snapshots/tools_list.json', 'w').write(json.dumps([t.definition() for t in "
    "ALL_TOOLS], separators=(',', ':'), ensure_ascii=True))\""
)


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


async def listed_tools(era: str) -> list[dict[str, Any]]:
    """The ``tools`` array of ``tools/list`` as the real server answers it in ``era``."""
    async with open_session() as session:
        if era == MODERN:
            reply = await session.call(request(1, "tools/list"))
            assert_valid(MODERN, "ListToolsResultResponse", reply)
        else:
            await session.call(initialize(0, era))
            await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            reply = await session.call(request(1, "tools/list", modern=False))
            assert_valid(era, "ListToolsResult", reply["result"])
    assert "nextCursor" not in reply["result"], "one page holds every tool"
    tools: list[dict[str, Any]] = reply["result"]["tools"]
    return tools


@pytest.mark.parametrize("era", ERAS)
async def test_tools_array_fits_the_discovery_budget(era: str) -> None:
    wire = compact(await listed_tools(era)).encode("ascii")
    assert len(wire) <= DEFAULT_LIMITS.tools_list_bytes, (
        f"tools/list is {len(wire):,} bytes, over the {DEFAULT_LIMITS.tools_list_bytes:,}-byte "
        "budget: shorten descriptions or schemas (see bench/discovery_bytes.py)"
    )


async def test_tools_list_is_the_reviewed_snapshot() -> None:
    wire = compact(await listed_tools(MODERN))
    snapshot = SNAPSHOT.read_text(encoding="ascii")
    assert wire == snapshot, (
        "tools/list changed. If the change is intended, regenerate the snapshot and review "
        f"its diff:\n  {REGENERATE}"
    )
    assert wire == compact([tool.definition() for tool in ALL_TOOLS])


async def test_tools_list_is_identical_in_every_era() -> None:
    wires = {era: compact(await listed_tools(era)) for era in ERAS}
    assert len(set(wires.values())) == 1


@pytest.mark.parametrize("era", ERAS)
async def test_every_tool_is_read_only_with_closed_input_and_object_output(era: str) -> None:
    tools = await listed_tools(era)
    names = [tool["name"] for tool in tools]
    assert names == [tool.name for tool in ALL_TOOLS]
    assert len(set(names)) == len(names)
    for tool in tools:
        assert_valid(era, "Tool", tool)
        annotations = tool["annotations"]
        assert annotations["readOnlyHint"] is True, tool["name"]
        # MCP reads these only when readOnlyHint is false; if sent, they must not alarm.
        assert annotations.get("destructiveHint", False) is False, tool["name"]
        assert tool["title"] and tool["description"]
        input_schema = tool["inputSchema"]
        assert input_schema["type"] == "object"
        assert input_schema["additionalProperties"] is False, tool["name"]
        Draft202012Validator.check_schema(input_schema)
        output_schema = tool["outputSchema"]
        assert output_schema["type"] == "object"
        Draft202012Validator.check_schema(output_schema)
        if tool["name"] != "account_status":
            assert "untrusted" in tool["description"], "data tools warn that content is data"
            assert {"incomplete", "skipped"} <= set(output_schema["properties"])


def test_snapshot_is_compact_ascii_json() -> None:
    raw = SNAPSHOT.read_bytes()
    raw.decode("ascii")
    assert compact(json.loads(raw)).encode("ascii") == raw
    assert len(raw) <= DEFAULT_LIMITS.tools_list_bytes
