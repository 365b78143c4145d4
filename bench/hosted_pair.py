"""Both servers for the HTTP benches: ours (``serve-http --demo``) and the official SDK's.

``servers(tmp)`` starts the real ``serve-http --demo`` process (tests/support/hosted_process.py:
tokens from the tests' local issuer, its JWKS over loopback), records what it answers to
``tools/list`` and to the benches' calls, then starts bench/sdk_server.py ``--http`` with
that tools array and those answers, so both servers send the same bytes for the same call.
Also the /proc readings (CPU time, RSS) the benches print. Linux only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.hosted_process import HostedServer, hosted_server

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = "application/json, text/event-stream"
SDK_SERVER = Path(__file__).resolve().parent / "sdk_server.py"
SDK_SERVING = re.compile(r"serving MCP on (http://\S+)")
BIG_READ_IDS = 10
"""A batch ``mail_read`` of the demo's ten largest inbox messages in full: about 60 KB, more
than the kernel buffers of a stalled loopback connection hold."""


def call_body(name: str, arguments: dict[str, Any], progress: str | None = None) -> dict[str, Any]:
    meta = {**META, "progressToken": progress} if progress is not None else META
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def call_headers(name: str) -> dict[str, str]:
    return {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "Accept": ACCEPT,
    }


@dataclass
class Pair:
    ours: HostedServer
    sdk_url: str
    sdk_process: subprocess.Popen[bytes]
    big_read: dict[str, Any]
    """``mail_read`` arguments whose answer is about 60 KB."""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_mb(pid: int, field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@contextmanager
def servers(tmp: Path) -> Iterator[Pair]:
    """Ours, then the SDK's serving the tools array and answers recorded from ours."""
    with hosted_server(tmp / "ours") as ours:
        tools, answers, big_read = _record(ours)
        (tmp / "tools.json").write_text(json.dumps(tools))
        (tmp / "answers.json").write_text(json.dumps(answers))
        with _sdk_server(tmp) as (url, process):
            yield Pair(ours, url, process, big_read)


def _record(ours: HostedServer) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Our tools array, our answer to ``mail_list {"limit": 5}`` and to the big read."""
    headers = ours.auth("recorder")
    with httpx.Client(timeout=60, trust_env=False) as http:

        def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            response = http.post(
                ours.url,
                json=call_body(name, arguments),
                headers={**headers, **call_headers(name)},
            )
            response.raise_for_status()
            result: dict[str, Any] = response.json()["result"]
            assert "structuredContent" in result, result  # an incomplete page is isError too
            return result

        listed = http.post(
            ours.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
            headers={**headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
        )
        listed.raise_for_status()
        tools = listed.json()["result"]["tools"]
        small = call("mail_list", {"limit": 5})
        inbox = call("mail_list", {"limit": 50})["structuredContent"]["messages"]
        sizes = []
        for row in inbox:
            one = call("mail_read", {"message_id": row[0], "detail": "full"})
            sizes.append((len(json.dumps(one)), row[0]))
        largest = [message_id for _, message_id in sorted(sizes, reverse=True)[:BIG_READ_IDS]]
        big_read = {"message_ids": largest, "detail": "full", "max_response_bytes": 131_072}
        big = call("mail_read", big_read)
    answers = {
        "mail_list": {"result": small, "progress": 0},
        "mail_read": {"result": big, "progress": BIG_READ_IDS},
    }
    return tools, answers, big_read


@contextmanager
def _sdk_server(tmp: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    stderr_path = tmp / "sdk-stderr.txt"
    command = [
        sys.executable,
        str(SDK_SERVER),
        "--tools-json",
        str(tmp / "tools.json"),
        "--answers-json",
        str(tmp / "answers.json"),
        "--http",
        "127.0.0.1:0",
    ]
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while not (found := SDK_SERVING.search(stderr_path.read_text(errors="replace"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the SDK server did not start: {stderr_path.read_text()}")
            time.sleep(0.05)
        yield found.group(1), process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
