"""``ImapMailBackend``: the neutral ``MailBackend`` over any standards IMAP server and SMTP.

Every message reference carries folder, UIDVALIDITY and UID (``imap.refs``); each use
opens the folder and compares its UIDVALIDITY first, so a folder deleted and re-created
since is ``StaleReference`` before anything is done. Capabilities are the server's
CAPABILITY answer after login (``capabilities``); what a missing one disables is refused
as ``Unsupported`` before any request. Connections come from a pool of at most
``imap_connections``; a read whose connection dropped is tried once more on a fresh one,
a change only when the drop came before the changing command left (else ``Ambiguous``).

Reads fetch only what a view shows: a listing fetches FLAGS, ENVELOPE, BODYSTRUCTURE,
INTERNALDATE and MODSEQ; a read adds the raw message in ``imap_fetch_chunk_bytes`` partial
fetches up to ``mime_message_bytes``, read by the bounded MIME reader, HTML converted by
the same bounded converter as Graph bodies and credential links cut the same way.
Drafting, freezing and sending are in ``imap.outgoing``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import Any, TypeVar

import trio

from mfconnector.errors import ToolInputError
from mfconnector.imap import commands
from mfconnector.imap.capabilities import describe
from mfconnector.imap.classify import as_failure
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.encode import Piece
from mfconnector.imap.errors import ImapCommandError, ImapConnectionError, ImapError
from mfconnector.imap.folders import find_folder, folders_from_entries
from mfconnector.imap.pages import offset_page
from mfconnector.imap.pool import ImapPool
from mfconnector.imap.refs import (
    MessageAddress,
    folder_name_of,
    folder_reference,
    message_reference,
    parse_attachment,
    parse_message,
)
from mfconnector.imap.results import BodyPart, FetchedMessage, SelectedMailbox
from mfconnector.imap.search import TEXT_SEARCHED, exact, filter_criteria, text_criteria
from mfconnector.imap.session import Stage
from mfconnector.imap.settings import ServerSettings
from mfconnector.imap.summaries import (
    SUMMARY_ITEMS,
    attachments_of,
    message_of,
    summary_of,
)
from mfconnector.limits import Limits
from mfconnector.mail.backend import (
    AttachmentContent,
    MailBackend,
    MailCapabilities,
    OnBytes,
    Spooled,
)
from mfconnector.mail.failures import ActionFailure, NotFound, StaleReference, Unsupported
from mfconnector.mail.model import (
    Attachment,
    Body,
    Folder,
    Message,
    MessageSummary,
    Page,
    Person,
    Position,
)
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
from mfconnector.mail.refs import REFERENCE_PATTERN, AccountTag, Reference, parse_reference
from mfconnector.mime import read_message
from mfconnector.mime.attached import attached_message
from mfconnector.mime.decode import decode_body
from mfconnector.shaping import redact_text
from mfconnector.textconv import convert_html

__all__ = ["ImapMailBackend", "Stage"]

T = TypeVar("T")

_FOLDER_NAME_CHARS = 200


class ImapMailBackend:
    """One IMAP mailbox (and its SMTP submission server) of one account."""

    def __init__(
        self,
        tag: AccountTag,
        imap: ServerSettings,
        limits: Limits,
        *,
        smtp: ServerSettings | None = None,
        sender: Person | None = None,
        append_sent: bool = True,
    ) -> None:
        self._tag = tag
        self._limits = limits
        self._imap = imap
        self._pool = ImapPool(imap, limits)
        self.smtp = smtp
        self.sender = sender or Person("", imap.user if "@" in imap.user else "")
        self.append_sent = append_sent
        self.server_capabilities: frozenset[str] = frozenset()
        """The server's CAPABILITY answer after login (empty until the first connection)."""

    # --- identity and capabilities ---------------------------------------------------

    @property
    def tag(self) -> AccountTag:
        return self._tag

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def pool(self) -> ImapPool:
        return self._pool

    async def start(self) -> None:
        """Log in once to learn the capabilities (``ImapError`` if the server is unreachable)."""
        async with self._pool.connection() as connection:
            self._learn(connection)

    async def aclose(self) -> None:
        await self._pool.aclose()

    def _learn(self, connection: ImapConnection) -> None:
        self.server_capabilities = connection.capabilities

    def has(self, capability: str) -> bool:
        return capability in self.server_capabilities

    @property
    def capabilities(self) -> MailCapabilities:
        offered = self.server_capabilities
        statuses, append_limit = describe(offered)
        missing = [(s.name, s.without_it) for s in statuses if not s.offered]
        if self.smtp is None:
            missing.append(("SMTP", "no SMTP server is configured: sending is unsupported"))
        can_expunge = "UIDPLUS" in offered
        return MailCapabilities(
            provider="imap",
            search_syntax="imap-text",
            threads=True,
            conditional_flags="CONDSTORE" in offered,
            permanent_delete=can_expunge,
            move="MOVE" in offered or can_expunge,
            copy=True,
            categories=True,
            append_sent=self.append_sent,
            sending=self.smtp is not None,
            max_message_bytes=append_limit,
            missing=tuple(missing),
        )

    async def time_zone(self) -> str | None:
        return None  # IMAP keeps no zone for the mailbox

    def for_mailbox(self, mailbox: str) -> MailBackend:
        raise Unsupported("an IMAP account is one mailbox: `mailbox` is not offered")

    # --- running commands ------------------------------------------------------------

    async def run(
        self, doing: str, operation: Callable[[ImapConnection, Stage], Awaitable[T]]
    ) -> T:
        """``operation`` on a pooled connection; its failures as ``mail.failures``.

        A dropped connection before anything changed is tried once more on a fresh one
        (the pool discards the broken one); after the change left it is ``Ambiguous``.
        """
        for attempt in (1, 2):
            stage = Stage()
            try:
                async with self._pool.connection() as connection:
                    self._learn(connection)
                    return await operation(connection, stage)
            except ImapConnectionError as error:
                if attempt == 1 and not stage.changing:
                    continue
                raise as_failure(error, doing, changes=stage.changing) from None
            except ImapError as error:
                raise as_failure(error, doing, changes=stage.changing) from None
        raise AssertionError("unreachable")  # pragma: no cover

    # --- folders ---------------------------------------------------------------------

    async def _all_folders(self, connection: ImapConnection, *, counts: bool) -> list[Folder]:
        entries = await commands.list_mailboxes(connection, with_status=counts)
        special = "SPECIAL-USE" in connection.capabilities
        return folders_from_entries(self._tag, entries, special_use=special)

    async def folders(self, parent: Folder | None, page: PageRequest) -> Page[Folder]:
        async def operation(connection: ImapConnection, stage: Stage) -> list[Folder]:
            return await self._all_folders(connection, counts=True)

        every = await self.run("listing the folders", operation)
        wanted = [f for f in every if f.parent == (parent.ref if parent else None)]
        return offset_page(wanted, page)

    async def resolve_folder(self, value: str, argument: str) -> Folder:
        async def operation(connection: ImapConnection, stage: Stage) -> list[Folder]:
            return await self._all_folders(connection, counts=False)

        every = await self.run("finding the folder", operation)
        if value[:4] == self._tag.tag + ".":
            ref = parse_reference(value, self._tag, argument)
            name = folder_name_of(ref)
            if name is None:
                raise StaleReference(f"`{argument}` is not a folder reference")
            for folder in every:
                if folder.ref == ref:
                    return folder
            raise NotFound(f"`{argument}`: the folder {name!r} no longer exists")
        try:
            return find_folder(every, value, argument)
        except NotFound:
            if re.match(REFERENCE_PATTERN, value):
                parse_reference(value, self._tag, argument)  # another account's: stale
            raise

    def folder_name(self, folder: Folder) -> str:
        name = folder_name_of(folder.ref)
        if name is None or folder.ref.tag != self._tag:
            raise StaleReference("the folder is not one of this account's")
        return name

    async def role_folder(self, role: str) -> Folder | None:
        try:
            return await self.resolve_folder(role, "folder")
        except NotFound:
            return None

    # --- listing and searching -------------------------------------------------------

    def summary_items(self, connection: ImapConnection, *, structure: bool = True) -> list[str]:
        items = [i for i in SUMMARY_ITEMS if structure or i != "BODYSTRUCTURE"]
        if "CONDSTORE" in connection.capabilities:
            items.append("MODSEQ")
        return items

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:
        return await self._listing(
            self.folder_name(folder), folder.ref, filter_criteria(where), exact(where), page
        )

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:
        if not text.strip():
            raise ToolInputError("`query`: say what to search for")
        where = (
            folder or await self.role_folder("all") or await self.resolve_folder("inbox", "folder")
        )
        found = await self._listing(
            self.folder_name(where), where.ref, text_criteria(text), None, page
        )
        return dataclasses.replace(found, searched=f"{TEXT_SEARCHED}, in {where.path}")

    async def _listing(
        self,
        name: str,
        folder_ref: Reference,
        criteria: Sequence[Piece],
        keep: Callable[[MessageSummary], bool] | None,
        page: PageRequest,
    ) -> Page[MessageSummary]:
        limits = self._limits

        async def operation(
            connection: ImapConnection, stage: Stage, *, structure: bool
        ) -> Page[MessageSummary]:
            opened = await _open(connection, name, writable=False)
            position = _checked_position(page.position, name, opened)
            here: Position = position or {
                "folder": name,
                "uid_validity": opened.uidvalidity,
                "before_uid": None,
            }
            before = here.get("before_uid")
            scope: list[Piece] = list(criteria)
            if isinstance(before, int):
                if before <= 1:
                    return Page(items=[], here=here)
                scope = [b"UID", f"1:{before - 1}".encode(), *scope]
            uids = sorted((await commands.search(connection, name, scope)).uids, reverse=True)
            items_wanted = self.summary_items(connection, structure=structure)

            async def summaries(batch: Sequence[int]) -> list[MessageSummary]:
                fetched = {
                    m.uid: m for m in await commands.fetch(connection, name, batch, items_wanted)
                }
                return [
                    summary_of(self._tag, name, opened.uidvalidity, fetched[uid], folder_ref)
                    for uid in batch
                    if uid in fetched
                ]

            if keep is None:
                shown = uids[page.skip : page.skip + page.limit]
                items = await summaries(shown) if shown else []
                more = len(uids) > page.skip + page.limit
                nxt = {**here, "before_uid": shown[-1]} if more and shown else None
                return Page(
                    items=items,
                    here=here,
                    next=nxt,
                    more_pages=more,
                    total=len(uids) if position is None else None,
                )
            wanted = page.skip + page.limit + 1
            kept: list[MessageSummary] = []
            scanned = 0
            batch_size = max(page.limit + 1, 10)
            while scanned < len(uids) and len(kept) < wanted:
                if scanned >= limits.imap_list_scan_messages:
                    break
                batch = uids[scanned : min(scanned + batch_size, limits.imap_list_scan_messages)]
                scanned += len(batch)
                kept.extend(s for s in await summaries(batch) if keep(s))
            items = kept[page.skip : page.skip + page.limit]
            if len(kept) > page.skip + page.limit:
                return Page(
                    items=items,
                    here=here,
                    next={**here, "before_uid": _uid(items[-1])},
                    more_pages=True,
                )
            if scanned < len(uids):  # stopped at the scan bound
                return Page(
                    items=items,
                    here=here,
                    next={**here, "before_uid": uids[scanned - 1]},
                    more_pages=True,
                    note=f"stopped after checking {scanned} messages "
                    "(imap_list_scan_messages): the next page goes on from there",
                )
            return Page(items=items, here=here)

        return await self._with_structure("listing the folder", operation)

    async def _with_structure(self, doing: str, operation: Callable[..., Awaitable[T]]) -> T:
        """Run ``operation`` with BODYSTRUCTURE; if the server's structure of some message
        nests past ``imap_nesting_depth`` (hostile MIME; the reader dropped that connection),
        run it again without, on a fresh connection: the MIME reader then lists parts."""
        try:
            return await self.run(doing, partial(operation, structure=True))
        except ActionFailure as failure:
            if failure.details.get("limit") != "imap_nesting_depth":
                raise
        return await self.run(doing, partial(operation, structure=False))

    # --- reading ---------------------------------------------------------------------

    async def read(self, message: Reference, request: ReadRequest) -> Message:
        where = parse_message(message)

        async def operation(
            connection: ImapConnection, stage: Stage, *, structure: bool
        ) -> Message:
            await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
            items = [
                *self.summary_items(connection, structure=structure),
                "BODY.PEEK[HEADER.FIELDS (REFERENCES)]",
            ]
            fetched = await self._one(connection, where, items)
            raw = b""
            if request.with_body or not structure:
                raw = await self.raw_prefix(connection, where, fetched.size or 0)
            return await self._message(where, fetched, raw, request.with_body)

        return await self._with_structure("reading the message", operation)

    async def _one(
        self, connection: ImapConnection, where: MessageAddress, items: Sequence[str]
    ) -> FetchedMessage:
        found = await commands.fetch(connection, where.folder, [where.uid], items)
        if not found:
            raise NotFound(
                "the message is no longer in its folder (moved or deleted)",
                hint="list the folder again",
            )
        return found[0]

    async def raw_prefix(
        self, connection: ImapConnection, where: MessageAddress, size: int, section: str = ""
    ) -> bytes:
        """The first ``mime_message_bytes`` of a message (or part), in partial fetches."""
        cap = (
            min(size, self._limits.mime_message_bytes) if size else self._limits.mime_message_bytes
        )
        return await self.fetch_bytes(connection, where, section, cap)

    async def fetch_bytes(
        self,
        connection: ImapConnection,
        where: MessageAddress,
        section: str,
        count: int,
        *,
        binary: bool = False,
    ) -> bytes:
        """At most ``count`` bytes of a section, ``imap_fetch_chunk_bytes`` per fetch."""
        chunk = self._limits.imap_fetch_chunk_bytes
        verb = "BINARY" if binary else "BODY"
        out = bytearray()
        while len(out) < count:
            ask = min(chunk, count - len(out))
            found = await commands.fetch(
                connection,
                where.folder,
                [where.uid],
                [f"{verb}.PEEK[{section}]<{len(out)}.{ask}>"],
            )
            if not found:
                break
            data = found[0].sections.get(f"{verb}[{section}]<{len(out)}>", b"")
            out += data
            if len(data) < ask:
                break
        return bytes(out)

    async def _message(
        self, where: MessageAddress, fetched: FetchedMessage, raw: bytes, with_body: bool
    ) -> Message:
        summary = summary_of(self._tag, where.folder, where.uidvalidity, fetched)
        parts = fetched.parts
        if parts is None:  # no BODYSTRUCTURE: the bounded reader's part list instead
            mime = await trio.to_thread.run_sync(read_message, raw, self._limits)
            parts = tuple(
                BodyPart(
                    a.path, a.mime_type, (), None, a.size, a.disposition or "attachment", a.name
                )
                for a in mime.attachments
            )
        attachments = attachments_of(self._tag, where, parts)
        body = None
        if with_body:
            body = await self.body_of(raw, fetched.size)
        references = _header_value(fetched, "REFERENCES")
        return message_of(
            summary,
            fetched,
            attachments,
            body,
            references,
            folder_reference(self._tag, where.folder),
        )

    async def body_of(self, raw: bytes, size: int | None) -> Body:
        """The body text of a raw message prefix: bounded MIME, bounded HTML, links cut."""
        limits = self._limits
        mime = await trio.to_thread.run_sync(read_message, raw, limits)
        notes = list(mime.notes)
        if size is not None and size > len(raw):
            notes.append(
                f"the message is {size:,} bytes: only its first {len(raw):,} were read "
                "(mime_message_bytes)"
            )
        limit = None
        if mime.text is not None:
            text = mime.text
        elif mime.html is not None:
            convert = partial(
                convert_html,
                mime.html,
                max_tags=limits.html_tags,
                check=trio.from_thread.check_cancelled,
            )
            converted = await trio.to_thread.run_sync(convert)
            text, limit = converted.text, converted.limit
        else:
            text = ""
        text, redactions = redact_text(text)
        cut_by = tuple(
            (found.group(1), note)
            for note in notes
            if (found := re.search(r"\((mime_[a-z_]+)\)", note)) is not None
        )
        return Body(
            text, redactions=redactions, conversion_limit=limit, notes=tuple(notes), cut_by=cut_by
        )

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:
        address = parse_attachment(attachment)
        where = address.message
        if parse_message(message) != where:
            raise StaleReference("the attachment does not belong to that message")

        async def operation(connection: ImapConnection, stage: Stage) -> AttachmentContent:
            await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
            fetched = await self._one(connection, where, ["UID", "BODYSTRUCTURE"])
            part = next((p for p in fetched.parts or () if p.path == address.part), None)
            listed = {a.ref: a for a in attachments_of(self._tag, where, fetched.parts)}
            if part is None or attachment not in listed:
                raise NotFound("the message has no such attachment", hint="read the message again")
            return await self._attachment_bytes(
                connection, where, part, listed[attachment], max_bytes
            )

        return await self.run("fetching the attachment", operation)

    async def _attachment_bytes(
        self,
        connection: ImapConnection,
        where: MessageAddress,
        part: BodyPart,
        listed: Attachment,
        max_bytes: int,
    ) -> AttachmentContent:
        if listed.kind == "message":
            raw = await self.raw_prefix(connection, where, part.size or 0, part.path)
            inner = await self.attached_message(listed.ref, raw, part.size)
            return AttachmentContent(
                listed,
                raw[:max_bytes],
                complete=len(raw) <= max_bytes and not inner[1],
                message=inner[0],
            )
        encoding = part.encoding or "7bit"
        if "BINARY" in connection.capabilities and encoding in ("base64", "quoted-printable"):
            try:
                data = await self.fetch_bytes(
                    connection, where, part.path, max_bytes + 1, binary=True
                )
                return AttachmentContent(listed, data[:max_bytes], complete=len(data) <= max_bytes)
            except ImapCommandError:
                pass  # [UNKNOWN-CTE]: decode it here instead
        encoded_cap = (
            max_bytes * 4 // 3 + max_bytes // 38 + 16 if encoding == "base64" else 3 * max_bytes + 3
        )
        encoded = await self.fetch_bytes(connection, where, part.path, encoded_cap + 1)
        whole = len(encoded) <= encoded_cap
        data, _ = decode_body(encoded[:encoded_cap], encoding)
        return AttachmentContent(
            listed, data[:max_bytes], complete=whole and len(data) <= max_bytes
        )

    async def attached_message(
        self, ref: Reference, raw: bytes, size: int | None
    ) -> tuple[Message, bool]:
        """An attached email read from its bytes; True when it was cut."""
        mime = await trio.to_thread.run_sync(read_message, raw, self._limits)
        inner = attached_message(mime, ref, await self.body_of(raw, size), self._limits)
        return inner, mime.truncated or (size is not None and size > len(raw))

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        """A message's attachments as BODYSTRUCTURE lists them, one page."""
        where = parse_message(message)

        async def operation(connection: ImapConnection, stage: Stage) -> list[Attachment]:
            await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
            fetched = await self._one(connection, where, ["UID", "BODYSTRUCTURE"])
            return list(attachments_of(self._tag, where, fetched.parts))

        every = await self.run("listing the attachments", operation)
        return offset_page(every, page)

    def spool_attachment(
        self,
        message: Reference,
        attachment: Reference,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:
        from mfconnector.imap.spool import spool_attachment

        return spool_attachment(
            self, message, attachment, limit=limit, suffix=suffix, on_bytes=on_bytes
        )

    async def profile(self) -> dict[str, str]:
        """Who this account is, for ``account_status`` (no request: IMAP has no profile)."""
        out = {"address": self.sender.address, "user": self._imap.user}
        if self.sender.name:
            out["name"] = self.sender.name
        return out

    # --- threads ---------------------------------------------------------------------

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:
        from mfconnector.imap.threads import conversation

        return await conversation(self, parse_message(message), page)

    # --- acting: folders -------------------------------------------------------------

    async def missing_permissions(self, gate: str) -> Sequence[str]:
        return ()  # an IMAP login may do everything its server allows: nothing to tell first

    async def classify_folder(self, folder: Folder) -> Folder:
        """The folder with the role the server gives it now (by SPECIAL-USE)."""
        return await self.resolve_folder(str(folder.ref), "folder")

    async def create_folder(self, parent: Folder | None, name: str) -> Folder:
        _check_folder_name(name)
        parent_name = self.folder_name(parent) if parent is not None else None

        async def operation(connection: ImapConnection, stage: Stage) -> str:
            entries = await commands.list_mailboxes(connection)
            delimiter = next((e.delimiter for e in entries if e.delimiter), None) or "/"
            if delimiter in name:
                raise ToolInputError(
                    f"`name`: a folder name cannot hold {delimiter!r}, the server's separator"
                )
            full = f"{parent_name}{delimiter}{name}" if parent_name else name
            stage.changing = True
            await commands.create(connection, full)
            return full

        full = await self.run("creating the folder", operation)
        return await self.resolve_folder(str(folder_reference(self._tag, full)), "folder")

    async def rename_folder(self, folder: Folder, name: str) -> Folder:
        _check_folder_name(name)
        if folder.role is not None:
            raise Unsupported(
                f"{folder.path!r} is this mailbox's {folder.role} folder; renaming it is not "
                "offered, so nothing was changed"
            )
        old = self.folder_name(folder)

        async def operation(connection: ImapConnection, stage: Stage) -> str:
            entries = await commands.list_mailboxes(connection)
            entry = next((e for e in entries if e.name == old), None)
            if entry is None:
                raise NotFound(f"the folder {folder.path!r} no longer exists")
            delimiter = entry.delimiter or "/"
            if delimiter in name:
                raise ToolInputError(
                    f"`name`: a folder name cannot hold {delimiter!r}, the server's separator"
                )
            new = old.rsplit(delimiter, 1)[0] + delimiter + name if delimiter in old else name
            if connection.selected is not None and connection.selected.name == old:
                connection.selected = None
                if "UNSELECT" in connection.capabilities:
                    await connection.command("UNSELECT")
            stage.changing = True
            await commands.rename(connection, old, new)
            return new

        new = await self.run("renaming the folder", operation)
        return await self.resolve_folder(str(folder_reference(self._tag, new)), "folder")

    # --- acting: messages ------------------------------------------------------------

    async def _existing(
        self, connection: ImapConnection, where: MessageAddress, *, writable: bool
    ) -> FetchedMessage:
        await commands.open_checked(connection, where.folder, where.uidvalidity, writable=writable)
        items = ["UID", "FLAGS"] + (["MODSEQ"] if "CONDSTORE" in connection.capabilities else [])
        return await self._one(connection, where, items)

    async def copy(self, message: Reference, target: Folder) -> Reference | None:
        where = parse_message(message)
        destination = self.folder_name(target)

        async def operation(connection: ImapConnection, stage: Stage) -> Reference | None:
            await self._existing(connection, where, writable=False)
            stage.changing = True
            copied = await commands.copy(connection, where.folder, [where.uid], destination)
            return self._copied(copied, where, destination)

        return await self.run("copying the message", operation)

    def _copied(self, copied: Any, where: MessageAddress, destination: str) -> Reference | None:
        if copied is None or where.uid not in copied.mapping:
            return None
        return message_reference(
            self._tag, destination, copied.uidvalidity, copied.mapping[where.uid]
        )

    async def move(self, message: Reference, target: Folder) -> Reference | None:
        where = parse_message(message)
        destination = self.folder_name(target)
        self._require_move()
        if where.folder == destination:
            return message

        async def operation(connection: ImapConnection, stage: Stage) -> Reference | None:
            await self._existing(connection, where, writable=True)
            stage.changing = True
            if "MOVE" in connection.capabilities:
                moved = await commands.move(connection, where.folder, [where.uid], destination)
                return self._copied(moved, where, destination)
            copied = await commands.copy(connection, where.folder, [where.uid], destination)
            await commands.store_flags(
                connection, where.folder, [where.uid], ["\\Deleted"], add=True
            )
            await commands.expunge_uids(connection, where.folder, [where.uid])
            return self._copied(copied, where, destination)

        return await self.run("moving the message", operation)

    def _require_move(self) -> None:
        if not (self.has("MOVE") or self.has("UIDPLUS")):
            raise Unsupported(
                "this IMAP server offers neither MOVE nor UIDPLUS: a move could not remove "
                "exactly this message from its folder, so it is not offered",
                details={"provider": "imap", "capability": "MOVE"},
            )

    async def set_flags(self, message: Reference, change: FlagChange) -> MessageSummary | None:
        where = parse_message(message)
        adds, removes = _flag_changes(change)
        token = _change_token(change.unchanged_since)
        if token is not None and not self.has("CONDSTORE"):
            raise Unsupported(
                "this IMAP server offers no CONDSTORE: `unchanged_since` cannot be honoured, "
                "so nothing was changed",
                details={"provider": "imap", "capability": "CONDSTORE"},
            )

        async def operation(connection: ImapConnection, stage: Stage) -> MessageSummary | None:
            await self._existing(connection, where, writable=True)
            since = token
            stage.changing = True
            for flags, add in ((adds, True), (removes, False)):
                if not flags:
                    continue
                try:
                    stored = await commands.store_flags(
                        connection, where.folder, [where.uid], flags, add=add, unchanged_since=since
                    )
                except ValueError as error:
                    raise ToolInputError(f"`categories`: {error}") from None
                if where.uid in stored.modified:
                    done = adds if not add else []
                    raise _conflict(done)
                if since is not None:
                    since = stored.modseqs.get(where.uid, since)
            fetched = await self._one(connection, where, self.summary_items(connection))
            return summary_of(
                self._tag,
                where.folder,
                where.uidvalidity,
                fetched,
                folder_reference(self._tag, where.folder),
            )

        return await self.run("changing the flags", operation)

    async def trash(self, message: Reference) -> Reference | None:
        parse_message(message)
        self._require_move()
        trash = await self.role_folder("trash")
        if trash is None:
            raise Unsupported("this mailbox has no Trash folder (no \\Trash special-use folder)")
        return await self.move(message, trash)

    async def delete_permanently(self, message: Reference) -> None:
        where = parse_message(message)
        if not self.has("UIDPLUS"):
            raise Unsupported(
                "this IMAP server offers no UIDPLUS: only a bare EXPUNGE could delete, and it "
                "would take every message marked deleted with it, so nothing was changed",
                details={"provider": "imap", "capability": "UIDPLUS"},
            )

        async def operation(connection: ImapConnection, stage: Stage) -> None:
            await self._existing(connection, where, writable=True)
            stage.changing = True
            await commands.store_flags(
                connection, where.folder, [where.uid], ["\\Deleted"], add=True
            )
            await commands.expunge_uids(connection, where.folder, [where.uid])

        await self.run("deleting the message", operation)

    # --- drafts and sending (imap.outgoing) ------------------------------------------

    async def create_draft(self, content: DraftContent) -> DraftMade:
        from mfconnector.imap import outgoing

        return await outgoing.create_draft(self, content)

    async def revise_draft(self, draft: Reference, revision: DraftRevision) -> DraftMade:
        from mfconnector.imap import outgoing

        return await outgoing.revise_draft(self, draft, revision)

    async def resolve_attachment(self, attachment: DraftAttachment) -> DraftAttachment:
        """Name, type and size of another message's attachment, read before any write; its
        version is the message's UIDVALIDITY and UID (IMAP messages never change)."""
        if attachment.source is None:
            return attachment
        if attachment.source_kind != "attachment":
            raise ToolInputError(
                "an IMAP account has no drive: attach bytes or another message's attachment"
            )
        address = parse_attachment(attachment.source, "attachments")
        where = address.message
        message = message_reference(self._tag, where.folder, where.uidvalidity, where.uid)
        found = await self.attachment(message, attachment.source, 0)
        return resolved_attachment(attachment, found.attachment, f"{where.uidvalidity}.{where.uid}")

    async def source_version(self, attachment: DraftAttachment) -> str | None:
        if attachment.source is None or attachment.source_kind != "attachment":
            return None
        where = parse_attachment(attachment.source, "attachments").message
        message = message_reference(self._tag, where.folder, where.uidvalidity, where.uid)
        try:
            await self.read(message, ReadRequest(with_body=False))
        except (NotFound, StaleReference):
            return None
        return f"{where.uidvalidity}.{where.uid}"

    async def create_response(
        self, message: Reference, kind: ReplyKind, content: DraftContent
    ) -> DraftMade:
        from mfconnector.imap import outgoing

        return await outgoing.create_response(self, parse_message(message), kind, content)

    async def freeze(self, draft: Reference) -> FrozenOutgoing:
        from mfconnector.imap import outgoing

        return await outgoing.freeze(self, draft)

    async def send(self, frozen: FrozenOutgoing) -> SendResult:
        from mfconnector.imap import outgoing

        return await outgoing.send(self, frozen)

    async def verify_sent(self, frozen: FrozenOutgoing) -> bool | None:
        from mfconnector.imap import outgoing

        return await outgoing.verify_sent(self, frozen)

    async def discard_draft(self, draft: Reference) -> None:
        from mfconnector.imap import outgoing

        await outgoing.discard_draft(self, parse_message(draft, "draft_id"))


# --- helpers ---------------------------------------------------------------------------


async def _open(connection: ImapConnection, name: str, *, writable: bool) -> SelectedMailbox:
    current = connection.selected
    if current is not None and current.name == name and (not writable or not current.read_only):
        return current
    return await (commands.select if writable else commands.examine)(connection, name)


def _checked_position(
    position: Position | None, name: str, opened: SelectedMailbox
) -> Position | None:
    if position is None:
        return None
    if position.get("folder") != name:
        raise StaleReference("the cursor belongs to another folder", hint="list this folder anew")
    if position.get("uid_validity") != opened.uidvalidity:
        raise StaleReference(
            f"the folder {name!r} was re-created or renumbered since this cursor was made "
            "(UIDVALIDITY changed)",
            hint="list the folder again from the start",
        )
    return position


def _uid(summary: MessageSummary) -> int:
    return int(summary.ref.native.split(".", 2)[1])


def _header_value(fetched: FetchedMessage, name: str) -> str | None:
    for key, data in fetched.sections.items():
        if key.upper().startswith("BODY[HEADER.FIELDS") and data:
            text = data.decode("utf-8", "replace")
            _, _, value = text.partition(":")
            value = " ".join(value.split())
            return value or None
    return None


def _check_folder_name(name: str) -> None:
    from mfconnector.visible import find_hidden

    if not name.strip() or len(name) > _FOLDER_NAME_CHARS:
        raise ToolInputError(f"`name`: a folder name of 1 to {_FOLDER_NAME_CHARS} characters")
    if find_hidden(name) is not None or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise ToolInputError("`name`: a folder name cannot hold control or invisible characters")


def _flag_changes(change: FlagChange) -> tuple[list[str], list[str]]:
    adds: list[str] = []
    removes: list[str] = []
    if change.unread is True:
        removes.append("\\Seen")
    elif change.unread is False:
        adds.append("\\Seen")
    if change.flag == "flagged":
        adds.append("\\Flagged")
    elif change.flag == "none":
        removes.append("\\Flagged")
    elif change.flag == "done":
        raise Unsupported(
            'IMAP has no "done" flag (only flagged or not): nothing was changed',
            details={"provider": "imap"},
        )
    adds.extend(change.add_categories)
    removes.extend(change.remove_categories)
    if not adds and not removes:
        raise ToolInputError("nothing to change: say unread, flag or categories")
    return adds, removes


def _change_token(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or len(value) > 20:
        raise ToolInputError(
            "`unchanged_since`: not a change token of this account (a MODSEQ from mail_read)"
        )
    return int(value)


def _conflict(done: list[str]) -> ActionFailure:
    from mfconnector.mail.failures import Conflict

    outcome = {"changed": False} if not done else {"changed": True, "added": done}
    return Conflict(
        "the message changed since its change token was read ([MODIFIED]): "
        + ("nothing was changed" if not done else "only the additions were made"),
        hint="read the message again and decide with its new state",
        outcome=outcome,
        details={"provider": "imap"},
    )
