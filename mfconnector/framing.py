"""Bytes in, line events out: the sans-I/O stdin framer.

Like h11's receive buffer, the framer holds at most one incomplete line, never scans the
same bytes twice, and enforces one named limit only while a line is incomplete. A line
longer than the limit is never held: the framer switches to draining, counts and drops
bytes up to the next newline, and then reports one ``Oversized`` event.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Line", "LineFramer", "Oversized"]


@dataclass(frozen=True, slots=True)
class Line:
    """One complete line, without its newline."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line past the limit was dropped; ``size`` counts its bytes, newline included."""

    size: int
    limit: int


Event = Line | Oversized


class LineFramer:
    """Split a byte stream into lines of at most ``line_bytes`` bytes, newline included."""

    def __init__(self, line_bytes: int) -> None:
        if line_bytes < 2:
            raise ValueError("line_bytes must leave room for one byte and the newline")
        self._limit = line_bytes
        self._max_content = line_bytes - 1
        self._buffer = bytearray()
        self._draining = False
        self._dropped = 0

    @property
    def buffered(self) -> int:
        """Bytes held for the incomplete line (never more than ``line_bytes - 1``)."""
        return len(self._buffer)

    @property
    def draining(self) -> bool:
        return self._draining

    def feed(self, data: bytes | bytearray) -> list[Event]:
        """Take the next chunk of input and return the events it completes."""
        events: list[Event] = []
        size = len(data)
        pos = 0
        while pos < size:
            newline = data.find(b"\n", pos)
            end = size if newline == -1 else newline
            segment = end - pos
            if not self._draining and len(self._buffer) + segment > self._max_content:
                self._draining = True
                self._dropped = len(self._buffer)
                self._buffer.clear()
            if self._draining:
                self._dropped += segment
                if newline == -1:
                    break
                events.append(Oversized(self._dropped + 1, self._limit))
                self._draining = False
                self._dropped = 0
            elif newline == -1:
                self._buffer += data[pos:]
                break
            elif self._buffer:
                self._buffer += data[pos:newline]
                events.append(Line(bytes(self._buffer)))
                self._buffer.clear()
            else:
                events.append(Line(bytes(data[pos:newline])))
            pos = end + 1
        return events

    def close(self) -> list[Event]:
        """End of input: a final line without a newline still counts."""
        events: list[Event] = []
        if self._draining:
            events.append(Oversized(self._dropped, self._limit))
        elif self._buffer:
            events.append(Line(bytes(self._buffer)))
        self._buffer.clear()
        self._draining = False
        self._dropped = 0
        return events
