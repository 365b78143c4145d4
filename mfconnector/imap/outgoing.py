"""Drafts, the frozen message and its one send, for ``ImapMailBackend``.

A draft is APPENDed to the Drafts folder (SPECIAL-USE ``\\Drafts``) with ``\\Draft``; its
reference comes from APPENDUID (UIDPLUS), else from a search for its fresh Message-ID.
Freezing reads the draft's exact bytes (refused past ``mime_message_bytes``: a message too
large to show in full is never sent unseen) and ``compose.freeze_bytes`` makes the bytes and
envelope SMTP sends. ``send`` submits once through ``imap.smtp``; after ``sent`` the same
bytes are APPENDed to Sent (``append_sent``), and a failed append is reported in the result,
never as an error: the message has gone.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING

from mfconnector.errors import ToolInputError
from mfconnector.imap import commands, smtp
from mfconnector.imap.compose import Original, build_draft, freeze_bytes, reply_content
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.encode import astring
from mfconnector.imap.errors import ImapError, MailSettingsError
from mfconnector.imap.refs import MessageAddress, message_reference, parse_attachment, parse_message
from mfconnector.mail.failures import ActionFailure, NotFound, Unsupported
from mfconnector.mail.model import Folder, Person
from mfconnector.mail.outgoing import (
    DraftAttachment,
    DraftContent,
    DraftMade,
    DraftRevision,
    FrozenOutgoing,
    ReplyKind,
    SendResult,
)
from mfconnector.mail.refs import Reference
from mfconnector.mime import read_message

if TYPE_CHECKING:
    from mfconnector.imap.session import ImapSession, Stage

__all__ = [
    "create_draft",
    "create_response",
    "discard_draft",
    "freeze",
    "revise_draft",
    "send",
    "verify_sent",
]

_DRAFT_FLAGS = ("\\Draft", "\\Seen")


async def _drafts(backend: ImapSession) -> Folder:
    folder = await backend.role_folder("drafts")
    if folder is None:
        raise NotFound("this mailbox has no Drafts folder (no \\Drafts special-use folder)")
    return folder


def _sender(backend: ImapSession) -> str:
    if not backend.sender.address:
        raise ToolInputError(
            "no sender address is configured for this IMAP account",
            hint="start the server with --from ADDRESS (or MFC_FROM)",
        )
    return backend.sender.address


async def _attachments(
    backend: ImapSession, content: DraftContent
) -> tuple[list[tuple[str, str, bytes]], list[DraftAttachment]]:
    """The bytes of each attachment (given, or another message's attachment of this
    account), within ``mime_message_bytes`` together; and each as it was attached."""
    out: list[tuple[str, str, bytes]] = []
    attached: list[DraftAttachment] = []
    budget = backend.limits.mime_message_bytes
    for item in content.attachments:
        if item.data is not None:
            data = item.data
        elif item.source is not None and item.source_kind == "attachment":
            address = parse_attachment(item.source, "attachments")
            source = message_reference(
                backend.tag,
                address.message.folder,
                address.message.uidvalidity,
                address.message.uid,
            )
            fetched = await backend.attachment(source, item.source, budget)
            if not fetched.complete:
                raise ActionFailure(
                    f"the attachment {item.name!r} is over {budget:,} bytes "
                    "(mime_message_bytes): nothing was drafted",
                )
            data = fetched.data
        else:
            raise Unsupported(
                f"{item.name!r}: an IMAP draft can attach bytes or another message's "
                "attachment of this account, not a file from a drive"
            )
        budget -= len(data)
        if budget < 0:
            raise ActionFailure(
                "the attachments together are over mime_message_bytes: nothing was drafted"
            )
        out.append((item.name, item.content_type, data))
        attached.append(
            dataclasses.replace(
                item, data=None, size=len(data), sha256=hashlib.sha256(data).hexdigest()
            )
        )
    return out, attached


async def _append_draft(backend: ImapSession, raw: bytes, message_id: str) -> Reference:
    drafts = await _drafts(backend)
    name = backend.folder_name(drafts)

    async def operation(connection: ImapConnection, stage: Stage) -> Reference:
        await commands.noop(connection)  # a pooled connection the server dropped fails here
        stage.changing = True
        appended = await commands.append(connection, name, raw, _DRAFT_FLAGS)
        if appended.uid is not None and appended.uidvalidity is not None:
            return message_reference(backend.tag, name, appended.uidvalidity, appended.uid)
        # No UIDPLUS: find the draft by the Message-ID it was given a moment ago.
        found = await commands.search(
            connection, name, [b"HEADER", b"Message-ID", astring(message_id)]
        )
        selected = connection.selected
        if not found.uids or selected is None:
            raise ActionFailure(
                "the draft was saved, but the server did not say where (no UIDPLUS) and it "
                "could not be found by its Message-ID",
                hint="mail_list the drafts folder to find it",
            )
        return message_reference(backend.tag, name, selected.uidvalidity, max(found.uids))

    return await backend.run("saving the draft", operation)


async def create_draft(backend: ImapSession, content: DraftContent) -> DraftMade:
    attachments, attached = await _attachments(backend, content)
    _sender(backend)
    message = build_draft(content, backend.sender, attachments=attachments)
    ref = await _append_draft(backend, message.as_bytes(), str(message["Message-ID"]))
    return DraftMade(ref, attached)


async def create_response(
    backend: ImapSession, where: MessageAddress, kind: ReplyKind, content: DraftContent
) -> DraftMade:
    me = _sender(backend)
    original_ref = message_reference(backend.tag, where.folder, where.uidvalidity, where.uid)
    from mfconnector.mail.query import ReadRequest

    read = await backend.read(original_ref, ReadRequest(view="full"))
    raw = None
    if kind == "forward":
        size = int(read.native.get("size", 0) or 0)
        if size > backend.limits.mime_message_bytes:
            raise ActionFailure(
                f"the message is {size:,} bytes, over mime_message_bytes: it cannot be "
                "forwarded whole, so no draft was made"
            )
        raw = await _whole(backend, where, size)
        if read_message(raw, backend.limits).notes:
            raise ActionFailure(
                "the message's MIME is past the reader's limits (depth, parts or headers): "
                "it cannot be attached to a forward exactly, so no draft was made"
            )
    original = Original(
        message_id=read.internet_message_id,
        references=str(read.native.get("references") or "") or None,
        subject=read.subject,
        sender=read.sender,
        reply_to=read.reply_to,
        to=read.to,
        cc=read.cc,
        text=read.body.text if read.body else "",
        raw=raw,
    )
    made, in_reply_to, references = reply_content(
        original, kind, content, me, quote_chars=backend.limits.reply_quote_chars
    )
    attachments, attached = await _attachments(backend, made)
    message = build_draft(
        made,
        backend.sender,
        attachments=attachments,
        in_reply_to=in_reply_to if kind != "forward" else None,
        references=references,
        attached_message=raw,
    )
    ref = await _append_draft(backend, message.as_bytes(), str(message["Message-ID"]))
    return DraftMade(ref, attached)


async def _whole(backend: ImapSession, where: MessageAddress, size: int) -> bytes:
    async def operation(connection: ImapConnection, stage: Stage) -> bytes:
        await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
        return await backend.fetch_bytes(connection, where, "", size or 1)

    return await backend.run("reading the message", operation)


async def freeze(backend: ImapSession, draft: Reference) -> FrozenOutgoing:
    where = parse_message(draft, "draft_id")
    raw = await _draft_bytes(backend, where)
    frozen = freeze_bytes(raw, _sender(backend), draft)
    if not frozen.envelope_to:
        raise ToolInputError("the draft has no recipients (To, Cc or Bcc)")
    drafts = await backend.role_folder("drafts")
    in_drafts = drafts is not None and backend.folder_name(drafts) == where.folder
    return dataclasses.replace(frozen, folder_role="drafts" if in_drafts else None)


async def send(backend: ImapSession, frozen: FrozenOutgoing) -> SendResult:
    settings = backend.smtp
    if settings is None:
        raise Unsupported(
            "no SMTP server is configured for this account: sending is not offered",
            hint="start the server with --smtp HOST[:PORT]",
        )
    if frozen.mime is None or frozen.envelope_from is None:
        raise ActionFailure("this frozen message has no MIME bytes: it was not made by IMAP")
    try:
        outcome = await smtp.submit(
            settings, frozen.envelope_from, list(frozen.envelope_to), frozen.mime, backend.limits
        )
    except MailSettingsError as error:
        raise ToolInputError(str(error)) from None
    details: dict[str, object] = {"provider": "smtp", "stage": outcome.stage}
    if outcome.reply_code is not None:
        details["status"] = outcome.reply_code
    if outcome.status != "sent":
        return SendResult(
            outcome.status,
            detail=outcome.detail,
            provider_reply=outcome.reply or None,
            sent_copy="none",
            error_code={"rejected": "rejected", "not_sent": "provider_error"}.get(outcome.status),
            details=details,
        )
    copy: str = "none"
    detail = outcome.detail
    if backend.append_sent:
        copy, note = await _append_sent(backend, frozen.mime)
        if note:
            detail = f"{detail}; {note}"
    return SendResult(
        "sent",
        detail=detail,
        provider_reply=outcome.reply or None,
        sent_copy=copy,  # type: ignore[arg-type]
        details=details,
    )


async def revise_draft(
    backend: ImapSession, draft: Reference, revision: DraftRevision
) -> DraftMade:
    """A new draft: the old one's bytes with the changed fields replaced (threading headers
    kept, a fresh Message-ID); the old draft stays, as on every provider."""
    import email.utils
    from email.message import EmailMessage

    where = parse_message(draft, "draft_id")
    raw = await _draft_bytes(backend, where)
    parsed = email.message_from_bytes(raw, policy=email.policy.SMTP)
    assert isinstance(parsed, EmailMessage)
    new = revision.content
    changed = revision.changed

    def people(header: str) -> tuple[Person, ...]:
        values = [str(v) for v in parsed.get_all(header) or []]
        return tuple(Person(n, a) for n, a in email.utils.getaddresses(values) if a)

    body = parsed.get_body(("plain", "html"))
    text = body.get_content() if isinstance(body, EmailMessage) else ""
    html = isinstance(body, EmailMessage) and body.get_content_subtype() == "html"
    kept = []
    for part in parsed.iter_attachments():
        assert isinstance(part, EmailMessage)
        payload = part.get_payload(decode=True)
        kept.append(
            DraftAttachment(
                part.get_filename() or "attachment",
                part.get_content_type(),
                data=payload if isinstance(payload, bytes) else b"",
            )
        )
    merged = DraftContent(
        to=new.to if "to" in changed else people("To"),
        cc=new.cc if "cc" in changed else people("Cc"),
        bcc=new.bcc if "bcc" in changed else people("Bcc"),
        subject=new.subject if "subject" in changed else str(parsed["Subject"] or ""),
        text=new.text if "text" in changed else text.replace("\r\n", "\n"),
        content_type=new.content_type if "text" in changed else ("html" if html else "text"),
        attachments=new.attachments if "attachments" in changed else tuple(kept),
    )
    attachments, attached = await _attachments(backend, merged)
    message = build_draft(
        merged,
        backend.sender,
        attachments=attachments,
        in_reply_to=str(parsed["In-Reply-To"]) if parsed["In-Reply-To"] else None,
        references=str(parsed["References"]) if parsed["References"] else None,
    )
    ref = await _append_draft(backend, message.as_bytes(), str(message["Message-ID"]))
    return DraftMade(ref, attached if "attachments" in changed else ())


async def _draft_bytes(backend: ImapSession, where: MessageAddress) -> bytes:
    """A draft's whole bytes, refused past ``mime_message_bytes`` or the reader's limits."""
    cap = backend.limits.mime_message_bytes

    async def operation(connection: ImapConnection, stage: Stage) -> bytes:
        await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
        found = await commands.fetch(
            connection, where.folder, [where.uid], ["UID", "FLAGS", "RFC822.SIZE"]
        )
        if not found:
            raise NotFound("the draft is gone (sent, discarded or moved)", hint="draft it again")
        if "\\Draft" not in (found[0].flags or frozenset()):
            raise ToolInputError("`draft_id` names a message that is not a draft")
        size = found[0].size or 0
        if size > cap:
            raise ActionFailure(
                f"the draft is {size:,} bytes, over mime_message_bytes ({cap:,}): a message "
                "too large to show in full is not sent"
            )
        return await backend.fetch_bytes(connection, where, "", size or 1)

    raw = await backend.run("reading the draft", operation)
    checked = read_message(raw, backend.limits)
    if checked.notes:
        raise ActionFailure(
            "the draft's MIME is past the reader's limits ("
            + "; ".join(checked.notes[:3])
            + "): it cannot be frozen exactly, so it is not sent"
        )
    return raw


async def _append_sent(backend: ImapSession, mime: bytes) -> tuple[str, str | None]:
    sent = await _quietly(backend.role_folder("sent"))
    if sent is None:
        return "append_failed", "no Sent folder was found to file the copy in"
    name = backend.folder_name(sent)

    async def operation(connection: ImapConnection, stage: Stage) -> None:
        await commands.noop(connection)  # a pooled connection the server dropped fails here
        stage.changing = True
        await commands.append(connection, name, mime, ("\\Seen",))

    try:
        await backend.run("filing the sent copy", operation)
    except ActionFailure as failure:
        return "append_failed", f"filing the copy in {sent.path} failed ({failure.message})"
    return "appended", None


async def _quietly(awaitable: object) -> Folder | None:
    try:
        return await awaitable  # type: ignore[no-any-return, misc]
    except (ActionFailure, ImapError):
        return None


async def verify_sent(backend: ImapSession, frozen: FrozenOutgoing) -> bool | None:
    if not frozen.message_id:
        return None
    sent = await backend.role_folder("sent")
    if sent is None:
        return None
    name = backend.folder_name(sent)
    message_id = frozen.message_id

    async def operation(connection: ImapConnection, stage: Stage) -> bool:
        found = await commands.search(
            connection, name, [b"HEADER", b"Message-ID", astring(message_id)]
        )
        return bool(found.uids)

    return await backend.run("looking for the sent copy", operation)


async def discard_draft(backend: ImapSession, where: MessageAddress) -> None:
    if not backend.has("UIDPLUS"):
        raise Unsupported(
            "this IMAP server offers no UIDPLUS: a draft cannot be removed exactly, so it was kept",
            details={"provider": "imap", "capability": "UIDPLUS"},
        )

    async def operation(connection: ImapConnection, stage: Stage) -> None:
        await commands.open_checked(connection, where.folder, where.uidvalidity, writable=True)
        found = await commands.fetch(connection, where.folder, [where.uid], ["UID", "FLAGS"])
        if not found:
            raise NotFound("the draft is already gone")
        if "\\Draft" not in (found[0].flags or frozenset()):
            raise ToolInputError("`draft_id` names a message that is not a draft: kept")
        stage.changing = True
        await commands.store_flags(connection, where.folder, [where.uid], ["\\Deleted"], add=True)
        await commands.expunge_uids(connection, where.folder, [where.uid])

    await backend.run("discarding the draft", operation)
