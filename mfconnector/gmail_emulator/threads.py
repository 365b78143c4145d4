"""``users.threads.*`` (list, get, modify, trash, untrash, delete) and ``users.drafts.*``
(create, get, list, update, send, delete).

A thread is every message with its ``threadId``; ``threads.get`` lists them oldest first.
A draft is a message carrying DRAFT; ``drafts.update`` replaces that message (a new
message id, the same draft id) and ``drafts.send`` files it in SENT, in the draft's thread,
and removes the draft.
"""

from __future__ import annotations

import re
from typing import Any

from mfconnector.gmail_emulator import messages
from mfconnector.gmail_emulator.calls import (
    COMPOSE,
    FULL,
    METADATA,
    MODIFY,
    READONLY,
    Answer,
    Call,
    page,
    route,
)
from mfconnector.gmail_emulator.errors import bad_request, not_found
from mfconnector.gmail_emulator.store import Draft, Message

__all__ = ["ROUTES"]

READ = (FULL, MODIFY, READONLY, METADATA)
CHANGE = (FULL, MODIFY)
DRAFT_READ = (FULL, MODIFY, COMPOSE, READONLY)
DRAFT_WRITE = (FULL, MODIFY, COMPOSE)
THREAD_FORMATS = ("full", "metadata", "minimal")
_DRAFT_ID = re.compile(r"^r-?\d{1,30}$")


def thread_messages(call: Call, thread_id: str) -> list[Message]:
    if not re.fullmatch(r"[0-9a-fA-F]{1,24}", thread_id):
        raise bad_request("Invalid id value")
    found = call.mailbox.thread(thread_id)
    if not found:
        raise not_found()
    return found


def _history(found: list[Message]) -> str:
    return str(max(m.history_id for m in found))


@route("GET", r"^/threads$", READ)
def list_threads(call: Call, _: re.Match[str]) -> Answer:
    matching = messages.visible(call, messages.query_of(call), call.flag("includeSpamTrash"))
    newest: dict[str, Message] = {}
    for message in matching:  # newest first, so the first seen is the thread's newest match
        newest.setdefault(message.thread_id, message)
    chunk, token = page(call, list(newest.values()))
    box = call.mailbox
    body: dict[str, Any] = {}
    if chunk:
        body["threads"] = [
            {
                "id": m.thread_id,
                "snippet": box.thread(m.thread_id)[-1].parsed.snippet,
                "historyId": _history(box.thread(m.thread_id)),
            }
            for m in chunk
        ]
    if token:
        body["nextPageToken"] = token
    body["resultSizeEstimate"] = len(newest)
    return Answer(200, body)


@route("GET", r"^/threads/([^/]+)$", READ)
def get_thread(call: Call, match: re.Match[str]) -> Answer:
    found = thread_messages(call, match.group(1))
    fmt = (call.arg("format") or "full").lower()
    if fmt not in THREAD_FORMATS:
        raise bad_request(f"Invalid value at 'format' (type.googleapis.com/Format), \"{fmt[:40]}\"")
    fmt = messages.wanted_format(call, fmt)
    headers = call.args("metadataHeaders")
    return Answer(
        200,
        {
            "id": match.group(1),
            "historyId": _history(found),
            "messages": [messages.message_json(m, fmt, headers) for m in found],
        },
    )


def _thread_answer(thread_id: str, found: list[Message]) -> Answer:
    return Answer(
        200,
        {
            "id": thread_id,
            "historyId": _history(found),
            "messages": [m.ref_with_labels() for m in found],
        },
    )


@route("POST", r"^/threads/([^/]+)/modify$", CHANGE)
def modify_thread(call: Call, match: re.Match[str]) -> Answer:
    found = thread_messages(call, match.group(1))
    add, remove = messages.label_changes(call, call.json_body())
    for message in found:
        call.mailbox.change_labels(message, add, remove)
    return _thread_answer(match.group(1), found)


@route("POST", r"^/threads/([^/]+)/trash$", CHANGE)
def trash_thread(call: Call, match: re.Match[str]) -> Answer:
    found = thread_messages(call, match.group(1))
    for message in found:
        call.mailbox.change_labels(message, ("TRASH",), ())
    return _thread_answer(match.group(1), found)


@route("POST", r"^/threads/([^/]+)/untrash$", CHANGE)
def untrash_thread(call: Call, match: re.Match[str]) -> Answer:
    found = thread_messages(call, match.group(1))
    for message in found:
        call.mailbox.change_labels(message, (), ("TRASH",))
    return _thread_answer(match.group(1), found)


