"""Stalled SSE readers: server memory, and whether a fresh client is still served.

``--clients`` raw sockets (``SO_RCVBUF`` ``--rcvbuf`` bytes, set before connecting) each
POST a 2026-07-28 ``tools/call mail_read`` with a ``progressToken`` and
``Accept: text/event-stream``: the demo's ten largest messages in full, about 60 KB, so
the answer is an SSE stream (progress, then the result) larger than what the kernel
buffers of a connection whose reader has stopped hold. Each client reads the response
headers and then nothing more, for ``--seconds``, while the server's RSS is sampled and,
every ``--probe-every`` seconds, a fresh client (its own connection, its own user) sends
``mail_list {"limit": 5}`` and times the answer. Then the stalled sockets close and the
fresh client is timed once more.

The stalled clients are spread over ``--users`` users so that they stay within the
per-user limit (``http_requests_per_subject`` = 8); every user is warmed up first with the
same two calls read in full (their demo tenant built, the messages read once), so RSS
growth is the streams' own. Runs ours and then the official
SDK's server (bench/sdk_server.py ``--http``, the same recorded answer, progress too).

    python bench/hosted_sse_stall.py --clients 200 --seconds 40
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hosted_pair import (
    call_body,
    call_headers,
    load_average,
    servers,
    status_mb,
)


@dataclass
class Probe:
    at: float
    status: int
    seconds: float


@dataclass
class Figures:
    server: str
    accepted: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    rss_before: float = 0.0
    rss_stalled: float = 0.0
    rss_peak: float = 0.0
    rss_after_close: float = 0.0
    probes: list[Probe] = field(default_factory=list)
    after_close: Probe | None = None


def raw_request(url: str, headers: dict[str, str], body: dict[str, Any]) -> bytes:
    parts = urlsplit(url)
    data = json.dumps(body).encode()
    lines = [
        f"POST {parts.path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def stalled_reader(url: str, request: bytes, rcvbuf: int) -> tuple[socket.socket, int]:
    """Send ``request``, read up to the end of the response headers, then stop reading."""
    parts = urlsplit(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(30)
    sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    sock.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(256)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return sock, status


def fresh_call(url: str, headers: dict[str, str]) -> tuple[int, float]:
    started = time.perf_counter()
    with httpx.Client(timeout=30, trust_env=False) as http:
        try:
            response = http.post(url, json=call_body("mail_list", {"limit": 5}), headers=headers)
            status = response.status_code
        except httpx.TimeoutException:
            status = 0
    return status, time.perf_counter() - started


def measure(
    name: str, url: str, pid: int, auth: Any, big_read: dict[str, Any], args: Any
) -> Figures:
    figures = Figures(name)
    with httpx.Client(timeout=60, trust_env=False) as http:  # every user's state built
        for index in range(args.users + 1):
            for name, arguments in (("mail_list", {"limit": 5}), ("mail_read", big_read)):
                headers = {**auth(f"s{index}"), **call_headers(name)}
                http.post(url, json=call_body(name, arguments), headers=headers).raise_for_status()
    time.sleep(0.5)
    figures.rss_before = status_mb(pid, "VmRSS")
    body = call_body("mail_read", big_read, progress="stall")
    sockets = []
    for index in range(args.clients):
        headers = {**auth(f"s{index % args.users}"), **call_headers("mail_read")}
        sock, status = stalled_reader(url, raw_request(url, headers, body), args.rcvbuf)
        sockets.append(sock)
        if status == 200:
            figures.accepted += 1
        else:
            figures.refused[status] = figures.refused.get(status, 0) + 1
    fresh = {**auth(f"s{args.users}"), **call_headers("mail_list")}
    started = time.monotonic()
    next_probe = started
    while (now := time.monotonic()) < started + args.seconds:
        figures.rss_peak = max(figures.rss_peak, status_mb(pid, "VmRSS"))
        if now >= next_probe:
            status, seconds = fresh_call(url, fresh)
            figures.probes.append(Probe(now - started, status, seconds))
            next_probe += args.probe_every
        time.sleep(0.25)
    figures.rss_stalled = status_mb(pid, "VmRSS")
    for sock in sockets:
        sock.close()
    time.sleep(1.0)
    status, seconds = fresh_call(url, fresh)
    figures.after_close = Probe(time.monotonic() - started, status, seconds)
    figures.rss_after_close = status_mb(pid, "VmRSS")
    return figures


def report(figures: Figures, clients: int) -> None:
    refused = ", ".join(f"{n} x {status or 'no answer'}" for status, n in figures.refused.items())
    print(
        f"\n{figures.server}: {figures.accepted} of {clients} streams opened (200)"
        + (f"; refused: {refused}" if refused else "")
    )
    grown = figures.rss_peak - figures.rss_before
    per = grown * 1024 / max(figures.accepted, 1)
    print(
        f"  RSS before {figures.rss_before:.1f} MB, peak while stalled {figures.rss_peak:.1f} MB,"
        f" at the end {figures.rss_stalled:.1f} MB, after closing {figures.rss_after_close:.1f} MB"
    )
    print(f"  growth {grown:.1f} MB = {per:.0f} KB per open stalled stream")
    for probe in figures.probes:
        print(
            f"  fresh client at {probe.at:4.1f} s: {probe.status or 'timeout'} in "
            f"{probe.seconds * 1000:.0f} ms"
        )
    if figures.after_close is not None:
        probe = figures.after_close
        print(
            f"  fresh client after closing the stalled sockets: {probe.status} in "
            f"{probe.seconds * 1000:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--users", type=int, default=25, help="stalled clients spread over")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--probe-every", type=float, default=5.0)
    parser.add_argument("--rcvbuf", type=int, default=4096, help="SO_RCVBUF of stalled sockets")
    parser.add_argument("--server", choices=["both", "ours", "sdk"], default="both")
    args = parser.parse_args()
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as pair:
        runs = []
        if args.server in ("both", "ours"):
            runs.append(("ours", pair.ours.url, pair.ours.process.pid, pair.ours.auth))
        if args.server in ("both", "sdk"):
            runs.append(("sdk", pair.sdk_url, pair.sdk_process.pid, pair.ours.auth))
        for name, url, pid, auth in runs:
            figures = measure(name, url, pid, auth, pair.big_read, args)
            report(figures, args.clients)
    print(f"\nload average after: {load_average()}")


if __name__ == "__main__":
    main()
