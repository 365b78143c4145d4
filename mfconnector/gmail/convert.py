"""A Gmail Message resource as the neutral ``MessageSummary`` / ``Message``, bounded.

Fields are picked once, here: headers by name (Gmail decodes RFC 2047 words already),
flags from labels (UNREAD, STARRED; DRAFT is ``is_draft``), user labels as categories,
``internalDate`` as the received time, the snippet as the preview. Every string is cut
to ``field_chars`` and every list to ``list_field_items``. Gmail has no per-message change
key, so ``change_token`` stays None.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

from mfconnector.gmail.labels import LabelTree
from mfconnector.limits import Limits
from mfconnector.mail.model import Body, Message, MessageSummary, Person
from mfconnector.mail.refs import AccountTag, Reference
from mfconnector.mime import read_message
from mfconnector.mime.attached import attached_message as mime_attached_message
from mfconnector.shaping import redact_text
from mfconnector.textconv import convert_html

__all__ = ["METADATA_HEADERS", "header_map", "summary_of"]

METADATA_HEADERS = ("From", "To", "Cc", "Subject", "Date", "Message-ID")
"""What a listing asks of each message (``format=metadata&metadataHeaders=…``)."""


def header_map(payload: Any, limits: Limits) -> dict[str, str]:
    """The top-level headers, lower-case names, first of each, each cut to the header cap."""
    found: dict[str, str] = {}
    raw = payload.get("headers") if isinstance(payload, dict) else None
    for entry in (raw if isinstance(raw, list) else [])[: limits.mime_header_lines]:
        if isinstance(entry, dict):
            name, value = entry.get("name"), entry.get("value")
            if isinstance(name, str) and isinstance(value, str):
                found.setdefault(name.lower(), value[: limits.mime_header_bytes])
    return found


_NAMED = re.compile(
    r'\s*(?:"([^"\\]*)"|([^"<>,;:()\\@]*?))\s*<([^<>\s,;"()\\]+@[^<>\s,;"()\\]+)>\s*'
)
_BARE = re.compile(r'\s*([^<>\s,;"()\\]+@[^<>\s,;"()\\]+)\s*')


def _addresses(value: str) -> list[tuple[str, str]]:
    """``getaddresses`` with a fast path for the plain forms nearly every header uses
    (``Name <a@b>``, ``"Name" <a@b>``, ``a@b``, comma-separated): the stdlib parser costs
    about 0.1 ms an address, a regular expression a few microseconds. Anything else
    (comments, groups, quoted commas, encoded words left over) goes to the stdlib."""
    found: list[tuple[str, str]] = []
    for piece in value.split(","):
        named = _NAMED.fullmatch(piece)
        if named is not None:
            found.append(((named.group(1) or named.group(2) or "").strip(), named.group(3)))
            continue
        bare = _BARE.fullmatch(piece)
        if bare is None:
            return getaddresses([value])
        found.append(("", bare.group(1)))
    return found


def people(value: str | None, limits: Limits) -> list[Person]:
    if not value:
        return []
    out = []
    for name, address in _addresses(value)[: limits.list_field_items]:
        if name or address:
            out.append(Person(name[: limits.field_chars], address[: limits.field_chars]))
    return out


def _instant_ms(value: Any) -> datetime | None:
    if isinstance(value, str) and value.isdigit() and len(value) <= 15:
        return datetime.fromtimestamp(int(value) / 1000, UTC)
    return None


def date_header(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return moment.astimezone(UTC) if moment.tzinfo is not None else None


def _clip(value: str | None, limits: Limits) -> str | None:
    return value[: limits.field_chars] if value is not None else None


def _label_ids(item: Mapping[str, Any]) -> list[str]:
    raw = item.get("labelIds")
    return [label for label in raw if isinstance(label, str)] if isinstance(raw, list) else []


def summary_fields(
    item: Mapping[str, Any],
    tag: AccountTag,
    labels: LabelTree,
    limits: Limits,
    folder: Reference | None,
) -> dict[str, Any]:
    """The ``MessageSummary`` fields of one message resource (metadata or full)."""
    payload = item.get("payload")
    headers = header_map(payload, limits)
    label_ids = _label_ids(item)
    senders = people(headers.get("from"), limits)
    user_labels = [labels.name_of(lb) or lb for lb in label_ids if labels.is_user_label(lb)]
    mime_type = payload.get("mimeType") if isinstance(payload, dict) else None
    snippet = item.get("snippet")
    thread = item.get("threadId")
    folder_name = None
    if folder is not None and folder.native in labels:
        folder_name = labels.folder(folder.native).path
    return {
        "ref": Reference(tag, str(item.get("id"))),
        "subject": _clip(headers.get("subject"), limits),
        "sender": senders[0] if senders else None,
        "received": _instant_ms(item.get("internalDate")) or date_header(headers.get("date")),
        "unread": "UNREAD" in label_ids,
        "flag": "flagged" if "STARRED" in label_ids else "none",
        "has_attachments": mime_type == "multipart/mixed",
        "is_draft": "DRAFT" in label_ids,
        "categories": tuple(name[: limits.field_chars] for name in user_labels)[
            : limits.list_field_items
        ],
        "folder": folder,
        "folder_name": folder_name,
        "to": tuple(people(headers.get("to"), limits)),
        "cc": tuple(people(headers.get("cc"), limits)),
        "thread": thread if isinstance(thread, str) else None,
        "preview": _clip(html.unescape(snippet), limits) if isinstance(snippet, str) else None,
        "change_token": None,
        "native": {
            "label_ids": label_ids[: limits.list_field_items],
            "history_id": str(item.get("historyId", ""))[:40] or None,
        },
    }


def summary_of(
    item: Mapping[str, Any],
    tag: AccountTag,
    labels: LabelTree,
    limits: Limits,
    folder: Reference | None = None,
) -> MessageSummary:
    return MessageSummary(**summary_fields(item, tag, labels, limits, folder))


def message_of(
    item: Mapping[str, Any],
    tag: AccountTag,
    labels: LabelTree,
    limits: Limits,
    extra: Mapping[str, Any],
) -> Message:
    """A read: the summary's fields, the other headers, and ``extra`` (body, attachments)."""
    fields = summary_fields(item, tag, labels, limits, None)
    headers = header_map(item.get("payload"), limits)
    on_behalf = people(headers.get("sender"), limits)
    message_id = headers.get("message-id")
    fields.update(
        bcc=tuple(people(headers.get("bcc"), limits)),
        reply_to=tuple(people(headers.get("reply-to"), limits)),
        on_behalf=on_behalf[0] if on_behalf else None,
        sent=date_header(headers.get("date")),
        internet_message_id=_clip(message_id.strip(), limits) if message_id else None,
        web_link=None,
    )
    fields.update(extra)
    return Message(**fields)


def ids_of(answer: Any, key: str) -> Sequence[Mapping[str, Any]]:
    """``messages``/``threads`` entries of a list answer (id strings only)."""
    raw = answer.get(key) if isinstance(answer, dict) else None
    return [
        entry
        for entry in (raw if isinstance(raw, list) else [])
        if isinstance(entry, dict) and isinstance(entry.get("id"), str)
    ]


def attached_message(raw: bytes, tag: AccountTag, limits: Limits) -> Message:
    """An attached email (message/rfc822) read with the bounded MIME reader: its headers
    and text, never its attachments' bytes. Its reference is not a Gmail message's."""
    parsed = read_message(raw, limits)
    text = parsed.text if parsed.text is not None else ""
    if not text and parsed.html:
        text = convert_html(parsed.html, max_tags=limits.html_tags).text
    cleaned, redactions = redact_text(text)
    body = Body(cleaned, redactions=redactions, notes=parsed.notes)
    return mime_attached_message(parsed, Reference(tag, "attached"), body, limits)
