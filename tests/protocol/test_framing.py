"""The stdin framer: any chunking gives the same events, and the buffer stays bounded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfconnector.framing import Line, LineFramer, Oversized
from mfconnector.limits import DEFAULT_LIMITS

LIMIT = DEFAULT_LIMITS.line_bytes


def frame_all(chunks: list[bytes], limit: int) -> tuple[list[object], int]:
    framer = LineFramer(limit)
    events: list[object] = []
    peak = 0
    for chunk in chunks:
        events += framer.feed(chunk)
        peak = max(peak, framer.buffered)
    events += framer.close()
    return events, peak


def reference_events(data: bytes, limit: int) -> list[object]:
    """What the framer must produce, computed the obvious (unbounded) way."""
    parts = data.split(b"\n")
    events: list[object] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if last and not part:
            break
        size = len(part) + (0 if last else 1)
        if len(part) > limit - 1:
            events.append(Oversized(size, limit))
        else:
            events.append(Line(part))
    return events


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks, start = [], 0
    for point in points:
        chunks.append(data[start:point])
        start = point
    chunks.append(data[start:])
    return chunks


@pytest.mark.slow
@settings(max_examples=300)
@given(
    data=st.binary(max_size=400).map(lambda b: b.replace(b"\x00", b"\n")),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=20),
    limit=st.integers(min_value=2, max_value=40),
)
def test_any_chunking_gives_the_same_events_and_the_buffer_stays_bounded(
    data: bytes, cuts: list[int], limit: int
) -> None:
    events, peak = frame_all(split_at(data, cuts), limit)
    assert events == reference_events(data, limit)
    assert peak <= limit - 1


@pytest.mark.parametrize(
    ("line_bytes", "expected"),
    [
        (LIMIT - 1, "line"),
        (LIMIT, "line"),
        (LIMIT + 1, "oversized"),
    ],
)
def test_line_limit_counts_the_newline(line_bytes: int, expected: str) -> None:
    data = b"x" * (line_bytes - 1) + b"\n" + b"{}\n"
    events, peak = frame_all([data[i : i + 65_536] for i in range(0, len(data), 65_536)], LIMIT)
    assert peak <= LIMIT - 1
    if expected == "line":
        assert events == [Line(b"x" * (line_bytes - 1)), Line(b"{}")]
    else:
        assert events == [Oversized(line_bytes, LIMIT), Line(b"{}")]


def test_an_oversized_line_is_drained_without_being_held() -> None:
    framer = LineFramer(LIMIT)
    chunk = b"a" * 65_536
    for _ in range(200):  # 13 MB in
        assert framer.feed(chunk) == []
        assert framer.buffered == 0 or framer.buffered <= LIMIT - 1
    assert framer.draining
    assert framer.feed(b"tail\n{}\n") == [Oversized(200 * 65_536 + 5, LIMIT), Line(b"{}")]


def test_final_line_without_newline_counts_at_end_of_input() -> None:
    framer = LineFramer(10)
    assert framer.feed(b"abc") == []
    assert framer.close() == [Line(b"abc")]
