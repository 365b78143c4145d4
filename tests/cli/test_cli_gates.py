"""The gate switches end to end: flags and MFC_ENABLE_* on the real CLI, the permissions
`login` asks for, `status` showing granted against needed, and demo mode keeping its send
state in memory (never a live state file)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mfconnector.auth import commands
from mfconnector.auth.msal_provider import MsalTokenProvider
from mfconnector.cli import build_parser
from mfconnector.entry.account_builders import live_sign_in
from mfconnector.entry.signin import sign_in_config
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.writes.gates import gates_from_args
from tests.support.harness import request
from tests.support.idp_fake import FakeIdP

CLIENT_ID = "5f7e9c1a-3b2d-4e6f-8a9b-0c1d2e3f4a5b"


pytestmark = pytest.mark.usefixtures("no_keyring")


def run_server(args: list[str], lines: list[dict[str, Any]], env: dict[str, str]) -> Any:
    data = "".join(json.dumps(line) + "\n" for line in lines)
    return subprocess.run(
        [sys.executable, "-m", "mfconnector", *args],
        input=data.encode(),
        capture_output=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


def listed(stdout: bytes) -> list[str]:
    reply = json.loads(stdout.splitlines()[0])
    return [tool["name"] for tool in reply["result"]["tools"]]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, []),
        (["--enable-writes"], {}, ["mail_review", "mail_create", "mail_modify"]),
        ([], {"MFC_ENABLE_SEND": "1"}, ["mail_review", "mail_prepare", "mail_send_confirmed"]),
        (
            ["--enable-delete"],
            {"MFC_ENABLE_WRITES": "1"},
            ["mail_review", "mail_create", "mail_modify", "mail_delete_permanently"],
        ),
    ],
)
def test_flags_and_environment_open_gates(
    args: list[str], env: dict[str, str], expected: list[str], tmp_path: Path
) -> None:
    done = run_server(["--demo", *args], [request(1, "tools/list")], env)
    assert done.returncode == 0, done.stderr
    assert [
        n
        for n in listed(done.stdout)
        if n.startswith("mail_")
        and n not in ("mail_folders", "mail_list", "mail_search", "mail_read", "mail_attachment")
    ] == expected


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--enable-delete"], {}),
        ([], {"MFC_ENABLE_DELETE": "1"}),
        ([], {"MFC_ENABLE_SEND": "2"}),
        (["--enable-send"], {"MFC_CONFIRM": "nobody"}),
    ],
)
def test_impossible_switches_exit_2_with_one_line(args: list[str], env: dict[str, str]) -> None:
    done = run_server(["--demo", *args], [], env)
    assert done.returncode == 2
    assert done.stdout == b""
    assert len(done.stderr.decode().strip().splitlines()) == 1


def config_for(argv: list[str], env: dict[str, str], cache: Path) -> Any:
    args = build_parser().parse_args(argv)
    return sign_in_config(args, {"MFC_CLIENT_ID": CLIENT_ID, "MFC_CACHE_PATH": str(cache), **env})


@pytest.mark.parametrize(
    ("argv", "env", "extra"),
    [
        (["login"], {}, []),
        (["login", "--enable-writes"], {}, ["Mail.ReadWrite"]),
        (["login", "--enable-writes", "--enable-send"], {}, ["Mail.ReadWrite", "Mail.Send"]),
        (["login"], {"MFC_ENABLE_SEND": "1"}, ["Mail.ReadWrite", "Mail.Send"]),
    ],
)
def test_login_asks_for_write_permissions_only_when_a_gate_is_on(
    tmp_path: Path, argv: list[str], env: dict[str, str], extra: list[str]
) -> None:
    config = config_for([*argv], {**env, "MFC_ALLOW_PLAINTEXT_CACHE": "1"}, tmp_path / "c.json")
    idp = FakeIdP(client_id=CLIENT_ID)
    out = io.StringIO()
    assert commands.login(config, http_client=idp, stream=out) == 0, out.getvalue()
    (asked,) = [scope for _, scope in idp.device_codes.values()]
    api = sorted(s for s in asked.split() if s not in ("openid", "profile", "offline_access"))
    assert api == sorted(["User.Read", "Mail.Read", "Files.Read", "MailboxSettings.Read", *extra])


def test_status_shows_granted_against_needed_with_the_consent_command(tmp_path: Path) -> None:
    cache = tmp_path / "c.json"
    env = {"MFC_ALLOW_PLAINTEXT_CACHE": "1"}
    idp = FakeIdP(client_id=CLIENT_ID)
    assert (
        commands.login(config_for(["login"], env, cache), http_client=idp, stream=io.StringIO())
        == 0
    )
    out = io.StringIO()
    commands.status(config_for(["status", "--enable-send"], env, cache), stream=out)
    text = out.getvalue()
    assert "needed:" in text and "Mail.ReadWrite" in text and "Mail.Send" in text
    assert "missing:" in text and "mfconnector login --enable-send" in text
    out = io.StringIO()
    commands.status(config_for(["status"], env, cache), stream=out)
    assert "missing:" not in out.getvalue()


@pytest.mark.slow
def test_demo_keeps_send_state_in_memory(tmp_path: Path) -> None:
    state, xdg = tmp_path / "state", tmp_path / "xdg"
    lines = [
        request(
            1,
            "tools/call",
            {
                "name": "mail_review",
                "arguments": {"action": "send_status", "prepared_id": "0" * 32},
            },
        ),
    ]
    done = run_server(
        ["--demo", "--enable-send", "--state-dir", str(state)],
        lines,
        {"XDG_STATE_HOME": str(xdg), "MFC_STATE_DIR": str(state), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    error = json.loads(reply["result"]["content"][0]["text"])["error"]
    assert error["error_code"] == "not_found"
    assert not state.exists() and not xdg.exists()
    assert not (tmp_path / ".local").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "says"), [([], "Read-only access"), (["--enable-send"], "approve")]
)
def test_the_instructions_say_what_the_server_may_do(args: list[str], says: str) -> None:
    done = run_server(["--demo", *args], [request(1, "server/discover")], {})
    assert done.returncode == 0, done.stderr
    instructions = json.loads(done.stdout.splitlines()[0])["result"]["instructions"]
    assert says in instructions
    assert ("mail_prepare" in instructions) is bool(args)


def test_a_live_server_asks_for_read_permissions_and_login_for_the_gates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MFC_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("MFC_CACHE_PATH", str(tmp_path / "c.json"))
    args = build_parser().parse_args(["--enable-writes", "--enable-send"])
    sign_in = live_sign_in(args, gates_from_args(args), DEFAULT_LIMITS)
    provider = sign_in.token_provider
    assert isinstance(provider, MsalTokenProvider)
    assert "Mail.Send" not in provider.config.scopes
    assert "Mail.Read" in provider.config.scopes
    assert provider.config.login_command == "mfconnector login --enable-writes --enable-send"
    assert sign_in.cloud == "global"
    login = sign_in_config(build_parser().parse_args(["login", "--enable-send"]))
    assert {"Mail.ReadWrite", "Mail.Send"} <= set(login.scopes)
