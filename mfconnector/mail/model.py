"""What a mailbox holds, in neutral names: folders, message summaries, messages, pages.

A backend fills these from its provider's answers, bounded and with secrets already cut
(download URLs, credential links); the tools decide the view (compact or full), apply the
result size limit and say what was left out. Times are aware ``datetime`` values in UTC;
the tools show them in the mailbox's zone. ``native`` holds a provider's fields that have
no neutral name (``detail: "full"`` shows them under ``native``), already bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from mfconnector.mail.refs import Reference

__all__ = [
    "FOLDER_ROLES",
    "Attachment",
    "Body",
    "Folder",
    "FolderRole",
    "Message",
    "MessageSummary",
    "Page",
    "Person",
    "Position",
]

FolderRole = Literal[
    "inbox", "sent", "drafts", "trash", "junk", "archive", "outbox", "all", "starred", "other"
]
FOLDER_ROLES: tuple[str, ...] = (
    "inbox",
    "sent",
    "drafts",
    "trash",
    "junk",
    "archive",
    "outbox",
    "all",
    "starred",
)
"""Roles a tool may name a folder by (``folder: "sent"``), whatever the provider calls it:
Graph's well-known names, IMAP's SPECIAL-USE attributes, Gmail's system labels."""

FlagState = Literal["flagged", "done", "none"]
Importance = Literal["high", "normal", "low"]

Position = Mapping[str, Any]
"""Where the next page starts, as a backend wrote it (JSON values only: Graph's next link
and skip, IMAP's UIDVALIDITY and last UID, Gmail's pageToken). The tools sign it into a
cursor bound to the tool, account and arguments, and hand it back unread."""


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    address: str

    def shown(self) -> str:
        """``Name <address>``, or whichever of the two is there."""
        if self.name and self.address and self.name.lower() != self.address.lower():
            return f"{self.name} <{self.address}>"
        return self.address or self.name


@dataclass(frozen=True, slots=True)
class Folder:
    """A folder (IMAP mailbox, Graph mail folder, Gmail label)."""

    ref: Reference
    name: str
    path: str
    """From the top, with ``/`` between levels (the provider's own delimiter is the
    backend's business)."""
    role: FolderRole | None = None
    parent: Reference | None = None
    unread: int | None = None
    total: int | None = None
    children: int | None = None
    hidden: bool = False
    native: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class MessageSummary:
    """One message as a listing shows it: no body.

    Read-only by convention, not ``frozen``: a frozen dataclass sets each of its eighteen
    fields through ``object.__setattr__``, which made building one cost nine times as much
    (fifty a page; measured: 1.8 µs against 0.2 µs). Nothing changes one after it is built.
    """

    ref: Reference
    subject: str | None
    sender: Person | None
    received: datetime | None
    unread: bool
    flag: FlagState = "none"
    importance: Importance = "normal"
    has_attachments: bool = False
    is_draft: bool = False
    categories: Sequence[str] = ()
    """Graph categories, IMAP keywords, Gmail user labels."""
    folder: Reference | None = None
    folder_name: str | None = None
    """Filled by the backend when a result spans folders and the name is known."""
    to: Sequence[Person] = ()
    cc: Sequence[Person] = ()
    thread: str | None = None
    """The provider's conversation/thread id, for ``thread_of``."""
    preview: str | None = None
    change_token: str | None = None
    """What ``unchanged_since`` compares: Graph's changeKey, IMAP's MODSEQ; None when the
    provider has none (Gmail)."""
    native: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Body:
    """A body as text, already converted from HTML under the bounded converter and with
    credential links cut out."""

    text: str
    redactions: int = 0
    conversion_limit: str | None = None
    """The limit that cut an HTML body's layout short (its words are all there)."""
    unique: bool = False
    """Only the part of a reply that is new (Graph's uniqueBody)."""
    notes: Sequence[str] = ()
    """What a bounded reader cut, skipped or replaced on the way (IMAP/Gmail MIME: a
    message past ``mime_message_bytes``, nesting past ``mime_depth``, a bad charset), in
    words; empty when the body was read whole."""
    cut_by: Sequence[tuple[str, str]] = ()
    """(limit, note) for each named limit that left part of the message unread (a cut, not
    a replaced character): the tools mark such a read incomplete."""


@dataclass(frozen=True, slots=True)
class Attachment:
    ref: Reference
    name: str
    content_type: str | None
    size: int | None
    kind: Literal["file", "message", "reference"] = "file"
    """A file, an attached email, or a link to a file elsewhere."""
    inline: bool = False
    content_id: str | None = None


@dataclass(slots=True)
class Message(MessageSummary):
    """One message as a read shows it."""

    bcc: Sequence[Person] = ()
    reply_to: Sequence[Person] = ()
    on_behalf: Person | None = None
    """Who sent it when not the author (Graph's sender, the Sender header)."""
    sent: datetime | None = None
    internet_message_id: str | None = None
    web_link: str | None = None
    body: Body | None = None
    attachments: Sequence[Attachment] = ()
    more_attachments: bool = False
    """The provider has more attachments than a read lists."""


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """At most ``limit`` items of a listing, and where the rest is.

    ``left_on_page`` counts items the backend already has past those returned (a tool
    that shows fewer still, for the size limit, continues inside them). ``next`` is None
    when the provider says nothing follows; ``more_pages`` says a further page exists
    even when ``next`` could not be kept (``note`` says why).
    """

    items: Sequence[T]
    here: Position
    """The position that produced this page: a cursor for "the rest of this page" is
    ``here`` plus how many were shown."""
    next: Position | None = None
    more_pages: bool = False
    left_on_page: int = 0
    total: int | None = None
    note: str | None = None
    searched: str | None = None
    """For searches: which fields the provider searched, in words."""
