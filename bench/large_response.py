"""What a large Graph answer costs the client: time and peak memory, accepted or refused.

    .venv/bin/python bench/large_response.py [--unbounded]

``--unbounded`` lifts ``graph_body_values`` (no value count before parsing, as in 0.2.0).

A loopback HTTP server (tests/support/loopback.py) serves Graph-shaped JSON of 0.5, 1 and 2 MB,
plus three 50 MB answers that must be refused at the 2,000,000-byte cap: one that
declares its length, one chunked without a length, and a gzip bomb (about 50 KB on the
wire). Each scenario runs in a fresh child process, so its peak RSS is its own: the
child warms up (imports, one small request), resets the peak with /proc/self/clear_refs,
fetches once, and reads VmHWM while the parsed answer is still alive. Time is the median
of five fetches in that child.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CAP = 2_000_000
BIG = 50_000_000
RUNS = 5


# --- bodies ------------------------------------------------------------------------------


def message(n: int) -> dict[str, Any]:
    """One message as a slim ``$select`` list returns it (about 1 KB of JSON)."""
    return {
        "@odata.etag": f'W/"CQAAABYAAAB{n:08d}nQ0+ZzUJDhRt8mIuAAABvH1/"',
        "id": f"AAMkAGUzY5QKjAAABEgAQAMkpJI_X-LBFgvrv1PlZYd{n:08d}AAAAAAEMAAAnQ0-ZzUJDhRt8mIu=",
        "subject": f"Quarterly numbers, draft {n} — please review before Friday",
        "bodyPreview": ("Hi team, attached are the figures we discussed on the call. " * 5)[:255],
        "receivedDateTime": "2026-11-30T08:15:00Z",
        "isRead": n % 3 == 0,
        "importance": "normal",
        "hasAttachments": n % 5 == 0,
        "conversationId": f"AAQkAGUzY5QKjAAABEgAQAMkpJI{n:08d}=",
        "parentFolderId": "AAMkAGUzY5QKjAAAAAEMAAA=",
        "from": {"emailAddress": {"name": f"Person {n}", "address": f"person{n}@contoso.com"}},
        "flag": {"flagStatus": "notFlagged"},
    }


def messages_page(target: int) -> bytes:
    """A list page of messages, padded (in the nextLink) to exactly ``target`` bytes."""
    items: list[dict[str, Any]] = []
    size = len(json.dumps({"value": [], "@odata.nextLink": ""}))
    while True:
        item = message(len(items))
        extra = len(json.dumps(item)) + (2 if items else 0)  # ", " between items
        if size + extra > target:
            break
        items.append(item)
        size += extra
    body = json.dumps({"value": items, "@odata.nextLink": "x" * (target - size)}).encode()
    assert len(body) == target
    return body


def repeated(unit: bytes, count: int) -> bytes:
    """``{"value":[unit,unit,...]}`` with ``count`` units: the costliest shapes per byte."""
    return b'{"value":[' + b",".join([unit] * count) + b"]}"


def at_value_limit(unit: bytes) -> bytes:
    """The largest ``repeated(unit)`` body that ``graph_body_values`` still lets through."""
    from mfconnector.jsoncost import values_over_limit
    from mfconnector.limits import DEFAULT_LIMITS

    def values(count: int) -> int:
        over = values_over_limit(repeated(unit, count), 0, find_top=False)
        assert over is not None
        return over.values

    limit = DEFAULT_LIMITS.graph_body_values
    base, per_unit = values(1), values(2) - values(1)
    count = 1 + (limit - base) // per_unit
    body = repeated(unit, count)
    assert values_over_limit(body, limit) is None
    assert values_over_limit(repeated(unit, count + 1), limit) is not None
    return body


def one_string(target: int) -> bytes:
    return b'{"v":"' + b"x" * (target - 8) + b'"}'


def endless(total: int) -> Iterator[bytes]:
    chunk = b"x" * 65_536
    for _ in range(total // len(chunk)):
        yield chunk


def gzip_bomb(decoded: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"\0" * 1_000_000
    return b"".join([compressor.compress(block) for _ in range(decoded // len(block))]) + (
        compressor.flush()
    )


# --- the child: one scenario, one process ------------------------------------------------


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def child(root: str, path: str, unbounded: bool) -> None:
    from dataclasses import replace

    import trio

    from mfconnector.auth import StaticTokenProvider
    from mfconnector.errors import ResponseTooLargeError
    from mfconnector.graph.client import GraphClient
    from mfconnector.limits import DEFAULT_LIMITS

    # --unbounded: no value count before parsing, as in 0.2.0
    limits = replace(DEFAULT_LIMITS, graph_body_values=10**9) if unbounded else DEFAULT_LIMITS

    async def fetch(client: GraphClient) -> tuple[str, Any]:
        try:
            answer = await client.get_json(path)
        except ResponseTooLargeError:
            return "refused", None
        return "parsed", answer

    async def main() -> dict[str, Any]:
        tokens = StaticTokenProvider("bench")
        async with GraphClient(token_provider=tokens, root=root, limits=limits) as client:
            await client.get_json("/warmup")
            rss_before = status_kb("VmRSS")
            reset_peak()
            start = time.perf_counter()
            outcome, answer = await fetch(client)
            times = [time.perf_counter() - start]
            peak = status_kb("VmHWM")
            del answer
            for _ in range(RUNS - 1):
                start = time.perf_counter()
                await fetch(client)
                times.append(time.perf_counter() - start)
        return {
            "outcome": outcome,
            "ms": statistics.median(times) * 1000,
            "growth_kb": peak - rss_before,
        }

    print(json.dumps(trio.run(main)))


# --- the parent: server, scenarios, table ------------------------------------------------


def scenarios() -> list[tuple[str, str, int, Any]]:
    from tests.support.loopback import Reply

    rows: list[tuple[str, str, int, Any]] = []
    for size in (500_000, 1_000_000, CAP):
        body = messages_page(size)
        rows.append((f"messages {size / 1e6:g} MB", "/v1.0/m", len(body), Reply(200, body=body)))
    body = one_string(CAP)
    rows.append(("one string 2 MB", "/v1.0/s", len(body), Reply(200, body=body)))
    for name, unit in (("[{},{},...]", b"{}"), ("[[],[],...]", b"[]"), ("[0,0,...]", b"0")):
        body = repeated(unit, (CAP - 12) // (len(unit) + 1))
        rows.append((f"{name} 2 MB", "/v1.0/h", len(body), Reply(200, body=body)))
        body = at_value_limit(unit)
        rows.append((f"{name} at graph_body_values", "/v1.0/l", len(body), Reply(200, body=body)))
    rows.append(
        (
            "50 MB, Content-Length",
            "/v1.0/cl",
            BIG,
            lambda _r: Reply(200, body=endless(BIG), content_length=BIG),
        )
    )
    rows.append(
        ("50 MB, chunked", "/v1.0/ch", BIG, lambda _r: Reply(200, body=endless(BIG), chunked=True))
    )
    bomb = gzip_bomb(BIG)
    rows.append(
        (
            f"50 MB gzip bomb ({len(bomb) // 1000} KB)",
            "/v1.0/gz",
            BIG,
            Reply(200, [("Content-Encoding", "gzip")], bomb),
        )
    )
    return rows


def parent(unbounded: bool) -> None:
    from tests.support.loopback import LoopbackServer, Reply

    rows = scenarios()
    results = []
    with LoopbackServer() as server:
        server.route("GET", "/v1.0/warmup", Reply.json({"ok": True}))
        for index, (name, path, size, reply) in enumerate(rows):
            unique = f"{path}{index}"
            server.route("GET", unique, reply)
            out = subprocess.run(
                [sys.executable, __file__, "--child", f"{server.url}/v1.0", unique[5:]]
                + (["--unbounded"] if unbounded else []),
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            )
            results.append((name, size, json.loads(out.stdout)))
    print(
        f"# {platform.node() or 'host'}: {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    print()
    print("| scenario | body bytes | outcome | median ms | peak RSS growth | growth / body |")
    print("|---|---:|---|---:|---:|---:|")
    for name, size, result in results:
        growth = result["growth_kb"] * 1024
        ratio = f"{growth / size:.1f}x" if result["outcome"] == "parsed" else "—"
        print(
            f"| {name} | {size:,} | {result['outcome']} | {result['ms']:.1f} | "
            f"{growth / 1e6:.1f} MB | {ratio} |"
        )


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], "--unbounded" in sys.argv[4:])
    else:
        parent("--unbounded" in sys.argv[1:])
