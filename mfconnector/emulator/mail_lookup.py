"""Finding a folder or message the way Outlook does, and rendering a message the way the
request asked for it: shared by the mail reads (``mail_routes``) and writes
(``mail_writes``), so neither imports the other for them.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from mfconnector.emulator.call import Call
from mfconnector.emulator.errors import item_not_found, malformed_id
from mfconnector.emulator.model import Folder, Mailbox, Message
from mfconnector.emulator.render import GRAPH, message_json
from mfconnector.emulator.timezones import convert_flag

__all__ = [
    "check_id",
    "encode_json",
    "find_folder",
    "find_message",
    "odata_context",
    "render_message",
    "render_message_text",
]

encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""How every answer is encoded (the transport's form): compact, non-ASCII kept."""
_TEXT_RENDERS = 8
"""Encoded renderings kept per message version (a list, a read, a search... by Prefer)."""

_ID_CHARS = re.compile(r"^[A-Za-z0-9_\-+/]+=*$")


def check_id(value: str) -> None:
    """Outlook ids are base64 (URL-safe or not) of a structure far longer than 30 bytes."""
    if len(value) < 40 or not _ID_CHARS.match(value):
        raise malformed_id()
    try:
        base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "===")
    except (binascii.Error, ValueError):
        raise malformed_id() from None


def find_folder(mailbox: Mailbox, key: str) -> Folder:
    found = mailbox.folder(key)
    if found is not None:
        return found
    if key.lower() not in WELL_KNOWN:
        check_id(key)
    raise item_not_found()


WELL_KNOWN = frozenset(
    {
        "archive",
        "clutter",
        "conflicts",
        "conversationhistory",
        "deleteditems",
        "drafts",
        "inbox",
        "junkemail",
        "localfailures",
        "msgfolderroot",
        "outbox",
        "recoverableitemsdeletions",
        "scheduled",
        "searchfolders",
        "sentitems",
        "serverfailures",
        "syncissues",
    }
)


def find_message(mailbox: Mailbox, key: str, folder: Folder | None = None) -> Message:
    check_id(key)
    found = mailbox.message(key)
    if found is None or (folder is not None and found.folder_id != folder.id):
        raise item_not_found()
    return found


def render_message(message: Message, call: Call, select: list[str] | None) -> dict[str, Any]:
    """The message as this request asked for it: id kind, body type and the flag's time
    zone from ``Prefer`` (date-time offsets stay UTC, as Graph's do)."""
    out = message_json(
        message, immutable=call.prefer.immutable_ids, text_body=call.prefer.text_body, select=select
    )
    if call.prefer.time_zone and isinstance(out.get("flag"), dict):
        out["flag"] = convert_flag(out["flag"], call.prefer.time_zone)
    return out


def render_message_text(message: Message, call: Call, select: list[str] | None) -> str:
    """``render_message`` encoded, kept for this version of the message: a page of fifty
    is then joined from texts, not rendered and encoded again on every call."""
    prefer = call.prefer
    key = (
        message.version,
        prefer.immutable_ids,
        prefer.text_body,
        prefer.time_zone,
        None if select is None else tuple(select),
    )
    cache = message._text_renders
    if cache is None:
        cache = message._text_renders = {}
    text = cache.get(key)
    if text is None:
        if len(cache) >= _TEXT_RENDERS:
            cache.clear()
        text = cache[key] = encode_json(render_message(message, call, select))
    return text


def odata_context(mailbox: Mailbox, tail: str) -> str:
    return f"{GRAPH}/$metadata#users('{mailbox.user_id}')/{tail}"
