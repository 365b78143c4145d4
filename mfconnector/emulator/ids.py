"""Deterministic ids in the lengths and alphabets Microsoft Graph really uses.

A demo id has to look like a live one, or figures measured on the demo (result bytes,
cursor lengths) would not predict a real mailbox:

- Outlook message ids: about 152 characters of URL-safe base64 with ``=`` padding. REST
  ids start ``AAMkAG``; immutable ids (``Prefer: IdType="ImmutableId"``) start ``AAkALg``.
- Outlook folder ids: about 120 characters, ``AQMkAD...``; conversation ids ``AAQkAG...``.
- OneDrive item ids: ``01`` plus 32 characters of upper-case base32 (34 in all); drive ids
  ``b!`` plus 64 URL-safe base64 characters.

Every id is a hash of a label, so the same label always gives the same id.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

__all__ = [
    "attachment_id",
    "conversation_id",
    "drive_id",
    "drive_item_id",
    "folder_id",
    "guid",
    "immutable_message_id",
    "rest_message_id",
    "stream",
    "tempauth",
]

_MAILBOX = hashlib.sha256(b"mailbox:adelev@contoso.onmicrosoft.com").digest()[:16]


@lru_cache(maxsize=8192)
def stream(label: str, size: int) -> bytes:
    """``size`` deterministic bytes derived from ``label`` (SHA-256 in counter mode).
    Remembered: every fresh demo tenant asks for the same labels' ids again."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{counter}:{label}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def immutable_message_id(label: str) -> str:
    """152 characters, ``AAkALg...=``: stays the same when the message moves."""
    return _b64(b"\x00\x09\x00\x2e\x00" + _MAILBOX + stream("imm:" + label, 92))


def rest_message_id(label: str, generation: int) -> str:
    """152 characters, ``AAMkAG...=``: a new one each time the message changes folder."""
    return _b64(b"\x00\x03\x24\x00\x60" + _MAILBOX + stream(f"rest:{generation}:{label}", 92))


def folder_id(label: str) -> str:
    """120 characters, ``AQMkAD...``: folder ids never change (immutable or not)."""
    return _b64(b"\x01\x03\x24\x00\x30" + _MAILBOX + stream("folder:" + label, 69))


def conversation_id(label: str) -> str:
    return _b64(b"\x00\x04\x24\x00\x60" + _MAILBOX + stream("conv:" + label, 45))


def attachment_id(message_label: str, index: int) -> str:
    """About 200 characters, like Outlook's (the message id plus an attachment part)."""
    data = b"\x00\x03\x24\x00\x60" + _MAILBOX + stream(f"att:{index}:{message_label}", 127)
    return _b64(data)


def drive_id(label: str) -> str:
    return "b!" + _b64(stream("drive:" + label, 48))


def drive_item_id(label: str) -> str:
    """``01`` + 32 base32 characters, the OneDrive for Business item id shape."""
    return "01" + base64.b32encode(stream("item:" + label, 20)).decode("ascii")


def guid(label: str) -> str:
    raw = stream("guid:" + label, 16).hex()
    return f"{raw[:8]}-{raw[8:12]}-4{raw[13:16]}-a{raw[17:20]}-{raw[20:32]}"


def tempauth(label: str, serial: int) -> str:
    """A fake pre-authentication token: JWT-shaped, and it says it is fake."""
    body = _b64(stream(f"tempauth:{serial}:{label}", 96)).rstrip("=")
    return f"FAKE.v1.{body}"
