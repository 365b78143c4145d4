"""What a files provider holds, in neutral names: drives, drive items, one byte range.

A ``FilesBackend`` (``mail.backend``) fills these from its provider's answers, with secrets
already cut: a drive item never carries a download URL, only ``web_link``, the address a
person opens in a browser (which needs their own sign-in). Paths are from the drive's
root, ``/`` between levels. Times are ISO 8601 strings in UTC, as the provider stated them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from mfconnector.mail.refs import Reference

__all__ = [
    "Drive",
    "DriveItem",
    "FileRange",
    "FilesCapabilities",
    "ItemKind",
    "ItemLocation",
]

ItemKind = Literal["file", "folder"]


@dataclass(frozen=True, slots=True)
class FilesCapabilities:
    """What this account's files provider can do. ``missing`` says, in words, what each
    absent capability disables (as ``MailCapabilities.missing``)."""

    provider: str
    other_drives: bool = False
    """Drives other than the signed-in user's own (by id, or a site's library)."""
    missing: Sequence[tuple[str, str]] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Drive:
    """The drive a call reads: ``label`` as the caller named it ("me": their own), and
    ``handle``, the backend's own note of where it is (opaque to the tools)."""

    label: str
    handle: str

    @property
    def other(self) -> bool:
        return self.label != "me"


@dataclass(frozen=True, slots=True)
class ItemLocation:
    """An item of a drive by reference or by path segments from the root; neither: the
    root folder."""

    ref: Reference | None = None
    segments: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class DriveItem:
    """A file or folder of a drive."""

    ref: Reference
    name: str
    kind: ItemKind
    parent: str | None = None
    """The folder it is in, as a path from the drive's root (``/`` for the root)."""
    parent_ref: Reference | None = None
    size: int | None = None
    mime_type: str | None = None
    children: int | None = None
    """A folder's number of items."""
    created: str | None = None
    modified: str | None = None
    modified_by: str | None = None
    """The name of whoever changed it last."""
    web_link: str | None = None

    @property
    def path(self) -> str | None:
        """Its own path from the drive's root, when its folder is known."""
        if self.parent is None:
            return None
        return f"{self.parent.rstrip('/')}/{self.name}"


@dataclass(frozen=True, slots=True)
class FileRange:
    """Bytes of a file from ``first_byte`` on, at most what was asked. ``complete``: they
    reach the end of the file; ``total_size``: the whole file's size when the provider
    said it."""

    data: bytes
    first_byte: int
    complete: bool
    total_size: int | None = None
