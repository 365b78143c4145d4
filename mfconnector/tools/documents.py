"""Document text for the read tools: download to a private file, parse in a worker.

``files_read`` and attachment reads call ``read_document`` with the Graph path of the
bytes (``.../content`` or ``.../$value``); the answer is the same 10,000-character window
with ``offset`` continuation as plain text files get, plus where each page, sheet, slide
or heading starts (``content.parts``) so the assistant can jump there with ``part``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mfconnector.errors import ToolInputError
from mfconnector.shaping import Skipped
from mfconnector.tools.base import ActiveLimit, ToolContext
from mfconnector.tools.document_progress import DocumentProgress

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient

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
    graph: GraphClient,
    content_path: str,
    *,
    kind: str,
    size: Any,
    arguments: dict[str, Any],
    skipped: Skipped,
) -> dict[str, Any]:
    """The ``content`` object of a read result for one document; ``skipped`` filled in."""
    from mfconnector.documents.formats import NAMES
    from mfconnector.documents.runner import workers_for
    from mfconnector.graph.spool import spooled_download, too_large

    if "offset" in arguments and "part" in arguments:
        raise ToolInputError("give `offset` or `part`, not both")
    limit = ctx.limits.document_bytes
    if isinstance(size, int) and size > limit:
        raise too_large(size, limit)
    job = {
        "kind": kind,
        "offset": arguments.get("offset", 0),
        "part": arguments.get("part"),
        "chars": ctx.limits.body_chars,
    }
    progress = DocumentProgress(ctx, NAMES[kind], kind)
    async with spooled_download(
        graph, content_path, limit=limit, suffix=f".{kind}", on_bytes=progress.downloaded
    ) as spooled:
        job["path"] = spooled.path
        progress.parsing(spooled.size)
        answer = await workers_for(ctx.limits).run(
            job, ctx.limits, NAMES[kind], on_parts=progress.parsed
        )
    content: dict[str, Any] = {
        "returned": True,
        "format": kind,
        "text": answer["text"],
        "charsRead": answer["totalChars"],
    }
    if answer["parts"]:
        content["parts"] = answer["parts"]
        content["partsTotal"] = answer["partsTotal"]
    if answer["redactions"]:
        skipped.removed.append("content.text")
    record: dict[str, Any] = {"field": "content.text", **(answer["clip"] or {})}
    if answer["cut"]:
        record["note"] = answer["cut"]
    if "nextOffset" in record or answer["cut"]:
        skipped.text = record
    return content
