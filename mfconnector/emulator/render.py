"""The emulator's state as Graph JSON: folders, messages, attachments, the profile,
drives and drive items, with Graph's property names, order and ``@odata`` annotations.

What the answer looks like (an id that depends on the ``Prefer`` header, the default
properties in the order of Graph's own examples, a driveItem's etag, cTag and hashes) lives
here; what the objects are and how they change lives in ``model``. Renderings that cost
something are cached on the object and keyed by its version, so a change invalidates them:
``Message._render_cache`` and ``Drive._render_cache``, private to ``model`` and this
module (a copied message, which copies only public fields, starts without one).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from mfconnector.emulator import ids
from mfconnector.emulator.model import (
    Attachment,
    Drive,
    DriveItem,
    Folder,
    Mailbox,
    Message,
    Recipient,
)

__all__ = [
    "DEFAULT_ORDER",
    "GRAPH",
    "MESSAGE_PROPERTIES",
    "attachment_json",
    "drive_item_json",
    "drive_json",
    "folder_json",
    "iso",
    "message_json",
    "profile_json",
    "web_url",
]

GRAPH = "https://graph.microsoft.com/v1.0"
"""The Graph root the emulator answers on: every ``@odata.context`` starts with it."""


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def address_json(recipient: Recipient) -> dict[str, Any]:
    return {"emailAddress": {"name": recipient[0], "address": recipient[1]}}


def folder_json(folder: Folder, mailbox: Mailbox) -> dict[str, Any]:
    inside = [m for m in mailbox.messages.values() if m.folder_id == folder.id]
    return {
        "id": folder.id,
        "displayName": folder.display_name,
        "parentFolderId": folder.parent_id,
        "childFolderCount": sum(1 for f in mailbox.folders.values() if f.parent_id == folder.id),
        "unreadItemCount": sum(1 for m in inside if not m.is_read),
        "totalItemCount": len(inside),
        "isHidden": folder.is_hidden,
    }


def attachment_json(attachment: Attachment, *, with_bytes: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "@odata.type": f"#microsoft.graph.{attachment.kind}Attachment",
        "id": attachment.id,
        "lastModifiedDateTime": iso(attachment.modified),
        "name": attachment.name,
        "contentType": attachment.content_type,
        "size": attachment.size,
        "isInline": attachment.is_inline,
    }
    if attachment.kind == "file":
        out["contentId"] = attachment.content_id
        out["contentLocation"] = None
        if with_bytes:
            out["contentBytes"] = base64.b64encode(attachment.content()).decode("ascii")
    elif attachment.kind == "reference":
        out["sourceUrl"] = attachment.source_url
        out["providerType"] = "oneDriveBusiness"
        out["permission"] = "view"
        out["isFolder"] = False
    return out


def message_json(
    message: Message, *, immutable: bool, text_body: bool, select: Iterable[str] | None
) -> dict[str, Any]:
    """Graph's JSON: every default property, or the ``$select``ed ones (plus id, etag).

    The default properties (bodies aside) are built once per version and id kind.
    """
    full = _message_defaults(message, immutable)
    if select is None:
        out = dict(full)
        out["body"] = _body_json(message, text_body, unique=False)
        return {key: out[key] for key in DEFAULT_ORDER}
    out = {"@odata.etag": full["@odata.etag"], "id": full["id"]}
    for name in select:
        if name in full:
            out[name] = full[name]
        elif name == "body":
            out["body"] = _body_json(message, text_body, unique=False)
        elif name == "uniqueBody":
            out["uniqueBody"] = _body_json(message, text_body, unique=True)
        elif name == "conversationIndex":
            out["conversationIndex"] = _conversation_index(message)
        elif name == "internetMessageHeaders":
            out["internetMessageHeaders"] = [{"name": n, "value": v} for n, v in message.headers]
    return out


def _message_defaults(message: Message, immutable: bool) -> dict[str, Any]:
    cache = message._render_cache
    key = (message.version, immutable)
    if cache is not None and cache[0] == key:
        return cache[1]
    created = message.created or message.received
    draft = message.is_draft
    full: dict[str, Any] = {
        "@odata.etag": message.etag,
        "id": message.id_for(immutable),
        "createdDateTime": iso(created),
        "lastModifiedDateTime": iso(message.modified or created),
        "changeKey": message.change_key,
        "categories": list(message.categories),
        "receivedDateTime": iso(message.received),
        "sentDateTime": iso(message.sent) if message.sent else None,
        "hasAttachments": message.has_attachments,
        "internetMessageId": message.internet_message_id,
        "subject": message.subject,
        "bodyPreview": message.body_preview(),
        "importance": message.importance,
        "parentFolderId": message.folder_id,
        "conversationId": message.conversation_id,
        "isDeliveryReceiptRequested": False,
        "isReadReceiptRequested": False,
        "isRead": message.is_read,
        "isDraft": draft,
        "webLink": _web_link(message, immutable),
        "inferenceClassification": message.inference,
        "sender": None if draft else address_json(message.sender),
        "from": None if draft else address_json(message.from_ or message.sender),
        "toRecipients": [address_json(r) for r in message.to],
        "ccRecipients": [address_json(r) for r in message.cc],
        "bccRecipients": [address_json(r) for r in message.bcc],
        "replyTo": [address_json(r) for r in message.reply_to],
        "flag": dict(message.flag),
    }
    message._render_cache = (key, full)
    return full


def _body_json(message: Message, text_body: bool, *, unique: bool) -> dict[str, str]:
    if text_body and message.body_type == "html" and not message.keeps_html:
        body, unique_text = message.texts()
        return {"contentType": "text", "content": unique_text if unique else body}
    if unique:
        return {"contentType": message.body_type, "content": message.unique_body or message.body}
    return {"contentType": message.body_type, "content": message.body}


DEFAULT_ORDER = (
    "@odata.etag",
    "id",
    "createdDateTime",
    "lastModifiedDateTime",
    "changeKey",
    "categories",
    "receivedDateTime",
    "sentDateTime",
    "hasAttachments",
    "internetMessageId",
    "subject",
    "bodyPreview",
    "importance",
    "parentFolderId",
    "conversationId",
    "isDeliveryReceiptRequested",
    "isReadReceiptRequested",
    "isRead",
    "isDraft",
    "webLink",
    "inferenceClassification",
    "body",
    "sender",
    "from",
    "toRecipients",
    "ccRecipients",
    "bccRecipients",
    "replyTo",
    "flag",
)
"""The order of Graph's own example (message-get-html.json)."""

