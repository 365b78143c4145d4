"""The emulator's state: mailboxes (folders, messages, attachments) and drives (items).

Plain objects, no I/O. Rendering to Graph JSON lives here too, because what a property
looks like (an etag that changes with every change, an id that depends on the ``Prefer``
header) is part of the model's behaviour, not of one route.

Ids: every message has an immutable id (``AAkALg...``) for its whole life and a REST id
(``AAMkAG...``) that changes whenever it changes folder, as Exchange's do. Either finds
it; answers show the one the request asked for.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mfconnector.emulator import ids
from mfconnector.emulator.htmltext import html_to_text, preview

__all__ = [
    "Attachment",
    "Drive",
    "DriveItem",
    "Folder",
    "Mailbox",
    "Message",
    "Recipient",
    "Tenant",
    "iso",
]

Recipient = tuple[str, str]
"""(display name, address)."""

GRAPH = "https://graph.microsoft.com/v1.0"
ATTACHMENT_OVERHEAD = 390
"""Outlook's attachment ``size`` counts the stored part, a little more than the bytes."""


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def address_json(recipient: Recipient) -> dict[str, Any]:
    return {"emailAddress": {"name": recipient[0], "address": recipient[1]}}


@dataclass
class Folder:
    id: str
    display_name: str
    parent_id: str
    well_known: str | None = None
    is_hidden: bool = False

    def render(self, mailbox: Mailbox) -> dict[str, Any]:
        inside = [m for m in mailbox.messages.values() if m.folder_id == self.id]
        return {
            "id": self.id,
            "displayName": self.display_name,
            "parentFolderId": self.parent_id,
            "childFolderCount": sum(1 for f in mailbox.folders.values() if f.parent_id == self.id),
            "unreadItemCount": sum(1 for m in inside if not m.is_read),
            "totalItemCount": len(inside),
            "isHidden": self.is_hidden,
        }


@dataclass
class Attachment:
    id: str
    name: str
    content_type: str | None
    kind: str
    """``file``, ``item`` or ``reference`` (the ``@odata.type`` suffix)."""
    declared_size: int | None
    """Outlook's size; None for generated content, measured when first asked."""
    modified: datetime
    data: Callable[[], bytes] | None = None
    is_inline: bool = False
    content_id: str | None = None
    item: Message | None = None
    source_url: str | None = None

    @property
    def size(self) -> int:
        """Bytes as Outlook reports them: the content plus its MIME part headers."""
        if self.declared_size is None:
            self.declared_size = len(self.content()) + ATTACHMENT_OVERHEAD
        return self.declared_size

    @property
    def odata_type(self) -> str:
        return f"#microsoft.graph.{self.kind}Attachment"

    def content(self) -> bytes:
        return self.data() if self.data is not None else b""

    def render(self, *, with_bytes: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "@odata.type": self.odata_type,
            "id": self.id,
            "lastModifiedDateTime": iso(self.modified),
            "name": self.name,
            "contentType": self.content_type,
            "size": self.size,
            "isInline": self.is_inline,
        }
        if self.kind == "file":
            out["contentId"] = self.content_id
            out["contentLocation"] = None
            if with_bytes:
                out["contentBytes"] = base64.b64encode(self.content()).decode("ascii")
        elif self.kind == "reference":
            out["sourceUrl"] = self.source_url
            out["providerType"] = "oneDriveBusiness"
            out["permission"] = "view"
            out["isFolder"] = False
        return out


