"""Interop over HTTP: the official MCP TypeScript SDK (npm ``@modelcontextprotocol/sdk``)
as a client of the real ``serve-http --demo`` process, with a bearer token.

The SDK 1.32.2 speaks the handshake eras only (its newest is 2025-11-25), so this is the
2025-11-25 session: ``initialize`` over POST, its ``Mcp-Session-Id`` on every later
request, ``tools/list``, ``tools/call``, and the SDK's ``terminateSession`` (DELETE).
``tests/interop_ts/client.mjs`` drives it and prints one JSON line.

The SDK is installed into ``tests/interop_ts/node_modules`` by ``npm install`` on first
use (npm is reached like pip is). Without ``node`` on the machine the test is skipped
with the reason, except under CI, where it fails: CI must run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.hosted_process import hosted_server

pytestmark = pytest.mark.slow

CLIENT_DIR = Path(__file__).resolve().parents[1] / "interop_ts"


def node_client() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are needed for the TypeScript SDK interop test")
        pytest.skip("node and npm are not installed")
    if not (CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--no-package-lock"],
            cwd=CLIENT_DIR,
            check=True,
            capture_output=True,
            timeout=600,
        )
    return CLIENT_DIR / "client.mjs"


def test_typescript_sdk_client_lists_and_calls_tools(tmp_path: Path) -> None:
    script = node_client()
    with hosted_server(tmp_path) as server:
        env = {**os.environ, "MCP_URL": server.url, "MCP_TOKEN": server.token()}
        result = subprocess.run(
            ["node", script.name],
            cwd=script.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        assert seen["protocolVersion"] == "2025-11-25"
        assert len(seen["sessionId"]) >= 32
        assert {"mail_list", "mail_read", "account_status"} <= set(seen["tools"])
        assert seen["rows"] == 2
        assert seen["unknownToolError"] == -32602
        log = server.stderr()
    assert "Traceback" not in log
