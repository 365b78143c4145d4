"""``users.labels.*``, ``users.history.list`` and ``users.getProfile``.

``labels.list`` gives each label without counts, as Gmail answers it; ``labels.get`` adds
the Label resource's messagesTotal, messagesUnread, threadsTotal and threadsUnread, so a
client that shows counts asks per label. System labels cannot be
created, renamed or deleted; user label names nest with ``/`` and are unique regardless of
case. ``history.list`` answers 404 when ``startHistoryId`` is older than the records kept.
"""

from __future__ import annotations

import re
from typing import Any

from mfconnector.gmail_emulator.calls import (
    COMPOSE,
    FULL,
    LABELS,
    METADATA,
    MODIFY,
    READONLY,
    Answer,
    Call,
    page,
    route,
)
from mfconnector.gmail_emulator.errors import GmailError, bad_request, not_found
from mfconnector.gmail_emulator.store import SYSTEM_LABELS, Label

__all__ = ["ROUTES"]

LABEL_READ = (FULL, MODIFY, READONLY, LABELS, METADATA)
LABEL_WRITE = (FULL, MODIFY, LABELS)
MAX_LABEL_NAME_CHARS = 225
"""The emulator's bound on a label name (Google documents none; long names are refused)."""
_VISIBILITY = {
    "messageListVisibility": ("show", "hide"),
    "labelListVisibility": ("labelShow", "labelShowIfUnread", "labelHide"),
}
_RESERVED = frozenset(name.casefold() for name in (*SYSTEM_LABELS, "Inbox", "Sent", "Drafts"))
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")


def _label(call: Call, label_id: str) -> Label:
    found = call.mailbox.labels.get(label_id)
    if found is None:
        raise not_found()
    return found


def _with_counts(call: Call, label: Label) -> dict[str, Any]:
    return {**label.json(), **call.mailbox.counts(label.id)}


@route("GET", r"^/labels$", LABEL_READ)
def list_labels(call: Call, _: re.Match[str]) -> Answer:
    return Answer(200, {"labels": [lb.json() for lb in call.mailbox.labels.values()]})


@route("GET", r"^/labels/([^/]+)$", LABEL_READ)
def get_label(call: Call, match: re.Match[str]) -> Answer:
    return Answer(200, _with_counts(call, _label(call, match.group(1))))


def _checked_name(call: Call, given: Any, keep: Label | None = None) -> str:
    if not isinstance(given, str) or not given.strip() or len(given) > MAX_LABEL_NAME_CHARS:
        raise bad_request("Invalid label name")
    name = given.strip()
    if name.casefold() in _RESERVED or name.startswith("/") or name.endswith("/") or "//" in name:
        raise bad_request("Invalid label name")
    clash = call.mailbox.label_by_name(name)
    if clash is not None and clash is not keep:
        raise GmailError(409, "duplicate", "Label name exists or conflicts")
    return name


def _apply(label: Label, body: dict[str, Any]) -> None:
    for key, allowed in _VISIBILITY.items():
        if key in body:
            if body[key] not in allowed:
                raise bad_request(f"Invalid value for '{key}': '{str(body[key])[:40]}'")
            attribute = (
                "message_list_visibility"
                if key.startswith("message")
                else ("label_list_visibility")
            )
            setattr(label, attribute, body[key])
    if "color" in body:
        color = body["color"]
        if not isinstance(color, dict) or not all(
            isinstance(color.get(k), str) for k in ("textColor", "backgroundColor")
        ):
            raise bad_request("Label color needs textColor and backgroundColor.")
        label.color = {k: color[k] for k in ("textColor", "backgroundColor")}


@route("POST", r"^/labels$", LABEL_WRITE)
def create_label(call: Call, _: re.Match[str]) -> Answer:
    body = call.json_body()
    name = _checked_name(call, body.get("name"))
    label = call.mailbox.add_user_label(name)
    _apply(label, body)
    return Answer(200, label.json())


def _user_label(call: Call, label_id: str, action: str) -> Label:
    label = _label(call, label_id)
    if label.type == "system":
        raise bad_request(f"Invalid {action} request")
    return label


def _change(call: Call, match: re.Match[str], *, whole: bool) -> Answer:
    label = _user_label(call, match.group(1), "update")
    body = call.json_body()
    if whole or "name" in body:
        label.name = _checked_name(call, body.get("name"), keep=label)
    _apply(label, body)
    return Answer(200, label.json())


@route("PATCH", r"^/labels/([^/]+)$", LABEL_WRITE)
def patch_label(call: Call, match: re.Match[str]) -> Answer:
    return _change(call, match, whole=False)


@route("PUT", r"^/labels/([^/]+)$", LABEL_WRITE)
def update_label(call: Call, match: re.Match[str]) -> Answer:
    return _change(call, match, whole=True)


@route("DELETE", r"^/labels/([^/]+)$", LABEL_WRITE)
def delete_label(call: Call, match: re.Match[str]) -> Answer:
    label = _user_label(call, match.group(1), "delete")
    box = call.mailbox
    box.remove_label_everywhere(label.id)
    del box.labels[label.id]
    return Answer(204)


# --- history and profile ----------------------------------------------------------------


@route("GET", r"^/history$", (FULL, MODIFY, READONLY, METADATA))
def list_history(call: Call, _: re.Match[str]) -> Answer:
    box = call.mailbox
    start = call.arg("startHistoryId")
    if start is None:
        raise bad_request("Required parameter: startHistoryId")
    if not start.isdigit():
        raise bad_request(f"Invalid value for 'startHistoryId': '{start[:40]}'")
    if int(start) < box.oldest_history_id:
        raise not_found()
    types = call.args("historyTypes")
    for kind in types:
        if kind not in HISTORY_TYPES:
            raise bad_request(f"Invalid value for 'historyTypes': '{kind[:40]}'")
    label_id = call.arg("labelId")
    records = [
        record
        for record in box.history
        if record.id > int(start)
        and (not types or record.kind in types)
        and (
            label_id is None
            or label_id in record.message["labelIds"]
            or label_id in record.label_ids
        )
    ]
    chunk, token = page(call, records)
    body: dict[str, Any] = {}
    if chunk:
        body["history"] = [record.json() for record in chunk]
    if token:
        body["nextPageToken"] = token
    body["historyId"] = str(box.history_id)
    return Answer(200, body)


@route("GET", r"^/profile$", (FULL, MODIFY, COMPOSE, READONLY, METADATA))
def profile(call: Call, _: re.Match[str]) -> Answer:
    box = call.mailbox
    return Answer(
        200,
        {
            "emailAddress": box.address,
            "messagesTotal": len(box.messages),
            "threadsTotal": len({m.thread_id for m in box.messages.values()}),
            "historyId": str(box.history_id),
        },
    )


ROUTES = [
    list_labels,
    create_label,
    get_label,
    patch_label,
    update_label,
    delete_label,
    list_history,
    profile,
]