@dataclass
class Message:
    label: str
    immutable_id: str
    folder_id: str
    subject: str
    body: str
    body_type: str
    """``html`` or ``text``: what the message was stored with."""
    sender: Recipient
    to: list[Recipient]
    received: datetime
    sent: datetime | None
    conversation_id: str
    internet_message_id: str
    cc: list[Recipient] = field(default_factory=list)
    bcc: list[Recipient] = field(default_factory=list)
    reply_to: list[Recipient] = field(default_factory=list)
    from_: Recipient | None = None
    unique_body: str | None = None
    """The part not quoted from earlier messages (same content type as ``body``)."""
    is_read: bool = True
    is_draft: bool = False
    importance: str = "normal"
    flag: dict[str, Any] = field(default_factory=lambda: {"flagStatus": "notFlagged"})
    categories: list[str] = field(default_factory=list)
    inference: str = "focused"
    attachments: list[Attachment] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    keeps_html: bool = False
    """Answered as HTML even when text is preferred: Graph honours
    ``Prefer: outlook.body-content-type="text"`` most of the time, not always."""
    extended: dict[str, str] = field(default_factory=dict)
    """singleValueExtendedProperties by id (``"SystemTime 0x3FEF"``), as set by a write."""
    created: datetime | None = None
    modified: datetime | None = None
    generation: int = 0
    """Folder moves so far: the REST id is derived from it."""
    version: int = 1
    """Bumped by every change: the change key and etag follow it."""
    _text_cache: tuple[int, str, str] | None = None
    _render_cache: tuple[tuple[int, bool], dict[str, Any]] | None = None

    @property
    def rest_id(self) -> str:
        return ids.rest_message_id(self.label, self.generation)

    def id_for(self, immutable: bool) -> str:
        return self.immutable_id if immutable else self.rest_id

    @property
    def change_key(self) -> str:
        digest = hashlib.sha256(f"{self.label}:{self.version}".encode()).digest()
        return "CQAAABYAAA" + base64.b64encode(digest[:21]).decode("ascii")

    @property
    def etag(self) -> str:
        return f'W/"{self.change_key}"'

    @property
    def has_attachments(self) -> bool:
        return any(not a.is_inline for a in self.attachments)

    def touch(self, now: datetime) -> None:
        self.version += 1
        self.modified = now
        self._text_cache = None
        self._render_cache = None

    def texts(self) -> tuple[str, str]:
        """(body as text, uniqueBody as text), converted once per version."""
        cache = self._text_cache
        if cache is None or cache[0] != self.version:
            body = html_to_text(self.body) if self.body_type == "html" else self.body
            unique_source = self.unique_body if self.unique_body is not None else self.body
            unique = html_to_text(unique_source) if self.body_type == "html" else unique_source
            cache = (self.version, body, unique)
            self._text_cache = cache
        return cache[1], cache[2]

    def body_preview(self) -> str:
        return preview(self.texts()[0])

    def render(
        self, *, immutable: bool, text_body: bool, select: Iterable[str] | None
    ) -> dict[str, Any]:
        """Graph's JSON: every default property, or the ``$select``ed ones (plus id, etag).

        The default properties (bodies aside) are built once per version and id kind.
        """
        full = self._defaults(immutable)
        if select is None:
            out = dict(full)
            out["body"] = self._body_json(text_body, unique=False)
            return {key: out[key] for key in DEFAULT_ORDER}
        out = {"@odata.etag": full["@odata.etag"], "id": full["id"]}
        for name in select:
            if name in full:
                out[name] = full[name]
            elif name == "body":
                out["body"] = self._body_json(text_body, unique=False)
            elif name == "uniqueBody":
                out["uniqueBody"] = self._body_json(text_body, unique=True)
            elif name == "conversationIndex":
                out["conversationIndex"] = _conversation_index(self)
            elif name == "internetMessageHeaders":
                out["internetMessageHeaders"] = [{"name": n, "value": v} for n, v in self.headers]
        return out

    def _defaults(self, immutable: bool) -> dict[str, Any]:
        cache = self._render_cache
        key = (self.version, immutable)
        if cache is not None and cache[0] == key:
            return cache[1]
        created = self.created or self.received
        draft = self.is_draft
        full: dict[str, Any] = {
            "@odata.etag": self.etag,
            "id": self.id_for(immutable),
            "createdDateTime": iso(created),
            "lastModifiedDateTime": iso(self.modified or created),
            "changeKey": self.change_key,
            "categories": list(self.categories),
            "receivedDateTime": iso(self.received),
            "sentDateTime": iso(self.sent) if self.sent else None,
            "hasAttachments": self.has_attachments,
            "internetMessageId": self.internet_message_id,
            "subject": self.subject,
            "bodyPreview": self.body_preview(),
            "importance": self.importance,
            "parentFolderId": self.folder_id,
            "conversationId": self.conversation_id,
            "isDeliveryReceiptRequested": False,
            "isReadReceiptRequested": False,
            "isRead": self.is_read,
            "isDraft": draft,
            "webLink": _web_link(self, immutable),
            "inferenceClassification": self.inference,
            "sender": None if draft else address_json(self.sender),
            "from": None if draft else address_json(self.from_ or self.sender),
            "toRecipients": [address_json(r) for r in self.to],
            "ccRecipients": [address_json(r) for r in self.cc],
            "bccRecipients": [address_json(r) for r in self.bcc],
            "replyTo": [address_json(r) for r in self.reply_to],
            "flag": dict(self.flag),
        }
        self._render_cache = (key, full)
        return full

    def _body_json(self, text_body: bool, *, unique: bool) -> dict[str, str]:
        if text_body and self.body_type == "html" and not self.keeps_html:
            body, unique_text = self.texts()
            return {"contentType": "text", "content": unique_text if unique else body}
        if unique:
            return {"contentType": self.body_type, "content": self.unique_body or self.body}
        return {"contentType": self.body_type, "content": self.body}


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


