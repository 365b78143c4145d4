"""The files tools: list a drive folder, search a drive, read one file's text.

They speak the neutral files model (``mail.files``) through the account's ``FilesBackend``:
ids handed out are references (``str(Reference)``), ids taken are parsed against the call's
account before any request, and which drive a ``drive_id`` or ``site`` names is the
backend's business. An account without files (IMAP, Gmail) does not offer these tools, and
a call is ``unsupported``. A page of items is a compact table unless ``detail: "full"``;
each row is encoded once, and that text is the result's text and its size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.mail.backend import FilesBackend, OnBytes
from mfconnector.mail.files import Drive, DriveItem, ItemLocation
from mfconnector.mail.model import Page
from mfconnector.mail.refs import REFERENCE_PATTERN, parse_reference
from mfconnector.shaping import Skipped, redact_text
from mfconnector.tools.base import ActiveLimit, Tool, ToolContext
from mfconnector.tools.common import (
    CURSOR,
    DETAIL,
    LIMIT,
    OUTPUT_SCHEMA,
    QUERY,
    UNTRUSTED,
    input_schema,
)
from mfconnector.tools.content import not_text_reason, readable_as
from mfconnector.tools.documents import PART, document_kind, read_document, unreadable_reason
from mfconnector.tools.encoding import Encoded, encoded, text_of, wire_cost
from mfconnector.tools.mail_view import Bounds
from mfconnector.tools.paging import Listing, continued_arguments, start_listing
from mfconnector.tools.text_window import (
    TOKEN_EDGE_BYTES,
    decode_window,
    window_start,
    word_start,
)

__all__ = ["FILES_LIST", "FILES_READ", "FILES_SEARCH", "FILES_TOOL_NAMES"]

GET_FULL = 'detail: "full"'
COLUMNS = ("id", "name", "size", "type", "modified")
SHARED = ("children", "parent", "modified_by")
"""Columns when rows differ, one ``common`` value when every row of the page agrees."""
COMPACT_OMITS = ["path", "parent_id", "created", "web_link"]
"""What a compact row leaves out (``omitted.fields``); ``detail: "full"`` has them."""

OTHER_DRIVE: dict[str, Any] = {
    "drive_id": {"type": "string", "minLength": 1, "maxLength": ActiveLimit("drive_id_chars")},
    "site": {"type": "string", "minLength": 1, "maxLength": 512},
}
"""Another drive (--all-files): by id, or a SharePoint ``site`` or ``site/library``."""
ITEM_ID = {
    "type": "string",
    "maxLength": ActiveLimit("drive_id_chars"),
    "pattern": REFERENCE_PATTERN,
}
PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": ActiveLimit("path_chars"),
    "description": "e.g. Documents/Reports",
}


@dataclass(frozen=True, slots=True)
class FilesCall:
    """What every files call settles first: its account's files and the drive it reads."""

    backend: FilesBackend
    drive: Drive

    @property
    def scope(self) -> dict[str, Any]:
        """What this call's cursors are bound to: the account and the drive."""
        return {
            "account": self.backend.tag.tag,
            "drive": self.drive.handle if self.drive.other else None,
        }

    def head(self, echo: Mapping[str, Any]) -> dict[str, Any]:
        """A result's first keys: what it echoes, and the other drive it read."""
        head = dict(echo)
        if self.drive.other:
            head["drive"] = self.drive.label
        return head


async def files_call(ctx: ToolContext, arguments: dict[str, Any]) -> FilesCall:
    backend = ctx.files(arguments)
    drive = await backend.drive(arguments.get("drive_id"), arguments.get("site"))
    return FilesCall(backend, drive)


def _path_segments(path: str) -> list[str]:
    parts = path.strip("/").split("/")
    if not path.strip("/") or any(part in ("", ".", "..") for part in parts):
        raise ToolInputError(
            f"`path` {path[:80]!r} is not a drive path", hint="write it like Documents/Reports"
        )
    return parts


def _location(call: FilesCall, arguments: dict[str, Any]) -> ItemLocation:
    """The item ``item_id`` (a reference, checked now) or ``path`` names; neither: root."""
    if "item_id" in arguments and "path" in arguments:
        raise ToolInputError("give `item_id` or `path`, not both")
    if "item_id" in arguments:
        return ItemLocation(ref=parse_reference(arguments["item_id"], call.backend.tag, "item_id"))
    if "path" in arguments:
        return ItemLocation(segments=_path_segments(arguments["path"]))
    return ItemLocation()


