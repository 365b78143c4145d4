"""LIST answers as neutral folders (pure): roles, paths with ``/``, counts from STATUS.

Roles come from SPECIAL-USE attributes (RFC 6154), never from names, when the server has
SPECIAL-USE. Only a server without it gets the fallback by common names, and each folder
found that way says so (``native.role_by = "name"``): it is a guess.
"""

from __future__ import annotations

from collections.abc import Sequence

from mfconnector.errors import ToolInputError
from mfconnector.imap.refs import folder_reference
from mfconnector.imap.results import MailboxEntry
from mfconnector.mail.failures import NotFound
from mfconnector.mail.model import FOLDER_ROLES, Folder, FolderRole
from mfconnector.mail.refs import AccountTag

__all__ = ["FALLBACK_NAMES", "ROLE_BY_ATTRIBUTE", "find_folder", "folders_from_entries", "path_of"]

ROLE_BY_ATTRIBUTE: dict[str, FolderRole] = {
    "\\Sent": "sent",
    "\\Drafts": "drafts",
    "\\Trash": "trash",
    "\\Junk": "junk",
    "\\Archive": "archive",
    "\\All": "all",
    "\\Flagged": "starred",
}
FALLBACK_NAMES: dict[FolderRole, tuple[str, ...]] = {
    "sent": ("sent", "sent items", "sent messages", "sent mail"),
    "drafts": ("drafts", "draft"),
    "trash": ("trash", "deleted items", "deleted messages", "bin"),
    "junk": ("junk", "spam", "junk e-mail", "junk email", "bulk mail"),
    "archive": ("archive", "archives"),
}
"""Common names (any case, last level only) used only when the server has no SPECIAL-USE."""


def path_of(entry: MailboxEntry) -> str:
    """The folder's path with ``/`` between levels, whatever the server's delimiter."""
    if entry.delimiter and entry.delimiter != "/":
        return entry.name.replace(entry.delimiter, "/")
    return entry.name


def _leaf(entry: MailboxEntry) -> str:
    if entry.delimiter:
        return entry.name.rsplit(entry.delimiter, 1)[-1]
    return entry.name


def _parent(entry: MailboxEntry) -> str | None:
    if entry.delimiter and entry.delimiter in entry.name:
        return entry.name.rsplit(entry.delimiter, 1)[0]
    return None


def folders_from_entries(
    tag: AccountTag, entries: Sequence[MailboxEntry], *, special_use: bool
) -> list[Folder]:
    """Every LIST entry as a Folder, INBOX first, then in the server's order."""
    names = {entry.name for entry in entries}
    children: dict[str, int] = {}
    for entry in entries:
        parent = _parent(entry)
        if parent is not None:
            children[parent] = children.get(parent, 0) + 1
    guessed: set[str] = set()
    out = []
    for entry in entries:
        role: FolderRole | None = None
        native: dict[str, object] = {"name": entry.name}
        if entry.name.upper() == "INBOX":
            role = "inbox"
        elif special_use:
            role = ROLE_BY_ATTRIBUTE.get(entry.special_use or "")
        else:
            leaf = _leaf(entry).lower()
            for candidate, common in FALLBACK_NAMES.items():
                if leaf in common and candidate not in guessed and _parent(entry) is None:
                    role = candidate
                    guessed.add(candidate)
                    native["role_by"] = "name"
                    break
        status = entry.status
        if status is not None and status.uidvalidity is not None:
            native["uid_validity"] = status.uidvalidity
        parent = _parent(entry)
        out.append(
            Folder(
                ref=folder_reference(tag, entry.name),
                name=_leaf(entry),
                path=path_of(entry),
                role=role,
                parent=folder_reference(tag, parent) if parent in names and parent else None,
                unread=status.unseen if status else None,
                total=status.messages if status else None,
                children=children.get(entry.name, 0),
                hidden=not entry.selectable,
                native=native,
            )
        )
    out.sort(key=lambda f: 0 if f.role == "inbox" else 1)
    return out


def find_folder(folders: Sequence[Folder], value: str, argument: str) -> Folder:
    """A folder by role (``sent``), path (``Projects/2026``) or name; an ambiguous name is
    refused with the paths it could mean."""
    lowered = value.strip().lower()
    if lowered in FOLDER_ROLES:
        for folder in folders:
            if folder.role == lowered:
                return folder
        raise NotFound(
            f"`{argument}`: this mailbox has no {lowered} folder",
            hint="mail_folders lists the folders and their roles",
        )
    for folder in folders:
        if folder.path == value or (lowered == "inbox" and folder.role == "inbox"):
            return folder
    by_path = [f for f in folders if f.path.lower() == lowered]
    if len(by_path) == 1:
        return by_path[0]
    by_name = [f for f in folders if f.name == value] or [
        f for f in folders if f.name.lower() == lowered
    ]
    if len(by_name) == 1:
        return by_name[0]
    if len(by_name) > 1:
        raise ToolInputError(
            f"`{argument}`: several folders are named {value[:80]!r}",
            hint="name one by its path: " + ", ".join(f.path for f in by_name[:10]),
        )
    raise NotFound(
        f"`{argument}`: no folder {value[:80]!r} in this mailbox",
        hint="mail_folders lists the folders",
    )
