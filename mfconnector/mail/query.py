"""What a tool asks a backend for: which page, which messages, which changes.

The tools build these from checked arguments; a backend compiles them to its provider's
query language (OData ``$filter``, IMAP SEARCH, Gmail ``q``) and says in its capabilities
what it cannot honour, so a call for it fails as ``unsupported`` before any request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from mfconnector.mail.model import FlagState, Position

__all__ = [
    "FlagChange",
    "MessageFilter",
    "PageRequest",
    "ReadRequest",
    "View",
]

View = Literal["compact", "full"]
"""Compact asks the provider only for what the compact view shows (fewer bytes, fewer
requests); full for every neutral field and the native extras."""


@dataclass(frozen=True, slots=True)
class PageRequest:
    """The first page (``position`` None) or the page a cursor named, from ``skip`` on."""

    limit: int
    position: Position | None = None
    skip: int = 0
    view: View = "compact"


@dataclass(frozen=True, slots=True)
class MessageFilter:
    """Filters of ``mail_list``; all that are set must hold. Instants are UTC."""

    unread_only: bool = False
    flagged: bool = False
    triage: bool = False
    """Unread or flagged."""
    sender: str | None = None
    since: datetime | None = None
    before: datetime | None = None
    has_attachments: bool = False

    def is_empty(self) -> bool:
        return self == MessageFilter()


@dataclass(frozen=True, slots=True)
class ReadRequest:
    view: View = "compact"
    unique_body: bool = False
    """Only a reply's new part: offered where ``capabilities.unique_body``."""
    with_body: bool = True


@dataclass(frozen=True, slots=True)
class FlagChange:
    """What ``mail_modify flags`` changes. ``None`` leaves a flag as it is."""

    unread: bool | None = None
    flag: FlagState | None = None
    add_categories: Sequence[str] = field(default_factory=tuple)
    remove_categories: Sequence[str] = field(default_factory=tuple)
    unchanged_since: str | None = None
    """The change token the caller read (``MessageSummary.change_token``): the change is
    made only if the message has not changed since; otherwise ``Conflict``."""