@dataclass
class Mailbox:
    user_id: str
    display_name: str
    mail: str
    upn: str
    time_zone: str
    folders: dict[str, Folder] = field(default_factory=dict)
    well_known: dict[str, str] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    """By immutable id."""
    _rest: dict[str, str] = field(default_factory=dict)
    serial: int = 0

    @property
    def root_id(self) -> str:
        return self.well_known["msgfolderroot"]

    def add_folder(self, folder: Folder) -> Folder:
        self.folders[folder.id] = folder
        if folder.well_known:
            self.well_known[folder.well_known] = folder.id
        return folder

    def folder(self, key: str) -> Folder | None:
        """A folder by id or well-known name (any case)."""
        found = self.folders.get(key)
        if found is not None:
            return found
        well_known = self.well_known.get(key.lower())
        return self.folders.get(well_known) if well_known else None

    def add_message(self, message: Message) -> Message:
        self.messages[message.immutable_id] = message
        self._rest[message.rest_id] = message.immutable_id
        return message

    def message(self, key: str) -> Message | None:
        found = self.messages.get(key)
        if found is not None:
            return found
        immutable = self._rest.get(key)
        return self.messages.get(immutable) if immutable else None

    def remove_message(self, message: Message) -> None:
        self.messages.pop(message.immutable_id, None)
        self._rest.pop(message.rest_id, None)

    def move_message(self, message: Message, folder: Folder, now: datetime) -> None:
        """A move: the REST id changes (the old one stops working), the immutable id stays."""
        if message.folder_id == folder.id:
            return
        self._rest.pop(message.rest_id, None)
        message.generation += 1
        message.folder_id = folder.id
        message.touch(now)
        self._rest[message.rest_id] = message.immutable_id

    def next_label(self, kind: str) -> str:
        self.serial += 1
        return f"{self.mail}:{kind}:{self.serial}"

    def descendants(self, folder_id: str) -> list[str]:
        found = [folder_id]
        for current in found:
            found.extend(f.id for f in self.folders.values() if f.parent_id == current)
        return found

    def profile(self) -> dict[str, Any]:
        return {
            "@odata.context": f"{GRAPH}/$metadata#users/$entity",
            "businessPhones": ["+1 425 555 0109"],
            "displayName": self.display_name,
            "givenName": self.display_name.split(" ")[0],
            "jobTitle": "Retail Manager",
            "mail": self.mail,
            "mobilePhone": None,
            "officeLocation": "18/2111",
            "preferredLanguage": "en-US",
            "surname": self.display_name.split(" ")[-1],
            "userPrincipalName": self.upn,
            "id": self.user_id,
        }


@dataclass
class DriveItem:
    id: str
    name: str
    parent_id: str | None
    created: datetime
    modified: datetime
    author: Recipient
    is_folder: bool = False
    mime: str | None = None
    data: Callable[[], bytes] | None = None
    declared_size: int | None = None
    """None for generated content: measured from the bytes when first asked."""
    text: str = ""
    """What search finds in the file besides its name (its real text content)."""
    version: int = 1
    guid: str = ""

    def content(self) -> bytes:
        return self.data() if self.data is not None else b""

    @property
    def size(self) -> int:
        if self.declared_size is None:
            self.declared_size = len(self.content())
        return self.declared_size


