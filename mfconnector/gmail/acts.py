"""The acting half of ``GmailMailBackend``: labels, label changes, trash, delete, drafts,
freezing and sending.

Gmail folders are labels, so: copy adds the target label; move adds the target and
removes, in the same ``messages.modify``, every label that places the message somewhere
(INBOX, SPAM, TRASH and user labels; STARRED, IMPORTANT, UNREAD, categories and the labels
Gmail alone sets, SENT and DRAFT, stay); flags are UNREAD and STARRED; categories are user
labels. Gmail has no per-message change key: ``unchanged_since`` is ``unsupported``.
A send is ``messages.send`` with the frozen raw bytes, once, never retried but after a rate
limit Google documents as "not done"; Gmail files the sent copy itself.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from mfconnector.errors import AuthError, ToolInputError
from mfconnector.gmail.compose import (
    ReplyContext,
    build_mime,
    digest_of,
    frozen_record,
    reply_recipients,
    revised_mime,
)
from mfconnector.gmail.convert import header_map
from mfconnector.gmail.errors import GmailUnreachable
from mfconnector.gmail.ids import checked_message, is_draft_id
from mfconnector.gmail.labels import ALL_MAIL
from mfconnector.gmail.mailbox import FULL_MAIL_SCOPE, GmailMailbox
from mfconnector.gmail.payload import b64url_bytes, walk_payload
from mfconnector.gmail.reads import GmailReads
from mfconnector.mail.failures import (
    ActionFailure,
    Ambiguous,
    InsufficientScope,
    NotFound,
    Throttled,
    Unsupported,
)
from mfconnector.mail.model import Folder, MessageSummary
from mfconnector.mail.outgoing import (
    DraftAttachment,
    DraftContent,
    DraftMade,
    DraftRevision,
    FrozenOutgoing,
    ReplyKind,
    SendResult,
    quoted_original,
)
from mfconnector.mail.query import FlagChange
from mfconnector.mail.refs import Reference

__all__ = ["PLACING_SYSTEM_LABELS", "GmailActs", "send_failure"]

PLACING_SYSTEM_LABELS = frozenset({"INBOX", "SPAM", "TRASH"})
"""System labels a move takes away (with every user label): where a message "is"."""
AUTOMATIC_LABELS = frozenset({"SENT", "DRAFT"})
"""Labels only Gmail sets: never a copy or move target."""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


class GmailActs:
    def __init__(self, box: GmailMailbox, reads: GmailReads) -> None:
        self.box = box
        self.reads = reads

    # --- labels ----------------------------------------------------------------------

    def _checked_name(self, name: str) -> str:
        cleaned = name.strip()
        limit = self.box.limits.display_name_chars
        if not cleaned or "/" in cleaned or len(cleaned) > limit:
            raise ToolInputError(
                f"a label name must be 1-{limit} characters without '/' (nest with `parent`)"
            )
        return cleaned

    async def create_folder(self, parent: Folder | None, name: str) -> Folder:
        cleaned = self._checked_name(name)
        if parent is not None and parent.native.get("label_type") != "user":
            raise Unsupported("Gmail nests labels only under user labels, not system labels")
        full = f"{parent.path}/{cleaned}" if parent is not None else cleaned
        client = await self.box.client()
        answer = await client.post(
            "labels",
            body={
                "name": full,
                "labelListVisibility": "labelShow",
                "messageListVisibility": "show",
            },
        )
        self.box.forget_labels()
        tree = await self.box.labels()
        label_id = answer.get("id") if isinstance(answer, dict) else None
        if not isinstance(label_id, str) or label_id not in tree:
            raise ActionFailure("Gmail created the label but did not say its id")
        return tree.folder(label_id)

    async def rename_folder(self, folder: Folder, name: str) -> Folder:
        """A user label and the labels nested under it (Gmail keeps each one's full path)."""
        cleaned = self._checked_name(name)
        tree = await self.box.labels(fresh=True)
        if not tree.is_user_label(folder.ref.native):
            raise Unsupported("Gmail's system labels cannot be renamed")
        old = tree.name_of(folder.ref.native) or folder.path
        new = f"{old.rsplit('/', 1)[0]}/{cleaned}" if "/" in old else cleaned
        client = await self.box.client()
        await client.patch("labels", folder.ref.native, body={"name": new})
        for label_id in tree.descendants(folder.ref.native):
            child = tree.name_of(label_id) or ""
            await client.patch("labels", label_id, body={"name": new + child[len(old) :]})
        self.box.forget_labels()
        return (await self.box.labels()).folder(folder.ref.native)

    # --- label changes on one message ------------------------------------------------

    async def _modify(self, message: Reference, add: Sequence[str], remove: Sequence[str]) -> Any:
        native = self._message_id(message)
        client = await self.box.client()
        return await client.post(
            "messages",
            native,
            "modify",
            body={"addLabelIds": list(add), "removeLabelIds": list(remove)},
        )

    def _message_id(self, message: Reference) -> str:
        """A message id, checked before any request (a draft id is refused here)."""
        if is_draft_id(message.native):
            raise ToolInputError("that id names a draft: pass the draft message's id")
        return checked_message(message, drafts=False)

    def _target(self, target: Folder) -> str:
        label_id = target.ref.native
        if label_id == ALL_MAIL or label_id in AUTOMATIC_LABELS:
            raise Unsupported(f"Gmail does not let a message be put in {target.path!r}")
        return label_id

    async def copy(self, message: Reference, target: Folder) -> Reference | None:
        """The same message, now also under ``target`` (one message, several labels)."""
        await self._modify(message, [self._target(target)], [])
        return message

    async def move(self, message: Reference, target: Folder) -> Reference | None:
        label_id = self._target(target)
        client = await self.box.client()
        native = self._message_id(message)
        current = await client.get("messages", native, query=[("format", "minimal")])
        tree = await self.box.labels()
        labels = current.get("labelIds") if isinstance(current, dict) else None
        remove = [
            lb
            for lb in (labels if isinstance(labels, list) else [])
            if isinstance(lb, str)
            and lb != label_id
            and (lb in PLACING_SYSTEM_LABELS or tree.is_user_label(lb))
        ]
        await self._modify(message, [label_id], remove)
        return message

    async def set_flags(self, message: Reference, change: FlagChange) -> MessageSummary | None:
        if change.unchanged_since is not None:
            raise Unsupported(
                "Gmail has no per-message change key: `unchanged_since` cannot be honoured",
                hint="leave it out; Gmail applies label changes as they come",
            )
        add: list[str] = []
        remove: list[str] = []
        if change.unread is not None:
            (add if change.unread else remove).append("UNREAD")
        if change.flag is not None:
            (add if change.flag == "flagged" else remove).append("STARRED")
        tree = await self.box.labels()
        for names, into in ((change.add_categories, add), (change.remove_categories, remove)):
            for name in names:
                found = [i for i in tree.matching(name) if tree.is_user_label(i)]
                if not found:
                    tree = await self.box.labels(fresh=True)
                    found = [i for i in tree.matching(name) if tree.is_user_label(i)]
                if len(found) != 1:
                    raise ToolInputError(
                        f"no single Gmail label named {name[:80]!r}: Gmail categories are "
                        "user labels",
                        hint="create it with mail_create (a folder), or name it by its path",
                    )
                into.append(found[0])
        if not add and not remove:
            raise ToolInputError("nothing to change")
        await self._modify(message, add, remove)
        return None

    async def trash(self, message: Reference) -> Reference | None:
        native = self._message_id(message)
        client = await self.box.client()
        await client.post("messages", native, "trash")
        return message

    async def delete_permanently(self, message: Reference) -> None:
        if FULL_MAIL_SCOPE not in self.box.scopes:
            raise Unsupported(
                "permanent deletion needs Gmail's full-mail scope (https://mail.google.com/)",
                hint=f"start the server with --enable-delete and run `{self.box.login_command}`",
            )
        native = self._message_id(message)
        client = await self.box.client()
        await client.delete("messages", native)

    # --- drafts ----------------------------------------------------------------------

    async def _create(self, raw: bytes, thread_id: str | None) -> Reference:
        inner: dict[str, Any] = {"raw": _b64url(raw)}
        if thread_id:
            inner["threadId"] = thread_id
        client = await self.box.client()
        answer = await client.post("drafts", body={"message": inner})
        draft_id = answer.get("id") if isinstance(answer, dict) else None
        if not isinstance(draft_id, str):
            raise ActionFailure("Gmail created the draft but did not say its id")
        return Reference(self.box.tag, draft_id)

    async def _with_bytes(
        self, content: DraftContent
    ) -> tuple[DraftContent, list[DraftAttachment]]:
        """``content`` with every attachment's bytes in hand (given, or read from another
        message of this account), within ``mime_message_bytes`` together; and each as it
        was attached (size and SHA-256 of those bytes)."""
        budget = self.box.limits.mime_message_bytes
        filled: list[DraftAttachment] = []
        attached: list[DraftAttachment] = []
        for item in content.attachments:
            data = item.data
            if data is None:
                data = await self._source_bytes(item, budget)
            budget -= len(data)
            if budget < 0:
                raise ActionFailure(
                    f"the attachments together are over {self.box.limits.mime_message_bytes:,} "
                    "bytes (mime_message_bytes): nothing was drafted"
                )
            filled.append(dataclasses.replace(item, data=data, size=len(data)))
            attached.append(
                dataclasses.replace(
                    item, data=None, size=len(data), sha256=hashlib.sha256(data).hexdigest()
                )
            )
        return dataclasses.replace(content, attachments=tuple(filled)), attached

    async def _source_bytes(self, item: DraftAttachment, budget: int) -> bytes:
        if item.source is None or item.source_kind != "attachment" or item.container is None:
            raise Unsupported(
                f"{item.name[:80]!r}: a Gmail draft can attach bytes or another Gmail "
                "message's attachment of this account, not a file from a drive",
                hint="attach the bytes (content_base64) instead",
            )
        fetched = await self.reads.attachment(item.container, item.source, max(budget, 1))
        if fetched.attachment.kind != "file":
            raise ToolInputError(
                f"attachment {item.name[:80]!r} is an attached email, not a file; nothing "
                "was drafted",
                hint="forward the message instead (mail_prepare forward)",
            )
        if not fetched.complete:
            raise ActionFailure(
                f"the attachment {item.name[:80]!r} is over the "
                f"{self.box.limits.mime_message_bytes:,} bytes a message may hold "
                "(mime_message_bytes): nothing was drafted"
            )
        return fetched.data

    async def create_draft(self, content: DraftContent) -> DraftMade:
        filled, attached = await self._with_bytes(content)
        raw = build_mime(filled, sender=await self.box.address())
        return DraftMade(await self._create(raw, None), attached)

    async def create_response(
        self, message: Reference, kind: ReplyKind, content: DraftContent
    ) -> DraftMade:
        native = self._message_id(message)
        client = await self.box.client()
        original = await client.get("messages", native, query=[("format", "full")])
        if not isinstance(original, dict):
            raise NotFound("Gmail has no such message (any more)")
        headers = header_map(original.get("payload"), self.box.limits)
        walked = walk_payload(original.get("payload"), self.box.limits)
        body = await self.reads._body(walked.text, walked.html)
        original_text = quoted_original(body.text, self.box.limits.reply_quote_chars)
        if kind == "forward":
            quoted = (
                "---------- Forwarded message ---------\n"
                f"From: {headers.get('from', '')}\nDate: {headers.get('date', '')}\n"
                f"Subject: {headers.get('subject', '')}\nTo: {headers.get('to', '')}\n\n"
                + original_text
            )
        else:
            who = headers.get("from") or "the sender"
            lines = original_text.splitlines()
            quoted = f"{who} wrote:\n" + "\n".join("> " + line for line in lines)
        me = await self.box.address()
        content = reply_recipients(content, kind, headers, me)
        thread_id = original.get("threadId")
        context = ReplyContext(
            thread_id=thread_id if isinstance(thread_id, str) else None,
            message_id=headers.get("message-id"),
            references=headers.get("references"),
            subject=headers.get("subject"),
            quoted=quoted,
        )
        filled, attached = await self._with_bytes(content)
        raw = build_mime(filled, sender=me, reply=context, kind=kind)
        ref = await self._create(raw, context.thread_id if kind != "forward" else None)
        return DraftMade(ref, attached)

    async def revise_draft(self, draft: Reference, revision: DraftRevision) -> DraftMade:
        """A new draft from ``draft``: the changed fields from the revision, the rest (and
        the thread) kept; ``draft`` stays as it is (``mail_create revise_draft``)."""
        _, raw, thread_id = await self._draft_raw(draft)
        frozen_record(raw, self.box.limits)  # refuses a draft the MIME limits cannot read whole
        content, attached = revision.content, list[DraftAttachment]()
        if "attachments" in revision.changed:
            content, attached = await self._with_bytes(revision.content)
        revised = revised_mime(raw, content, revision.changed)
        ref = await self._create(revised, thread_id)
        return DraftMade(ref, attached)

    async def _draft_raw(self, draft: Reference) -> tuple[str, bytes, str | None]:
        """The draft's id, its whole MIME message and its thread, as Gmail holds them now."""
        draft_id = await self._draft_id(draft)
        client = await self.box.client()
        answer = await client.get("drafts", draft_id, query=[("format", "raw")])
        inner = answer.get("message") if isinstance(answer, dict) else None
        raw_text = inner.get("raw") if isinstance(inner, dict) else None
        raw = b64url_bytes(raw_text) if isinstance(raw_text, str) else None
        if raw is None:
            raise ActionFailure("Gmail's draft came without its raw message")
        thread_id = inner.get("threadId") if isinstance(inner, dict) else None
        return draft_id, raw, thread_id if isinstance(thread_id, str) else None

    async def _draft_id(self, draft: Reference) -> str:
        """The draft id of a draft reference, or of its message's reference (drafts.list)."""
        if is_draft_id(draft.native):
            return draft.native
        wanted = checked_message(draft, drafts=False)
        client = await self.box.client()
        token: str | None = None
        for _ in range(self.box.limits.folder_scan_requests):
            query = [("maxResults", "100")] + ([("pageToken", token)] if token else [])
            answer = await client.get("drafts", query=query)
            entries = answer.get("drafts") if isinstance(answer, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                inner = entry.get("message") if isinstance(entry, dict) else None
                if isinstance(inner, dict) and inner.get("id") == wanted:
                    return str(entry["id"])
            token = answer.get("nextPageToken") if isinstance(answer, dict) else None
            if not isinstance(token, str):
                break
        raise NotFound("no Gmail draft holds that message")

    async def freeze(self, draft: Reference) -> FrozenOutgoing:
        draft_id, raw, thread_id = await self._draft_raw(draft)
        ref = Reference(self.box.tag, draft_id)
        record = frozen_record(raw, self.box.limits, str(ref))
        recipients = record["envelope"]["to"]
        if not recipients:
            raise ToolInputError("the draft has no recipients")
        return FrozenOutgoing(
            record=record,
            digest=digest_of(record),
            draft=ref,
            mime=raw,
            envelope_from=record["envelope"]["from"] or None,
            envelope_to=tuple(recipients),
            message_id=record["internet_message_id"] or None,
            native={"thread_id": thread_id},
            folder_role="drafts",  # a Gmail draft is in Drafts for as long as it is a draft
        )

    async def send(self, frozen: FrozenOutgoing) -> SendResult:
        """``messages.send`` with exactly the frozen bytes, once; then the draft is removed
        (best effort: a draft left behind never turns a sent message into an error)."""
        if frozen.mime is None:
            raise ValueError("a Gmail send needs the frozen MIME bytes")
        body: dict[str, Any] = {"raw": _b64url(frozen.mime)}
        thread_id = frozen.native.get("thread_id")
        if isinstance(thread_id, str):
            body["threadId"] = thread_id
        client = await self.box.client()
        try:
            answer = await client.post("messages", "send", body=body, retry=False)
        except (AuthError, ActionFailure) as error:
            return send_failure(error)
        sent_id = answer.get("id") if isinstance(answer, dict) else None
        if frozen.draft is not None:
            with contextlib.suppress(ActionFailure):
                await client.delete("drafts", frozen.draft.native)
        return SendResult(
            "sent",
            provider_reply=str(sent_id) if sent_id else None,
            sent_copy="filed_by_provider",
            details={"provider": "gmail"},
        )

    async def verify_sent(self, frozen: FrozenOutgoing) -> bool | None:
        """Whether SENT holds a message with the frozen Message-ID (``rfc822msgid:``)."""
        if not frozen.message_id:
            return None
        client = await self.box.client()
        query = [
            ("q", f"rfc822msgid:{frozen.message_id.strip('<>')}"),
            ("labelIds", "SENT"),
            ("maxResults", "1"),
        ]
        answer = await client.get("messages", query=query)
        return bool(isinstance(answer, dict) and answer.get("messages"))

    async def discard_draft(self, draft: Reference) -> None:
        client = await self.box.client()
        await client.delete("drafts", await self._draft_id(draft))


def send_failure(error: AuthError | ActionFailure) -> SendResult:
    """What a ``messages.send`` that did not answer 2xx did: ``not_sent`` when the request
    never left (no token, no connection), ``rejected`` on Google's clear refusal (4xx, rate
    limit), ``unknown`` when it may have been sent (a lost answer, a 5xx, a timeout)."""
    if isinstance(error, AuthError):
        return SendResult(
            "not_sent", detail=error.message, sent_copy="none", error_code="auth_required"
        )
    details = {k: v for k, v in error.details.items() if k != "status"}
    status = error.details.get("status")
    if isinstance(status, int):
        details["provider_status"] = status
    if isinstance(error, GmailUnreachable):
        return SendResult(
            "not_sent",
            detail=error.message,
            sent_copy="none",
            error_code="provider_error",
            details=details,
        )
    if isinstance(error, Ambiguous) or not isinstance(status, int) or status >= 500:
        return SendResult("unknown", detail=error.message, sent_copy="none", details=details)
    if isinstance(error, Throttled | InsufficientScope | NotFound) or 400 <= status < 500:
        return SendResult(
            "rejected",
            detail=error.message,
            sent_copy="none",
            error_code=error.error_code,
            details=details,
        )
    return SendResult("unknown", detail=error.message, sent_copy="none", details=details)
