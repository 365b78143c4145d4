"""``users.messages.*``: list, get, attachments.get, modify, batchModify, trash, untrash,
delete, batchDelete, send, insert and import.

Label rules follow Google's "Manage labels" guide: SENT, DRAFT and CHAT are applied by
Gmail only (``modify`` refuses them); a message inserted with the user's own address in
From gets SENT. ``send`` joins the thread named by ``threadId`` only if the message refers
to one of its messages (In-Reply-To/References) and the subjects match ("Managing threads").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from email.utils import format_datetime
from typing import Any

from mfconnector.gmail_emulator import search
from mfconnector.gmail_emulator.calls import (
    COMPOSE,
    FULL,
    INSERT,
    METADATA,
    MODIFY,
    READONLY,
    SEND,
    Answer,
    Call,
    page,
    route,
)
from mfconnector.gmail_emulator.errors import GmailError, bad_request, not_found
from mfconnector.gmail_emulator.mime import b64url, parse, payload_json, unb64url
from mfconnector.gmail_emulator.store import Mailbox, Message

__all__ = ["ROUTES", "joined_thread", "message_json", "outgoing_raw", "send_raw"]

READ = (FULL, MODIFY, READONLY, METADATA)
CHANGE = (FULL, MODIFY)
MAX_BATCH_IDS = 1000
"""batchModify/batchDelete: "There is a limit of 1000 ids per request"."""
AUTOMATIC_LABELS = frozenset({"SENT", "DRAFT", "CHAT"})
FORMATS = ("minimal", "full", "raw", "metadata")
_ID = re.compile(r"^[0-9a-fA-F]{1,24}$")


def mailbox(call: Call) -> Mailbox:
    return call.mailbox


def find(call: Call, message_id: str) -> Message:
    if not _ID.match(message_id):
        raise bad_request("Invalid id value")
    found = mailbox(call).messages.get(message_id)
    if found is None:
        raise not_found()
    return found


def wanted_format(call: Call, default: str = "full") -> str:
    value = (call.arg("format") or default).lower()
    if value not in FORMATS:
        raise bad_request(
            f"Invalid value at 'format' (type.googleapis.com/Format), \"{value[:40]}\""
        )
    if call.metadata_only and value in ("full", "raw"):
        raise GmailError(403, "forbidden", f"Metadata scope doesn't allow format {value.upper()}")
    return value


def message_json(message: Message, fmt: str, headers: Iterable[str] = ()) -> dict[str, Any]:
    """A Message resource in one of Gmail's four formats."""
    out: dict[str, Any] = {
        "id": message.id,
        "threadId": message.thread_id,
        "labelIds": list(message.label_ids),
        "snippet": message.parsed.snippet,
    }
    wanted = frozenset(h.lower() for h in headers) or None
    if fmt == "full":
        out["payload"] = payload_json(message.parsed.root, full=True)
    elif fmt == "metadata":
        out["payload"] = payload_json(message.parsed.root, full=False, wanted=wanted)
    out["sizeEstimate"] = len(message.raw)
    if fmt == "raw":
        out["raw"] = b64url(message.raw)
    out["historyId"] = str(message.history_id)
    out["internalDate"] = str(message.internal_ms)
    return out


def visible(call: Call, query: str, include_spam_trash: bool) -> list[Message]:
    """Messages matching ``q`` and ``labelIds``, newest first."""
    box = mailbox(call)
    node = search.parse_query(query)
    hidden = set() if include_spam_trash or search.wants_spam_or_trash(node) else {"SPAM", "TRASH"}
    required = call.args("labelIds")
    found = [
        m
        for m in box.messages.values()
        if not hidden & set(m.label_ids)
        and all(lb in m.label_ids for lb in required)
        and search.matches(node, m, box)
    ]
    return sorted(found, key=lambda m: (m.internal_ms, m.id), reverse=True)


def query_of(call: Call) -> str:
    query = call.arg("q") or ""
    if query and call.metadata_only:
        raise GmailError(403, "forbidden", "Metadata scope does not support 'q' parameter")
    return query


@route("GET", r"^/messages$", READ)
def list_messages(call: Call, _: re.Match[str]) -> Answer:
    found = visible(call, query_of(call), call.flag("includeSpamTrash"))
    chunk, token = page(call, found)
    body: dict[str, Any] = {}
    if chunk:
        body["messages"] = [m.ref() for m in chunk]
    if token:
        body["nextPageToken"] = token
    body["resultSizeEstimate"] = len(found)
    return Answer(200, body)


