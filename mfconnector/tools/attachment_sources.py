"""Attachments by reference: a drive file, another message's attachment, or small content.

``attachments`` entries of ``mail_create draft``/``revise_draft`` and ``mail_prepare``
take one of four shapes::

    {"item_id"}                       a file of the signed-in user's drive
    {"drive_id", "item_id"}           a file of another drive the grant reaches
    {"message_id", "attachment_id"}   a file attachment of a message in the mailbox
    {"name", "content_base64"}        small content given inline

References may also carry ``name`` (send it under another name) and ``content_type``.
The server fetches the bytes itself, never through the model: each source's metadata is
read before the first write (so a wrong id, a folder or too many bytes fails with nothing
created), then its bytes are spooled to a private temporary file with their SHA-256, and
attached with one request up to ``attachment_simple_upload_bytes`` or through an upload
session above it (``graph.upload_session``), all within ``draft_attachment_total_bytes``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import DocumentError
from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.tools.base import ToolContext
from mfconnector.writes.errors import WriteError
from mfconnector.writes.outgoing import check_attachment_name, check_content_type

if TYPE_CHECKING:
    from mfconnector.graph.spool import SpooledFile
    from mfconnector.tools.acting import Progress

__all__ = [
    "ATTACHMENT_ITEMS",
    "ATTACHMENT_REFERENCES",
    "AttachmentSource",
    "attach_sources",
    "check_entries",
    "check_sources_unchanged",
    "resolve_sources",
    "watched_sources",
]

ATTACHMENT_ITEMS: dict[str, Any] = {
    "items": {
        "anyOf": [
            {"required": ["item_id"]},
            {"required": ["message_id", "attachment_id"]},
            {"required": ["name", "content_base64"]},
        ]
    },
}
"""The shapes, published compactly (every byte of tools/list counts: ``drive_id`` goes with
``item_id``, and ``items`` alone constrains only arrays); that ``attachments`` is a list
and each entry exactly one shape, of strings, with no other keys, is ``check_entries``'s."""

ATTACHMENT_REFERENCES: dict[str, Any] = {
    "items": {"anyOf": ATTACHMENT_ITEMS["items"]["anyOf"][:2]},
}
"""``mail_prepare``'s: files by reference only. Small inline content goes on a draft made
with ``mail_create draft``, which is then prepared as it is (``mail_prepare draft``)."""

_SHAPES: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"item_id"}), frozenset({"drive_id", "name", "content_type"})),
    (frozenset({"message_id", "attachment_id"}), frozenset({"name", "content_type"})),
    (frozenset({"name", "content_base64"}), frozenset({"content_type"})),
)
_ID = re.compile(r"^[A-Za-z0-9_=+/!.-]+$")
_SHAPES_TEXT = (
    '{"item_id"}, {"drive_id","item_id"}, {"message_id","attachment_id"} or '
    '{"name","content_base64"} (references may add name and content_type)'
)
FILE_ATTACHMENT = "#microsoft.graph.fileAttachment"


def _invalid(message: str, hint: str = f"each entry is one of {_SHAPES_TEXT}") -> WriteError:
    return WriteError("invalid_arguments", message, hint=hint)


def check_entries(entries: Any, limits: Limits) -> None:
    """Each entry is exactly one shape, of non-empty strings, ids of id characters."""
    if not isinstance(entries, list):
        raise _invalid("`attachments` must be a list")
    if len(entries) > limits.draft_attachments:
        raise _invalid(
            f"{len(entries)} attachments; at most {limits.draft_attachments}", "attach fewer files"
        )
    for index, entry in enumerate(entries):
        keys = frozenset(entry) if isinstance(entry, dict) else frozenset()
        if not any(required <= keys <= required | optional for required, optional in _SHAPES):
            raise _invalid(
                f"`attachments[{index}]` has keys {sorted(keys)}: it must be {_SHAPES_TEXT}"
            )
        for key in keys:
            value = entry[key]
            if not isinstance(value, str) or not value:
                raise _invalid(f"`attachments[{index}].{key}` must be a non-empty string")
            if key.endswith("_id") and (
                len(value) > limits.outlook_id_chars or not _ID.match(value)
            ):
                raise _invalid(
                    f"`attachments[{index}].{key}` is not an id: {value[:40]!r}",
                    "pass ids exactly as files_list, mail_read or mail_attachment gave them",
                )
        if "name" in keys:
            check_attachment_name(entry["name"], f"attachments[{index}].name", limits)
        if "content_type" in keys:
            check_content_type(entry["content_type"], f"attachments[{index}].content_type")


@dataclass(frozen=True)
class AttachmentSource:
    """One attachment to make: what it is called, how large it says it is, where its bytes are."""

    name: str
    content_type: str
    size: int
    """As declared by Graph (references) or counted (inline)."""
    origin: dict[str, str]
    """The reference as given (inline content: its name only), for the result."""
    bytes_path: str | None = None
    """The Graph path of the bytes (``/content`` or ``/$value``); None for inline content."""
    data: bytes | None = None
    item_path: str | None = None
    """A drive file's Graph path, where its ``cTag`` is read again before a send."""
    version: str | None = None
    """A drive file's ``cTag`` (it changes when the content does, not with metadata)."""


