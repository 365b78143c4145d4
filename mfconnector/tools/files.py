"""OneDrive / SharePoint files tools: list a folder, search, read one file's text."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from mfconnector.errors import ToolInputError
from mfconnector.graph.urls import quote_segment
from mfconnector.mail.backend import OnBytes
from mfconnector.shaping import Skipped, redact_text, shape_item
from mfconnector.tools.base import ActiveLimit, Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    DETAIL,
    LIMIT,
    OUTPUT_SCHEMA,
    QUERY,
    UNTRUSTED,
    input_schema,
    item_shaper,
)
from mfconnector.tools.content import not_text_reason, readable_as
from mfconnector.tools.documents import (
    PART,
    Spool,
    document_kind,
    read_document,
    unreadable_reason,
)
from mfconnector.tools.drives import Drive, drive_of
from mfconnector.tools.item_tables import drive_table
from mfconnector.tools.listing import continued_arguments, list_result
from mfconnector.tools.text_window import (
    TOKEN_EDGE_BYTES,
    decode_window,
    window_start,
    word_start,
)

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient

__all__ = ["FILES_LIST", "FILES_READ", "FILES_SEARCH"]

ITEM_FIELDS = (
    "id",
    "name",
    "size",
    "file",
    "folder",
    "parentReference",
    "createdDateTime",
    "lastModifiedDateTime",
    "lastModifiedBy",
    "webUrl",
)
ITEM_SELECT = ",".join(ITEM_FIELDS)
DRIVE_ID_PATTERN = "^[A-Za-z0-9!_=-]+$"
FORBIDDEN_PATH_CHARS = re.compile(r'[\\*<>?:|"\x00-\x1f]')
OTHER_DRIVE: dict[str, Any] = {
    "drive_id": {
        "type": "string",
        "maxLength": ActiveLimit("drive_id_chars"),
        "pattern": DRIVE_ID_PATTERN,
    },
    "site": {"type": "string", "minLength": 1, "maxLength": 512},
}
"""Another drive (``--all-files``): by id, or a SharePoint ``site`` or ``site/library``."""

ITEM_ID = {
    "type": "string",
    "maxLength": ActiveLimit("drive_id_chars"),
    "pattern": DRIVE_ID_PATTERN,
}
PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": ActiveLimit("path_chars"),
    "description": "e.g. Documents/Reports",
}


def _echo(result: dict[str, Any], drive: Drive) -> dict[str, Any]:
    if drive.other:
        result["drive"] = drive.label
    return result


def _path_segments(path: str) -> list[str]:
    parts = [part for part in path.strip("/").split("/")]
    if not path.strip("/") or any(part in ("", ".", "..") for part in parts):
        raise ToolInputError(
            f"`path` {path[:80]!r} is not a drive path", hint="write it like Documents/Reports"
        )
    if any(FORBIDDEN_PATH_CHARS.search(part) for part in parts):
        raise ToolInputError(
            f"`path` {path[:80]!r} has a character OneDrive does not allow in names",
            hint='names cannot contain \\ * < > ? : | "',
        )
    return parts


def _item_path(drive: Drive, arguments: dict[str, Any], suffix: str = "") -> str:
    """``/drive/items/{id}``, ``/drive/root:/{path}:`` or ``/drive/root``, each segment encoded."""
    if "item_id" in arguments and "path" in arguments:
        raise ToolInputError("give `item_id` or `path`, not both")
    if "item_id" in arguments:
        return f"{drive.path}/items/{quote_segment(arguments['item_id'])}{suffix}"
    if "path" in arguments:
        encoded = "/".join(quote_segment(part) for part in _path_segments(arguments["path"]))
        return f"{drive.path}/root:/{encoded}:{suffix}"
    return f"{drive.path}/root{suffix}"


def _mime_of(item: dict[str, Any]) -> str | None:
    facet = item.get("file")
    mime = facet.get("mimeType") if isinstance(facet, dict) else None
    return mime if isinstance(mime, str) else None


def compact_item(item: dict[str, Any]) -> dict[str, Any]:
    """Keep each facet's useful part: a mime type, a child count, a path, a name."""
    out = dict(item)
    if isinstance(out.get("file"), dict):
        out["file"] = {k: v for k, v in out["file"].items() if k == "mimeType"}
    if isinstance(out.get("folder"), dict):
        out["folder"] = {k: v for k, v in out["folder"].items() if k == "childCount"}
    if isinstance(out.get("parentReference"), dict):
        out["parentReference"] = {
            k: v for k, v in out["parentReference"].items() if k in ("id", "path")
        }
    modified_by = out.get("lastModifiedBy")
    if isinstance(modified_by, dict):
        user = modified_by.get("user")
        out["lastModifiedBy"] = (
            {"user": {"displayName": user.get("displayName")}} if isinstance(user, dict) else {}
        )
    return out