@route("GET", r"^/messages/([^/]+)$", READ)
def get_message(call: Call, match: re.Match[str]) -> Answer:
    message = find(call, match.group(1))
    fmt = wanted_format(call)
    return Answer(200, message_json(message, fmt, call.args("metadataHeaders")))


@route("GET", r"^/messages/([^/]+)/attachments/([^/]+)$", (FULL, MODIFY, READONLY))
def get_attachment(call: Call, match: re.Match[str]) -> Answer:
    message = find(call, match.group(1))
    data = message.parsed.attachments.get(match.group(2))
    if data is None:
        raise bad_request("Invalid attachment token")
    return Answer(200, {"size": len(data), "data": b64url(data)})


def check_labels(call: Call, ids: Iterable[str]) -> list[str]:
    out = []
    for label_id in ids:
        if not isinstance(label_id, str) or label_id not in mailbox(call).labels:
            raise bad_request(f"Invalid label: {str(label_id)[:80]}")
        if label_id in AUTOMATIC_LABELS:
            raise bad_request(f"Invalid label: {label_id}")
        out.append(label_id)
    return out


def label_changes(call: Call, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    add, remove = body.get("addLabelIds") or [], body.get("removeLabelIds") or []
    if not isinstance(add, list) or not isinstance(remove, list):
        raise bad_request("addLabelIds and removeLabelIds must be lists of label ids.")
    return check_labels(call, add), check_labels(call, remove)


def modified(message: Message) -> Answer:
    return Answer(200, message.ref_with_labels())


@route("POST", r"^/messages/([^/]+)/modify$", CHANGE)
def modify(call: Call, match: re.Match[str]) -> Answer:
    message = find(call, match.group(1))
    add, remove = label_changes(call, call.json_body())
    mailbox(call).change_labels(message, add, remove)
    return modified(message)


def batch_ids(call: Call, body: dict[str, Any]) -> list[Message]:
    ids = body.get("ids")
    if not isinstance(ids, list) or not ids:
        raise bad_request("ids must be a non-empty list of message ids.")
    if len(ids) > MAX_BATCH_IDS:
        raise bad_request(f"Too many ids: at most {MAX_BATCH_IDS} per request.")
    return [find(call, str(i)) for i in ids]


@route("POST", r"^/messages/batchModify$", CHANGE)
def batch_modify(call: Call, _: re.Match[str]) -> Answer:
    body = call.json_body()
    add, remove = label_changes(call, body)
    for message in batch_ids(call, body):
        mailbox(call).change_labels(message, add, remove)
    return Answer(204)


@route("POST", r"^/messages/batchDelete$", (FULL,))
def batch_delete(call: Call, _: re.Match[str]) -> Answer:
    for message in batch_ids(call, call.json_body()):
        mailbox(call).delete_message(message)
    return Answer(204)


@route("POST", r"^/messages/([^/]+)/trash$", CHANGE)
def trash(call: Call, match: re.Match[str]) -> Answer:
    message = find(call, match.group(1))
    mailbox(call).change_labels(message, ("TRASH",), ())
    return modified(message)


@route("POST", r"^/messages/([^/]+)/untrash$", CHANGE)
def untrash(call: Call, match: re.Match[str]) -> Answer:
    message = find(call, match.group(1))
    mailbox(call).change_labels(message, (), ("TRASH",))
    return modified(message)


@route("DELETE", r"^/messages/([^/]+)$", (FULL,))
def delete(call: Call, match: re.Match[str]) -> Answer:
    mailbox(call).delete_message(find(call, match.group(1)))
    return Answer(204)


# --- mail coming in: send, insert, import ------------------------------------------------


def raw_of(body: dict[str, Any]) -> bytes:
    raw = body.get("raw")
    if not isinstance(raw, str) or not raw:
        raise bad_request(
            "'raw' RFC822 payload message string or uploading message via /upload/* URL required"
        )
    try:
        return unb64url(raw)
    except ValueError:
        raise bad_request("Invalid value for ByteString: raw is not base64url.") from None


def _has_header(raw: bytes, name: str) -> bool:
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    return re.search(rb"(?im)^" + re.escape(name.encode()) + rb"\s*:", head) is not None


def outgoing_raw(box: Mailbox, raw: bytes) -> bytes:
    """The bytes Gmail files for a sent or drafted message: the client's own, with From,
    Date and Message-ID added in front when missing (RFC 5322 section 3.6 requires them)."""
    added = b""
    if not _has_header(raw, "From"):
        added += f"From: {box.address}\r\n".encode()
    if not _has_header(raw, "Date"):
        added += f"Date: {format_datetime(box.now)}\r\n".encode()
    if not _has_header(raw, "Message-ID"):
        digest = hashlib.sha256(raw).hexdigest()[:24]
        added += f"Message-ID: <{digest}@mail.gmail.example>\r\n".encode()
    return added + raw


def requested_thread(call: Call, body: dict[str, Any]) -> str | None:
    thread_id = body.get("threadId")
    if thread_id is None:
        return None
    if not isinstance(thread_id, str) or not mailbox(call).thread(thread_id):
        raise not_found()
    return thread_id


def joined_thread(call: Call, raw: bytes, requested: str | None) -> str | None:
    """The thread an outgoing message joins: only the one asked for, and only by the rules."""
    return mailbox(call).thread_for(parse(raw, "probe"), requested) if requested else None


def recipients(message: Message) -> list[str]:
    found = []
    for header in ("To", "Cc", "Bcc"):
        found += [address.lower() for _, address in message.parsed.addresses(header) if address]
    return found


def send_raw(call: Call, raw: bytes, thread_id: str | None) -> Message:
    """Files a sent message in SENT (and INBOX too when it is addressed to the user), in
    ``thread_id`` or a thread of its own."""
    probe = parse(raw, "probe")
    if not any(a for h in ("To", "Cc", "Bcc") for _, a in probe.addresses(h)):
        raise bad_request("Recipient address required")
    message = mailbox(call).add_message(raw, ["SENT"], thread_id=thread_id, auto_thread=False)
    if mailbox(call).address.lower() in recipients(message):
        mailbox(call).change_labels(message, ("INBOX",), ())
    return message


@route("POST", r"^/messages/send$", (FULL, MODIFY, COMPOSE, SEND))
def send(call: Call, _: re.Match[str]) -> Answer:
    body = call.json_body()
    raw = outgoing_raw(mailbox(call), raw_of(body))
    message = send_raw(call, raw, joined_thread(call, raw, requested_thread(call, body)))
    return Answer(200, message.ref_with_labels())


def _insert(call: Call, default_source: str) -> Answer:
    body = call.json_body()
    raw = raw_of(body)
    labels = body.get("labelIds") or []
    if not isinstance(labels, list):
        raise bad_request("labelIds must be a list of label ids.")
    for label_id in labels:
        if not isinstance(label_id, str) or label_id not in mailbox(call).labels:
            raise bad_request(f"Invalid label: {str(label_id)[:80]}")
    source = call.arg("internalDateSource", default_source)
    if source not in ("receivedTime", "dateHeader"):
        raise bad_request(f"Invalid value for 'internalDateSource': '{str(source)[:40]}'")
    probe = parse(raw, "probe")
    own = any(a.lower() == mailbox(call).address.lower() for _, a in probe.addresses("From"))
    labels = [*labels, "SENT"] if own else labels
    dated = probe.date() if source == "dateHeader" else None
    internal = dated if dated is not None and dated.year >= 1970 else None  # else: received now
    requested = requested_thread(call, body)
    box = mailbox(call)
    thread_id = box.thread_for(probe, requested) if requested else None
    message = box.add_message(raw, labels, internal=internal, thread_id=thread_id)
    return Answer(200, message.ref_with_labels())


@route("POST", r"^/messages$", (FULL, MODIFY, INSERT))
def insert(call: Call, _: re.Match[str]) -> Answer:
    return _insert(call, "receivedTime")


@route("POST", r"^/messages/import$", (FULL, MODIFY, INSERT))
def import_message(call: Call, _: re.Match[str]) -> Answer:
    return _insert(call, "dateHeader")


ROUTES = [
    list_messages,
    insert,
    import_message,
    send,
    batch_modify,
    batch_delete,
    get_attachment,
    modify,
    trash,
    untrash,
    get_message,
    delete,
]