def _user(ctx: ToolContext) -> str:
    return ctx.user_path.rstrip("/")


async def resolve_sources(
    ctx: ToolContext, entries: Sequence[Mapping[str, str]]
) -> list[AttachmentSource]:
    """Every entry's name, type and size, read before anything is written; limits checked."""
    limits = ctx.limits
    sources: list[AttachmentSource] = []
    inline_total = 0
    for index, entry in enumerate(entries):
        if "content_base64" in entry:
            source = _inline(entry, index)
            inline_total += source.size
            if inline_total > limits.draft_attachments_bytes:
                raise _invalid(
                    f"the inline attachments hold more than {limits.draft_attachments_bytes:,} "
                    "bytes in all; nothing was created",
                    'attach files by reference ({"item_id"}) instead of inline content',
                )
        elif "item_id" in entry:
            source = await _drive_file(ctx, entry)
        else:
            source = await _message_attachment(ctx, entry)
        # A name or type read from the drive or a message is checked like one typed in:
        # what the person confirms must be what the recipients get.
        check_attachment_name(source.name, f"attachments[{index}] (its name)", limits)
        check_content_type(source.content_type, f"attachments[{index}] (its content type)")
        sources.append(source)
    total = sum(s.size for s in sources)
    if total > limits.draft_attachment_total_bytes:
        raise WriteError(
            "unsupported_operation",
            f"the attachments are {total:,} bytes in all, over the "
            f"{limits.draft_attachment_total_bytes:,}-byte limit for one message; nothing was "
            "created",
            hint="attach fewer or smaller files, or share a link to them",
        )
    return sources


