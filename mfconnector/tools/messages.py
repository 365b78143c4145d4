"""Messages in two views: compact (the default) and full (``detail: "full"``).

Full is every field the tools ask Graph for, under Graph's own names, exactly as 0.1
returned them. Compact keeps what an assistant needs to act and to continue — the exact
id, subject, sender, received time in the mailbox's zone, flags, categories, the folder
when a result spans folders — and names once per result what it left out, so nothing is
dropped silently and the rest is one call away.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mfconnector.timezones import MailboxZone

__all__ = [
    "COMPACT_LIST_FIELDS",
    "COMPACT_READ_FIELDS",
    "FULL_LIST_FIELDS",
    "FULL_READ_FIELDS",
    "compact_message",
    "flags_of",
    "omitted_record",
    "person",
    "table",
]

FULL_LIST_FIELDS = (
    "id",
    "subject",
    "from",
    "toRecipients",
    "receivedDateTime",
    "isRead",
    "importance",
    "hasAttachments",
    "flag",
    "categories",
    "conversationId",
    "parentFolderId",
    "bodyPreview",
    "changeKey",
)
"""``changeKey`` is the concurrency token ``mail_modify flags unchanged_since`` checks, so
the guard can be used straight from a fresh full read or list."""
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
COMPACT_READ_FIELDS = (*COMPACT_LIST_FIELDS, "toRecipients", "ccRecipients", "isDraft")
FLAG_STATES = {"flagged": "flagged", "complete": "done"}
GET_FULL = 'detail: "full"'
ROW_COLUMNS = ("id", "subject", "from", "received", "flags")
OPTIONAL_COLUMNS = ("folder", "categories")
"""Columns a compact table has only when a row of the page has a value for them (the
rarest last: a row ends after its last value, so an absent category costs nothing)."""


def person(value: Any) -> str | None:
    """``Name <address>``, or whichever of the two is there."""
    if not isinstance(value, Mapping):
        return None
    email = value.get("emailAddress")
    if not isinstance(email, Mapping):
        return None
    name = email.get("name") if isinstance(email.get("name"), str) else ""
    address = email.get("address") if isinstance(email.get("address"), str) else ""
    if name and address and name.lower() != address.lower():
        return f"{name} <{address}>"
    return address or name or None


def flags_of(message: Mapping[str, Any]) -> list[str]:
    """unread, flagged or done, attachments, draft, high or low importance: only when set."""
    flags = []
    if message.get("isRead") is False:
        flags.append("unread")
    flag = message.get("flag")
    if isinstance(flag, Mapping) and flag.get("flagStatus") in FLAG_STATES:
        flags.append(FLAG_STATES[flag["flagStatus"]])
    if message.get("hasAttachments") is True:
        flags.append("attachments")
    if message.get("isDraft") is True:
        flags.append("draft")
    if message.get("importance") in ("high", "low"):
        flags.append(f"{message['importance']}-importance")
    return flags


def compact_message(
    message: Mapping[str, Any], zone: MailboxZone, *, folder: str | None = None
) -> dict[str, Any]:
    """The compact view of an already shaped message (secrets stripped, strings bounded)."""
    out: dict[str, Any] = {"id": message.get("id")}
    if "subject" in message:
        out["subject"] = message["subject"]
    sender = person(message.get("from"))
    if sender:
        out["from"] = sender
    for key, name in (("toRecipients", "to"), ("ccRecipients", "cc")):
        people = message.get(key)
        if isinstance(people, list) and people:
            out[name] = [p for p in map(person, people) if p]
    received = zone.local(message.get("receivedDateTime"))
    if received:
        out["received"] = received
    flags = flags_of(message)
    if flags:
        out["flags"] = " ".join(flags)
    categories = message.get("categories")
    if isinstance(categories, list) and categories:
        out["categories"] = categories
    if folder is not None:
        out["folder"] = folder
    return out


def table(rows: list[dict[str, Any]], subject_chars: int) -> dict[str, Any]:
    """Compact rows as one header and value lists: the keys are paid once per result.

    ``subject`` is cut to ``subject_chars`` (``omitted`` says so). A row stops after
    its last value: trailing columns it has no value for (no flags, no categories) are
    left off; a missing value before a present one is null.
    """
    columns = list(ROW_COLUMNS)
    columns += [c for c in OPTIONAL_COLUMNS if any(c in row for row in rows)]
    values = []
    for row in rows:
        line = [row.get(column) for column in columns]
        subject = line[1]
        if isinstance(subject, str) and len(subject) > subject_chars:
            line[1] = subject[:subject_chars] + "…"
        while line and line[-1] in (None, ""):
            line.pop()
        values.append(line)
    return {"columns": columns, "messages": values}


def long_subjects(rows: list[dict[str, Any]], subject_chars: int) -> int:
    return sum(
        1
        for row in rows
        if isinstance(row.get("subject"), str) and len(row["subject"]) > subject_chars
    )


def _flag_details(message: Mapping[str, Any]) -> Iterable[str]:
    flag = message.get("flag")
    if isinstance(flag, Mapping):
        yield from (f"flag.{key}" for key in flag if key != "flagStatus")


def omitted_record(
    full_fields: Iterable[str],
    compact_fields: Iterable[str],
    messages: Iterable[Mapping[str, Any]],
    *,
    folder_shown: bool = False,
) -> dict[str, Any] | None:
    """What compact leaves out of ``full_fields``, named once for the whole result.

    ``compact_fields`` are the Graph fields the compact view carries (parentFolderId counts
    as carried when rows show their folder). ``messages`` are the shaped items before
    compaction, so details that compact folds away (a flag's due date, say) are named
    only when a message of this result has them.
    """
    covered = set(compact_fields)
    if folder_shown:
        covered.add("parentFolderId")
    names = [f for f in full_fields if f not in covered]
    seen = set(names)
    for message in messages:
        for detail in _flag_details(message):
            if detail not in seen:
                seen.add(detail)
                names.append(detail)
    if not names:
        return None
    return {"fields": names, "get": GET_FULL}