MESSAGE_PROPERTIES = frozenset(
    {
        "id",
        "createdDateTime",
        "lastModifiedDateTime",
        "changeKey",
        "categories",
        "receivedDateTime",
        "sentDateTime",
        "hasAttachments",
        "internetMessageId",
        "subject",
        "bodyPreview",
        "importance",
        "parentFolderId",
        "conversationId",
        "conversationIndex",
        "isDeliveryReceiptRequested",
        "isReadReceiptRequested",
        "isRead",
        "isDraft",
        "webLink",
        "inferenceClassification",
        "body",
        "uniqueBody",
        "sender",
        "from",
        "toRecipients",
        "ccRecipients",
        "bccRecipients",
        "replyTo",
        "flag",
        "internetMessageHeaders",
        "attachments",
    }
)


def _conversation_index(message: Message) -> str:
    return base64.b64encode(ids.stream("ci:" + message.label, 22)).decode("ascii")


def _web_link(message: Message, immutable: bool) -> str:
    item = message.id_for(immutable).replace("=", "%3D")
    return f"https://outlook.office365.com/owa/?ItemID={item}&exvsurl=1&viewmodel=ReadMessageItem"


def profile_json(mailbox: Mailbox) -> dict[str, Any]:
    return {
        "@odata.context": f"{GRAPH}/$metadata#users/$entity",
        "businessPhones": ["+1 425 555 0109"],
        "displayName": mailbox.display_name,
        "givenName": mailbox.display_name.split(" ")[0],
        "jobTitle": "Retail Manager",
        "mail": mailbox.mail,
        "mobilePhone": None,
        "officeLocation": "18/2111",
        "preferredLanguage": "en-US",
        "surname": mailbox.display_name.split(" ")[-1],
        "userPrincipalName": mailbox.upn,
        "id": mailbox.user_id,
    }


