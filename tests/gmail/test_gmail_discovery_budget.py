"""The discovery budget for a Gmail-only server: ``tools/list`` of a real ``mfconnector
--demo gmail`` process, measured on the wire as compact ASCII JSON (the way
tests/tools/test_discovery_budget.py measures it), within ``tools_list_bytes`` read-only
and ``tools_list_all_gates_bytes`` with every gate on, in every era."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from mfconnector.limits import DEFAULT_LIMITS
from tests.gmail.test_gmail_interop_sdk import GATES, gmail_sdk
from tests.process.test_interop_sdk import ALL_VERSIONS, TEST_SECONDS, Wire

pytestmark = pytest.mark.slow

FILES = {"files_list", "files_search", "files_read"}
ACTING = {"mail_create", "mail_modify", "mail_delete_permanently", "mail_prepare"}


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode("ascii")


async def listed(tmp_path: Path, era: str, switches: list[str]) -> list[dict[str, Any]]:
    """The ``tools`` array exactly as the server sent it (from the recorded wire)."""
    wire = Wire()
    with trio.fail_after(TEST_SECONDS):
        async with gmail_sdk(tmp_path, era, switches, wire) as sdk:
            await sdk.list_tools()
    (result,) = wire.results_of("tools/list")
    assert "nextCursor" not in result, "one page holds every tool"
    tools: list[dict[str, Any]] = result["tools"]
    return tools


@pytest.mark.parametrize("era", ALL_VERSIONS)
@pytest.mark.parametrize("gated", [False, True], ids=["read-only", "all-gates"])
async def test_gmail_tools_list_fits_the_discovery_budget(
    tmp_path: Path, era: str, gated: bool
) -> None:
    tools = await listed(tmp_path, era, GATES if gated else [])
    names = {tool["name"] for tool in tools}
    assert {"mail_list", "mail_read", "account_status"} <= names
    assert not names & FILES, "a Gmail account has no files: the files tools are not offered"
    assert (names >= ACTING) is gated and (names & ACTING == set()) is not gated
    budget = DEFAULT_LIMITS.tools_list_all_gates_bytes if gated else DEFAULT_LIMITS.tools_list_bytes
    size = len(compact(tools))
    assert size <= budget, f"tools/list is {size:,} bytes, over the {budget:,}-byte budget"
