"""Message JSON as a request sends it: recipients, bodies, flags, properties to apply,
file attachments, and the new draft a create or a send starts from.

Each refusal is Graph's (status, code and words), so a write that sends what Graph would
refuse is refused here the same way.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

from mfconnector.emulator import ids
from mfconnector.emulator.call import Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import Attachment, Folder, Mailbox, Message, Recipient
from mfconnector.emulator.state import EmulatorState
from mfconnector.emulator.timezones import check_date_time_time_zone

__all__ = [
    "MAX_ATTACHMENT_BYTES",
    "add_file_attachments",
    "apply_changes",
    "new_draft",
    "parse_attachment",
    "parse_recipients",
]

MAX_ATTACHMENT_BYTES = 3 * 1024 * 1024
"""Graph's limit for adding an attachment with one POST; larger needs an upload session."""
FLAG_STATUSES = frozenset({"notFlagged", "flagged", "complete"})
IMPORTANCE = frozenset({"low", "normal", "high"})


def parse_recipients(value: Any, name: str) -> list[Recipient]:
    if not isinstance(value, list):
        raise GraphHttpError(
            400, "ErrorInvalidRecipients", f"'{name}' must be a list of recipients."
        )
    out = []
    for entry in value:
        address = entry.get("emailAddress") if isinstance(entry, dict) else None
        mail = address.get("address") if isinstance(address, dict) else None
        if not isinstance(mail, str) or "@" not in mail or len(mail) > 320:
            raise GraphHttpError(
                400, "ErrorInvalidRecipients", "At least one recipient isn't valid."
            )
        assert isinstance(address, dict)
        name_value = address.get("name")
        display = name_value if isinstance(name_value, str) else mail
        out.append((display, mail))
    return out


def parse_body(value: Any) -> tuple[str, str]:
    if not isinstance(value, dict) or not isinstance(value.get("content", ""), str):
        raise GraphHttpError(400, "BadRequest", "The body must be an itemBody object.")
    kind = str(value.get("contentType", "text")).lower()
    if kind not in ("text", "html"):
        raise GraphHttpError(400, "BadRequest", f"Invalid contentType '{kind[:20]}'.")
    return str(value.get("content", "")), kind


def parse_flag(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("flagStatus", "notFlagged") not in FLAG_STATUSES:
        raise GraphHttpError(400, "ErrorInvalidArgument", "The flag status is not valid.")
    if "dueDateTime" in value and "startDateTime" not in value:
        raise GraphHttpError(
            400, "ErrorInvalidArgument", "The StartDate property must be set when DueDate is set."
        )
    flag: dict[str, Any] = {"flagStatus": value.get("flagStatus", "notFlagged")}
    for key in ("startDateTime", "dueDateTime", "completedDateTime"):
        if key in value:
            check_date_time_time_zone(value[key], key)
            flag[key] = value[key]
    return flag


def apply_changes(message: Message, changes: dict[str, Any], *, creating: bool) -> None:
    """Set message properties from a Graph JSON object (already checked as allowed)."""
    for key, value in changes.items():
        if key == "subject":
            if not isinstance(value, str):
                raise GraphHttpError(400, "BadRequest", "The subject must be a string.")
            message.subject = value
        elif key == "body":
            message.body, message.body_type = parse_body(value)
            message.unique_body = None
        elif key in ("toRecipients", "ccRecipients", "bccRecipients", "replyTo"):
            recipients = parse_recipients(value, key)
            attribute = {
                "toRecipients": "to",
                "ccRecipients": "cc",
                "bccRecipients": "bcc",
                "replyTo": "reply_to",
            }[key]
            setattr(message, attribute, recipients)
        elif key == "isRead":
            if not isinstance(value, bool):
                raise GraphHttpError(400, "BadRequest", "isRead must be true or false.")
            message.is_read = value
        elif key == "flag":
            message.flag = parse_flag(value)
        elif key == "categories":
            if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
                raise GraphHttpError(400, "BadRequest", "categories must be a list of strings.")
            message.categories = list(value)
        elif key == "importance":
            if value not in IMPORTANCE:
                raise GraphHttpError(400, "BadRequest", f"Invalid importance '{str(value)[:20]}'.")
            message.importance = value
        elif key == "inferenceClassification":
            if value not in ("focused", "other"):
                raise GraphHttpError(400, "BadRequest", "Invalid inferenceClassification.")
            message.inference = value
        elif key == "internetMessageId":
            if not isinstance(value, str):
                raise GraphHttpError(400, "BadRequest", "internetMessageId must be a string.")
            message.internet_message_id = value
        elif key == "singleValueExtendedProperties":
            for item in value if isinstance(value, list) else [None]:
                if not isinstance(item, dict) or not all(
                    isinstance(item.get(k), str) for k in ("id", "value")
                ):
                    raise GraphHttpError(
                        400, "BadRequest", "Each extended property needs a string id and value."
                    )
                message.extended[item["id"]] = item["value"]
        elif key == "attachments" and creating:
            pass  # handled by the caller
        elif key.startswith("@odata"):
            continue
        else:
            raise GraphHttpError(
                400,
                "RequestBroker--ParseUri",
                f"Could not find a property named '{key[:100]}' on type 'microsoft.graph.message'.",
            )


def new_draft(
    emulator: EmulatorState,
    mailbox: Mailbox,
    folder: Folder,
    call: Call,
    *,
    conversation: str | None = None,
) -> Message:
    label = mailbox.next_label("message")
    domain = mailbox.mail.split("@")[1]
    message = Message(
        label=label,
        immutable_id=ids.immutable_message_id(label),
        folder_id=folder.id,
        subject="",
        body="",
        body_type="html",
        sender=(mailbox.display_name, mailbox.mail),
        to=[],
        received=call.now,
        sent=None,
        conversation_id=conversation or ids.conversation_id(label),
        internet_message_id=f"<{ids.guid(label).replace('-', '')[:24].upper()}@{domain}>",
        is_draft=True,
        created=call.now,
        modified=call.now,
    )
    return message


def add_file_attachments(message: Message, values: Any, now: datetime) -> None:
    if values is None:
        return
    if not isinstance(values, list):
        raise GraphHttpError(400, "BadRequest", "attachments must be a list.")
    for value in values:
        message.attachments.append(parse_attachment(message, value, now))


def parse_attachment(message: Message, value: Any, now: datetime) -> Attachment:
    if not isinstance(value, dict) or value.get("@odata.type") != "#microsoft.graph.fileAttachment":
        raise GraphHttpError(
            400, "ErrorInvalidRequest", "Only #microsoft.graph.fileAttachment can be added here."
        )
    name = value.get("name")
    encoded = value.get("contentBytes")
    if not isinstance(name, str) or not name or not isinstance(encoded, str):
        raise GraphHttpError(
            400, "ErrorInvalidRequest", "A file attachment needs name and contentBytes."
        )
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise GraphHttpError(
            400, "ErrorInvalidRequest", "contentBytes is not valid base64."
        ) from None
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise GraphHttpError(
            413,
            "ErrorRequestEntityTooLarge",
            "The attachment is larger than 3 MB: use an upload session.",
        )
    content_type = value.get("contentType") if isinstance(value.get("contentType"), str) else None
    return Attachment(
        id=ids.attachment_id(message.label, len(message.attachments) + 1000 * message.version),
        name=name,
        content_type=content_type or "application/octet-stream",
        kind="file",
        declared_size=None,
        modified=now,
        data=lambda: data,
        is_inline=bool(value.get("isInline", False)),
    )