def full_item(item: DriveItem, bounds: Bounds, path: str) -> dict[str, Any]:
    """Every neutral field the item has (``detail: "full"`` and ``files_read``)."""
    values: dict[str, Any] = {
        "id": str(item.ref),
        "name": bounds.text(item.name, f"{path}.name"),
        "kind": item.kind,
        "path": bounds.text(item.path, f"{path}.path"),
        "parent": bounds.text(item.parent, f"{path}.parent"),
        "parent_id": str(item.parent_ref) if item.parent_ref else None,
        "size": item.size,
        "mime_type": bounds.text(item.mime_type, f"{path}.mime_type"),
        "children": item.children,
        "created": item.created,
        "modified": item.modified,
        "modified_by": bounds.text(item.modified_by, f"{path}.modified_by"),
        "web_link": bounds.text(item.web_link, f"{path}.web_link"),
    }
    return {key: value for key, value in values.items() if value is not None}


def item_row(item: DriveItem, bounds: Bounds, path: str) -> dict[str, Any]:
    """One item's compact values: ``type`` is the MIME type, or ``folder``."""
    return {
        "id": str(item.ref),
        "name": bounds.text(item.name, f"{path}.name"),
        "size": item.size,
        "type": "folder" if item.kind == "folder" else bounds.text(item.mime_type, f"{path}.type"),
        "modified": item.modified,
        "children": item.children,
        "parent": bounds.text(item.parent, f"{path}.parent"),
        "modified_by": bounds.text(item.modified_by, f"{path}.modified_by"),
    }


def items_result(
    ctx: ToolContext,
    call: FilesCall,
    listing: Listing,
    page: Page[DriveItem],
    *,
    echo: Mapping[str, Any],
    full: bool,
) -> Encoded:
    """A page of items, compact (a table; a value every row shares stated once) or full,
    stopped at ``result_bytes`` (at least one item), with its cursor."""
    skipped = Skipped(ctx.limits.skipped_paths_listed)
    bounds = Bounds(ctx.limits, skipped)
    head = call.head(echo if listing.context_known else {})
    columns = list(COLUMNS)
    common: dict[str, Any] = {}
    if not full:
        rows = [
            item_row(i, Bounds(ctx.limits, Skipped(ctx.limits.skipped_paths_listed)), "")
            for i in page.items
        ]
        for name in SHARED:
            shared = [r.get(name) for r in rows]
            if all(v is None for v in shared):
                continue
            if len(rows) > 1 and all(v == shared[0] for v in shared):
                common[name] = shared[0]
            else:
                columns.append(name)

    def shape(item: DriveItem, path: str) -> Any:
        if full:
            return full_item(item, bounds, path)
        values = item_row(item, bounds, path)
        line = [values.get(c) for c in columns]
        while line and line[-1] is None:
            line.pop()
        return line

    values: list[Any] = []
    texts: list[str] = []
    size = 0
    for index, item in enumerate(page.items):
        recorded, removed = len(skipped.fields), len(skipped.removed)
        value = shape(item, f"items[{index}]")
        text = text_of(value)
        size += wire_cost(text) + 2
        for record in skipped.fields[recorded:]:
            size += wire_cost(text_of(record)) + 2
        if texts and size > ctx.limits.result_bytes:
            del skipped.fields[recorded:], skipped.removed[removed:]
            break
        values.append(value)
        texts.append(text)
    kept = len(texts)
    skipped.items = listing.continuation(page, kept, size_limited=kept < len(page.items))
    if not full:
        head["columns"] = columns
    head["items"] = values
    if common:
        head["common"] = common
    if not full and kept:
        head["omitted"] = {"fields": list(COMPACT_OMITS), "get": GET_FULL}
    skipped.apply(head)
    return encoded(head, "items", texts)


async def files_list(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "files_list", arguments)
    call = await files_call(ctx, arguments)
    where = _location(call, arguments)
    listing = start_listing(ctx, "files_list", arguments, scope=call.scope)
    page = await call.backend.children(call.drive, where, listing.request)
    echo = {"folder": arguments.get("path") or arguments.get("item_id") or "/"}
    return items_result(ctx, call, listing, page, echo=echo, full=arguments.get("detail") == "full")


