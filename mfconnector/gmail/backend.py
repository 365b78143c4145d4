"""``GmailMailBackend``: the ``MailBackend`` protocol over the Gmail API v1.

References are ``g??.<native>``: a message's id (hexadecimal), a draft's id (``r…``), a
label's id (``INBOX``, ``Label_12``) or an attachment's MIME part id (``1``, ``0.2``; the
read's message reference says which message). Gmail's attachmentIds are not stable across
reads, so the part id is what a reference keeps, and the current attachmentId is looked up
when the bytes are fetched. Capabilities say what Gmail cannot do here: conditional flag
changes (no change key) and, unless the full-mail scope was asked for, permanent deletion.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from mfconnector.gmail.acts import GmailActs
from mfconnector.gmail.mailbox import FULL_MAIL_SCOPE, ClientFactory, GmailMailbox
from mfconnector.gmail.reads import GmailReads
from mfconnector.gmail.scopes import GATE_SCOPES
from mfconnector.limits import Limits
from mfconnector.mail.backend import (
    AttachmentContent,
    MailBackend,
    MailCapabilities,
    OnBytes,
    Spooled,
)
from mfconnector.mail.failures import NotFound, StaleReference, Unsupported
from mfconnector.mail.model import Attachment, Folder, Message, MessageSummary, Page
from mfconnector.mail.outgoing import (
    DraftAttachment,
    DraftContent,
    DraftMade,
    DraftRevision,
    FrozenOutgoing,
    ReplyKind,
    SendResult,
    resolved_attachment,
)
from mfconnector.mail.query import FlagChange, MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import AccountTag, Reference

__all__ = ["GmailMailBackend", "gmail_capabilities"]

NO_CHANGE_KEY = (
    "conditional_flags",
    "Gmail has no per-message change key: `unchanged_since` is refused as unsupported",
)
NO_FULL_SCOPE = (
    "permanent_delete",
    "needs --enable-delete and a sign-in with Gmail's full-mail scope (https://mail.google.com/)",
)
NO_SHARED = ("shared_mailboxes", "a Gmail account reads only its own mailbox")


def gmail_capabilities(scopes: frozenset[str]) -> MailCapabilities:
    full = FULL_MAIL_SCOPE in scopes
    missing = [NO_CHANGE_KEY, NO_SHARED] + ([] if full else [NO_FULL_SCOPE])
    return MailCapabilities(
        provider="gmail",
        search_syntax="gmail",
        threads=True,
        conditional_flags=False,
        permanent_delete=full,
        move=True,
        copy=True,
        categories=True,
        unique_body=False,
        shared_mailboxes=False,
        labels=True,
        append_sent=False,
        missing=tuple(missing),
    )


class GmailMailBackend:
    """One Gmail account's mailbox."""

    def __init__(
        self,
        tag: AccountTag,
        client: ClientFactory,
        limits: Limits,
        *,
        scopes: frozenset[str] = frozenset(),
        login_command: str = "mfconnector login --provider gmail",
    ) -> None:
        self.client_factory = client
        """What makes (once) and hands out this account's client; the wiring closes it."""
        self._box = GmailMailbox(tag, client, limits, scopes, login_command)
        self._reads = GmailReads(self._box)
        self._acts = GmailActs(self._box, self._reads)
        self._capabilities = gmail_capabilities(scopes)

    @property
    def tag(self) -> AccountTag:
        return self._box.tag

    @property
    def capabilities(self) -> MailCapabilities:
        return self._capabilities

    async def time_zone(self) -> str | None:
        return None  # the Gmail API keeps no mailbox time zone

    def for_mailbox(self, mailbox: str) -> MailBackend:
        raise Unsupported("a Gmail account reads only its own mailbox (no `mailbox`)")

    # reads
    async def folders(self, parent: Folder | None, page: PageRequest) -> Page[Folder]:
        return await self._reads.folders(parent, page)

    async def resolve_folder(self, value: str, argument: str) -> Folder:
        return await self._reads.resolve_folder(value, argument)

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:
        return await self._reads.list_messages(folder, where, page)

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:
        return await self._reads.search(text, folder, page)

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:
        return await self._reads.thread(message, page)

    async def read(self, message: Reference, request: ReadRequest) -> Message:
        return await self._reads.read(message, request)

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:
        return await self._reads.attachment(message, attachment, max_bytes)

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        return await self._reads.attachments(message, page)

    def spool_attachment(
        self,
        message: Reference,
        attachment: Reference,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:
        return self._reads.spool_attachment(
            message, attachment, limit=limit, suffix=suffix, on_bytes=on_bytes
        )

    async def profile(self) -> dict[str, str]:
        return await self._reads.profile()

    async def missing_permissions(self, gate: str) -> Sequence[str]:
        """The scopes an acting gate needs that the sign-in lacks, where the token
        provider says what was granted (Google sign-in); else () and Gmail's own 403
        answers ``insufficient_scope`` with the login command."""
        client = await self.client_factory()
        granted = await client.granted_scopes()
        if granted is None or FULL_MAIL_SCOPE in granted:
            return ()
        return tuple(scope for scope in GATE_SCOPES.get(gate, ()) if scope not in granted)

    async def classify_folder(self, folder: Folder) -> Folder:
        """The label as Gmail names it now, with its role (by its id)."""
        tree = await self._box.labels(fresh=True)
        if folder.ref.native not in tree:
            raise NotFound("no such Gmail label (any more)")
        return tree.folder(folder.ref.native)

    # acting
    async def create_folder(self, parent: Folder | None, name: str) -> Folder:
        return await self._acts.create_folder(parent, name)

    async def rename_folder(self, folder: Folder, name: str) -> Folder:
        return await self._acts.rename_folder(folder, name)

    async def copy(self, message: Reference, target: Folder) -> Reference | None:
        return await self._acts.copy(message, target)

    async def move(self, message: Reference, target: Folder) -> Reference | None:
        return await self._acts.move(message, target)

    async def set_flags(self, message: Reference, change: FlagChange) -> MessageSummary | None:
        return await self._acts.set_flags(message, change)

    async def trash(self, message: Reference) -> Reference | None:
        return await self._acts.trash(message)

    async def delete_permanently(self, message: Reference) -> None:
        await self._acts.delete_permanently(message)

    async def create_draft(self, content: DraftContent) -> DraftMade:
        return await self._acts.create_draft(content)

    async def create_response(
        self, message: Reference, kind: ReplyKind, content: DraftContent
    ) -> DraftMade:
        return await self._acts.create_response(message, kind, content)

    async def revise_draft(self, draft: Reference, revision: DraftRevision) -> DraftMade:
        """A new Gmail draft from the old one's bytes with the changes; the old one stays."""
        return await self._acts.revise_draft(draft, revision)

    async def resolve_attachment(self, attachment: DraftAttachment) -> DraftAttachment:
        """Name, type and size of another Gmail message's attachment, read before anything
        is written. Its version is the message id and part id: a Gmail message's content
        never changes (only its labels), so the bytes attached are the bytes shown. A drive
        file (another provider's object) is ``Unsupported``: Gmail has no drive here."""
        if attachment.source is None:
            return attachment
        if attachment.source_kind != "attachment" or attachment.container is None:
            raise Unsupported(
                "a Gmail account has no drive: attach bytes (content_base64) or another "
                "Gmail message's attachment (message_id, attachment_id)",
            )
        found = await self._reads.attachment(attachment.container, attachment.source, 0)
        return resolved_attachment(
            attachment,
            found.attachment,
            f"{attachment.container.native}.{attachment.source.native}",
        )

    async def source_version(self, attachment: DraftAttachment) -> str | None:
        """The message id and part id while that attachment is still there; else None."""
        if (
            attachment.source is None
            or attachment.source_kind != "attachment"
            or attachment.container is None
        ):
            return None
        try:
            await self._reads.attachment(attachment.container, attachment.source, 0)
        except (NotFound, StaleReference):
            return None
        return f"{attachment.container.native}.{attachment.source.native}"

    async def freeze(self, draft: Reference) -> FrozenOutgoing:
        return await self._acts.freeze(draft)

    async def send(self, frozen: FrozenOutgoing) -> SendResult:
        return await self._acts.send(frozen)

    async def verify_sent(self, frozen: FrozenOutgoing) -> bool | None:
        return await self._acts.verify_sent(frozen)

    async def discard_draft(self, draft: Reference) -> None:
        await self._acts.discard_draft(draft)
