"""IMAP's native part of an exact reference (pure): what names one message for good.

A UID names a message only together with its folder and the folder's UIDVALIDITY (RFC 9051
section 2.3.1.1): after a folder is deleted and re-created, UID 7 may be another message.
So every message reference carries all three, and the backend compares the UIDVALIDITY
the server reports on SELECT before it acts (``StaleReference`` otherwise)::

    <uidvalidity>.<uid>.<folder>              a message      iab.1764633600.42.INBOX
    a.<uidvalidity>.<uid>.<part>.<folder>     an attachment  (part ``2_1`` is BODY[2.1])
    f.<folder>                                a folder

The folder comes last (it may hold dots) in modified UTF-7 (RFC 3501 section 5.1.3), the
form the server itself uses: ASCII only, so a reference survives any JSON transport.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mfconnector.imap.encode import _mutf7_encode, decode_mailbox
from mfconnector.mail.failures import StaleReference
from mfconnector.mail.refs import AccountTag, Reference

__all__ = [
    "AttachmentAddress",
    "MessageAddress",
    "attachment_reference",
    "folder_name_of",
    "folder_reference",
    "message_reference",
    "parse_attachment",
    "parse_message",
]

_MESSAGE = re.compile(r"(\d{1,10})\.(\d{1,10})\.([\x20-\x7e]{1,1000})\Z")
_ATTACHMENT = re.compile(
    r"a\.(\d{1,10})\.(\d{1,10})\.(\d{1,4}(?:_\d{1,4}){0,31})\.([\x20-\x7e]{1,1000})\Z"
)
_FOLDER = re.compile(r"f\.([\x20-\x7e]{1,1000})\Z")
_HINT = "take ids from mail_list, mail_search or mail_read of this account"


@dataclass(frozen=True, slots=True)
class MessageAddress:
    """Where a message is: folder (decoded), its UIDVALIDITY and the UID in it."""

    folder: str
    uidvalidity: int
    uid: int


@dataclass(frozen=True, slots=True)
class AttachmentAddress:
    message: MessageAddress
    part: str
    """The IMAP part path (``2.1``), as ``BODY[2.1]`` takes it."""


def _folder_text(name: str) -> str:
    return _mutf7_encode(name).decode("ascii")


def message_reference(tag: AccountTag, folder: str, uidvalidity: int, uid: int) -> Reference:
    return Reference(tag, f"{uidvalidity}.{uid}.{_folder_text(folder)}")


def attachment_reference(tag: AccountTag, message: MessageAddress, part: str) -> Reference:
    return Reference(
        tag,
        f"a.{message.uidvalidity}.{message.uid}.{part.replace('.', '_')}."
        f"{_folder_text(message.folder)}",
    )


def folder_reference(tag: AccountTag, folder: str) -> Reference:
    return Reference(tag, f"f.{_folder_text(folder)}")


def parse_message(ref: Reference, argument: str = "message_id") -> MessageAddress:
    match = _MESSAGE.match(ref.native)
    if match is None:
        raise StaleReference(f"`{argument}` is not a message reference of this account", hint=_HINT)
    uidvalidity, uid = int(match.group(1)), int(match.group(2))
    if uid < 1 or uidvalidity < 1:
        raise StaleReference(f"`{argument}` names no message", hint=_HINT)
    return MessageAddress(decode_mailbox(match.group(3)), uidvalidity, uid)


def parse_attachment(ref: Reference, argument: str = "attachment_id") -> AttachmentAddress:
    match = _ATTACHMENT.match(ref.native)
    if match is None:
        raise StaleReference(
            f"`{argument}` is not an attachment reference of this account", hint=_HINT
        )
    message = MessageAddress(
        decode_mailbox(match.group(4)), int(match.group(1)), int(match.group(2))
    )
    return AttachmentAddress(message, match.group(3).replace("_", "."))


def folder_name_of(ref: Reference) -> str | None:
    """The folder a folder reference names, or None when it is not one."""
    match = _FOLDER.match(ref.native)
    return decode_mailbox(match.group(1)) if match else None