def _view(result: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    return result if arguments.get("detail") == "full" else drive_table(result, ITEM_FIELDS)


async def files_list(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "files_list", arguments)
    drive = await drive_of(ctx, arguments)
    limit = arguments.get("limit", ctx.limits.list_items)
    result = await list_result(
        ctx,
        arguments,
        key="items",
        shape=item_shaper(ctx, ITEM_FIELDS, compact_item),
        echo={"folder": arguments.get("path") or arguments.get("item_id") or "/"},
        tool="files_list",
        scope=drive.cursor_scope,
        path=_item_path(drive, arguments, "/children"),
        query={"$select": ITEM_SELECT, "$top": str(limit)},
    )
    return _view(_echo(result, drive), arguments)


async def files_search(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "files_search", arguments)
    drive = await drive_of(ctx, arguments)
    limit = arguments.get("limit", ctx.limits.list_items)
    literal = arguments["query"].replace("'", "''")
    result = await list_result(
        ctx,
        arguments,
        key="items",
        shape=item_shaper(ctx, ITEM_FIELDS, compact_item),
        echo={"query": arguments["query"]},
        tool="files_search",
        scope=drive.cursor_scope,
        path=f"{drive.path}/root/{quote_segment(f'search(q={chr(39)}{literal}{chr(39)})')}",
        query={"$select": ITEM_SELECT, "$top": str(limit)},
    )
    return _view(_echo(result, drive), arguments)


async def files_read(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if "item_id" not in arguments and "path" not in arguments:
        raise ToolInputError(
            "files_read needs `item_id` or `path`",
            hint="take an id from files_list or files_search, or give a path like Documents/a.md",
        )
    drive = await drive_of(ctx, arguments)
    graph = await ctx.graph()
    answer = await graph.get_json(_item_path(drive, arguments), query={"$select": ITEM_SELECT})
    raw = answer.body if isinstance(answer.body, dict) else {}
    skipped = Skipped()
    item = compact_item(
        shape_item(
            raw,
            ITEM_FIELDS,
            skipped,
            "item",
            max_chars=ctx.limits.field_chars,
            max_items=ctx.limits.list_field_items,
        )
    )
    result: dict[str, Any] = _echo({"item": item}, drive)
    if "folder" in raw:
        result["content"] = {"returned": False, "reason": "a folder: list it with files_list"}
        return skipped.apply(result)
    name = str(raw.get("name", ""))
    mime = _mime_of(raw)
    kind = document_kind(name, mime)
    if kind is None and readable_as(name, mime) is None:
        reason = unreadable_reason(name) or not_text_reason(name, mime)
        result["content"] = {"returned": False, "reason": reason}
        return skipped.apply(result)
    if not isinstance(raw.get("id"), str):
        raise ToolInputError("Graph returned the item without an id")
    if kind is not None:
        if arguments.get("offset", 0) < 0:
            raise ToolInputError(
                "a negative `offset` reads a text file from its end; a document's text starts "
                "at offset 0",
                hint="use `part` or skipped.text.next_offset to move through a document",
            )
        result["content"] = await read_document(
            ctx,
            _graph_spool(graph, f"{drive.path}/items/{quote_segment(raw['id'])}/content"),
            kind=kind,
            size=raw.get("size"),
            arguments=arguments,
            skipped=skipped,
        )
        return skipped.apply(result)
    if "part" in arguments:
        raise ToolInputError("`part` is for documents (PDF, Word, Excel, PowerPoint)")
    result["content"] = await _text_window(
        ctx,
        graph,
        f"{drive.path}/items/{quote_segment(raw['id'])}/content",
        raw,
        arguments,
        skipped,
    )
    return skipped.apply(result)


def _graph_spool(graph: GraphClient, path: str) -> Spool:
    """Spools a drive file's ``/content`` for the document extractor."""
    from mfconnector.graph.spool import spooled_download

    def spool(limit: int, suffix: str, on_bytes: OnBytes) -> Any:
        return spooled_download(graph, path, limit=limit, suffix=suffix, on_bytes=on_bytes)

    return spool


async def _text_window(
    ctx: ToolContext,
    graph: GraphClient,
    content_path: str,
    raw: dict[str, Any],
    arguments: dict[str, Any],
    skipped: Skipped,
) -> dict[str, Any]:
    """One window of a text file, fetched alone with a Range request: ``offset`` is a byte
    offset (negative: from the end), and ``skipped.text`` says what lies before and after."""
    size = raw.get("size") if type(raw.get("size")) is int else None
    offset = arguments.get("offset", 0)
    try:
        start = window_start(offset, size)
    except ValueError:
        raise ToolInputError(
            "Graph did not give this file's size, so a negative `offset` cannot be placed",
            hint="read it with offset 0 and follow skipped.text.next_offset",
        ) from None
    if size is not None and start and start >= size:
        raise ToolInputError(
            f"`offset` {offset} is past the end of the file ({size:,} bytes)",
            hint=f"use an offset below {size}, or a negative one to read from the end",
        )
    # The bytes just before the window too: an offset inside a word moves to its start.
    lead = min(start, TOKEN_EDGE_BYTES)
    download = await graph.download(
        content_path, max_bytes=ctx.limits.text_window_bytes + lead, first_byte=start - lead
    )
    first = download.data[lead : lead + 1]
    back = word_start(download.data[:lead]) if first and not first.isspace() else 0
    window = decode_window(
        download.data[lead - back :],
        start=start - back,
        at_end=download.complete,
        max_chars=ctx.limits.body_chars,
    )
    text, redactions = redact_text(window.text)
    if redactions:
        skipped.removed.append("content.text")
    total = download.total_size if download.total_size is not None else size
    content: dict[str, Any] = {"returned": True, "text": text, "from_byte": window.start}
    content["to_byte"] = window.end
    if total is not None:
        content["total_bytes"] = total
    if window.undecodable_chars:
        content["undecodable_chars"] = window.undecodable_chars
    record: dict[str, Any] = {"field": "content.text"}
    if window.start:
        record["bytes_before"] = window.start
    if total is None or window.end < total:
        record["next_offset"] = window.end
        if total is not None:
            record["bytes_after"] = total - window.end
    if len(record) > 1:
        record["note"] = "offsets are bytes; a negative offset reads from the end"
        skipped.text = record
    return content


FILES_LIST = Tool(
    name="files_list",
    title="List drive folder",
    description=(
        "A drive folder's items (`path` or `item_id`; default root). Other drives with "
        "--all-files: drive_id, or SharePoint `site` or `site/library` (also "
        f"files_search/read). {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "path": PATH,
            "item_id": ITEM_ID,
            **OTHER_DRIVE,
            "detail": DETAIL,
            "limit": LIMIT,
            "cursor": CURSOR,
        }
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=files_list,
)

FILES_SEARCH = Tool(
    name="files_search",
    title="Search drive",
    description=f"Search file names, metadata and content in the drive. {UNTRUSTED}",
    input_schema=input_schema(
        {
            "query": QUERY,
            **OTHER_DRIVE,
            "detail": DETAIL,
            "limit": LIMIT,
            "cursor": CURSOR,
        },
        "query",
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=files_search,
)

FILES_READ = Tool(
    name="files_read",
    title="Read file",
    description=lambda limits: (
        "One drive item's metadata and its text (text files, Word, Excel, PowerPoint, PDF, "
        f".eml): {limits.body_chars:,} characters from `offset` (skipped.text.next_offset; "
        "in a text file, bytes, negative from the end) or `part` (content.parts). "
        f"{UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "item_id": ITEM_ID,
            "path": {key: value for key, value in PATH.items() if key != "description"},
            **OTHER_DRIVE,
            "offset": {"type": "integer"},
            "part": PART,
        }
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=files_read,
)