async def files_search(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    arguments = continued_arguments(ctx, "files_search", arguments)
    call = await files_call(ctx, arguments)
    listing = start_listing(ctx, "files_search", arguments, scope=call.scope)
    page = await call.backend.search(call.drive, arguments["query"], listing.request)
    echo = {"query": arguments["query"]}
    return items_result(ctx, call, listing, page, echo=echo, full=arguments.get("detail") == "full")


async def files_read(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if "item_id" not in arguments and "path" not in arguments:
        raise ToolInputError(
            "files_read needs `item_id` or `path`",
            hint="take an id from files_list or files_search, or give a path like Documents/a.md",
        )
    call = await files_call(ctx, arguments)
    where = _location(call, arguments)
    item = await call.backend.item(call.drive, where)
    skipped = Skipped(ctx.limits.skipped_paths_listed)
    result: dict[str, Any] = {"item": full_item(item, Bounds(ctx.limits, skipped), "item")}
    if call.drive.other:
        result["drive"] = call.drive.label
    if item.kind == "folder":
        result["content"] = {"returned": False, "reason": "a folder: list it with files_list"}
        return skipped.apply(result)
    kind = document_kind(item.name, item.mime_type)
    if kind is None and readable_as(item.name, item.mime_type) is None:
        reason = unreadable_reason(item.name) or not_text_reason(item.name, item.mime_type)
        result["content"] = {"returned": False, "reason": reason}
        return skipped.apply(result)
    if kind is not None:
        if arguments.get("offset", 0) < 0:
            raise ToolInputError(
                "a negative `offset` reads a text file from its end; a document's text starts "
                "at offset 0",
                hint="use `part` or skipped.text.next_offset to move through a document",
            )

        def spool(limit: int, suffix: str, on_bytes: OnBytes) -> Any:
            return call.backend.spool(
                call.drive, item, limit=limit, suffix=suffix, on_bytes=on_bytes
            )

        result["content"] = await read_document(
            ctx, spool, kind=kind, size=item.size, arguments=arguments, skipped=skipped
        )
        return skipped.apply(result)
    if "part" in arguments:
        raise ToolInputError("`part` is for documents (PDF, Word, Excel, PowerPoint)")
    result["content"] = await _text_window(ctx, call, item, arguments, skipped)
    return skipped.apply(result)


async def _text_window(
    ctx: ToolContext,
    call: FilesCall,
    item: DriveItem,
    arguments: dict[str, Any],
    skipped: Skipped,
) -> dict[str, Any]:
    """One window of a text file, fetched alone as a byte range: ``offset`` is a byte
    offset (negative: from the end), and ``skipped.text`` says what lies before and after."""
    size = item.size
    offset = arguments.get("offset", 0)
    try:
        start = window_start(offset, size)
    except ValueError:
        raise ToolInputError(
            "the provider did not give this file's size, so a negative `offset` cannot be placed",
            hint="read it with offset 0 and follow skipped.text.next_offset",
        ) from None
    if size is not None and start and start >= size:
        raise ToolInputError(
            f"`offset` {offset} is past the end of the file ({size:,} bytes)",
            hint=f"use an offset below {size}, or a negative one to read from the end",
        )
    # The bytes just before the window too: an offset inside a word moves to its start.
    lead = min(start, TOKEN_EDGE_BYTES)
    got = await call.backend.read_range(
        call.drive, item, start - lead, ctx.limits.text_window_bytes + lead
    )
    first = got.data[lead : lead + 1]
    back = word_start(got.data[:lead]) if first and not first.isspace() else 0
    window = decode_window(
        got.data[lead - back :],
        start=start - back,
        at_end=got.complete,
        max_chars=ctx.limits.body_chars,
    )
    text, redactions = redact_text(window.text)
    if redactions:
        skipped.removed.append("content.text")
    total = got.total_size if got.total_size is not None else size
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

FILES_TOOL_NAMES = frozenset({FILES_LIST.name, FILES_READ.name, FILES_SEARCH.name})
"""Tools an account offers only when its provider has files (``Account.files``)."""
