"""Graph's JSON as the neutral mail model: which Graph fields a view asks for, and the
mapping of each answer to ``Folder``, ``MessageSummary``, ``Message`` and ``Attachment``.

Fields are picked once here, by name; nothing else of a Graph item (download URLs,
``contentBytes``, ``@odata`` links) ever reaches a tool. Strings are kept as Graph sent
them: the tools bound them and cut credential links while they encode the result, and
say what they cut. Times are parsed to aware UTC ``datetime`` values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, Literal

from mfconnector.mail.model import (
    Attachment,
    Body,
    FlagState,
    Folder,
    FolderRole,
    Importance,
    Message,
    MessageSummary,
    Person,
)
from mfconnector.mail.refs import AccountTag, Reference

__all__ = [
    "ATTACHMENT_SELECT",
    "COMPACT_LIST_FIELDS",
    "COMPACT_READ_FIELDS",
    "FOLDER_SELECT",
    "FULL_LIST_FIELDS",
    "FULL_READ_FIELDS",
    "ROLE_FOLDERS",
    "attachment_of",
    "folder_of",
    "graph_time",
    "message_of",
    "summary_of",
]

COMPACT_LIST_FIELDS = (
    "id",
    "subject",
    "from",
    "receivedDateTime",
    "isRead",
    "importance",
    "hasAttachments",
    "flag",
    "categories",
)
"""What Graph is asked for in a compact list: nothing that compact would drop anyway."""
FULL_LIST_FIELDS = (
    *COMPACT_LIST_FIELDS,
    "toRecipients",
    "conversationId",
    "parentFolderId",
    "bodyPreview",
    "changeKey",
)
COMPACT_READ_FIELDS = (*COMPACT_LIST_FIELDS, "toRecipients", "ccRecipients", "isDraft")
FULL_READ_FIELDS = (
    *FULL_LIST_FIELDS,
    "sender",
    "ccRecipients",
    "bccRecipients",
    "replyTo",
    "sentDateTime",
    "isDraft",
    "internetMessageId",
    "webLink",
)
FOLDER_SELECT = (
    "id,displayName,parentFolderId,childFolderCount,unreadItemCount,totalItemCount,isHidden"
)
ATTACHMENT_SELECT = "id,name,contentType,size,isInline,lastModifiedDateTime"

ROLE_FOLDERS: dict[str, str] = {
    "inbox": "inbox",
    "sent": "sentitems",
    "drafts": "drafts",
    "trash": "deleteditems",
    "junk": "junkemail",
    "archive": "archive",
    "outbox": "outbox",
}
"""Neutral folder roles and the Graph well-known names they mean."""
FOLDER_ROLES: dict[str, FolderRole] = {graph: role for role, graph in ROLE_FOLDERS.items()}  # type: ignore[misc]
_ATTACHMENT_KINDS: dict[str, Literal["file", "message", "reference"]] = {
    "fileAttachment": "file",
    "itemAttachment": "message",
}
_ZERO = timedelta(0)
_NO_NATIVE: Mapping[str, Any] = MappingProxyType({})
"""The ``native`` of a message with no provider extras (shared, read-only)."""
_FLAGS: dict[str, FlagState] = {"flagged": "flagged", "complete": "done"}
_IMPORTANCE: dict[str, Importance] = {"high": "high", "low": "low"}


def graph_time(value: Any) -> datetime | None:
    """A Graph date-time (``2026-03-01T09:00:00Z``; no offset means UTC) as aware UTC."""
    if type(value) is not str:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    zone = parsed.tzinfo
    if zone is UTC:  # ``Z`` and ``+00:00`` parse as the UTC singleton: no offset to ask
        return parsed
    if zone is None:
        return parsed.replace(tzinfo=UTC)
    return parsed if parsed.utcoffset() == _ZERO else parsed.astimezone(UTC)


def _text(value: Any) -> str | None:
    return value if type(value) is str else None


def person_of(value: Any) -> Person | None:
    """Graph's ``{emailAddress: {name, address}}``."""
    email = value.get("emailAddress") if type(value) is dict else None
    if type(email) is not dict:
        return None
    name, address = email.get("name"), email.get("address")
    name = name if type(name) is str else ""
    address = address if type(address) is str else ""
    return Person(name, address) if name or address else None


def _people(value: Any) -> tuple[Person, ...]:
    if type(value) is not list or not value:
        return ()
    return tuple(p for p in map(person_of, value) if p is not None)


def _strings(value: Any) -> tuple[str, ...]:
    if type(value) is not list or not value:
        return ()
    return tuple(v for v in value if type(v) is str)


_FLAG_DATES = (
    ("startDateTime", "flag_start"),
    ("dueDateTime", "flag_due"),
    ("completedDateTime", "flag_completed"),
)


