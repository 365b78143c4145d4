"""Routing calls to accounts: the per-account schemas are copies (the tools every server
shares are never changed), and a server of one account is not routed at all."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mfconnector.entry.accounts_file import parse_accounts
from mfconnector.entry.parser import build_parser
from mfconnector.entry.routing import with_account_argument
from mfconnector.entry.wiring import build_context, build_server, gates_of
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.tools import ALL_TOOLS
from mfconnector.tools.mail import MAIL_SEARCH

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "tools_list.json"


def demo_args() -> argparse.Namespace:
    return build_parser().parse_args(["--demo"])


def test_the_account_property_is_added_to_a_copy_in_schema_order() -> None:
    routed = with_account_argument(MAIL_SEARCH, ["work", "home"])
    schema = routed.input_schema
    assert list(schema) == ["type", "properties", "required", "additionalProperties"]
    assert schema["required"] == ["query", "account"]
    assert list(schema["properties"])[-1] == "account"
    assert "account" not in MAIL_SEARCH.input_schema["properties"]
    assert MAIL_SEARCH.input_schema["required"] == ["query"]


def test_building_a_server_of_several_accounts_leaves_the_shared_tools_alone() -> None:
    text = (
        '[[account]]\nname = "a"\nprovider = "graph"\n[[account]]\nname = "b"\nprovider = "graph"\n'
    )
    specs = parse_accounts(text, DEFAULT_LIMITS)
    context, _ = build_context(demo_args(), DEFAULT_LIMITS, gates_of(specs), specs)
    build_server(context, gates_of(specs))
    assert sorted(context.per_account) == ["a", "b"]
    assert context.per_account["a"].cursors is context.cursors  # one signer for the server
    assert context.per_account["a"].state is not context.per_account["b"].state
    wire = json.dumps(
        [tool.definition() for tool in ALL_TOOLS], separators=(",", ":"), ensure_ascii=True
    )
    assert wire == SNAPSHOT.read_text(encoding="ascii")
