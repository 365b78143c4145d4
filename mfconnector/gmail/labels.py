"""Gmail labels as folders: roles, the path tree ("Projects/Contoso"), counts.

One message can carry several labels, so a "folder" here is a view, not a place: a
message listed under INBOX may be listed under "Projects" too. System labels keep their
ids as native ids (``INBOX``); user labels are ``Label_…``. UNREAD and CHAT are states,
not folders, and are never listed. ``ALL`` stands for Gmail's "All Mail" (no label
filter; Gmail leaves Spam and Trash out of it, as its own web view does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mfconnector.mail.model import Folder, FolderRole
from mfconnector.mail.refs import AccountTag, Reference

__all__ = [
    "ALL_MAIL",
    "LABEL_ROLES",
    "NOT_FOLDERS",
    "LabelTree",
    "role_label",
]

LABEL_ROLES: Mapping[str, FolderRole] = {
    "INBOX": "inbox",
    "SENT": "sent",
    "DRAFT": "drafts",
    "TRASH": "trash",
    "SPAM": "junk",
    "STARRED": "starred",
}
ALL_MAIL = "ALL"
"""Not a Gmail label: the backend's id for "All Mail" (no ``labelIds`` filter)."""
SYSTEM_NAMES: Mapping[str, str] = {
    "INBOX": "Inbox",
    "SENT": "Sent",
    "DRAFT": "Drafts",
    "TRASH": "Trash",
    "SPAM": "Spam",
    "STARRED": "Starred",
    "IMPORTANT": "Important",
    "CATEGORY_PERSONAL": "Primary",
    "CATEGORY_SOCIAL": "Social",
    "CATEGORY_PROMOTIONS": "Promotions",
    "CATEGORY_UPDATES": "Updates",
    "CATEGORY_FORUMS": "Forums",
}
NOT_FOLDERS = frozenset({"UNREAD", "CHAT"})
SYSTEM_ORDER = (
    "INBOX",
    "STARRED",
    "IMPORTANT",
    "SENT",
    "DRAFT",
    "ALL",
    "SPAM",
    "TRASH",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
)
"""System labels in the order Gmail's own side bar shows them."""


def role_label(role: str) -> str | None:
    """The system label id of a neutral role (``junk`` → ``SPAM``), or None."""
    if role == "all":
        return ALL_MAIL
    return next((label for label, named in LABEL_ROLES.items() if named == role), None)


@dataclass(frozen=True, slots=True)
class _Label:
    id: str
    name: str
    """Gmail's name: the whole path for a user label (``Projects/Contoso``)."""
    system: bool
    hidden: bool


class LabelTree:
    """One ``labels.list`` answer as folders: who is whose parent, by path."""

    def __init__(self, tag: AccountTag, answer: Any) -> None:
        self.tag = tag
        labels: list[_Label] = []
        raw = answer.get("labels") if isinstance(answer, dict) else None
        for item in raw if isinstance(raw, list) else []:
            if not isinstance(item, dict):
                continue
            label_id, name = item.get("id"), item.get("name")
            if not isinstance(label_id, str) or not isinstance(name, str):
                continue
            if label_id in NOT_FOLDERS:
                continue
            system = item.get("type") == "system"
            hidden = item.get("labelListVisibility") == "labelHide"
            labels.append(_Label(label_id, name, system, hidden))
        labels.append(_Label(ALL_MAIL, "All Mail", True, False))
        self._by_id = {label.id: label for label in labels}
        self._by_path = {label.name.casefold(): label for label in labels if not label.system}
        self._parents = {label.id: self._parent_of(label) for label in labels}
        self._children: dict[str | None, list[_Label]] = {}
        for label in labels:  # once: Gmail allows 10,000 labels, so no quadratic scans
            self._children.setdefault(self._parents[label.id], []).append(label)
        for siblings in self._children.values():
            siblings.sort(key=_order)

    def __contains__(self, label_id: str) -> bool:
        return label_id in self._by_id

    def parent_id(self, label: _Label) -> str | None:
        return self._parents.get(label.id)

    def _parent_of(self, label: _Label) -> str | None:
        if label.system or "/" not in label.name:
            return None
        parent = self._by_path.get(label.name.rsplit("/", 1)[0].casefold())
        return parent.id if parent else None

    def folder(self, label_id: str, counts: Mapping[str, Any] | None = None) -> Folder:
        label = self._by_id[label_id]
        path = SYSTEM_NAMES.get(label.id, label.name) if label.system else label.name
        parent = self.parent_id(label)
        children = len(self._children.get(label.id, ()))
        counts = counts or {}
        return Folder(
            ref=Reference(self.tag, label.id),
            name=path.rsplit("/", 1)[-1] if not label.system else path,
            path=path,
            role=LABEL_ROLES.get(label.id, "all" if label.id == ALL_MAIL else None),
            parent=Reference(self.tag, parent) if parent else None,
            unread=_count(counts.get("messagesUnread")),
            total=_count(counts.get("messagesTotal")),
            children=children,
            hidden=label.hidden,
            native={"label_type": "system" if label.system else "user"},
        )

    def children_of(self, parent: str | None) -> list[str]:
        """Label ids directly under ``parent`` (None: the top), system labels first."""
        return [label.id for label in self._children.get(parent, ())]

    def descendants(self, label_id: str) -> list[str]:
        """User labels nested anywhere under ``label_id`` (by their path prefix)."""
        label = self._by_id.get(label_id)
        if label is None or label.system:
            return []
        prefix = label.name.casefold() + "/"
        return [
            other.id
            for other in self._by_id.values()
            if not other.system and other.name.casefold().startswith(prefix)
        ]

    def is_user_label(self, label_id: str) -> bool:
        label = self._by_id.get(label_id)
        return label is not None and not label.system

    def name_of(self, label_id: str) -> str | None:
        label = self._by_id.get(label_id)
        return label.name if label else None

    def matching(self, value: str) -> Sequence[str]:
        """Label ids whose path, name or system display name is ``value`` (any case)."""
        wanted = value.strip().strip("/").casefold()
        exact = [
            label.id
            for label in self._by_id.values()
            if wanted in (label.name.casefold(), SYSTEM_NAMES.get(label.id, "").casefold())
            or (label.system and wanted == label.id.casefold())
        ]
        if exact:
            return exact
        return [
            label.id
            for label in self._by_id.values()
            if not label.system and label.name.rsplit("/", 1)[-1].casefold() == wanted
        ]


def _order(label: _Label) -> tuple[int, int, str]:
    if label.system:
        known = label.id in SYSTEM_ORDER
        return (0, SYSTEM_ORDER.index(label.id) if known else len(SYSTEM_ORDER), label.id)
    return (1, 0, label.name.casefold())


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