def _inline(entry: Mapping[str, str], index: int) -> AttachmentSource:
    try:
        data = base64.b64decode(entry["content_base64"], validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(
            f"attachments[{index}].content_base64 is not valid base64",
            "encode the file bytes with standard base64 (A-Z a-z 0-9 + / =)",
        ) from None
    return AttachmentSource(
        name=entry["name"],
        content_type=entry.get("content_type") or "application/octet-stream",
        size=len(data),
        origin={"name": entry["name"]},
        data=data,
    )


async def _drive_file(ctx: ToolContext, entry: Mapping[str, str]) -> AttachmentSource:
    drive = (
        f"/drives/{quote_segment(entry['drive_id'])}"
        if "drive_id" in entry
        else f"{_user(ctx)}/drive"
    )
    path = f"{drive}/items/{quote_segment(entry['item_id'])}"
    graph = await ctx.graph()
    answer = await graph.get_json(path, query={"$select": "id,name,size,file,folder,cTag"})
    item = answer.body if isinstance(answer.body, dict) else {}
    if "folder" in item or not isinstance(item.get("file"), dict):
        raise _invalid(
            f"drive item {entry['item_id'][:40]!r} is a folder, not a file; nothing was created",
            "attach files one by one, or share a link to the folder",
        )
    mime = item["file"].get("mimeType")
    return AttachmentSource(
        name=entry.get("name") or str(item.get("name") or "file"),
        content_type=entry.get("content_type")
        or (mime if isinstance(mime, str) else "")
        or "application/octet-stream",
        size=_size(item.get("size")),
        origin={k: entry[k] for k in ("drive_id", "item_id") if k in entry},
        bytes_path=f"{path}/content",
        item_path=path,
        version=item["cTag"] if isinstance(item.get("cTag"), str) else None,
    )


async def _message_attachment(ctx: ToolContext, entry: Mapping[str, str]) -> AttachmentSource:
    path = (
        f"{_user(ctx)}/messages/{quote_segment(entry['message_id'])}"
        f"/attachments/{quote_segment(entry['attachment_id'])}"
    )
    graph = await ctx.graph()
    answer = await graph.get_json(
        path,
        query={"$select": "id,name,contentType,size"},
        headers={"Prefer": 'IdType="ImmutableId"'},
    )
    item = answer.body if isinstance(answer.body, dict) else {}
    kind = str(item.get("@odata.type", FILE_ATTACHMENT)).lstrip("#")
    if kind != FILE_ATTACHMENT.lstrip("#"):
        raise _invalid(
            f"attachment {str(item.get('name'))[:80]!r} is a {kind.rsplit('.', 1)[-1]}, not a "
            "file; nothing was created",
            "forward the message instead (mail_prepare forward)",
        )
    mime = item.get("contentType")
    return AttachmentSource(
        name=entry.get("name") or str(item.get("name") or "attachment"),
        content_type=entry.get("content_type")
        or (mime if isinstance(mime, str) else "")
        or "application/octet-stream",
        size=_size(item.get("size")),
        origin={k: entry[k] for k in ("message_id", "attachment_id")},
        bytes_path=f"{path}/$value",
    )


def _size(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def watched_sources(sources: Sequence[AttachmentSource]) -> list[dict[str, str]]:
    """The drive files to read again before a send: name, Graph path, ``cTag``."""
    return [
        {"name": s.name, "path": s.item_path, "cTag": s.version}
        for s in sources
        if s.item_path is not None and s.version is not None
    ]


async def check_sources_unchanged(ctx: ToolContext, watched: Sequence[Mapping[str, str]]) -> None:
    """A drive file attached at preparation whose content changed since is a ``conflict``:
    the user approved that version, and the drive now holds another."""
    from mfconnector.errors import GraphError

    graph = await ctx.graph()
    for source in watched:
        try:
            answer = await graph.get_json(source["path"], query={"$select": "id,cTag"})
        except GraphError as error:
            if error.status != 404:
                raise
            current = None
        else:
            body = answer.body if isinstance(answer.body, dict) else {}
            current = body.get("cTag")
        if current != source["cTag"]:
            what = "was deleted" if current is None else "changed"
            raise WriteError(
                "conflict",
                f"{source['name']!r} {what} on the drive since the message was prepared; "
                "nothing was sent",
                hint="call mail_prepare again so the user sees the file as it is now",
                retry_safe=True,
                details={"changed": source["name"]},
            )


# --- attaching -------------------------------------------------------------------------


async def attach_sources(
    ctx: ToolContext,
    progress: Progress,
    message_path: str,
    sources: Sequence[AttachmentSource],
) -> list[dict[str, Any]]:
    """Attach each source to the draft at ``message_path``; what was attached, with SHA-256."""
    from mfconnector.graph.spool import spooled_download

    budget = ctx.limits.draft_attachment_total_bytes
    meter = _UploadMeter(ctx, sum(s.size for s in sources))
    attached: list[dict[str, Any]] = []
    for source in sources:
        if source.data is not None:
            await _attach_bytes(ctx, progress, message_path, source, source.data)
            size, sha256 = len(source.data), hashlib.sha256(source.data).hexdigest()
            meter.add(size, source.name)
        else:
            assert source.bytes_path is not None
            graph = await ctx.graph()
            try:
                async with spooled_download(graph, source.bytes_path, limit=budget) as spooled:
                    await _attach_file(ctx, progress, message_path, source, spooled, meter)
                    size, sha256 = spooled.size, spooled.sha256
            except DocumentError as error:
                if error.code != "too_large":
                    raise
                raise WriteError(
                    "unsupported_operation",
                    f"{source.name!r} is larger than the "
                    f"{ctx.limits.draft_attachment_total_bytes:,}-byte limit for a message's "
                    "attachments",
                    hint="share a link to the file instead",
                ) from None
        budget -= size
        progress.did(f"attach {source.name}")
        attached.append(
            {"name": source.name, "size": size, "sha256": sha256, "source": source.origin}
        )
    return attached


async def _attach_file(
    ctx: ToolContext,
    progress: Progress,
    message_path: str,
    source: AttachmentSource,
    spooled: SpooledFile,
    meter: _UploadMeter,
) -> None:
    from mfconnector.graph.upload_session import upload_attachment

    limits = ctx.limits
    async with await trio.open_file(spooled.path, "rb") as handle:
        if spooled.size <= limits.attachment_simple_upload_bytes:
            await _attach_bytes(ctx, progress, message_path, source, await handle.read())
            meter.add(spooled.size, source.name)
            return

        async def read_chunk(offset: int, length: int) -> bytes:
            await handle.seek(offset)
            data: bytes = await handle.read(length)
            return data

        start = meter.done
        progress.writing = True
        await upload_attachment(
            await ctx.graph(),
            message_path,
            name=source.name,
            content_type=source.content_type,
            size=spooled.size,
            read_chunk=read_chunk,
            chunk_bytes=limits.upload_chunk_bytes,
            on_uploaded=lambda sent, _size: meter.to(start + sent, source.name),
        )
        progress.writing = False


async def _attach_bytes(
    ctx: ToolContext, progress: Progress, message_path: str, source: AttachmentSource, data: bytes
) -> None:
    """Graph's simple upload: the bytes base64 in one JSON request (up to 3 MB)."""
    from mfconnector.graph.write_call import write_json

    body = {
        "@odata.type": FILE_ATTACHMENT,
        "name": source.name,
        "contentType": source.content_type,
        "contentBytes": base64.b64encode(data).decode("ascii"),
    }
    graph = await ctx.graph()
    progress.writing = True
    await write_json(
        graph,
        "POST",
        f"{message_path}/attachments",
        body=body,
        headers={"Prefer": 'IdType="ImmutableId"'},
    )
    progress.writing = False


class _UploadMeter:
    """Bytes attached so far of all the sources, for ``notifications/progress``."""

    def __init__(self, ctx: ToolContext, total: int) -> None:
        self._ctx = ctx
        self.total = total
        self.done = 0

    def add(self, size: int, name: str) -> None:
        self.to(self.done + size, name)

    def to(self, done: int, name: str) -> None:
        self.done = done
        total = max(self.total, done)
        self._ctx.report_progress(
            done, total, f"attached {done:,} of {total:,} bytes ({name[:80]})"
        )
