"""Messages, folders and attachments as the read tools show them, in neutral names.

Two views. Compact (the default) keeps what an assistant needs to act and to continue:
the reference, subject, sender, received time in the mailbox's zone, flags, categories,
the folder when a result spans folders; a listing is a table (``columns`` once, one value
list per row) and names once what it left out (``omitted``). ``detail: "full"`` shows
every neutral field (docs/TOOLS.md "The neutral mail model"), a provider's extras under
``native``. Every string is bounded (``field_chars``), every list (``list_field_items``),
and a credential link in any of them is cut out; ``Skipped`` records each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from mfconnector.limits import Limits
from mfconnector.mail.model import Attachment, Folder, Message, MessageSummary, Person
from mfconnector.shaping import Skipped, redact_text
from mfconnector.timezones import MailboxZone

__all__ = [
    "COMPACT_LIST_OMITS",
    "COMPACT_READ_OMITS",
    "FOLDER_COLUMNS",
    "GET_FULL",
    "ROW_COLUMNS",
    "Bounds",
    "compact_attachment",
    "compact_message",
    "flags_of",
    "folder_row",
    "full_attachment",
    "full_folder",
    "full_message",
    "full_summary",
    "message_row",
    "omitted_record",
    "table_columns",
]

GET_FULL = 'detail: "full"'
ROW_COLUMNS = ("id", "subject", "from", "received", "flags")
OPTIONAL_COLUMNS = ("folder", "categories")
"""Columns a compact table has only when a row of the page has a value for them (the
rarest last: a row ends after its last value, so an absent category costs nothing)."""
COMPACT_LIST_OMITS = ("to", "thread", "folder", "preview", "change_token")
"""What ``detail: "full"`` adds to a listed message (``folder`` is shown when a listing
spans folders)."""
COMPACT_READ_OMITS = (
    "thread",
    "folder",
    "preview",
    "change_token",
    "bcc",
    "reply_to",
    "on_behalf",
    "sent",
    "internet_message_id",
    "web_link",
)
FOLDER_COLUMNS = ("id", "name", "unread", "total", "subfolders")
FOLDER_SHARED = ("parent", "hidden")
_FLAG_WORDS = {"flagged": "flagged", "done": "done"}
_TWO_DIGITS = tuple(f"{n:02d}" for n in range(60))
_LINK_HINT = re.compile(r"://|%3a|access_token|tempauth", re.IGNORECASE)
"""What a string needs before ``redact_text`` can find a credential link in it (a link has
``://`` or ``%3a``, a credential parameter ``=`` or ``%3d``: strings with none of them, a
"Re: ..." subject among them, skip even this)."""


class Bounds:
    """Bounds strings and lists under ``limits`` and cuts credential links, recording each
    in ``skipped`` under the path the assistant sees."""

    __slots__ = ("max_chars", "max_items", "skipped")

    def __init__(self, limits: Limits, skipped: Skipped) -> None:
        self.max_chars = limits.field_chars
        self.max_items = limits.list_field_items
        self.skipped = skipped

    def text(self, value: str | None, path: str, field: str = "") -> str | None:
        """``value`` bounded; a record names ``path``, or ``path.field`` (joined only for a
        record: fifty rows a page would otherwise each build their cells' paths)."""
        if value is None:
            return None
        if ("://" in value or "=" in value or "%" in value) and _LINK_HINT.search(value):
            cleaned, cut = redact_text(value)
            if cut:
                self.skipped.removed.append(f"{path}.{field}" if field else path)
                value = cleaned
        if len(value) > self.max_chars:
            self.skipped.fields.append(
                {
                    "path": f"{path}.{field}" if field else path,
                    "original_chars": len(value),
                    "kept_chars": self.max_chars,
                }
            )
            return value[: self.max_chars]
        return value

    def items(self, values: Sequence[Any], path: str) -> Sequence[Any]:
        if len(values) > self.max_items:
            self.skipped.fields.append(
                {"path": path, "original_items": len(values), "kept_items": self.max_items}
            )
            return values[: self.max_items]
        return values

    def strings(self, values: Sequence[str], path: str) -> list[str]:
        kept = self.items(values, path)
        return [self.text(v, f"{path}[{i}]") or "" for i, v in enumerate(kept)]

    def shown(self, person: Person | None, path: str) -> str | None:
        return None if person is None else self.text(person.shown(), path)

    def people_shown(self, people: Sequence[Person], path: str) -> list[str]:
        kept = self.items(people, path)
        return [self.text(p.shown(), f"{path}[{i}]") or "" for i, p in enumerate(kept)]

    def person(self, person: Person | None, path: str) -> dict[str, Any] | None:
        if person is None:
            return None
        return {
            "name": self.text(person.name, f"{path}.name"),
            "address": self.text(person.address, f"{path}.address"),
        }

    def people(self, people: Sequence[Person], path: str) -> list[dict[str, Any] | None]:
        kept = self.items(people, path)
        return [self.person(p, f"{path}[{i}]") for i, p in enumerate(kept)]


def local_minutes(value: datetime | None, zone: MailboxZone) -> str | None:
    """``2026-03-01T10:00`` in the mailbox's zone (the zone is named once per result)."""
    if value is None:
        return None
    local = value.astimezone(zone.tz)
    # two-digit parts from a table: a third of ``%02d`` formatting's cost (fifty a page)
    year = local.year
    shown_year = year if year > 999 else f"{year:04d}"
    two = _TWO_DIGITS
    return f"{shown_year}-{two[local.month]}-{two[local.day]}T{two[local.hour]}:{two[local.minute]}"


def local_iso(value: datetime | None, zone: MailboxZone) -> str | None:
    """``2026-03-01T10:00:00+01:00``: the full view's instant, with its offset."""
    return None if value is None else value.astimezone(zone.tz).isoformat(timespec="seconds")


def flags_of(message: MessageSummary) -> str:
    """unread, flagged or done, attachments, draft, high or low importance: only when set."""
    flags = []
    if message.unread:
        flags.append("unread")
    if message.flag in _FLAG_WORDS:
        flags.append(_FLAG_WORDS[message.flag])
    if message.has_attachments:
        flags.append("attachments")
    if message.is_draft:
        flags.append("draft")
    if message.importance != "normal":
        flags.append(f"{message.importance}-importance")
    return " ".join(flags)


def folder_shown(message: MessageSummary) -> str | None:
    """A row's folder: its display name, else its reference."""
    if message.folder_name:
        return message.folder_name
    return str(message.folder) if message.folder is not None else None


def message_row(
    message: MessageSummary,
    zone: MailboxZone,
    bounds: Bounds,
    path: str,
    *,
    subject_chars: int,
    columns: Sequence[str],
) -> list[Any]:
    """One compact row: its values in ``columns`` order, ending after its last value (a
    missing value before a present one is null). Written straight from the summary: fifty
    of these make a page, so nothing is built twice."""
    text = bounds.text
    subject = text(message.subject, path, "subject")
    if subject is not None and len(subject) > subject_chars:
        subject = subject[:subject_chars] + "…"
    sender = message.sender
    line: list[Any] = [
        str(message.ref),
        subject,
        text(sender.shown(), path, "from") if sender is not None else None,
        local_minutes(message.received, zone),
        flags_of(message) or None,
    ]
    for column in columns[len(ROW_COLUMNS) :]:
        if column == "folder":
            line.append(text(folder_shown(message), f"{path}.folder"))
        elif message.categories:
            line.append(bounds.strings(message.categories, f"{path}.categories"))
        else:
            line.append(None)
    while line and (line[-1] is None or line[-1] == ""):
        line.pop()
    return line


def table_columns(messages: Sequence[MessageSummary], *, spans_folders: bool) -> list[str]:
    """The columns a page's table needs: the fixed ones, ``folder`` when the listing spans
    folders, ``categories`` when a message of the page has some."""
    columns = list(ROW_COLUMNS)
    if spans_folders:
        columns.append("folder")
    if any(m.categories for m in messages):
        columns.append("categories")
    return columns


def _summary_fields(
    message: MessageSummary, zone: MailboxZone, bounds: Bounds, path: str
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(message.ref),
        "subject": bounds.text(message.subject, f"{path}.subject"),
        "from": bounds.person(message.sender, f"{path}.from"),
        "to": bounds.people(message.to, f"{path}.to"),
        "received": local_iso(message.received, zone),
        "unread": message.unread,
        "flag": message.flag,
        "importance": message.importance,
        "has_attachments": message.has_attachments,
        "categories": bounds.strings(message.categories, f"{path}.categories"),
        "folder": str(message.folder) if message.folder is not None else None,
        "thread": message.thread,
        "preview": bounds.text(message.preview, f"{path}.preview"),
        "change_token": message.change_token,
    }
    return out


def _native(native: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    if native:
        out["native"] = dict(native)
    return out


def full_summary(
    message: MessageSummary, zone: MailboxZone, bounds: Bounds, path: str
) -> dict[str, Any]:
    """A listed message in every neutral field a listing has."""
    return _native(message.native, _summary_fields(message, zone, bounds, path))


def full_message(message: Message, zone: MailboxZone, bounds: Bounds, path: str) -> dict[str, Any]:
    """A read message in every neutral field (the body is the caller's: it has a window)."""
    out = _summary_fields(message, zone, bounds, path)
    out["cc"] = bounds.people(message.cc, f"{path}.cc")
    out["bcc"] = bounds.people(message.bcc, f"{path}.bcc")
    out["reply_to"] = bounds.people(message.reply_to, f"{path}.reply_to")
    if message.on_behalf is not None:
        out["on_behalf"] = bounds.person(message.on_behalf, f"{path}.on_behalf")
    out["sent"] = local_iso(message.sent, zone)
    out["is_draft"] = message.is_draft
    out["internet_message_id"] = bounds.text(
        message.internet_message_id, f"{path}.internet_message_id"
    )
    out["web_link"] = bounds.text(message.web_link, f"{path}.web_link")
    return _native(message.native, out)


def compact_message(
    message: MessageSummary, zone: MailboxZone, bounds: Bounds, path: str
) -> dict[str, Any]:
    """A read message, compact: what a reader needs, flags as words."""
    out: dict[str, Any] = {"id": str(message.ref)}
    if message.subject is not None:
        out["subject"] = bounds.text(message.subject, f"{path}.subject")
    sender = bounds.shown(message.sender, f"{path}.from")
    if sender:
        out["from"] = sender
    if message.to:
        out["to"] = bounds.people_shown(message.to, f"{path}.to")
    if message.cc:
        out["cc"] = bounds.people_shown(message.cc, f"{path}.cc")
    received = local_minutes(message.received, zone)
    if received:
        out["received"] = received
    flags = flags_of(message)
    if flags:
        out["flags"] = flags
    if message.categories:
        out["categories"] = bounds.strings(message.categories, f"{path}.categories")
    return out


def compact_attachment(attachment: Attachment, bounds: Bounds, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(attachment.ref),
        "name": bounds.text(attachment.name, f"{path}.name"),
        "kind": attachment.kind,
    }
    if attachment.content_type is not None:
        out["content_type"] = bounds.text(attachment.content_type, f"{path}.content_type")
    if attachment.size is not None:
        out["size"] = attachment.size
    if attachment.inline:
        out["inline"] = True
    return out


def full_attachment(attachment: Attachment, bounds: Bounds, path: str) -> dict[str, Any]:
    return {
        "id": str(attachment.ref),
        "name": bounds.text(attachment.name, f"{path}.name"),
        "kind": attachment.kind,
        "content_type": bounds.text(attachment.content_type, f"{path}.content_type"),
        "size": attachment.size,
        "inline": attachment.inline,
        "content_id": attachment.content_id,
    }


def folder_row(folder: Folder, bounds: Bounds, path: str) -> dict[str, Any]:
    return {
        "id": str(folder.ref),
        "name": bounds.text(folder.name, f"{path}.name"),
        "unread": folder.unread,
        "total": folder.total,
        "subfolders": folder.children,
        "parent": str(folder.parent) if folder.parent is not None else None,
        "hidden": folder.hidden,
    }


def full_folder(folder: Folder, bounds: Bounds, path: str) -> dict[str, Any]:
    out = {
        "id": str(folder.ref),
        "name": bounds.text(folder.name, f"{path}.name"),
        "path": bounds.text(folder.path, f"{path}.path"),
        "role": folder.role,
        "parent": str(folder.parent) if folder.parent is not None else None,
        "unread": folder.unread,
        "total": folder.total,
        "children": folder.children,
        "hidden": folder.hidden,
    }
    return _native(folder.native, out)


def omitted_record(
    names: Iterable[str], messages: Iterable[MessageSummary]
) -> dict[str, Any] | None:
    """What compact leaves out, named once for the whole result: ``names``, then each
    ``native`` extra a message of this result has (a flag's due date, say)."""
    fields = list(names)
    seen = set(fields)
    for message in messages:
        for key in message.native:
            name = f"native.{key}"
            if name not in seen:
                seen.add(name)
                fields.append(name)
    return {"fields": fields, "get": GET_FULL} if fields else None
