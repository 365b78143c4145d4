"""Issue 22 §5: a first run that explains itself.

0.2 waited silently when started in a terminal; in live mode without MFC_CLIENT_ID it
reported the keyring, then "not signed in", and only at the end "no client id configured";
its subcommands had no description and `tour --demo` was an argparse error. Each test
here runs what a new user runs: the real process (on a pseudo-terminal where a person
would type), or the real command functions.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mfconnector.auth import commands
from mfconnector.auth.config import AuthConfig
from mfconnector.cli import build_parser

NOTICE = "waiting for an MCP client"
NO_CLIENT_ID = "no client id configured"
READ_SECONDS = 20.0


def clean_env(home: Path) -> dict[str, str]:
    """A user with no mfconnector settings at all (no client id, an empty home)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), PYTHONUNBUFFERED="1")
    return env


def read_until(fd: int, marker: bytes, seconds: float = READ_SECONDS) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminal")
def test_started_in_a_terminal_it_says_it_is_an_mcp_server_waiting_for_a_client(
    tmp_path: Path,
) -> None:
    import pty

    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "mfconnector", "--demo"],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(tmp_path),
    ) as process:
        os.close(secondary)
        try:
            assert process.stderr is not None and process.stdout is not None
            said = read_until(process.stderr.fileno(), b"Ctrl+C").decode()
            assert NOTICE in said
            assert "README.md 'Add it to an MCP client'" in said and "mfconnector tour" in said
            os.write(primary, b"\x04")  # Ctrl+D at the start of a line: end of input
            assert process.wait(timeout=READ_SECONDS) == 0
            assert process.stdout.read() == b"", "the notice never touches stdout"
        finally:
            os.close(primary)
            if process.poll() is None:
                process.kill()


@pytest.mark.slow
def test_started_by_a_client_on_pipes_it_says_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", "--demo"],
        input=b"",
        capture_output=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
    assert NOTICE not in done.stderr.decode()


@pytest.mark.slow
def test_live_mode_without_a_client_id_says_so_first_at_start_up_and_in_tool_results(
    tmp_path: Path,
) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    calls = [
        {"name": "account_status", "arguments": {}},
        {"name": "mail_list", "arguments": {}},
    ]
    lines = "".join(
        json.dumps(
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"_meta": meta, **c}}
        )
        + "\n"
        for n, c in enumerate(calls)
    )
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector"],
        input=lines.encode(),
        capture_output=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    stderr = done.stderr.decode()
    assert NO_CLIENT_ID in stderr.splitlines()[0], stderr
    assert "keyring" not in stderr
    replies = {r["id"]: r["result"] for r in map(json.loads, done.stdout.splitlines())}
    status = replies[0]["structuredContent"]
    assert status["signed_in"] is False
    assert NO_CLIENT_ID in json.dumps(status)
    assert "keyring" not in json.dumps(status)
    listing = replies[1]
    assert listing["isError"] is True
    assert json.loads(listing["content"][0]["text"])["error"]["message"] == NO_CLIENT_ID


def test_status_names_the_missing_client_id_first_and_says_not_signed_in(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    config = AuthConfig(cache_path=tmp_path / "cache.json", allow_plaintext_cache=True)
    assert commands.status(config, stream=out) == 1
    said = out.getvalue().splitlines()
    assert said[0] == f"error: {NO_CLIENT_ID}"
    assert "MFC_CLIENT_ID" in said[1]
    assert any(line.startswith("signed in:") and "not signed in" in line for line in said)


def test_login_names_the_missing_client_id_before_the_token_store(tmp_path: Path) -> None:
    out = io.StringIO()
    config = AuthConfig(cache_path=tmp_path / "cache.json")  # no keyring, no plaintext
    assert commands.login(config, method="device-code", stream=out) == 1
    said = out.getvalue()
    assert NO_CLIENT_ID in said.splitlines()[0]
    assert "keyring" not in said and "plaintext" not in said


@pytest.mark.parametrize("name", ["tour", "login", "logout", "status"])
def test_every_subcommand_help_has_a_description(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([name, "--help"])
    assert exit_.value.code == 0
    usage, _, rest = capsys.readouterr().out.partition("\n\n")
    description = rest.split("\n\n")[0]
    assert usage.startswith(f"usage: mfconnector {name}")
    assert len(description) > 40 and not description.startswith("options:")


def test_tour_accepts_demo() -> None:
    args = build_parser().parse_args(["tour", "--demo"])
    assert args.command == "tour"


def test_help_says_which_tools_each_gate_turns_on(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    writes = text.split("--enable-writes ", 2)[-1].split("[MFC_ENABLE_WRITES=1]")[0]
    assert "mail_create" in writes and "mail_modify" in writes and "mail_review" in writes
    send = text.split("--enable-send ", 2)[-1].split("[MFC_ENABLE_SEND=1]")[0]
    assert "mail_prepare" in send and "mail_send_confirmed" in send and "mail_review" in send
