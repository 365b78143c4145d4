"""What several accounts cost in ``tools/list``: with one account (by flags or by a file of
one) the reviewed snapshots byte for byte; with N accounts only the ``account`` property
(and its place in ``required``) is added to each tool. Run by the real server process."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mfconnector.limits import DEFAULT_LIMITS
from tests.entry.test_accounts_process import Server

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"
GATES = ("enable_writes", "enable_send", "enable_delete")
FLAGS = ("--enable-writes", "--enable-send", "--enable-delete")


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def accounts_file(tmp_path: Path, names: list[str], *, gates: bool) -> str:
    text = "".join(
        f'[[account]]\nname = "{name}"\nprovider = "graph"\n'
        + "".join(f"{gate} = true\n" for gate in (GATES if gates else ()))
        for name in names
    )
    path = tmp_path / f"accounts-{len(names)}-{gates}.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def tools_of(*flags: str) -> list[dict[str, Any]]:
    server = Server([sys.executable, "-m", "mfconnector", "--demo", *flags])
    try:
        tools: list[dict[str, Any]] = server.ask("tools/list")["tools"]
    finally:
        server.close()
    return tools


def without_account(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tools`` with the ``account`` property (and its ``required`` entry) taken out."""
    stripped = copy.deepcopy(tools)
    for tool in stripped:
        schema = tool["inputSchema"]
        del schema["properties"]["account"]
        required = [name for name in schema.get("required", []) if name != "account"]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
    return stripped


@pytest.mark.slow
@pytest.mark.parametrize("gates", [False, True], ids=["read-only", "every-gate"])
def test_one_account_by_flags_or_by_file_is_the_reviewed_snapshot(
    tmp_path: Path, gates: bool
) -> None:
    snapshot = (
        SNAPSHOTS / ("tools_list_all_gates.json" if gates else "tools_list.json")
    ).read_text(encoding="ascii")
    by_flags = compact(tools_of(*(FLAGS if gates else ())))
    by_file = compact(tools_of("--accounts", accounts_file(tmp_path, ["work"], gates=gates)))
    assert by_flags == snapshot
    assert by_file == snapshot


@pytest.mark.slow
@pytest.mark.parametrize("gates", [False, True], ids=["read-only", "every-gate"])
def test_several_accounts_add_only_the_account_property(
    tmp_path: Path, gates: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    single = tools_of(*(FLAGS if gates else ()))
    sizes = {1: len(compact(single))}
    for names in (["work", "home"], ["work", "home", "shared"]):
        tools = tools_of("--accounts", accounts_file(tmp_path, names, gates=gates))
        assert compact(without_account(tools)) == compact(single)
        for tool in tools:
            assert tool["inputSchema"]["properties"]["account"] == {"enum": names}
        sizes[len(names)] = len(compact(tools))
    with capsys.disabled():
        print(f"\ntools/list bytes by accounts ({'every gate' if gates else 'read-only'}): {sizes}")
    assert sizes[1] < sizes[2] < sizes[3]


@pytest.mark.slow
def test_the_largest_accounts_file_stays_within_its_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As many accounts as a file may hold, each name as long as allowed, every gate on:
    the most a client can be asked to read in ``tools/list``."""
    limits = DEFAULT_LIMITS
    names = [f"account{index}-".ljust(limits.account_name_chars, "x") for index in range(8)]
    assert len(names) == limits.accounts
    tools = tools_of("--accounts", accounts_file(tmp_path, names, gates=True))
    size = len(compact(tools))
    with capsys.disabled():
        print(f"\ntools/list bytes, {len(names)} accounts of {len(names[0])} characters: {size:,}")
    assert all(tool["inputSchema"]["properties"]["account"] == {"enum": names} for tool in tools)
    assert limits.tools_list_all_gates_bytes < size <= limits.tools_list_accounts_bytes
