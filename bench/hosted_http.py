"""Hosted mode under load, beside the official SDK's Streamable HTTP server, in one run.

Starts the real ``serve-http --demo`` process and bench/sdk_server.py ``--http`` (the SDK's
low-level ``Server`` and its own Streamable HTTP app under uvicorn) publishing our tools
array and returning the answer our server gave to the same call (bench/hosted_pair.py),
so both send the same bytes. Then, for each server and for 1 and ``--clients`` clients
(each a different user on its own keep-alive connection, every user warmed up first: their
first request builds their demo tenant), sends 2026-07-28 ``tools/call mail_list
{"limit": 5}`` back to back for ``--seconds``. Prints one table: requests/s, p50/p99
latency, the server's CPU time per request (from /proc) and its peak RSS (``VmHWM``);
then what our bearer check alone costs (``BearerVerifier.verify`` on the same tokens, in
this process), which the SDK server does not do. Linux only (reads /proc).

    python bench/hosted_http.py --clients 50 --seconds 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hosted_pair import (
    Pair,
    call_body,
    call_headers,
    cpu_seconds,
    load_average,
    servers,
    status_mb,
)

from mfconnector.hosted.bearer import BearerVerifier
from mfconnector.hosted.jwks import JwksCache
from mfconnector.hosted.resource import ResourceSettings
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.hosted_process import PUBLIC_URL
from tests.support.oauth_issuer import SCOPE

BODY = call_body("mail_list", {"limit": 5})
VERIFY_ROUNDS = 300


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


async def warm_up(url: str, headers: dict[str, str], sizes: list[int]) -> None:
    async with httpx.AsyncClient(timeout=60, trust_env=False) as http:
        response = await http.post(url, json=BODY, headers=headers)
        response.raise_for_status()
        sizes.append(len(response.content))


async def run(url: str, users: list[dict[str, str]], seconds: float, pid: int) -> dict[str, Any]:
    """Warm every user up (their first request builds their tenant), then measure."""
    sizes: list[int] = []
    async with trio.open_nursery() as nursery:
        for headers in users:
            nursery.start_soon(warm_up, url, headers, sizes)
    latencies: list[float] = []
    errors: list[int] = []
    cpu_before = cpu_seconds(pid)
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for headers in users:
            nursery.start_soon(client_loop, url, headers, start + seconds, latencies, errors)
    elapsed = time.monotonic() - start
    cpu = cpu_seconds(pid) - cpu_before
    return {
        "latencies": sorted(latencies),
        "errors": errors,
        "elapsed": elapsed,
        "cpu": cpu,
        "peak": status_mb(pid, "VmHWM"),
        "bytes": max(sizes),
    }


async def bearer_cost(pair: Pair, users: list[dict[str, str]]) -> float:
    """CPU seconds per ``BearerVerifier.verify`` of the bench's own tokens (keys cached)."""
    issuer = pair.ours.issuer
    resource = ResourceSettings.build(
        public_url=PUBLIC_URL, issuer=issuer.issuer, scope=SCOPE, jwks_url=issuer.jwks_url
    )
    async with httpx.AsyncClient(trust_env=False) as client:
        verifier = BearerVerifier(
            resource, JwksCache(resource, client, DEFAULT_LIMITS), DEFAULT_LIMITS
        )
        await verifier.verify(users[0]["Authorization"])  # the JWKS fetched once
        started = time.process_time()
        for round_ in range(VERIFY_ROUNDS):
            await verifier.verify(users[round_ % len(users)]["Authorization"])
        return (time.process_time() - started) / VERIFY_ROUNDS


def row(server: str, clients: int, figures: dict[str, Any]) -> str:
    latencies = figures["latencies"]
    count = len(latencies)
    p99 = latencies[max(int(count * 0.99) - 1, 0)]
    return (
        f"| {server} | {clients} | {count / figures['elapsed']:,.0f} "
        f"| {statistics.median(latencies) * 1000:,.1f} ms | {p99 * 1000:,.1f} ms "
        f"| {figures['cpu'] / max(count, 1) * 1000:.2f} ms | {figures['peak']:.0f} MB "
        f"| {figures['bytes']:,} | {len(figures['errors'])} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as pair:
        users = [
            {**pair.ours.auth(f"u{index}"), **call_headers("mail_list")}
            for index in range(args.clients)
        ]
        targets = [
            ("ours", pair.ours.url, pair.ours.process.pid),
            ("sdk", pair.sdk_url, pair.sdk_process.pid),
        ]
        lines = []
        for name, url, pid in targets:
            for clients in sorted({1, args.clients}):
                figures = trio.run(run, url, users[:clients], args.seconds, pid)
                lines.append(row(name, clients, figures))
        verify = trio.run(bearer_cost, pair, users)
    print(
        "| server | clients | requests/s | p50 | p99 | server CPU per request "
        "| server peak RSS | answer bytes | non-200 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    print(
        f"\nour bearer check alone (BearerVerifier.verify, RS256, keys cached, in this "
        f"process): {verify * 1000:.2f} ms CPU per request; the SDK server checks none"
    )
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
