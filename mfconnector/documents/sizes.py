"""The one refusal of a document over ``document_bytes``, whoever downloads it."""

from __future__ import annotations

from mfconnector.errors import DocumentError

__all__ = ["too_large"]


def too_large(size: int | None, limit: int) -> DocumentError:
    """``size``: the declared size, or None when the bytes kept coming past ``limit``."""
    shown = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return DocumentError(
        f"the file is {shown}; documents are read up to {limit:,} bytes",
        code="too_large",
        hint="open it in its application, or ask for a smaller export of the part you need",
    )
