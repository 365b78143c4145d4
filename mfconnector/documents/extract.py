"""One document file → an ``Extraction``, and the window of it one result shows.

Runs inside the worker process (``worker.py``); the bench calls it directly too. Every
failure becomes a ``DocumentError`` with a code; nothing of the document's own bytes or
of a library's exception text goes into a message.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any
from xml.parsers.expat import ExpatError
from xml.parsers.expat import errors as expat_errors

from mfconnector.documents.formats import NAMES
from mfconnector.documents.text import Extraction, TextBuilder, TextFull
from mfconnector.errors import DocumentError, ToolInputError
from mfconnector.limits import Limits
from mfconnector.shaping import clip_window

__all__ = ["extract", "window"]

_CORRUPT = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    ValueError,  # xmlstream's refusal of a DTD is a ValueError too
    KeyError,
    IndexError,
    TypeError,
    struct.error,
    RecursionError,
    NotImplementedError,  # zipfile: an unknown compression method
    UnicodeError,
    OSError,
)


def _read(path: str, kind: str, limits: Limits, builder: TextBuilder) -> None:
    if kind == "pdf":
        from mfconnector.documents.pdf import pdf_text

        pdf_text(path, builder)
    elif kind == "eml":
        from mfconnector.documents.eml import eml_text

        eml_text(path, builder, limits.html_tags)
    else:
        from mfconnector.documents.archive import open_zip
        from mfconnector.documents.excel import xlsx_text
        from mfconnector.documents.powerpoint import pptx_text
        from mfconnector.documents.word import docx_text

        read = {"docx": docx_text, "xlsx": xlsx_text, "pptx": pptx_text}[kind]
        archive = open_zip(path, limits, NAMES[kind])
        try:
            read(archive, builder)
        finally:
            archive.close()


def extract(
    path: str,
    kind: str,
    limits: Limits,
    on_part: Callable[[int, int | None], None] | None = None,
) -> Extraction:
    """All the text of one document, up to the caps, or a ``DocumentError``.

    ``on_part`` hears of each page, slide or sheet as it starts (the worker's progress).
    """
    if kind not in NAMES:
        raise DocumentError(f"{kind!r} documents are not read", code="unsupported")
    builder = TextBuilder(
        max_chars=limits.document_text_chars,
        max_parts=limits.document_parts,
        max_name_chars=limits.document_part_name_chars,
        on_part=on_part,
    )
    try:
        _read(path, kind, limits, builder)
    except TextFull:
        pass
    except DocumentError:
        raise
    except ExpatError as error:
        if error.code != expat_errors.codes[expat_errors.XML_ERROR_NO_MEMORY]:
            raise _corrupt(kind) from None
        raise _memory(kind, limits) from None
    except MemoryError:
        raise _memory(kind, limits) from None
    except _CORRUPT:
        raise _corrupt(kind) from None
    return builder.finish()


def _memory(kind: str, limits: Limits) -> DocumentError:
    return DocumentError(
        f"the {NAMES[kind]} needs more memory than the "
        f"{limits.document_memory_bytes:,}-byte limit of a document worker",
        code="memory",
        hint="it is too large or too complex to read here",
    )


def _corrupt(kind: str) -> DocumentError:
    return DocumentError(
        f"the {NAMES[kind]} is damaged or not what its name says; no text could be read",
        code="corrupt",
        hint="open it in its application to repair it, or ask the sender for a new copy",
    )


def _start(extraction: Extraction, part: int | str | None, kind: str) -> int:
    """The offset where ``part`` (a number, or a sheet or heading name) begins."""
    parts = extraction.parts
    unit = {"pdf": "page", "pptx": "slide", "xlsx": "sheet"}.get(kind, "heading")
    if isinstance(part, int):
        if 1 <= part <= len(parts):
            return parts[part - 1][1]
        total = extraction.parts_total if extraction.parts_total is not None else len(parts)
        if part <= total:
            raise ToolInputError(
                f"{unit} {part} was not read: {extraction.cut or 'the text stops before it'}"
            )
        raise ToolInputError(
            f"`part` {part} is past the last {unit} ({len(parts)})",
            hint=f"use a {unit} number from 1 to {len(parts)}" if parts else None,
        )
    assert isinstance(part, str)
    wanted = part.strip().casefold()
    for name, offset in parts:
        bare = name.split(": ", 1)[-1] if name.startswith("Sheet: ") else name
        if wanted in (name.casefold(), bare.casefold()):
            return offset
    shown = ", ".join(repr(name) for name, _ in parts[:10])
    raise ToolInputError(
        f"no {unit} named {part[:80]!r}",
        hint=f"known: {shown}" if shown else f"this document has no {unit}s",
    )


def window(
    extraction: Extraction,
    kind: str,
    *,
    offset: int,
    part: int | str | None,
    chars: int,
    listed: int,
) -> dict[str, Any]:
    """The JSON-able answer: ``chars`` characters from ``offset`` (or from ``part``)."""
    start = offset if part is None else _start(extraction, part, kind)
    text = extraction.text
    shown, clip = clip_window(text, start, chars, "offset")
    parts = extraction.parts
    first = 0
    while first + 1 < len(parts) and parts[first + 1][1] <= start:
        first += 1
    answer: dict[str, Any] = {
        "text": shown,
        "totalChars": len(text),
        "clip": clip,
        "parts": [{"name": name, "offset": at} for name, at in parts[first : first + listed]],
        "partsTotal": extraction.parts_total if extraction.parts_total is not None else len(parts),
        "cut": extraction.cut,
        "redactions": extraction.redactions,
    }
    if kind == "docx":
        answer["partsTotal"] = len(parts)
    return answer
