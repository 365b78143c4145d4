"""Outlook writes, with Graph's documented effects on later reads.

- Drafts: ``POST /messages`` (Drafts) or ``/mailFolders/{id}/messages``, JSON; 201.
- ``PATCH /messages/{id}``: isRead, flag, categories, importance, inferenceClassification
  always; subject, body, recipients, replyTo only while the message is a draft. An
  ``If-Match`` that is not the current etag or changeKey answers 412.
- ``move`` / ``copy`` (201): a move gives a new REST id (the old one is gone) and keeps the
  immutable id; a copy is a new message with new ids.
- ``DELETE`` moves to Deleted Items (from there, out of sight); ``permanentDelete`` purges.
- ``createReply``/``createReplyAll``/``createForward``: drafts made by ``mail_replies``.
- ``send`` (202): the draft goes to Sent Items with ``sentDateTime``, keeping its immutable
  id; ``sendMail`` (202) saves to Sent Items unless ``saveToSentItems`` is false. Mail to a
  mailbox of the tenant (the demo user, the shared mailbox) is delivered to its Inbox.
- Folders: ``folder_writes``. Request bodies are read by ``mail_input``.
- Attachments: add a ``fileAttachment`` up to 3 MB (a larger one in one POST answers 413:
  it needs an upload session, ``uploads``), delete one.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.mail_input import (
    add_file_attachments,
    apply_changes,
    new_draft,
    parse_attachment,
)
from mfconnector.emulator.mail_lookup import find_folder, render_message
from mfconnector.emulator.mail_replies import create_response
from mfconnector.emulator.model import Attachment, Folder, Mailbox, Message
from mfconnector.emulator.render import GRAPH, MESSAGE_PROPERTIES, attachment_json
from mfconnector.emulator.state import EmulatorState

__all__ = [
    "add_attachment",
    "create_message",
    "delete_attachment",
    "delete_message",
    "message_action",
    "send_mail",
    "update_message",
]

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


def _answer(status: int, body: Any = None) -> Answer:
    return Answer(status, json=body)


def _entity(
    mailbox: Mailbox, message: Message, emulator: EmulatorState, call: Call
) -> dict[str, Any]:
    return {
        "@odata.context": f"{GRAPH}/$metadata#users('{mailbox.user_id}')/messages/$entity",
        **render_message(message, call, None),
    }


# --- messages ------------------------------------------------------------------------------


def create_message(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None
) -> Answer:
    body = call.json_body()
    target = folder or mailbox.folders[mailbox.well_known["drafts"]]
    message = new_draft(emulator, mailbox, target, call)
    apply_changes(message, body, creating=True)
    add_file_attachments(message, body.get("attachments"), call.now)
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
    apply_changes(message, changes, creating=False)
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
        draft = create_response(emulator, call, mailbox, message, action)
        return _answer(201, _entity(mailbox, draft, emulator, call))
    if action in ("reply", "replyAll", "forward"):
        kind = {"reply": "createReply", "replyAll": "createReplyAll", "forward": "createForward"}[
            action
        ]
        draft = create_response(emulator, call, mailbox, message, kind)
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
    message = new_draft(emulator, mailbox, drafts, call)
    apply_changes(message, value, creating=True)
    add_file_attachments(message, value.get("attachments"), call.now)
    _send(emulator, call, mailbox, message, save=save)
    return _answer(202)


# --- attachments ---------------------------------------------------------------------------


def add_attachment(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    attachment = parse_attachment(message, call.json_body(), call.now)
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
