"""Claim latency of the two state stores: the SQLite file and Redis, p50 and p99.

    .venv/bin/python bench/state_claims.py [--claims 2000] [--redis-url redis://...]

Without ``--redis-url`` a throwaway ``redis-server`` (Debian's package) is started on a
free loopback port in a temporary directory, without persistence. Each figure is one
process, one store, calls made one after another from the calling thread (the tools make
them from trio's worker threads: add about 75 µs per call for the thread hop):

- ``claim``: the one-time claim alone (``prepared`` -> ``sending``), per preparation;
- ``send``: the store's whole part of one send: get + claim + finish (as
  ``mail_send_confirmed`` calls it), per preparation.

Preparations are saved beforehand, outside the timing.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from mfconnector.writes.state import StateStore
from mfconnector.writes.store import Preparation, SendStore

ACCOUNT = "adele@contoso.com"
DIGEST = "a" * 64


def preparation(prepared_id: str, now: float) -> Preparation:
    return Preparation(
        prepared_id=prepared_id,
        account=ACCOUNT,
        mailbox="/me",
        draft_id="draft-" + prepared_id,
        digest=DIGEST,
        summary={"to": ["megan@contoso.com"], "subject": "bench"},
        created_at=now,
        expires_at=now + 900,
    )


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(store: StateStore, prefix: str, count: int, whole: bool) -> list[float]:
    ids = [f"{prefix}{index:028d}" for index in range(count)]
    for prepared_id in ids:
        store.save(preparation(prepared_id, time.time()))
    samples = []
    for prepared_id in ids:
        began = time.perf_counter()
        if whole:
            store.get(prepared_id, ACCOUNT, "/me")
        claimed = store.claim(prepared_id, ACCOUNT, "/me", DIGEST)
        if whole:
            store.finish(prepared_id, "sent", {"graph_status": 202})
        samples.append(time.perf_counter() - began)
        assert claimed.status == "claimed", claimed
    return samples


@contextmanager
def throwaway_redis() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", directory],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(500):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    time.sleep(0.01)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait()


def report(name: str, samples: list[float]) -> None:
    p50, p99 = percentile(samples, 0.50), percentile(samples, 0.99)
    print(f"{name:<24} p50 {p50 * 1e6:8.0f} µs   p99 {p99 * 1e6:8.0f} µs   ({len(samples)} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--redis-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        sqlite = SendStore(Path(directory) / "state" / "state.sqlite3")
        sqlite.check()
        report("sqlite claim", measure(sqlite, "c", args.claims, whole=False))
        report("sqlite get+claim+finish", measure(sqlite, "w", args.claims, whole=True))
        sqlite.close()
    source = nullcontext(args.redis_url) if args.redis_url else throwaway_redis()
    with source as url:
        from mfconnector.writes.redis_store import RedisState

        state = RedisState(url)
        redis_store = state.store("bench")
        redis_store.check()
        report("redis claim", measure(redis_store, "c", args.claims, whole=False))
        report("redis get+claim+finish", measure(redis_store, "w", args.claims, whole=True))
        state.close()


if __name__ == "__main__":
    main()
