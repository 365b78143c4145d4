"""``createReply``, ``createReplyAll`` and ``createForward``: a draft with Outlook's
recipients, ``RE:``/``FW:`` subject and the original quoted below a header block whose
"Sent:" time is in ``Prefer: outlook.timezone`` (else the mailbox's time zone).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

from mfconnector.emulator.call import Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.mail_input import apply_changes, new_draft, parse_recipients
from mfconnector.emulator.model import Mailbox, Message, Recipient
from mfconnector.emulator.quoting import escape, quoted_history
from mfconnector.emulator.state import EmulatorState
from mfconnector.emulator.timezones import zone

__all__ = ["create_response"]


def _zone(call: Call, mailbox: Mailbox) -> ZoneInfo:
    """The preferred zone, else the mailbox's (UTC if this machine has no data for it)."""
    if call.prefer.time_zone:
        return zone(call.prefer.time_zone)
    try:
        return zone(mailbox.time_zone)
    except GraphHttpError:
        return ZoneInfo("UTC")


def create_response(
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
        prefix, to, cc = "FW: ", parse_recipients(body.get("toRecipients", []), "toRecipients"), []
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
    draft = new_draft(emulator, mailbox, folder, call, conversation=None)
    draft.conversation_id = original.conversation_id
    draft.subject = subject
    draft.to, draft.cc = to, cc
    comment = body.get("comment") if isinstance(body.get("comment"), str) else ""
    zone = _zone(call, mailbox)
    shown = _shifted(original, zone)
    history = quoted_history(shown)
    fresh = f"<div>{escape(comment)}</div>\r\n" if comment else "<div><br></div>\r\n"
    draft.body = (
        '<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
        f"\r\n</head>\r\n<body>\r\n{fresh}{history}</body>\r\n</html>\r\n"
    )
    draft.unique_body = f"<html><body>{fresh}</body></html>"
    draft.body_type = "html"
    if kind == "createForward":
        draft.attachments = list(original.attachments)
    if extra:
        apply_changes(draft, extra, creating=True)
    mailbox.add_message(draft)
    return draft


def _shifted(message: Message, zone: ZoneInfo) -> Message:
    """The message with its sent time in ``zone``, for the quoted header block only."""
    moment = (message.sent or message.received).astimezone(zone)
    return replace(message, sent=moment)
