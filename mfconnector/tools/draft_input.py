"""What a draft says, from checked arguments: recipients, subject, body and attachments.

``attachments`` entries of ``mail_create draft``/``revise_draft`` and ``mail_prepare``
take one of four shapes::

    {"item_id"}                       a file of the signed-in user's drive
    {"drive_id", "item_id"}           a file of another drive the grant reaches
    {"message_id", "attachment_id"}   a file attachment of a message (references from
                                      mail_read / mail_attachment)
    {"name", "content_base64"}        small content given inline

References may also carry ``name`` (send it under another name) and ``content_type``.
The server fetches a referenced file's bytes itself (the backend: ``resolve_attachment``
reads each one's name, type and size before the first write, so a wrong id, a folder or
too many bytes fails with nothing created), never through the model. Names and types read
from a source are checked like typed ones: what the person confirms is what recipients get.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from mfconnector.limits import Limits
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.model import Person
from mfconnector.mail.outgoing import DraftAttachment, DraftContent
from mfconnector.mail.refs import Reference, parse_reference
from mfconnector.writes.errors import WriteError
from mfconnector.writes.outgoing import (
    check_attachment_name,
    check_content_type,
    check_subject,
    parse_recipient,
)

__all__ = [
    "ATTACHMENT_ITEMS",
    "ATTACHMENT_REFERENCES",
    "DRAFT_FIELDS",
    "attachments_of",
    "check_entries",
    "draft_content",
    "watched",
]

ATTACHMENT_ITEMS: dict[str, Any] = {
    "items": {
        "anyOf": [
            {"required": ["item_id"]},
            {"required": ["message_id", "attachment_id"]},
            {"required": ["name", "content_base64"]},
        ]
    },
}
"""The shapes, published compactly (every byte of tools/list counts: ``drive_id`` goes with
``item_id``, and ``items`` alone constrains only arrays); that ``attachments`` is a list
and each entry exactly one shape, of strings, with no other keys, is ``check_entries``'s."""

ATTACHMENT_REFERENCES: dict[str, Any] = {
    "items": {"anyOf": ATTACHMENT_ITEMS["items"]["anyOf"][:2]},
}
"""``mail_prepare``'s: files by reference only. Small inline content goes on a draft made
with ``mail_create draft``, which is then prepared as it is (``mail_prepare draft``)."""

DRAFT_FIELDS = ("to", "cc", "bcc", "subject", "text", "html", "attachments")

_SHAPES: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"item_id"}), frozenset({"drive_id", "name", "content_type"})),
    (frozenset({"message_id", "attachment_id"}), frozenset({"name", "content_type"})),
    (frozenset({"name", "content_base64"}), frozenset({"content_type"})),
)
_ID = re.compile(r"^[A-Za-z0-9_=+/!.-]+$")
_SHAPES_TEXT = (
    '{"item_id"}, {"drive_id","item_id"}, {"message_id","attachment_id"} or '
    '{"name","content_base64"} (references may add name and content_type)'
)


def _invalid(message: str, hint: str = f"each entry is one of {_SHAPES_TEXT}") -> WriteError:
    return WriteError("invalid_arguments", message, hint=hint)


def check_entries(entries: Any, limits: Limits) -> None:
    """Each entry is exactly one shape, of non-empty strings, ids of id characters."""
    if not isinstance(entries, list):
        raise _invalid("`attachments` must be a list")
    if len(entries) > limits.draft_attachments:
        raise _invalid(
            f"{len(entries)} attachments; at most {limits.draft_attachments}", "attach fewer files"
        )
    for index, entry in enumerate(entries):
        keys = frozenset(entry) if isinstance(entry, dict) else frozenset()
        if not any(required <= keys <= required | optional for required, optional in _SHAPES):
            raise _invalid(
                f"`attachments[{index}]` has keys {sorted(keys)}: it must be {_SHAPES_TEXT}"
            )
        for key in keys:
            value = entry[key]
            if not isinstance(value, str) or not value:
                raise _invalid(f"`attachments[{index}].{key}` must be a non-empty string")
            if key.endswith("_id") and (
                len(value) > limits.outlook_id_chars or not _ID.match(value)
            ):
                raise _invalid(
                    f"`attachments[{index}].{key}` is not an id: {value[:40]!r}",
                    "pass ids exactly as files_list, mail_read or mail_attachment gave them",
                )
        if "name" in keys:
            check_attachment_name(entry["name"], f"attachments[{index}].name", limits)
        if "content_type" in keys:
            check_content_type(entry["content_type"], f"attachments[{index}].content_type")


def _people(arguments: Mapping[str, Any], argument: str, limits: Limits) -> tuple[Person, ...]:
    return tuple(
        Person(*parse_recipient(item, f"{argument}[{index}]", limits))
        for index, item in enumerate(arguments.get(argument, ()))
    )


