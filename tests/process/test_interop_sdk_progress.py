"""The official MCP SDK client's progress callback against the real server on the demo.

A ``progressToken`` on ``files_read`` of a demo PDF must bring ``notifications/progress``
that the SDK routes to the callback of that very call, in each of the three eras, before
the result; every notification on the wire must be valid under the era's official schema,
carry the token the SDK sent, and grow. A call without a token gets no notification.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import trio

from tests.process.test_interop_sdk import (
    TEST_SECONDS,
    Wire,
    initialize_at,
    sdk_client,
    sdk_session,
)
from tests.support.mcp_schemas import assert_valid

pytestmark = pytest.mark.slow

DOCUMENT = "Documents/Contract – Fabrikam MSA.pdf"
BATCH = 8


class Heard:
    """What the SDK handed to one call's progress callback, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.calls.append((progress, total, message))


def progress_on_wire(wire: Wire, request_id: Any) -> list[dict[str, Any]]:
    """The progress notifications received for one request, checked against its place."""
    request = next(m for m in wire.sent if m.get("id") == request_id and "method" in m)
    token = request["params"]["_meta"]["progressToken"]
    lines = wire.received
    reply_at = next(i for i, m in enumerate(lines) if m.get("id") == request_id)
    mine = [
        (i, m)
        for i, m in enumerate(lines)
        if m.get("method") == "notifications/progress" and m["params"]["progressToken"] == token
    ]
    assert all(i < reply_at for i, _ in mine), "a progress notification came after the result"
    return [m for _, m in mine]


def check_progress(wire: Wire, version: str, heard: Heard, request_id: Any) -> None:
    notes = progress_on_wire(wire, request_id)
    assert notes, "no notifications/progress for a call with a progressToken"
    for note in notes:
        assert_valid(version, "ProgressNotification", note)
    values = [n["params"]["progress"] for n in notes]
    assert values == sorted(set(values)), f"progress must grow: {values}"
    assert [c[0] for c in heard.calls] == values, "the SDK did not route every one to the call"
    first = notes[0]["params"]
    assert first["message"].startswith("downloaded ") and "of the PDF" in first["message"]
    assert first["total"] == first["progress"] or first["total"] > first["progress"]


async def read_with_progress(call_tool: Any, wire: Wire, version: str) -> None:
    heard = Heard()
    result = await call_tool("files_read", {"path": DOCUMENT}, progress_callback=heard)
    assert isinstance(result, types.CallToolResult) and result.is_error is False
    assert "Master Services Agreement" in (result.structured_content or {})["content"]["text"]
    call_id = wire.requests("tools/call")[-1]["id"]
    check_progress(wire, version, heard, call_id)
    # the same read without a token: no notification at all
    before = len([m for m in wire.received if m.get("method") == "notifications/progress"])
    plain = await call_tool("files_read", {"path": DOCUMENT})
    assert plain.is_error is False
    after = len([m for m in wire.received if m.get("method") == "notifications/progress"])
    assert after == before


async def batch_with_progress(call_tool: Any, wire: Wire, version: str) -> None:
    listed = await call_tool("mail_list", {"limit": BATCH})
    ids = [row[0] for row in listed.structured_content["messages"]]
    heard = Heard()
    result = await call_tool("mail_read", {"message_ids": ids}, progress_callback=heard)
    assert result.structured_content is not None
    notes = progress_on_wire(wire, wire.requests("tools/call")[-1]["id"])
    assert notes and all(n["params"]["total"] == BATCH for n in notes)
    for note in notes:
        assert_valid(version, "ProgressNotification", note)
        assert note["params"]["message"].endswith(f" of {BATCH} messages")
    assert [c[0] for c in heard.calls] == [n["params"]["progress"] for n in notes]


@pytest.mark.parametrize("connect", ["2026-07-28", "legacy"])
async def test_sdk_progress_callback_hears_a_document_read(tmp_path: Path, connect: str) -> None:
    wire = Wire()
    version = "2026-07-28" if connect != "legacy" else "2025-11-25"
    with trio.fail_after(TEST_SECONDS):
        async with sdk_client(tmp_path, "demo", connect, wire) as client:
            await read_with_progress(client.call_tool, wire, version)
            await batch_with_progress(client.call_tool, wire, version)


async def test_sdk_progress_callback_in_2025_06_18(tmp_path: Path) -> None:
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with sdk_session(tmp_path, "demo", wire) as session:
            await initialize_at(session, "2025-06-18")
            await read_with_progress(session.call_tool, wire, "2025-06-18")
            await batch_with_progress(session.call_tool, wire, "2025-06-18")
