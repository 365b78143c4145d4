"""Interop: the official MCP SDK client drives the acting tools of a real
``mfconnector --demo`` process with every switch on, in the modern and a legacy era:
it lists them with their risk hints, prepares a message and sends it once."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import trio
from mcp import Client, StdioServerParameters

from tests.process.test_interop_sdk import (
    READ_TIMEOUT_SECONDS,
    REPO_ROOT,
    TEST_SECONDS,
    Wire,
    recorded_stdio,
    server_stderr,
)

pytestmark = pytest.mark.slow

SWITCHES = ["--demo", "--enable-writes", "--enable-send", "--enable-delete"]


@pytest.mark.parametrize("connect", ["2026-07-28", "legacy"])
async def test_the_sdk_prepares_and_sends_once(tmp_path: Path, connect: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mfconnector", *SWITCHES],
        cwd=REPO_ROOT,
        env={"HOME": str(home), "XDG_STATE_HOME": str(home)},
    )
    wire = Wire()
    with trio.fail_after(TEST_SECONDS), server_stderr(tmp_path) as errlog:
        async with Client(
            recorded_stdio(params, errlog, wire),
            mode=connect,
            read_timeout_seconds=READ_TIMEOUT_SECONDS,
            client_info=types.Implementation(name="mfconnector-interop", version="1"),
        ) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            send_tool = listed["mail_send_confirmed"]
            assert send_tool.annotations is not None
            assert send_tool.annotations.read_only_hint is not True
            assert listed["mail_review"].annotations.read_only_hint is True  # type: ignore[union-attr]
            prepared = await client.call_tool(
                "mail_prepare",
                {"action": "new", "to": ["megan@fabrikam.example"], "subject": "SDK", "text": "hi"},
            )
            assert prepared.is_error is False
            data: Any = prepared.structured_content
            confirm = {"prepared_id": data["prepared_id"], "confirmed_digest": data["digest"]}
            first = await client.call_tool("mail_send_confirmed", confirm)
            second = await client.call_tool("mail_send_confirmed", confirm)
            wrong = await client.call_tool("mail_create", {"action": "folder", "colour": "red"})
    assert first.is_error is False and first.structured_content["status"] == "verified"  # type: ignore[index]
    assert second.structured_content["resent"] is False  # type: ignore[index]
    assert wrong.is_error is True
    assert not list(home.rglob("*.sqlite3")), "the demo keeps its send state in memory"
