"""Hosted mode under load: N concurrent HTTP clients on ``serve-http --demo``.

Starts the real server process (``tests/support/hosted_process.py``: tokens from a local issuer,
its JWKS over loopback), warms every user up (their first request builds their demo
tenant), then lets ``--clients`` clients, each a different user with its own connection,
send 2026-07-28 ``tools/call mail_list`` requests back to back for ``--seconds``. Prints
requests/s, p50/p99 latency, the server's CPU time per request (from /proc) and its peak
RSS (``VmHWM``). Linux only (reads /proc).

    python bench/hosted_http.py --clients 50 --seconds 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.hosted_process import hosted_server

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "mail_list", "arguments": {"limit": 5}, "_meta": META},
}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def client_loop(
    url: str, headers: dict[str, str], until: float, latencies: list[float], errors: list[int]
) -> None:
    async with httpx.AsyncClient(timeout=60, trust_env=False) as http:
        while time.monotonic() < until:
            started = time.perf_counter()
            response = await http.post(url, json=BODY, headers=headers)
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                errors.append(response.status_code)


async def warm_up(url: str, headers: dict[str, str]) -> None:
    async with httpx.AsyncClient(timeout=60, trust_env=False) as http:
        response = await http.post(url, json=BODY, headers=headers)
        response.raise_for_status()


async def run(url: str, users: list[dict[str, str]], seconds: float, pid: int) -> dict[str, Any]:
    """Warm every user up (their first request builds their tenant), then measure."""
    async with trio.open_nursery() as nursery:
        for headers in users:
            nursery.start_soon(warm_up, url, headers)
    latencies: list[float] = []
    errors: list[int] = []
    cpu_before = cpu_seconds(pid)
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for headers in users:
            nursery.start_soon(client_loop, url, headers, start + seconds, latencies, errors)
    elapsed = time.monotonic() - start
    cpu = cpu_seconds(pid) - cpu_before
    return {"latencies": latencies, "errors": errors, "elapsed": elapsed, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, hosted_server(Path(tmp)) as server:
        pid = server.process.pid
        users = []
        for index in range(args.clients):
            users.append(
                {
                    **server.auth(f"u{index}"),
                    "MCP-Protocol-Version": MODERN,
                    "Mcp-Method": "tools/call",
                    "Mcp-Name": "mail_list",
                }
            )
        figures = trio.run(run, server.url, users, args.seconds, pid)
        cpu = figures["cpu"]
        latencies = sorted(figures["latencies"])
        count = len(latencies)
        print(f"clients {args.clients}, {figures['elapsed']:.1f} s, {count} requests")
        print(f"requests/s {count / figures['elapsed']:.0f}")
        print(f"p50 {statistics.median(latencies) * 1000:.1f} ms")
        print(f"p99 {latencies[int(count * 0.99) - 1] * 1000:.1f} ms")
        print(f"server CPU {cpu / max(count, 1) * 1000:.2f} ms per request")
        print(f"server peak RSS {peak_rss_mb(pid):.1f} MB")
        print(f"non-200 answers {len(figures['errors'])}")


if __name__ == "__main__":
    main()
