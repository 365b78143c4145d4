"""The text an extractor builds: one string, cut at a cap, with the positions of its parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mfconnector.shaping import redact_text

__all__ = ["Extraction", "TextBuilder", "TextFull"]


class TextFull(Exception):
    """Raised by ``TextBuilder`` when the character or part cap is reached: stop reading."""


@dataclass
class Extraction:
    """What one document gave: its text, where each part starts, and what was cut."""

    text: str
    parts: list[tuple[str, int]]
    """(name, offset of its heading line), in reading order."""
    parts_total: int | None
    """Pages/slides/sheets in the document when known (may exceed ``len(parts)``)."""
    cut: str | None
    """Why the text stops before the document does, or None when it is all there."""
    redactions: int = 0


@dataclass
class TextBuilder:
    """Collects text under a character cap and a part cap; credential URLs are redacted."""

    max_chars: int
    max_parts: int
    max_name_chars: int = 200
    parts_total: int | None = None
    unit: str = "part"
    on_part: Callable[[int, int | None], None] | None = None
    """Told ``(parts started so far, parts_total)`` at each new part: progress."""
    _chunks: list[str] = field(default_factory=list)
    _size: int = 0
    _parts: list[tuple[str, int]] = field(default_factory=list)
    _cut: str | None = None
    _redactions: int = 0

    def part(self, name: str) -> None:
        """Start a page, slide, sheet or heading: a ``## name`` line others can jump to."""
        if len(self._parts) >= self.max_parts:
            total = f" of {self.parts_total:,}" if self.parts_total else ""
            self._cut = f"only the first {self.max_parts:,}{total} {self.unit}s were read"
            raise TextFull
        self._break()
        name = name[: self.max_name_chars]
        self._parts.append((name, self._size))
        if self.on_part is not None:
            self.on_part(len(self._parts), self.parts_total)
        self.add(f"## {name}\n")

    def heading(self, name: str, line: str) -> None:
        """A heading inside running text (Word): listed like a part, never counted as one."""
        self._break()
        if len(self._parts) < self.max_parts:
            self._parts.append((name[: self.max_name_chars], self._size))
        self.add(line)

    def block(self, text: str) -> None:
        """A block set apart by a blank line (a Word table)."""
        self._break()
        self.add(text)

    def _break(self) -> None:
        """A blank line before a new part (none at the very start)."""
        if self._size:
            self.add("\n" if self._chunks[-1].endswith("\n") else "\n\n")

    def add(self, text: str) -> None:
        if not text:
            return
        text, count = redact_text(text)
        self._redactions += count
        room = self.max_chars - self._size
        if len(text) > room:
            self._chunks.append(text[:room])
            self._size += room
            self._cut = f"only the first {self.max_chars:,} characters of text were extracted"
            raise TextFull
        self._chunks.append(text)
        self._size += len(text)

    def line(self, text: str) -> None:
        self.add(text + "\n")

    def note(self, reason: str) -> None:
        """Say why the text is short of the document when no cap stopped it (one reason)."""
        if self._cut is None:
            self._cut = reason

    def finish(self) -> Extraction:
        return Extraction(
            text="".join(self._chunks),
            parts=self._parts,
            parts_total=self.parts_total,
            cut=self._cut,
            redactions=self._redactions,
        )
