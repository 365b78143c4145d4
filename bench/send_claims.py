"""Claims per second on one SQLite state file, and what two processes racing for the same
preparations get.

    .venv/bin/python bench/send_claims.py [--preparations 2000]

Four figures, each from fresh processes on a fresh file in a temporary directory:

- one process: save + claim + finish per preparation (the whole store cost of one send);
- two processes claiming *different* preparations at once (contention on the write lock);
- two processes racing for the *same* preparations (one from each end, so they meet and
  then collide on every claim): every one must be claimed exactly once (the figure is the
  race's throughput; the check is the point);
- two processes each *preparing the same drafts* (their own prepared_id for each, as two
  assistants would) and claiming what the store answered: every draft must be claimed
  exactly once (one live preparation per draft; 0.2 claimed each draft twice).
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from pathlib import Path

from mfconnector.writes.store import Preparation, SendStore

ACCOUNT = "adele@contoso.com"
DIGEST = "a" * 64


def preparation(prepared_id: str, now: float, draft_id: str | None = None) -> Preparation:
    return Preparation(
        prepared_id=prepared_id,
        account=ACCOUNT,
        mailbox="/me",
        draft_id=draft_id or "draft-" + prepared_id,
        digest=DIGEST,
        summary={"to": ["megan@contoso.com"], "subject": "bench"},
        created_at=now,
        expires_at=now + 900,
    )


def whole_sends(path: str, prefix: str, count: int, start: object) -> tuple[int, float]:
    store = SendStore(Path(path))
    store.check()
    start.wait()  # type: ignore[attr-defined]
    began = time.perf_counter()
    for index in range(count):
        prepared_id = f"{prefix}{index:028d}"
        store.save(preparation(prepared_id, time.time()))
        assert store.claim(prepared_id, ACCOUNT, "/me", DIGEST).status == "claimed"
        store.finish(prepared_id, "sent", {"graph_status": 202})
    return count, time.perf_counter() - began


def race(path: str, count: int, start: object, backwards: bool) -> tuple[list[int], float]:
    store = SendStore(Path(path))
    store.check()
    start.wait()  # type: ignore[attr-defined]
    won = []
    began = time.perf_counter()
    order = range(count - 1, -1, -1) if backwards else range(count)
    for index in order:
        prepared_id = f"{index:032d}"
        if store.claim(prepared_id, ACCOUNT, "/me", DIGEST).status == "claimed":
            won.append(index)
    return won, time.perf_counter() - began


def per_draft(path: str, count: int, start: object, backwards: bool) -> tuple[list[int], float]:
    """Prepare every draft with an id of this process's own, then claim what save answered."""
    store = SendStore(Path(path))
    store.check()
    start.wait()  # type: ignore[attr-defined]
    won = []
    began = time.perf_counter()
    order = range(count - 1, -1, -1) if backwards else range(count)
    tag = "b" if backwards else "f"
    for index in order:
        mine = preparation(f"{tag}{index:031d}", time.time(), draft_id=f"draft{index}")
        live = store.save(mine)
        if store.claim(live.prepared_id, ACCOUNT, "/me", DIGEST).status == "claimed":
            won.append(index)
    return won, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preparations", type=int, default=2000)
    count = parser.parse_args().preparations
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as directory:
        path = str(Path(directory) / "one.sqlite3")
        with context.Manager() as manager:
            start = manager.Event()
            with context.Pool(1) as pool:
                pending = pool.apply_async(whole_sends, (path, "a", count, start))
                time.sleep(0.5)
                start.set()
                done, seconds = pending.get()
        print(f"one process, save+claim+finish: {done / seconds:,.0f} sends/s ({count} sends)")

        path = str(Path(directory) / "two.sqlite3")
        with context.Manager() as manager:
            start = manager.Event()
            with context.Pool(2) as pool:
                jobs = [
                    pool.apply_async(whole_sends, (path, prefix, count, start))
                    for prefix in ("b", "c")
                ]
                time.sleep(0.5)
                start.set()
                results = [job.get() for job in jobs]
        total = sum(done for done, _ in results)
        slowest = max(seconds for _, seconds in results)
        print(
            f"two processes, different preparations: {total / slowest:,.0f} sends/s in all "
            f"({total} sends)"
        )

        path = str(Path(directory) / "race.sqlite3")
        store = SendStore(Path(path))
        now = time.time()
        for index in range(count):
            store.save(preparation(f"{index:032d}", now))
        store.close()
        with context.Manager() as manager:
            start = manager.Event()
            with context.Pool(2) as pool:
                jobs = [
                    pool.apply_async(race, (path, count, start, backwards))
                    for backwards in (False, True)
                ]
                time.sleep(0.5)
                start.set()
                raced = [job.get() for job in jobs]
        first, second = (set(won) for won, _ in raced)
        slowest = max(seconds for _, seconds in raced)
        assert not first & second, "a preparation was claimed twice"
        assert len(first | second) == count, "a preparation was never claimed"
        print(
            f"two processes racing for the same {count} preparations: "
            f"{2 * count / slowest:,.0f} claim attempts/s; won {len(first)} + {len(second)}, "
            "none twice"
        )

        path = str(Path(directory) / "drafts.sqlite3")
        SendStore(Path(path)).check()
        with context.Manager() as manager:
            start = manager.Event()
            with context.Pool(2) as pool:
                jobs = [
                    pool.apply_async(per_draft, (path, count, start, backwards))
                    for backwards in (False, True)
                ]
                time.sleep(0.5)
                start.set()
                raced = [job.get() for job in jobs]
        first, second = (set(won) for won, _ in raced)
        slowest = max(seconds for _, seconds in raced)
        assert not first & second, "a draft was claimed twice"
        assert len(first | second) == count, "a draft was never claimed"
        print(
            f"two processes each preparing the same {count} drafts: "
            f"{2 * count / slowest:,.0f} prepare+claim/s; won {len(first)} + {len(second)}, "
            "no draft twice"
        )


if __name__ == "__main__":
    main()
