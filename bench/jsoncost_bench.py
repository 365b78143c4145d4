"""jsoncost bench: the pre-parse value count and id recovery stay linear in the line's size.

For each hostile shape the script times ``values_over_limit`` (limit 0, so every pass runs,
the id recovery included) at 1, 2, 4 and 8 MB and prints the time per MB. Linear code shows
a flat ms/MB column; anything quadratic doubles it with each doubling of the size. Run it on
every Python that serves the connector (Debian 12's 3.11.2 included):

  python bench/jsoncost_bench.py
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

from mfconnector.jsoncost import values_over_limit

MB = 1_000_000


def _repeat(unit: bytes, size: int, head: bytes = b"", tail: bytes = b"") -> bytes:
    return head + unit * max((size - len(head) - len(tail)) // len(unit), 1) + tail


SHAPES: dict[str, Callable[[int], bytes]] = {
    "[{},{},...] in params": lambda n: _repeat(
        b"{},", n, b'{"jsonrpc":"2.0","id":1,"method":"m","params":[', b"{}]}"
    ),
    "[],[],... then a comma": lambda n: _repeat(b"[], ", n, b'{"id":1,"p":[', b"1]}"),
    "open brackets only": lambda n: _repeat(b"[", n),
    "unterminated string of escapes": lambda n: _repeat(b'\\"', n, b'{"id":1,"p":["'),
    "strings between brackets": lambda n: _repeat(b'["a\\"]",', n, b'{"id":1,"p":[', b"0]}"),
    "alternating quote and bracket": lambda n: _repeat(b'"[', n, b"{"),
}


def _time(data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        values_over_limit(data, 0)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    sizes = (1, 2, 4, 8)
    print(
        f"Python {platform.python_version()}: ms per MB at " + ", ".join(f"{s} MB" for s in sizes)
    )
    for name, make in SHAPES.items():
        per_mb = [_time(make(size * MB)) * 1000 / size for size in sizes]
        figures = "  ".join(f"{value:7.1f}" for value in per_mb)
        print(f"  {name:32} {figures}   (8 MB / 1 MB: {per_mb[-1] / per_mb[0]:.2f}x)")


if __name__ == "__main__":
    main()