def _flag(value: Any) -> tuple[FlagState, Mapping[str, Any]]:
    """The flag's state and, for ``native``, its dates (start, due, completed)."""
    if type(value) is not dict:
        return "none", _NO_NATIVE
    state: FlagState = _FLAGS.get(value.get("flagStatus"), "none")  # type: ignore[arg-type]
    if len(value) == 1:
        return state, _NO_NATIVE
    dates: dict[str, Any] = {}
    for key, name in _FLAG_DATES:
        when = value.get(key)
        if type(when) is dict and type(when.get("dateTime")) is str:
            dates[name] = {"date_time": when["dateTime"], "time_zone": _text(when.get("timeZone"))}
    return state, dates or _NO_NATIVE


def _ref(tag: AccountTag, value: Any) -> Reference | None:
    return Reference(tag, value) if type(value) is str and value else None


def summary_of(
    item: Mapping[str, Any], tag: AccountTag, folder_names: Mapping[str, str] | None = None
) -> MessageSummary:
    """One listed message. ``folder_names``: display names of folders, when a listing
    spans folders. Built in one pass over the fields a listing asked for (the hot path:
    fifty of these per page)."""
    return MessageSummary(*_summary_values(item, tag, folder_names))


_SUMMARY_FIELDS = tuple(f.name for f in fields(MessageSummary))


def _summary_values(
    item: Mapping[str, Any], tag: AccountTag, folder_names: Mapping[str, str] | None
) -> tuple[Any, ...]:
    """``MessageSummary``'s fields, in its order: passed by position, which costs half
    of building a keyword dict and unpacking it, fifty times a page."""
    get = item.get
    flag, native = _flag(get("flag"))
    folder_id = get("parentFolderId")
    folder_name = None
    if folder_names is not None and type(folder_id) is str:
        folder_name = folder_names.get(folder_id)
    # The one-line checks are written out, not called: a call costs more than the check.
    native_id, subject, thread = get("id"), get("subject"), get("conversationId")
    preview, change_key = get("bodyPreview"), get("changeKey")
    to, cc = get("toRecipients"), get("ccRecipients")
    return (
        Reference(tag, native_id if type(native_id) is str else ""),  # ref
        subject if type(subject) is str else None,  # subject
        person_of(get("from")),  # sender
        graph_time(get("receivedDateTime")),  # received
        get("isRead") is False,  # unread
        flag,  # flag
        _IMPORTANCE.get(get("importance"), "normal"),  # type: ignore[arg-type]  # importance
        get("hasAttachments") is True,  # has_attachments
        get("isDraft") is True,  # is_draft
        _strings(get("categories")),  # categories
        _ref(tag, folder_id),  # folder
        folder_name,  # folder_name
        _people(to) if to else (),  # to
        _people(cc) if cc else (),  # cc
        thread if type(thread) is str else None,  # thread
        preview if type(preview) is str else None,  # preview
        change_key if type(change_key) is str else None,  # change_token
        native,  # native
    )


def message_of(
    item: Mapping[str, Any],
    tag: AccountTag,
    *,
    body: Body | None,
    attachments: tuple[Attachment, ...] = (),
    more_attachments: bool = False,
) -> Message:
    """One read message; ``body`` already converted to text."""
    author = person_of(item.get("from"))
    sender = person_of(item.get("sender"))
    return Message(
        **dict(zip(_SUMMARY_FIELDS, _summary_values(item, tag, None), strict=True)),
        bcc=_people(item.get("bccRecipients")),
        reply_to=_people(item.get("replyTo")),
        on_behalf=sender if sender is not None and sender != author else None,
        sent=graph_time(item.get("sentDateTime")),
        internet_message_id=_text(item.get("internetMessageId")),
        web_link=_text(item.get("webLink")),
        body=body,
        attachments=attachments,
        more_attachments=more_attachments,
    )


def attachment_of(item: Mapping[str, Any], tag: AccountTag) -> Attachment:
    kind = str(item.get("@odata.type", "")).rsplit(".", 1)[-1]
    size = item.get("size")
    return Attachment(
        ref=Reference(tag, str(item.get("id", ""))),
        name=_text(item.get("name")) or "",
        content_type=_text(item.get("contentType")),
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        kind=_ATTACHMENT_KINDS.get(kind, "reference"),
        inline=item.get("isInline") is True,
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def folder_of(item: Mapping[str, Any], tag: AccountTag, parent_path: str = "") -> Folder:
    """One mail folder; ``parent_path`` is the path of the folder it was listed under."""
    name = _text(item.get("displayName")) or ""
    well_known = _text(item.get("wellKnownName"))
    return Folder(
        ref=Reference(tag, str(item.get("id", ""))),
        name=name,
        path=f"{parent_path}/{name}" if parent_path else name,
        role=FOLDER_ROLES.get(well_known) if well_known else None,
        parent=_ref(tag, item.get("parentFolderId")),
        unread=_count(item.get("unreadItemCount")),
        total=_count(item.get("totalItemCount")),
        children=_count(item.get("childFolderCount")),
        hidden=item.get("isHidden") is True,
    )
