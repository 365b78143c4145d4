"""Outlook writes, with Graph's documented effects on later reads.

- Drafts: ``POST /messages`` (Drafts) or ``/mailFolders/{id}/messages``, JSON; 201.
- ``PATCH /messages/{id}``: isRead, flag, categories, importance, inferenceClassification
  always; subject, body, recipients, replyTo only while the message is a draft. An
  ``If-Match`` that is not the current etag or changeKey answers 412.
- ``move`` / ``copy`` (201): a move gives a new REST id (the old one is gone) and keeps the
  immutable id; a copy is a new message with new ids.
- ``DELETE`` moves to Deleted Items (from there, out of sight); ``permanentDelete`` purges.
- ``createReply``/``createReplyAll``/``createForward``: a draft with Outlook's recipients,
  ``RE:``/``FW:`` subject and the original quoted below a header block whose "Sent:" time
  is in ``Prefer: outlook.timezone`` (else the mailbox's time zone).
- ``send`` (202): the draft goes to Sent Items with ``sentDateTime``, keeping its immutable
  id; ``sendMail`` (202) saves to Sent Items unless ``saveToSentItems`` is false. Mail to a
  mailbox of the tenant (the demo user, the shared mailbox) is delivered to its Inbox.
- Folders: create (409 if the name is taken), rename, delete (into Deleted Items; a
  well-known folder cannot be deleted), ``permanentDelete``.
- Attachments: add a ``fileAttachment`` up to 3 MB (larger needs an upload session, which
  the emulator does not offer: 413), delete one.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.mail_lookup import find_folder, render_message
from mfconnector.emulator.model import Attachment, Folder, Mailbox, Message, Recipient
from mfconnector.emulator.quoting import quoted_history
from mfconnector.emulator.render import (
    GRAPH,
    MESSAGE_PROPERTIES,
    attachment_json,
    folder_json,
)
from mfconnector.emulator.state import EmulatorState
from mfconnector.emulator.timezones import check_date_time_time_zone, zone

__all__ = [
    "MAX_ATTACHMENT_BYTES",
    "add_attachment",
    "create_folder",
    "create_message",
    "delete_attachment",
    "delete_folder",
    "delete_message",
    "message_action",
    "permanently_delete_folder",
    "send_mail",
    "update_folder",
    "update_message",
]

MAX_ATTACHMENT_BYTES = 3 * 1024 * 1024
"""Graph's limit for adding an attachment with one POST; larger needs an upload session."""
ALWAYS_UPDATABLE = frozenset(
    {"isRead", "flag", "categories", "importance", "inferenceClassification"}
)
DRAFT_UPDATABLE = frozenset(
    {
        "subject",
        "body",
        "toRecipients",
        "ccRecipients",
        "bccRecipients",
        "replyTo",
        "internetMessageId",
    }
)
FLAG_STATUSES = frozenset({"notFlagged", "flagged", "complete"})
IMPORTANCE = frozenset({"low", "normal", "high"})


def _answer(status: int, body: Any = None) -> Answer:
    return Answer(status, json=body)


def _entity(
    mailbox: Mailbox, message: Message, emulator: EmulatorState, call: Call
) -> dict[str, Any]:
    return {
        "@odata.context": f"{GRAPH}/$metadata#users('{mailbox.user_id}')/messages/$entity",
        **render_message(message, call, None),
    }


# --- parsing request bodies ----------------------------------------------------------------


def _recipients(value: Any, name: str) -> list[Recipient]:
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


def _body(value: Any) -> tuple[str, str]:
    if not isinstance(value, dict) or not isinstance(value.get("content", ""), str):
        raise GraphHttpError(400, "BadRequest", "The body must be an itemBody object.")
    kind = str(value.get("contentType", "text")).lower()
    if kind not in ("text", "html"):
        raise GraphHttpError(400, "BadRequest", f"Invalid contentType '{kind[:20]}'.")
    return str(value.get("content", "")), kind


def _flag(value: Any) -> dict[str, Any]:
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


def _apply(message: Message, changes: dict[str, Any], *, creating: bool) -> None:
    """Set message properties from a Graph JSON object (already checked as allowed)."""
    for key, value in changes.items():
        if key == "subject":
            if not isinstance(value, str):
                raise GraphHttpError(400, "BadRequest", "The subject must be a string.")
            message.subject = value
        elif key == "body":
            message.body, message.body_type = _body(value)
            message.unique_body = None
        elif key in ("toRecipients", "ccRecipients", "bccRecipients", "replyTo"):
            recipients = _recipients(value, key)
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
            message.flag = _flag(value)
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


