"""Attachments on a Graph draft: bytes given, or a drive file / a message's attachment by
reference, fetched by the server itself, never through the model.

A reference's metadata is read before the first write (``resolve``: a wrong id, a folder or
another kind of attachment fails with nothing created); its bytes are then spooled to a
private temporary file with their SHA-256 and attached with one request up to
``attachment_simple_upload_bytes`` or through an upload session above it
(``graph.upload_session``), all within ``draft_attachment_total_bytes``. A drive file's
``cTag`` (it changes with the content, not the metadata) is its version.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import DocumentError, GraphError, ToolInputError
from mfconnector.graph.drafts import FILE_ATTACHMENT, PREFER_IDS, message_path
from mfconnector.graph.urls import quote_segment
from mfconnector.mail.failures import Unsupported
from mfconnector.mail.outgoing import DraftAttachment

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import GraphMailbox

__all__ = ["attach_all", "resolve", "source_version"]

Meter = Callable[[int, int, str], None]
"""Told (bytes attached so far, bytes in all, the file's name) as uploads progress."""


def _drive_item_path(box: GraphMailbox, attachment: DraftAttachment) -> str:
    assert attachment.source is not None
    drive = (
        f"/drives/{quote_segment(attachment.container.native)}"
        if attachment.container is not None
        else f"{box.path.rstrip('/')}/drive"
    )
    return f"{drive}/items/{quote_segment(attachment.source.native)}"


def _attachment_path(box: GraphMailbox, attachment: DraftAttachment) -> str:
    assert attachment.source is not None and attachment.container is not None
    return (
        f"{message_path(box, attachment.container.native)}"
        f"/attachments/{quote_segment(attachment.source.native)}"
    )


def _size(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


async def resolve(box: GraphMailbox, attachment: DraftAttachment) -> DraftAttachment:
    """Name, type, size (and a drive file's version) of a referenced source, read first."""
    if attachment.source is None:
        return attachment
    graph = await box.client()
    if attachment.source_kind == "file":
        answer = await graph.get_json(
            _drive_item_path(box, attachment), query={"$select": "id,name,size,file,folder,cTag"}
        )
        item = answer.body if isinstance(answer.body, dict) else {}
        if "folder" in item or not isinstance(item.get("file"), dict):
            raise ToolInputError(
                f"drive item {attachment.source.native[:40]!r} is a folder, not a file; "
                "nothing was created",
                hint="attach files one by one, or share a link to the folder",
            )
        mime = item["file"].get("mimeType")
        default_name = str(item.get("name") or "file")
        version = item["cTag"] if isinstance(item.get("cTag"), str) else None
    else:
        answer = await graph.get_json(
            _attachment_path(box, attachment),
            query={"$select": "id,name,contentType,size"},
            headers=PREFER_IDS,
        )
        item = answer.body if isinstance(answer.body, dict) else {}
        kind = str(item.get("@odata.type", FILE_ATTACHMENT)).lstrip("#")
        if kind != FILE_ATTACHMENT.lstrip("#"):
            raise ToolInputError(
                f"attachment {str(item.get('name'))[:80]!r} is a {kind.rsplit('.', 1)[-1]}, "
                "not a file; nothing was created",
                hint="forward the message instead (mail_prepare forward)",
            )
        mime = item.get("contentType")
        default_name = str(item.get("name") or "attachment")
        version = None
    return dataclasses.replace(
        attachment,
        name=attachment.name if attachment.named else default_name,
        content_type=attachment.content_type
        if attachment.typed
        else (mime if isinstance(mime, str) and mime else "application/octet-stream"),
        size=_size(item.get("size")),
        version=version,
    )


async def source_version(box: GraphMailbox, attachment: DraftAttachment) -> str | None:
    """A drive file's ``cTag`` now; None when it is gone."""
    graph = await box.client()
    try:
        answer = await graph.get_json(
            _drive_item_path(box, attachment), query={"$select": "id,cTag"}
        )
    except GraphError as error:
        if error.status != 404:
            raise
        return None
    body = answer.body if isinstance(answer.body, dict) else {}
    tag = body.get("cTag")
    return tag if isinstance(tag, str) else None


def _bytes_path(box: GraphMailbox, attachment: DraftAttachment) -> str:
    if attachment.source_kind == "file":
        return f"{_drive_item_path(box, attachment)}/content"
    return f"{_attachment_path(box, attachment)}/$value"


async def attach_all(
    box: GraphMailbox,
    draft: str,
    attachments: Sequence[DraftAttachment],
    *,
    writing: Callable[[bool], None],
    attached_one: Callable[[DraftAttachment, int, str], None],
    meter: Meter,
) -> None:
    """Attach each one to the draft ``draft`` (its native id), in order; ``attached_one``
    is told each (attachment, size, SHA-256) as it is made."""
    from mfconnector.graph.spool import spooled_download

    limits = box.limits
    budget = limits.draft_attachment_total_bytes
    total = sum(a.size or (len(a.data) if a.data is not None else 0) for a in attachments)
    done = 0
    path = message_path(box, draft)
    for attachment in attachments:
        if attachment.data is not None:
            await _attach_bytes(box, path, attachment, attachment.data, writing)
            size, sha256 = len(attachment.data), hashlib.sha256(attachment.data).hexdigest()
            done += size
            meter(done, max(total, done), attachment.name)
        else:
            graph = await box.client()
            try:
                async with spooled_download(
                    graph, _bytes_path(box, attachment), limit=budget
                ) as spooled:
                    start = done

                    def moved(
                        sent: int, _size: int, start: int = start, name: str = attachment.name
                    ) -> None:
                        meter(start + sent, max(total, start + sent), name)

                    await _attach_file(box, path, attachment, spooled, writing, moved)
                    size, sha256 = spooled.size, spooled.sha256
                    done = start + size
                    meter(done, max(total, done), attachment.name)
            except DocumentError as error:
                if error.code != "too_large":
                    raise
                raise Unsupported(
                    f"{attachment.name!r} is larger than the "
                    f"{limits.draft_attachment_total_bytes:,}-byte limit for a message's "
                    "attachments",
                    hint="share a link to the file instead",
                ) from None
        budget -= size
        attached_one(attachment, size, sha256)


async def _attach_file(
    box: GraphMailbox,
    path: str,
    attachment: DraftAttachment,
    spooled: Any,
    writing: Callable[[bool], None],
    moved: Callable[[int, int], None],
) -> None:
    from mfconnector.graph.upload_session import upload_attachment

    limits = box.limits
    async with await trio.open_file(spooled.path, "rb") as handle:
        if spooled.size <= limits.attachment_simple_upload_bytes:
            await _attach_bytes(box, path, attachment, await handle.read(), writing)
            return

        async def read_chunk(offset: int, length: int) -> bytes:
            await handle.seek(offset)
            data: bytes = await handle.read(length)
            return data

        writing(True)
        await upload_attachment(
            await box.client(),
            path,
            name=attachment.name,
            content_type=attachment.content_type,
            size=spooled.size,
            read_chunk=read_chunk,
            chunk_bytes=limits.upload_chunk_bytes,
            on_uploaded=moved,
        )
        writing(False)


async def _attach_bytes(
    box: GraphMailbox,
    path: str,
    attachment: DraftAttachment,
    data: bytes,
    writing: Callable[[bool], None],
) -> None:
    """Graph's simple upload: the bytes base64 in one JSON request (up to 3 MB)."""
    body = {
        "@odata.type": FILE_ATTACHMENT,
        "name": attachment.name,
        "contentType": attachment.content_type,
        "contentBytes": base64.b64encode(data).decode("ascii"),
    }
    graph = await box.client()
    writing(True)
    await graph.write_json("POST", f"{path}/attachments", body=body, headers=PREFER_IDS)
    writing(False)