def drive_item_json(drive: Drive, item: DriveItem) -> dict[str, Any]:
    """The full driveItem, download URL excluded (it is added per request).

    Built once per item version: the demo drives are read-only, so a folder's size and
    child count cannot change under a cached answer.
    """
    cached = drive._render_cache.get(item.id)
    if cached is not None and cached[0] == item.version:
        return dict(cached[1])
    out = _drive_item(drive, item)
    drive._render_cache[item.id] = (item.version, out)
    return dict(out)


def _drive_item(drive: Drive, item: DriveItem) -> dict[str, Any]:
    tag = f"{{{item.guid.upper()}}},{item.version}"
    person = {
        "user": {
            "email": item.author[1],
            "id": ids.guid("user:" + item.author[1]),
            "displayName": item.author[0],
        }
    }
    out: dict[str, Any] = {
        "@odata.etag": f'"{tag}"',
        "createdDateTime": iso(item.created),
        "eTag": f'"{tag}"',
        "id": item.id,
        "lastModifiedDateTime": iso(item.modified),
        "name": item.name,
        "webUrl": web_url(drive, item),
        "cTag": f'"c:{tag}"',
        "size": drive.size_of(item),
        "createdBy": person,
        "lastModifiedBy": person,
        "fileSystemInfo": {
            "createdDateTime": iso(item.created),
            "lastModifiedDateTime": iso(item.modified),
        },
    }
    if item.parent_id is None:
        out["root"] = {}
        out["parentReference"] = {"driveId": drive.id, "driveType": drive.drive_type}
    else:
        out["parentReference"] = {
            "driveId": drive.id,
            "driveType": drive.drive_type,
            "id": item.parent_id,
            "name": drive.items[item.parent_id].name,
            "path": drive.path_of(drive.items[item.parent_id]),
        }
    if item.is_folder:
        out["folder"] = {"childCount": len(drive.children(item.id))}
    else:
        digest = hashlib.sha1(item.id.encode()).digest()
        out["file"] = {
            "mimeType": item.mime or "application/octet-stream",
            "hashes": {"quickXorHash": base64.b64encode(digest[:20]).decode("ascii")},
        }
    return out


def web_url(drive: Drive, item: DriveItem) -> str:
    """The item's browser link under the drive's web root."""
    path = drive.path_of(item)[len("/drive/root:") :]
    return drive.web_root + quote(path)


def drive_json(drive: Drive) -> dict[str, Any]:
    used = drive.size_of(drive.items[drive.root_id])
    total = 1_099_511_627_776
    return {
        "@odata.context": f"{GRAPH}/$metadata#drives/$entity",
        "id": drive.id,
        "driveType": drive.drive_type,
        "name": drive.name,
        "webUrl": drive.web_root,
        "createdDateTime": "2025-06-01T09:00:00Z",
        "lastModifiedDateTime": "2026-03-06T16:00:00Z",
        "owner": {
            "user": {
                "id": drive.owner_id,
                "displayName": drive.owner[0],
                "email": drive.owner[1],
            }
        },
        "quota": {
            "deleted": 0,
            "fileCount": sum(1 for i in drive.items.values() if not i.is_folder),
            "remaining": total - used,
            "state": "normal",
            "total": total,
            "used": used,
        },
    }