@route("DELETE", r"^/threads/([^/]+)$", (FULL,))
def delete_thread(call: Call, match: re.Match[str]) -> Answer:
    for message in thread_messages(call, match.group(1)):
        call.mailbox.delete_message(message)
    return Answer(204)


# --- drafts ------------------------------------------------------------------------------


def find_draft(call: Call, draft_id: str) -> tuple[Draft, Message]:
    if not _DRAFT_ID.match(draft_id):
        raise bad_request("Invalid draft id value")
    box = call.mailbox
    draft = box.drafts.get(draft_id)
    if draft is None or draft.message_id not in box.messages:
        raise not_found()
    return draft, box.messages[draft.message_id]


def _draft_message(call: Call, body: dict[str, Any]) -> Message:
    """Files the draft's message (DRAFT label; joins a thread by Gmail's rules)."""
    inner = body.get("message")
    if not isinstance(inner, dict):
        raise bad_request("Missing draft message")
    raw = messages.outgoing_raw(call.mailbox, messages.raw_of(inner))
    requested = messages.requested_thread(call, inner)
    thread_id = messages.joined_thread(call, raw, requested)
    return call.mailbox.add_message(raw, ["DRAFT"], thread_id=thread_id, auto_thread=False)


def _draft_json(draft: Draft, message: Message) -> dict[str, Any]:
    return {"id": draft.id, "message": message.ref_with_labels()}


@route("POST", r"^/drafts$", DRAFT_WRITE)
def create_draft(call: Call, _: re.Match[str]) -> Answer:
    message = _draft_message(call, call.json_body())
    box = call.mailbox
    draft = Draft(box.new_draft_id(), message.id)
    box.drafts[draft.id] = draft
    return Answer(200, _draft_json(draft, message))


@route("GET", r"^/drafts$", DRAFT_READ)
def list_drafts(call: Call, _: re.Match[str]) -> Answer:
    box = call.mailbox
    matching = messages.visible(call, messages.query_of(call), call.flag("includeSpamTrash"))
    found = [(box.draft_of(m.id), m) for m in matching]
    pairs = [(d, m) for d, m in found if d is not None]
    chunk, token = page(call, pairs)
    body: dict[str, Any] = {}
    if chunk:
        body["drafts"] = [{"id": d.id, "message": m.ref()} for d, m in chunk]
    if token:
        body["nextPageToken"] = token
    body["resultSizeEstimate"] = len(pairs)
    return Answer(200, body)


@route("GET", r"^/drafts/([^/]+)$", DRAFT_READ)
def get_draft(call: Call, match: re.Match[str]) -> Answer:
    draft, message = find_draft(call, match.group(1))
    fmt = messages.wanted_format(call)
    return Answer(200, {"id": draft.id, "message": messages.message_json(message, fmt)})


def _replace(call: Call, draft: Draft, old: Message, body: dict[str, Any]) -> Message:
    message = _draft_message(call, body)
    call.mailbox.delete_message(old)
    draft.message_id = message.id
    call.mailbox.drafts[draft.id] = draft
    return message


@route("PUT", r"^/drafts/([^/]+)$", DRAFT_WRITE)
def update_draft(call: Call, match: re.Match[str]) -> Answer:
    draft, old = find_draft(call, match.group(1))
    message = _replace(call, draft, old, call.json_body())
    return Answer(200, _draft_json(draft, message))


@route("POST", r"^/drafts/send$", DRAFT_WRITE)
def send_draft(call: Call, _: re.Match[str]) -> Answer:
    body = call.json_body()
    draft_id = body.get("id")
    if not isinstance(draft_id, str):
        raise bad_request("Missing draft id")
    draft, message = find_draft(call, draft_id)
    if isinstance(body.get("message"), dict):
        message = _replace(call, draft, message, body)
    sent = messages.send_raw(call, message.raw, message.thread_id)  # the draft's thread
    call.mailbox.delete_message(message)
    return Answer(200, sent.ref_with_labels())


@route("DELETE", r"^/drafts/([^/]+)$", DRAFT_WRITE)
def delete_draft(call: Call, match: re.Match[str]) -> Answer:
    _, message = find_draft(call, match.group(1))
    call.mailbox.delete_message(message)
    return Answer(204)


ROUTES = [
    list_threads,
    modify_thread,
    trash_thread,
    untrash_thread,
    get_thread,
    delete_thread,
    create_draft,
    list_drafts,
    send_draft,
    get_draft,
    update_draft,
    delete_draft,
]
