"""Which folders ``--enable-writes`` may file mail into or rename: its own risk class only.

Decided by the folder's neutral role, which the backend fills in truthfully however the
folder was named (Graph resolves an id and compares it with every well-known folder's;
IMAP reads SPECIAL-USE; Gmail its system labels). Moves, copies and new folders' parents
go to the person's own folders (no role) or to Inbox, Archive, Junk and Trash. Every other
role is refused: a move into a recoverable-items folder (``other``) would be a hidden
deletion without ``--enable-delete``, one into Outbox a send without ``--enable-send``, and
Sent, Drafts and the system folders belong to the mailbox, not to the person. Rename
refuses every folder that has a role.
"""

from __future__ import annotations

from mfconnector.mail.failures import Unsupported
from mfconnector.mail.model import Folder

__all__ = ["DESTINATION_ROLES", "check_destination", "check_renamable"]

DESTINATION_ROLES = frozenset({"inbox", "archive", "junk", "trash"})
"""The roles mail may be moved or copied into, and new folders made in."""


def _described(folder: Folder) -> str:
    if folder.role in (None, "other"):
        return "a system folder"
    return f"the {folder.role} folder"


def _refusal(folder: Folder, doing: str, allowed: str) -> Unsupported:
    return Unsupported(
        f"{folder.name[:60]!r} is {_described(folder)}; mail_create and mail_modify do not "
        f"{doing} it, so nothing was changed",
        hint=allowed,
    )


def check_destination(folder: Folder, argument: str) -> Folder:
    """``folder`` if mail may go there (or a new folder be made in it)."""
    if folder.role is None or folder.role in DESTINATION_ROLES:
        return folder
    raise _refusal(
        folder,
        "file mail into",
        f"`{argument}`: one of your own folders (ids from mail_folders), or inbox, archive, "
        "junk, trash",
    )


def check_renamable(folder: Folder) -> None:
    """Refuse a folder with a role (well-known or system), however the caller named it."""
    if folder.role is not None:
        raise _refusal(folder, "rename", "rename a folder you created (ids from mail_folders)")
