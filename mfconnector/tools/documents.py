"""Document text for the read tools: download to a private file, parse in a worker.

``files_read`` and attachment reads call ``read_document`` with a way to spool the bytes
to a private file (the files tools' Graph download, a mail backend's ``spool_attachment``);
the answer is the same 10,000-character window
with ``offset`` continuation as plain text files get, plus where each page, sheet, slide
or heading starts (``content.parts``) so the assistant can jump there with ``part``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mfconnector.errors import ToolInputError, document_too_large
from mfconnector.mail.backend import OnBytes, Spooled
from mfconnector.shaping import Skipped
from mfconnector.tools.base import ActiveLimit, ToolContext
from mfconnector.tools.document_progress import DocumentProgress

Spool = Callable[[int, str, OnBytes], AbstractAsyncContextManager[Spooled]]
"""Spools the document: (byte limit, file suffix, told as bytes arrive)."""

__all__ = ["PART", "document_kind", "read_document", "unreadable_reason"]

PART: dict[str, Any] = {
    "type": ["integer", "string"],
    "minimum": 1,
    "minLength": 1,
    "maxLength": ActiveLimit("document_part_name_chars"),
    "description": "page, slide, sheet or heading number, or sheet name",
}


def document_kind(name: str, mime: str | None) -> str | None:
    """docx, xlsx, pptx, pdf or eml (the format table is loaded on the first read)."""
    from mfconnector.documents.formats import document_kind as kind_of

    return kind_of(name, mime)


def unreadable_reason(name: str) -> str | None:
    """Why a known binary Office format is not read, with what would make it readable."""
    from mfconnector.documents.formats import legacy_format

    legacy = legacy_format(name)
    if legacy:
        return f"{legacy} files are not read as text; a copy saved in the current format is"
    return None


async def read_document(
    ctx: ToolContext,
    spool: Spool,
    *,
    kind: str,
    size: Any,
    arguments: dict[str, Any],
    skipped: Skipped,
) -> dict[str, Any]:
    """The ``content`` object of a read result for one document; ``skipped`` filled in."""
    from mfconnector.documents.formats import NAMES
    from mfconnector.documents.runner import workers_for

    if "offset" in arguments and "part" in arguments:
        raise ToolInputError("give `offset` or `part`, not both")
    limit = ctx.limits.document_bytes
    if isinstance(size, int) and size > limit:
        raise document_too_large(size, limit)
    job = {
        "kind": kind,
        "offset": arguments.get("offset", 0),
        "part": arguments.get("part"),
        "chars": ctx.limits.body_chars,
    }
    progress = DocumentProgress(ctx, NAMES[kind], kind)
    async with spool(limit, f".{kind}", progress.downloaded) as spooled:
        job["path"] = spooled.path
        progress.parsing(spooled.size)
        answer = await workers_for(ctx.limits).run(
            job, ctx.limits, NAMES[kind], on_parts=progress.parsed
        )
    content: dict[str, Any] = {
        "returned": True,
        "format": kind,
        "text": answer["text"],
        "chars_read": answer["totalChars"],
    }
    if answer["parts"]:
        content["parts"] = answer["parts"]
        content["parts_total"] = answer["partsTotal"]
    if answer["redactions"]:
        skipped.removed.append("content.text")
    record: dict[str, Any] = {"field": "content.text", **(answer["clip"] or {})}
    if answer["cut"]:
        record["note"] = answer["cut"]
    if "next_offset" in record or answer["cut"]:
        skipped.text = record
    return content
