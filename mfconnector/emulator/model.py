"""The emulator's state: mailboxes (folders, messages, attachments) and drives (items).

Plain objects, no I/O, and no Graph JSON: ``render`` turns them into answers. What stays
here is what the objects are and how they change: ids, the version every change bumps (the
change key and etag follow it), moves, sizes, a message's text, a drive's tree.

Ids: every message has an immutable id (``AAkALg...``) for its whole life and a REST id
(``AAMkAG...``) that changes whenever it changes folder, as Exchange's do. Either finds
it; answers show the one the request asked for.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
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
]

Recipient = tuple[str, str]
"""(display name, address)."""

ATTACHMENT_OVERHEAD = 390
"""Outlook's attachment ``size`` counts the stored part, a little more than the bytes."""


@dataclass
class Folder:
    id: str
    display_name: str
    parent_id: str
    well_known: str | None = None
    is_hidden: bool = False


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

    def content(self) -> bytes:
        return self.data() if self.data is not None else b""


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
    """Filled by ``render.message_json``: the default properties for one version. Private,
    so a copy (``mail_writes``) leaves it behind."""
    _text_renders: dict[tuple[Any, ...], str] | None = None
    """Filled by ``render.message_text``: this version's encoded list renderings, by how
    the request asked (id kind, body type, time zone, ``$select``)."""

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
        self._text_renders = None

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

    def preset_texts(self, body: str, unique: str) -> None:
        """Give the text conversion up front, for a body that is costly to convert."""
        self._text_cache = (self.version, body, unique)

    def body_preview(self) -> str:
        return preview(self.texts()[0])


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
    _render_cache: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    """Filled by ``render.drive_item_json``: each item's JSON for one version."""

    def add(self, item: DriveItem) -> DriveItem:
        self.items[item.id] = item
        self._children = None
        self._render_cache.clear()
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