@dataclass
class Drive:
    id: str
    name: str
    drive_type: str
    owner: Recipient
    owner_id: str
    web_root: str
    """``https://contoso-my.sharepoint.com/personal/.../Documents``: browser links."""
    download_root: str
    """The pre-authenticated download endpoint: ``.../_layouts/15/download.aspx``."""
    items: dict[str, DriveItem] = field(default_factory=dict)
    root_id: str = ""
    _children: dict[str, list[str]] | None = None
    _rendered: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)

    def add(self, item: DriveItem) -> DriveItem:
        self.items[item.id] = item
        self._children = None
        self._rendered.clear()
        return item

    def children(self, item_id: str) -> list[DriveItem]:
        """Folders' children sorted by name (case-insensitive), OneDrive's default order."""
        if self._children is None:
            table: dict[str, list[str]] = {}
            for item in self.items.values():
                if item.parent_id is not None:
                    table.setdefault(item.parent_id, []).append(item.id)
            for key, values in table.items():
                values.sort(key=lambda i: (self.items[i].name.casefold(), i))
                table[key] = values
            self._children = table
        return [self.items[i] for i in self._children.get(item_id, [])]

    def path_of(self, item: DriveItem) -> str:
        """``/drive/root:`` or ``/drive/root:/Documents/Reports``: the parentReference path."""
        names = []
        current = item
        while current.parent_id is not None:
            names.append(current.name)
            current = self.items[current.parent_id]
        return "/drive/root:" + ("/" + "/".join(reversed(names)) if names else "")

    def by_path(self, path: str) -> DriveItem | None:
        current = self.items[self.root_id]
        for part in [p for p in path.split("/") if p]:
            match = [c for c in self.children(current.id) if c.name.casefold() == part.casefold()]
            if not match:
                return None
            current = match[0]
        return current

    def size_of(self, item: DriveItem) -> int:
        if not item.is_folder:
            return item.size
        return sum(self.size_of(child) for child in self.children(item.id))

    def render(self, item: DriveItem) -> dict[str, Any]:
        """The full driveItem, download URL excluded (it is added per request).

        Built once per item version: the demo drives are read-only, so a folder's size and
        child count cannot change under a cached answer.
        """
        cached = self._rendered.get(item.id)
        if cached is not None and cached[0] == item.version:
            return dict(cached[1])
        out = self._render(item)
        self._rendered[item.id] = (item.version, out)
        return dict(out)

    def _render(self, item: DriveItem) -> dict[str, Any]:
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
            "webUrl": self.web_url(item),
            "cTag": f'"c:{tag}"',
            "size": self.size_of(item),
            "createdBy": person,
            "lastModifiedBy": person,
            "fileSystemInfo": {
                "createdDateTime": iso(item.created),
                "lastModifiedDateTime": iso(item.modified),
            },
        }
        if item.parent_id is None:
            out["root"] = {}
            out["parentReference"] = {"driveId": self.id, "driveType": self.drive_type}
        else:
            out["parentReference"] = {
                "driveId": self.id,
                "driveType": self.drive_type,
                "id": item.parent_id,
                "name": self.items[item.parent_id].name,
                "path": self.path_of(self.items[item.parent_id]),
            }
        if item.is_folder:
            out["folder"] = {"childCount": len(self.children(item.id))}
        else:
            digest = hashlib.sha1(item.id.encode()).digest()
            out["file"] = {
                "mimeType": item.mime or "application/octet-stream",
                "hashes": {"quickXorHash": base64.b64encode(digest[:20]).decode("ascii")},
            }
        return out

    def web_url(self, item: DriveItem) -> str:
        from urllib.parse import quote

        path = self.path_of(item)[len("/drive/root:") :]
        return self.web_root + quote(path)

    def json(self) -> dict[str, Any]:
        used = self.size_of(self.items[self.root_id])
        total = 1_099_511_627_776
        return {
            "@odata.context": f"{GRAPH}/$metadata#drives/$entity",
            "id": self.id,
            "driveType": self.drive_type,
            "name": self.name,
            "webUrl": self.web_root,
            "createdDateTime": "2025-06-01T09:00:00Z",
            "lastModifiedDateTime": "2026-03-06T16:00:00Z",
            "owner": {
                "user": {
                    "id": self.owner_id,
                    "displayName": self.owner[0],
                    "email": self.owner[1],
                }
            },
            "quota": {
                "deleted": 0,
                "fileCount": sum(1 for i in self.items.values() if not i.is_folder),
                "remaining": total - used,
                "state": "normal",
                "total": total,
                "used": used,
            },
        }


@dataclass
class Tenant:
    """What the emulator serves: mailboxes by every name they answer to, and drives."""

    mailboxes: dict[str, Mailbox]
    """By user id, mail and UPN (lower case); ``me`` is the signed-in user."""
    drives: dict[str, Drive]
    """By drive id."""
    personal_drive: dict[str, str]
    """User id -> id of that user's OneDrive."""
    me: str

    def mailbox(self, key: str) -> Mailbox | None:
        return self.mailboxes.get(key.lower()) or self.mailboxes.get(key)
