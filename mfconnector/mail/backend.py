"""The protocols the tools call: ``MailBackend`` for every provider, ``FilesBackend`` for
those that have files (Microsoft 365's OneDrive and SharePoint).

The tools keep argument checking, bounds, completeness markers and result shaping; a
backend owns queries, paging, ids and references, concurrency tokens and error
classification (``mail.failures``). Capabilities are the backend's truth: a tool, an action
or an argument it cannot honour is not offered for its account, and a call for it is
``Unsupported`` before any request. A backend must pass the shared conformance suite
(tests/support/mail_conformance.py) with its fake and its real provider.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from mfconnector.mail.files import Drive, DriveItem, FileRange, FilesCapabilities, ItemLocation
from mfconnector.mail.model import Attachment, Folder, Message, MessageSummary, Page
from mfconnector.mail.outgoing import (
    DraftAttachment,
    DraftContent,
    DraftMade,
    DraftRevision,
    FrozenOutgoing,
    ReplyKind,
    SendResult,
)
from mfconnector.mail.query import FlagChange, MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import AccountTag, Reference

__all__ = [
    "AttachmentContent",
    "FilesBackend",
    "MailBackend",
    "MailCapabilities",
    "OnBytes",
    "Spooled",
    "SupportsProfile",
]

OnBytes = Callable[[int, "int | None"], None]
"""Called as bytes arrive: (bytes so far, the total when the provider said it)."""


class Spooled(Protocol):
    """Bytes written to a private temporary file, deleted when the context ends."""

    @property
    def path(self) -> str: ...

    @property
    def size(self) -> int: ...


@dataclass(frozen=True, slots=True)
class MailCapabilities:
    """What this account's provider can do, as the tools use it. ``missing`` says, for
    ``account_status``, what each absent capability disables (in words)."""

    provider: str
    search_syntax: str
    """What ``mail_search`` passes through: "kql", "gmail" or "imap-text"."""
    threads: bool = True
    conditional_flags: bool = False
    """``unchanged_since`` on flag changes (Graph changeKey, IMAP CONDSTORE)."""
    permanent_delete: bool = False
    move: bool = True
    copy: bool = True
    categories: bool = True
    unique_body: bool = False
    shared_mailboxes: bool = False
    """``mailbox``: another mailbox the signed-in user may read (Graph)."""
    labels: bool = False
    """Folders are labels: one message can carry several (Gmail)."""
    stable_ids: bool = False
    """A message keeps its reference when it moves to another folder (Graph's immutable
    ids; labels imply it); otherwise a move makes the old reference stale (IMAP's UIDs)."""
    append_sent: bool = False
    """After a send, this server files the copy in Sent itself (SMTP)."""
    sending: bool = True
    """Sending is possible (IMAP: an SMTP server is configured)."""
    max_message_bytes: int | None = None
    """The largest message the provider says it accepts (IMAP APPENDLIMIT), if it says."""
    missing: Sequence[tuple[str, str]] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class AttachmentContent:
    """An attachment's bytes, at most the cap the tool asked for. ``complete`` False: the
    attachment is larger and only its start is here."""

    attachment: Attachment
    data: bytes
    complete: bool
    message: Message | None = None
    """An attached email, parsed (kind "message")."""


@runtime_checkable
class MailBackend(Protocol):
    """One mailbox of one account. Every method may raise ``mail.failures`` errors; every
    reference it takes was parsed against ``tag`` by the tools first."""

    @property
    def tag(self) -> AccountTag: ...

    @property
    def capabilities(self) -> MailCapabilities: ...

    async def time_zone(self) -> str | None:
        """The mailbox's own IANA zone, when the provider keeps one (Graph); else None."""
        ...

    def for_mailbox(self, mailbox: str) -> MailBackend:
        """Another mailbox of this account (``capabilities.shared_mailboxes``)."""
        ...

    # reads
    async def folders(self, parent: Folder | None, page: PageRequest) -> Page[Folder]: ...

    async def resolve_folder(self, value: str, argument: str) -> Folder:
        """A folder by reference, role ("inbox", "sent"…), name or path; ``NotFound`` or
        ``ToolInputError`` (ambiguous name) naming ``argument``."""
        ...

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:
        """Newest first."""
        ...

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:
        """Newest first; ``Page.searched`` says which fields were searched."""
        ...

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:
        """The message's conversation across folders, oldest first (``capabilities.threads``)."""
        ...

    async def read(self, message: Reference, request: ReadRequest) -> Message: ...

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        """A message's attachments (metadata), one page."""
        ...

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:
        """One attachment: its bytes up to ``max_bytes`` (files; 0 asks for its metadata
        only), or the attached email parsed (kind "message"; ``data`` empty)."""
        ...

    def spool_attachment(
        self,
        message: Reference,
        attachment: Reference,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:
        """A file attachment's bytes in a private temporary file, at most ``limit`` bytes
        (a larger one is ``DocumentError`` too_large), for the document extractor."""
        ...

    # acting
    async def missing_permissions(self, gate: str) -> Sequence[str]:
        """What the sign-in lacks for an acting gate ("writes", "send", "delete"), where the
        provider can tell before any request (Graph's delegated scopes); else ()."""
        ...

    async def create_folder(self, parent: Folder | None, name: str) -> Folder: ...

    async def rename_folder(self, folder: Folder, name: str) -> Folder: ...

    async def copy(self, message: Reference, target: Folder) -> Reference | None:
        """The copy's reference when the provider says it (COPYUID, Graph's answer)."""
        ...

    async def move(self, message: Reference, target: Folder) -> Reference | None: ...

    async def set_flags(self, message: Reference, change: FlagChange) -> MessageSummary | None:
        """``Conflict`` when ``change.unchanged_since`` no longer matches; nothing changed."""
        ...

    async def trash(self, message: Reference) -> Reference | None: ...

    async def delete_permanently(self, message: Reference) -> None:
        """Exactly that message, never more (IMAP: UID EXPUNGE of that UID only)."""
        ...

    async def create_draft(self, content: DraftContent) -> DraftMade: ...

    async def create_response(
        self, message: Reference, kind: ReplyKind, content: DraftContent
    ) -> DraftMade:
        """A reply, reply-all or forward draft of ``message``, threaded as the provider does."""
        ...

    async def revise_draft(self, draft: Reference, revision: DraftRevision) -> DraftMade:
        """A new draft: a copy of ``draft`` with ``revision``'s changes; ``draft`` stays."""
        ...

    async def resolve_attachment(self, attachment: DraftAttachment) -> DraftAttachment:
        """``attachment`` with the name, type, size and version of its ``source`` filled in,
        read before anything is written; ``ToolInputError`` for a folder or another kind."""
        ...

    async def source_version(self, attachment: DraftAttachment) -> str | None:
        """The ``source``'s content version now; None when it is gone."""
        ...

    async def freeze(self, draft: Reference) -> FrozenOutgoing:
        """The draft exactly as it would be sent, with its digest."""
        ...

    async def send(self, frozen: FrozenOutgoing) -> SendResult:
        """Send exactly ``frozen``, once. Called only after the one-time claim was taken."""
        ...

    async def verify_sent(self, frozen: FrozenOutgoing) -> bool | None:
        """Whether the sent copy is found (by Message-ID or draft id); None: cannot say."""
        ...

    async def discard_draft(self, draft: Reference) -> None: ...

    async def classify_folder(self, folder: Folder) -> Folder:
        """``folder`` with its role as the provider states it now, however it was named (an
        id may name a well-known folder): what the acting tools' folder policy decides on."""
        ...


@runtime_checkable
class SupportsProfile(Protocol):
    """A backend that can say who is signed in (``account_status``); optional."""

    async def profile(self) -> dict[str, str]:
        """The signed-in person: ``name``, ``address`` and what else the provider says
        (snake_case keys, strings only)."""
        ...


@runtime_checkable
class FilesBackend(Protocol):
    """Files of one account (OneDrive, SharePoint): list a folder, search, read one file.
    Every method may raise ``mail.failures`` errors; every reference it takes was parsed
    against ``tag`` by the tools first. The files tools' contract is in docs/TOOLS.md."""

    @property
    def tag(self) -> AccountTag: ...

    @property
    def capabilities(self) -> FilesCapabilities: ...

    async def drive(self, drive_id: str | None = None, site: str | None = None) -> Drive:
        """The signed-in user's drive, or another by the provider's drive id or by a site
        (``site`` or ``site/library``), which needs ``capabilities.other_drives``; an
        ambiguous or unknown name is a ``ToolInputError`` listing what exists."""
        ...

    async def children(
        self, drive: Drive, folder: ItemLocation, page: PageRequest
    ) -> Page[DriveItem]:
        """A folder's items, one page, in the provider's order."""
        ...

    async def search(self, drive: Drive, text: str, page: PageRequest) -> Page[DriveItem]:
        """Items whose name, metadata or content match ``text``, one page."""
        ...

    async def item(self, drive: Drive, where: ItemLocation) -> DriveItem: ...

    async def read_range(
        self, drive: Drive, item: DriveItem, first_byte: int, max_bytes: int
    ) -> FileRange:
        """At most ``max_bytes`` of a file from ``first_byte`` on (a text window)."""
        ...

    def spool(
        self,
        drive: Drive,
        item: DriveItem,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:
        """A file's bytes in a private temporary file, at most ``limit`` bytes (a larger
        one is ``DocumentError`` too_large), for the document extractor."""
        ...
