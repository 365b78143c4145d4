"""What a document read reports while it works: bytes downloaded, then pages parsed.

One scale for both phases, so ``progress`` only ever grows: the file's bytes first (of its
size when Graph declared it), then one step per page, slide or sheet on top of them (of
their number when the parser knows it). The messages say the same in words.
"""

from __future__ import annotations

from mfconnector.tools.base import ToolContext

__all__ = ["DocumentProgress"]

_UNITS = {"pdf": "page", "pptx": "slide", "xlsx": "sheet"}


class DocumentProgress:
    """Progress of one document read, for ``ctx.report_progress``."""

    def __init__(self, ctx: ToolContext, what: str, kind: str) -> None:
        self._ctx = ctx
        self._what = what
        self._unit = _UNITS.get(kind, "part")
        self._size = 0

    def downloaded(self, done: int, size: int | None) -> None:
        shown = f"{done:,} of {size:,}" if size is not None else f"{done:,}"
        self._ctx.report_progress(done, size, f"downloaded {shown} bytes of the {self._what}")

    def parsing(self, size: int) -> None:
        """The download is complete: ``size`` bytes are spooled and parsing starts."""
        self._size = size
        self._ctx.report_progress(
            size + 0.5, None, f"downloaded {size:,} bytes; extracting the {self._what}'s text"
        )

    def parsed(self, parts: int, total: int | None) -> None:
        done = self._size + parts
        whole = self._size + total if total is not None else None
        shown = f"{parts:,} of {total:,}" if total is not None else f"{parts:,}"
        self._ctx.report_progress(done, whole, f"parsed {shown} {self._unit}s of the {self._what}")
