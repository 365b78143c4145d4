"""MFC_* on/off variables mean the same in every place that reads one."""

from __future__ import annotations

import argparse
import re

import pytest

from mfconnector.auth.config import AuthConfigError, add_auth_arguments, auth_config_from_args
from mfconnector.envflags import EnvFlagError, env_flag
from mfconnector.writes.gates import GateConfigError, gates_from_args

CLIENT_ID = "11111111-2222-3333-4444-555555555555"


@pytest.mark.parametrize(
    ("raw", "meant"),
    [
        *[("1", True), (" Yes ", True), ("ON", True), ("true", True)],
        *[("0", False), ("", False), ("no", False), ("Off ", False), ("FALSE", False)],
    ],
)
def test_the_words_for_on_and_off(raw: str, meant: bool) -> None:
    assert env_flag({"MFC_X": raw}, "MFC_X") is meant
    assert gates_from_args(argparse.Namespace(), {"MFC_ENABLE_SEND": raw}).send is meant
    assert auth_config(MFC_SCOPES_ALL_FILES=raw).all_files is meant


def test_unset_is_none_so_the_caller_chooses_the_default() -> None:
    assert env_flag({}, "MFC_X") is None
    assert not gates_from_args(argparse.Namespace(), {}).send
    # MFC_APP_ONLY unset: app-only follows whether a client secret is configured.
    assert auth_config(MFC_CLIENT_SECRET="s", MFC_USER="u@contoso.example").app_only


@pytest.mark.parametrize("raw", ["maybe", "2", "flase", "1 1", "y"])
def test_anything_else_is_refused_in_the_same_words_everywhere(raw: str) -> None:
    expected = re.escape(f"must be 1 or 0 (true/false), not {raw!r}")
    with pytest.raises(EnvFlagError, match=expected):
        env_flag({"MFC_X": raw}, "MFC_X")
    with pytest.raises(GateConfigError, match=f"MFC_ENABLE_WRITES {expected}"):
        gates_from_args(argparse.Namespace(), {"MFC_ENABLE_WRITES": raw})
    with pytest.raises(AuthConfigError, match=f"MFC_APP_ONLY {expected}"):
        auth_config(MFC_APP_ONLY=raw)


def test_a_long_bad_value_is_shown_cut_short() -> None:
    with pytest.raises(EnvFlagError) as caught:
        env_flag({"MFC_X": "x" * 500}, "MFC_X")
    assert "x" * 20 in str(caught.value) and "x" * 21 not in str(caught.value)


def auth_config(**env: str) -> object:
    parser = argparse.ArgumentParser()
    add_auth_arguments(parser)
    values = {"MFC_CLIENT_ID": CLIENT_ID, "MFC_TENANT": "contoso.example", **env}
    return auth_config_from_args(parser.parse_args([]), values)