def draft_content(
    arguments: Mapping[str, Any],
    limits: Limits,
    attachments: Sequence[DraftAttachment] = (),
) -> DraftContent:
    """The draft the arguments describe (checked, nothing sent yet)."""
    if "text" in arguments and "html" in arguments:
        raise _invalid(
            "give `text` or `html`, not both: a message has one body", "drop one of them"
        )
    to, cc, bcc = (_people(arguments, name, limits) for name in ("to", "cc", "bcc"))
    count = len(to) + len(cc) + len(bcc)
    if count > limits.draft_recipients:
        raise _invalid(
            f"{count} recipients; at most {limits.draft_recipients} in To, Cc and Bcc together",
            "send to a distribution list instead",
        )
    subject = check_subject(arguments["subject"]) if "subject" in arguments else None
    text = arguments.get("html", arguments.get("text"))
    return DraftContent(
        to=to,
        cc=cc,
        bcc=bcc,
        subject=subject,
        text=text,
        content_type="html" if "html" in arguments else "text",
        attachments=tuple(attachments),
    )


def _inline(entry: Mapping[str, str], index: int) -> DraftAttachment:
    try:
        data = base64.b64decode(entry["content_base64"], validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(
            f"attachments[{index}].content_base64 is not valid base64",
            "encode the file bytes with standard base64 (A-Z a-z 0-9 + / =)",
        ) from None
    return DraftAttachment(
        name=entry["name"],
        content_type=entry.get("content_type") or "application/octet-stream",
        data=data,
        size=len(data),
        named=True,
        typed=True,
    )


def _reference(backend: MailBackend, entry: Mapping[str, str], index: int) -> DraftAttachment:
    """The entry as a source reference: a drive file, or an attachment of a message of the
    call's account (parsed before any request)."""
    common: dict[str, Any] = {
        "name": entry.get("name", ""),
        "content_type": entry.get("content_type", ""),
        "named": "name" in entry,
        "typed": "content_type" in entry,
    }
    if "item_id" in entry:
        drive = entry.get("drive_id")
        return DraftAttachment(
            source=parse_reference(entry["item_id"], backend.tag, f"attachments[{index}].item_id"),
            container=Reference(backend.tag, drive) if drive else None,
            source_kind="file",
            **common,
        )
    message = parse_reference(entry["message_id"], backend.tag, f"attachments[{index}].message_id")
    source = parse_reference(
        entry["attachment_id"], backend.tag, f"attachments[{index}].attachment_id"
    )
    return DraftAttachment(source=source, container=message, source_kind="attachment", **common)


async def attachments_of(
    backend: MailBackend, entries: Sequence[Mapping[str, str]], limits: Limits
) -> list[DraftAttachment]:
    """Every entry's name, type and size, read before anything is written; limits checked."""
    made: list[DraftAttachment] = []
    inline_total = 0
    for index, entry in enumerate(entries):
        if "content_base64" in entry:
            attachment = _inline(entry, index)
            inline_total += attachment.size or 0
            if inline_total > limits.draft_attachments_bytes:
                raise _invalid(
                    f"the inline attachments hold more than {limits.draft_attachments_bytes:,} "
                    "bytes in all; nothing was created",
                    'attach files by reference ({"item_id"}) instead of inline content',
                )
        else:
            attachment = await backend.resolve_attachment(_reference(backend, entry, index))
        check_attachment_name(attachment.name, f"attachments[{index}] (its name)", limits)
        check_content_type(attachment.content_type, f"attachments[{index}] (its content type)")
        made.append(attachment)
    total = sum(a.size or 0 for a in made)
    if total > limits.draft_attachment_total_bytes:
        from mfconnector.mail.failures import Unsupported

        raise Unsupported(
            f"the attachments are {total:,} bytes in all, over the "
            f"{limits.draft_attachment_total_bytes:,}-byte limit for one message; nothing was "
            "created",
            hint="attach fewer or smaller files, or share a link to them",
        )
    return made


def attached_view(attached: Sequence[DraftAttachment]) -> list[dict[str, Any]]:
    """What was attached, as a result shows it: name, size, SHA-256 and the source."""
    shown: list[dict[str, Any]] = []
    for a in attached:
        source: dict[str, str]
        if a.source is None:
            source = {"name": a.name}
        elif a.source_kind == "file":
            source = {"item_id": str(a.source)}
            if a.container is not None:
                source = {"drive_id": a.container.native, **source}
        else:
            source = {"message_id": str(a.container), "attachment_id": str(a.source)}
        shown.append({"name": a.name, "size": a.size, "sha256": a.sha256, "source": source})
    return shown


def watched(attached: Sequence[DraftAttachment]) -> list[dict[str, Any]]:
    """The drive files to read again before a send (neutral: references and versions)."""
    return [
        {
            "name": a.name,
            "item_id": a.source.native,
            **({"drive_id": a.container.native} if a.container is not None else {}),
            "version": a.version,
        }
        for a in attached
        if a.source is not None and a.source_kind == "file" and a.version is not None
    ]


def watched_attachment(backend: MailBackend, entry: Mapping[str, Any]) -> DraftAttachment:
    """A stored ``watched`` entry as the attachment whose version is read again."""
    drive = entry.get("drive_id")
    return dataclasses.replace(
        DraftAttachment(name=str(entry["name"]), content_type=""),
        source=Reference(backend.tag, str(entry["item_id"])),
        container=Reference(backend.tag, str(drive)) if drive else None,
        version=entry.get("version"),
    )