def _new_message(
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


def _file_attachments(message: Message, values: Any, now: datetime) -> None:
    if values is None:
        return
    if not isinstance(values, list):
        raise GraphHttpError(400, "BadRequest", "attachments must be a list.")
    for value in values:
        message.attachments.append(_parse_attachment(message, value, now))


def _parse_attachment(message: Message, value: Any, now: datetime) -> Attachment:
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


# --- messages ------------------------------------------------------------------------------


def create_message(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None
) -> Answer:
    body = call.json_body()
    target = folder or mailbox.folders[mailbox.well_known["drafts"]]
    message = _new_message(emulator, mailbox, target, call)
    _apply(message, body, creating=True)
    _file_attachments(message, body.get("attachments"), call.now)
    mailbox.add_message(message)
    return _answer(201, _entity(mailbox, message, emulator, call))


def _check_if_match(call: Call, message: Message) -> None:
    wanted = call.headers.get("if-match")
    if wanted is None or wanted.strip() == "*":
        return
    tag = wanted.strip()
    if tag.startswith("W/"):
        tag = tag[2:]
    tag = tag.strip('"')
    if tag != message.change_key:
        raise GraphHttpError(
            412,
            "ErrorIrresolvableConflict",
            "The send or update operation could not be performed because the change key "
            "passed in the request does not match the current change key for the item.",
        )


def update_message(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    changes = call.json_body()
    _check_if_match(call, message)
    for key in changes:
        if key in DRAFT_UPDATABLE and not message.is_draft:
            raise GraphHttpError(
                400,
                "ErrorInvalidPropertyUpdateSentMessage",
                "Update operation is invalid for property of a sent message.",
            )
        if key in MESSAGE_PROPERTIES and key not in ALWAYS_UPDATABLE and key not in DRAFT_UPDATABLE:
            raise GraphHttpError(
                400, "ErrorInvalidProperty", f"The property '{key[:100]}' is read-only."
            )
    _apply(message, changes, creating=False)
    message.touch(call.now)
    return _answer(200, _entity(mailbox, message, emulator, call))


def delete_message(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    _check_if_match(call, message)
    deleted = mailbox.folders[mailbox.well_known["deleteditems"]]
    if message.folder_id in mailbox.descendants(deleted.id):
        purge = mailbox.folders[mailbox.well_known["recoverableitemsdeletions"]]
        mailbox.move_message(message, purge, call.now)
    else:
        mailbox.move_message(message, deleted, call.now)
    return _answer(204)


def message_action(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message, action: str
) -> Answer:
    if action in ("move", "copy"):
        destination = call.json_body().get("destinationId")
        if not isinstance(destination, str) or not destination:
            raise GraphHttpError(400, "ErrorInvalidIdMalformed", "Id is malformed.")
        folder = find_folder(mailbox, destination)
        if action == "move":
            mailbox.move_message(message, folder, call.now)
            return _answer(201, _entity(mailbox, message, emulator, call))
        return _answer(
            201, _entity(mailbox, _copy(mailbox, message, folder, call.now), emulator, call)
        )
    if action == "permanentDelete":
        mailbox.remove_message(message)
        return _answer(204)
    if action in ("createReply", "createReplyAll", "createForward"):
        draft = _respond(emulator, call, mailbox, message, action)
        return _answer(201, _entity(mailbox, draft, emulator, call))
    if action in ("reply", "replyAll", "forward"):
        kind = {"reply": "createReply", "replyAll": "createReplyAll", "forward": "createForward"}[
            action
        ]
        draft = _respond(emulator, call, mailbox, message, kind)
        _send(emulator, call, mailbox, draft, save=True)
        return _answer(202)
    if action == "send":
        if call.body.strip():
            raise GraphHttpError(
                400, "BadRequest", "send takes no request body (Content-Length: 0)."
            )
        if not message.is_draft:
            raise GraphHttpError(400, "ErrorInvalidOperation", "Only a draft message can be sent.")
        _send(emulator, call, mailbox, message, save=True)
        return _answer(202)
    raise GraphHttpError(400, "BadRequest", f"Resource not found for the segment '{action[:100]}'.")


def _copy(mailbox: Mailbox, message: Message, folder: Folder, now: datetime) -> Message:
    label = mailbox.next_label("copy")
    copy = Message(
        **{
            **{
                k: getattr(message, k)
                for k in message.__dataclass_fields__
                if not k.startswith("_")
            },
            "label": label,
            "immutable_id": ids.immutable_message_id(label),
            "folder_id": folder.id,
            "generation": 0,
            "version": 1,
            "to": list(message.to),
            "cc": list(message.cc),
            "bcc": list(message.bcc),
            "categories": list(message.categories),
            "flag": dict(message.flag),
            "attachments": list(message.attachments),
            "modified": now,
        }
    )
    return mailbox.add_message(copy)


def _zone(call: Call, mailbox: Mailbox) -> ZoneInfo:
    """The preferred zone, else the mailbox's (UTC if this machine has no data for it)."""
    if call.prefer.time_zone:
        return zone(call.prefer.time_zone)
    try:
        return zone(mailbox.time_zone)
    except GraphHttpError:
        return ZoneInfo("UTC")


def _respond(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, original: Message, kind: str
) -> Message:
    body = call.json_body()
    message_value = body.get("message")
    extra: dict[str, Any] = message_value if isinstance(message_value, dict) else {}
    if "comment" in body and "body" in extra:  # Graph: a comment or message.body, not both
        raise GraphHttpError(
            400, "ErrorInvalidRequest", "Specify either comment or message.body, not both."
        )
    if kind == "createForward" and "toRecipients" in body and "toRecipients" in extra:
        raise GraphHttpError(
            400, "ErrorInvalidRequest", "Specify toRecipients or message.toRecipients, not both."
        )
    me = mailbox.mail.lower()
    author = original.from_ or original.sender
    to: list[Recipient]
    cc: list[Recipient]
    if kind == "createForward":
        prefix, to, cc = "FW: ", _recipients(body.get("toRecipients", []), "toRecipients"), []
    elif kind == "createReply":
        prefix, to, cc = "RE: ", list(original.reply_to or [author]), []
    else:
        prefix = "RE: "
        to = list(original.reply_to or [author])
        to += [
            r
            for r in original.to
            if r[1].lower() != me and r[1].lower() not in {t[1].lower() for t in to}
        ]
        cc = [r for r in original.cc if r[1].lower() != me]
    if author[1].lower() == me and kind != "createForward":
        to = [r for r in original.to if r[1].lower() != me] or to
    subject = original.subject
    bare = subject
    for known in ("re:", "fw:", "fwd:"):
        if bare.lower().startswith(known):
            bare = bare[len(known) :].lstrip()
            break
    if not subject.lower().startswith(prefix.strip().lower()):
        subject = prefix + subject
    folder = mailbox.folders[mailbox.well_known["drafts"]]
    draft = _new_message(emulator, mailbox, folder, call, conversation=None)
    draft.conversation_id = original.conversation_id
    draft.subject = subject
    draft.to, draft.cc = to, cc
    comment = body.get("comment") if isinstance(body.get("comment"), str) else ""
    zone = _zone(call, mailbox)
    shown = _shifted(original, zone)
    history = quoted_history(shown)
    fresh = f"<div>{_escape(comment)}</div>\r\n" if comment else "<div><br></div>\r\n"
    draft.body = (
        '<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
        f"\r\n</head>\r\n<body>\r\n{fresh}{history}</body>\r\n</html>\r\n"
    )
    draft.unique_body = f"<html><body>{fresh}</body></html>"
    draft.body_type = "html"
    if kind == "createForward":
        draft.attachments = list(original.attachments)
    if extra:
        _apply(draft, extra, creating=True)
    mailbox.add_message(draft)
    return draft


def _shifted(message: Message, zone: ZoneInfo) -> Message:
    """The message with its sent time in ``zone``, for the quoted header block only."""
    from dataclasses import replace

    moment = (message.sent or message.received).astimezone(zone)
    return replace(message, sent=moment)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _send(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message, *, save: bool
) -> None:
    if not (message.to or message.cc or message.bcc):
        raise GraphHttpError(
            400,
            "ErrorInvalidRecipients",
            "At least one recipient isn't valid., A message can't be sent because it "
            "contains no recipients.",
        )
    sent = mailbox.folders[mailbox.well_known["sentitems"]]
    message.is_draft = False
    message.is_read = True
    message.sender = message.from_ = (mailbox.display_name, mailbox.mail)
    message.sent = call.now
    message.received = call.now
    if save:
        if message.immutable_id not in mailbox.messages:
            mailbox.add_message(message)
        mailbox.move_message(message, sent, call.now)
    else:
        mailbox.remove_message(message)
    message.touch(call.now)
    _deliver(emulator, message, call.now)


def _deliver(emulator: EmulatorState, message: Message, now: datetime) -> None:
    """Mail to a mailbox of this tenant arrives in its Inbox, unread."""
    seen: set[str] = set()
    for _, address in [*message.to, *message.cc, *message.bcc]:
        target = emulator.tenant.mailbox(address.lower())
        if target is None or target.user_id in seen:
            continue
        seen.add(target.user_id)
        inbox = target.folders[target.well_known["inbox"]]
        copy = _copy(target, message, inbox, now)
        copy.is_read = False
        copy.received = now + timedelta(seconds=1)
        copy.bcc = []


def send_mail(emulator: EmulatorState, call: Call, mailbox: Mailbox) -> Answer:
    body = call.json_body()
    value = body.get("message")
    if not isinstance(value, dict):
        raise GraphHttpError(400, "ErrorInvalidRequest", "The request needs a message object.")
    save = body.get("saveToSentItems", True)
    if not isinstance(save, bool):
        raise GraphHttpError(400, "BadRequest", "saveToSentItems must be true or false.")
    drafts = mailbox.folders[mailbox.well_known["drafts"]]
    message = _new_message(emulator, mailbox, drafts, call)
    _apply(message, value, creating=True)
    _file_attachments(message, value.get("attachments"), call.now)
    _send(emulator, call, mailbox, message, save=save)
    return _answer(202)


# --- attachments ---------------------------------------------------------------------------


def add_attachment(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    attachment = _parse_attachment(message, call.json_body(), call.now)
    message.attachments.append(attachment)
    message.touch(call.now)
    body = attachment_json(attachment, with_bytes=True)
    shown_id = message.id_for(call.prefer.immutable_ids)
    context = (
        f"{GRAPH}/$metadata#users('{mailbox.user_id}')/messages('{shown_id}')/attachments/$entity"
    )
    return _answer(201, {"@odata.context": context, **body})


def delete_attachment(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message, attachment: Attachment
) -> Answer:
    message.attachments = [a for a in message.attachments if a.id != attachment.id]
    message.touch(call.now)
    return _answer(204)


# --- folders -------------------------------------------------------------------------------


def create_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, parent: Folder) -> Answer:
    body = call.json_body()
    name = body.get("displayName")
    if not isinstance(name, str) or not name.strip() or len(name) > 255:
        raise GraphHttpError(400, "ErrorInvalidRequest", "The folder needs a displayName.")
    if any(
        f.parent_id == parent.id and f.display_name.casefold() == name.casefold()
        for f in mailbox.folders.values()
    ):
        raise GraphHttpError(
            409, "ErrorFolderExists", "A folder with the specified name already exists."
        )
    label = mailbox.next_label("folder")
    folder = mailbox.add_folder(
        Folder(ids.folder_id(label), name, parent.id, None, bool(body.get("isHidden", False)))
    )
    context = f"{GRAPH}/$metadata#users('{mailbox.user_id}')/mailFolders/$entity"
    return _answer(201, {"@odata.context": context, **folder_json(folder, mailbox)})


def update_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder) -> Answer:
    body = call.json_body()
    name = body.get("displayName")
    if set(body) - {"displayName"} or not isinstance(name, str) or not name.strip():
        raise GraphHttpError(400, "ErrorInvalidRequest", "Only displayName can be changed.")
    if any(
        f.parent_id == folder.parent_id
        and f.id != folder.id
        and f.display_name.casefold() == name.casefold()
        for f in mailbox.folders.values()
    ):
        raise GraphHttpError(
            409, "ErrorFolderExists", "A folder with the specified name already exists."
        )
    folder.display_name = name
    context = f"{GRAPH}/$metadata#users('{mailbox.user_id}')/mailFolders/$entity"
    return _answer(200, {"@odata.context": context, **folder_json(folder, mailbox)})


def delete_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder) -> Answer:
    if folder.well_known:
        raise GraphHttpError(
            400, "ErrorDeleteDistinguishedFolder", "Distinguished folders cannot be deleted."
        )
    deleted = mailbox.well_known["deleteditems"]
    if folder.id in mailbox.descendants(deleted):
        return permanently_delete_folder(emulator, call, mailbox, folder)
    folder.parent_id = deleted
    return _answer(204)


def permanently_delete_folder(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder
) -> Answer:
    if folder.well_known:
        raise GraphHttpError(
            400, "ErrorDeleteDistinguishedFolder", "Distinguished folders cannot be deleted."
        )
    gone = set(mailbox.descendants(folder.id))
    for message in [m for m in mailbox.messages.values() if m.folder_id in gone]:
        mailbox.remove_message(message)
    for folder_id in gone:
        mailbox.folders.pop(folder_id, None)
    return _answer(204)
