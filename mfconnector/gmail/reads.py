"""The reading half of ``GmailMailBackend``: labels, listings, searches, threads, reads and
attachments.

``messages.list`` answers ids only, so a page costs one list request and one
``messages.get?format=metadata`` per message, run ``gmail_concurrency`` at a time; every
answer is read under ``graph_body_bytes`` and the page's answers together under the same
cap (a page whose metadata passes it ends early, and its position says where the rest
starts). Positions are JSON the tools sign into their cursor: ``{"page_token", "offset"}``
(Gmail's pageToken, and how far into that Gmail page the next item is).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal
from urllib.parse import quote, urlencode

import trio

from mfconnector.errors import ToolInputError
from mfconnector.gmail.api_root import API_PATH
from mfconnector.gmail.convert import (
    METADATA_HEADERS,
    attached_message,
    ids_of,
    message_of,
    summary_of,
)
from mfconnector.gmail.errors import failure_from_answer, is_rate_limited
from mfconnector.gmail.ids import checked_label, checked_message, checked_part, is_draft_id
from mfconnector.gmail.labels import ALL_MAIL, LabelTree, role_label
from mfconnector.gmail.mailbox import GmailMailbox
from mfconnector.gmail.payload import PartFile, walk_payload
from mfconnector.gmail.query import filter_query, search_query
from mfconnector.gmail.spool import OnBytes, SpooledAttachment, spooled_bytes
from mfconnector.mail.backend import AttachmentContent
from mfconnector.mail.failures import ActionFailure, NotFound
from mfconnector.mail.model import (
    FOLDER_ROLES,
    Attachment,
    Body,
    Folder,
    Message,
    MessageSummary,
    Page,
)
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import REFERENCE_PATTERN, Reference, parse_reference
from mfconnector.shaping import redact_text
from mfconnector.textconv import convert_html

__all__ = ["SEARCHED", "GmailReads"]

SEARCHED = (
    "Gmail search syntax (its operators work: from:, subject:, has:attachment, "
    "newer_than:, label:, ...) over senders, recipients, subject, body and attachment names"
)


def _position(page: PageRequest) -> tuple[str | None, int]:
    position: Mapping[str, Any] = page.position or {}
    token = position.get("page_token")
    offset = position.get("offset", 0)
    if token is not None and not isinstance(token, str):
        raise ToolInputError("this cursor does not belong to a Gmail listing")
    if not isinstance(offset, int) or offset < 0:
        raise ToolInputError("this cursor does not belong to a Gmail listing")
    return token, offset + page.skip


class GmailReads:
    def __init__(self, box: GmailMailbox) -> None:
        self.box = box

    # --- folders (labels) ------------------------------------------------------------

    async def folders(self, parent: Folder | None, page: PageRequest) -> Page[Folder]:
        tree = await self.box.labels(fresh=page.position is None and page.skip == 0)
        _, start = _position(page)
        ids = tree.children_of(parent.ref.native if parent else None)
        chosen = ids[start : start + page.limit]
        counts = await self._counts([i for i in chosen if i != ALL_MAIL])
        items = [tree.folder(i, counts.get(i)) for i in chosen]
        following = start + len(chosen)
        return Page(
            items=items,
            here={"offset": start - page.skip},
            next={"offset": following} if following < len(ids) else None,
            total=len(ids),
            note="Gmail folders are labels: one message can carry several, so it can be "
            "listed under more than one of them",
        )

    async def _counts(self, label_ids: Sequence[str]) -> dict[str, Any]:
        """``labels.get`` of each (Gmail's ``labels.list`` has no counts), in parallel."""
        client = await self.box.client()
        found: dict[str, Any] = {}

        async def one(label_id: str) -> None:
            with contextlib.suppress(NotFound):
                found[label_id] = await client.get("labels", label_id)

        async with trio.open_nursery() as nursery:
            for label_id in label_ids:
                nursery.start_soon(one, label_id)
        return found

    async def resolve_folder(self, value: str, argument: str) -> Folder:
        text = value.strip()
        if not text:
            raise ToolInputError(f"`{argument}` is empty")
        if len(text) > self.box.limits.path_chars:
            raise ToolInputError(f"`{argument}` is longer than {self.box.limits.path_chars}")
        if re.match(REFERENCE_PATTERN, text):
            label_id = checked_label(parse_reference(text, self.box.tag, argument))
            tree = await self.box.labels()
            if label_id not in tree:
                tree = await self.box.labels(fresh=True)
            if label_id not in tree:
                raise NotFound(f"`{argument}`: no such Gmail label (any more)")
            return tree.folder(label_id)
        tree = await self.box.labels()
        if text.lower() in FOLDER_ROLES:
            role = role_label(text.lower())
            if role is None or role not in tree:
                raise NotFound(f"`{argument}`: Gmail has no {text.lower()!r} folder")
            return tree.folder(role)
        found = tree.matching(text)
        if not found:
            tree = await self.box.labels(fresh=True)
            found = tree.matching(text)
        if not found:
            raise NotFound(
                f"`{argument}`: no Gmail label named {text[:80]!r}",
                hint="mail_folders lists the labels",
            )
        if len(found) > 1:
            shown = [tree.folder(i).path for i in found[: self.box.limits.candidates_listed]]
            raise ToolInputError(
                f"`{argument}`: {len(found)} labels are named {text[:80]!r}",
                hint="name one by its path or id: " + ", ".join(shown),
            )
        return tree.folder(found[0])

    # --- listings --------------------------------------------------------------------

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:
        return await self._listing(filter_query(where), folder, page, None)

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:
        query = search_query(text, self.box.limits.query_chars)
        return await self._listing(query, folder, page, SEARCHED)

    async def _listing(
        self, q: str, folder: Folder | None, page: PageRequest, searched: str | None
    ) -> Page[MessageSummary]:
        token, offset = _position(page)
        client = await self.box.client()
        query: list[tuple[str, str]] = [("maxResults", str(page.limit + offset))]
        if q:
            query.append(("q", q))
        if folder is not None and folder.ref.native != ALL_MAIL:
            query.append(("labelIds", folder.ref.native))
            if folder.ref.native in ("SPAM", "TRASH"):  # left out of every list unless asked
                query.append(("includeSpamTrash", "true"))
        if token:
            query.append(("pageToken", token))
        answer = await client.get("messages", query=query)
        refs = ids_of(answer, "messages")
        next_token = answer.get("nextPageToken") if isinstance(answer, dict) else None
        wanted = refs[offset : offset + page.limit]
        tree = await self.box.labels()
        folder_ref = folder.ref if folder is not None and folder.ref.native != ALL_MAIL else None
        items, used = await self._metadata([str(r["id"]) for r in wanted], tree, folder_ref)
        here = {"page_token": token, "offset": offset - page.skip}
        following = offset + used
        note = None
        if used < len(wanted):
            note = (
                f"the page's metadata passed {self.box.limits.graph_body_bytes:,} bytes "
                "(graph_body_bytes): the rest follows with the cursor"
            )
        if following < len(refs):
            next_position: dict[str, Any] | None = {"page_token": token, "offset": following}
        elif isinstance(next_token, str):
            next_position = {"page_token": next_token, "offset": 0}
        else:
            next_position = None
        estimate = answer.get("resultSizeEstimate") if isinstance(answer, dict) else None
        return Page(
            items=items,
            here=here,
            next=next_position,
            more_pages=next_position is not None,
            total=estimate if isinstance(estimate, int) and next_position is None else None,
            note=note,
            searched=searched,
        )

    async def _metadata(
        self, ids: Sequence[str], tree: LabelTree, folder: Reference | None
    ) -> tuple[list[MessageSummary], int]:
        """Summaries of ``ids`` in order; how many ids they cover.

        One batch request per ``gmail_batch_calls`` ids; a call the batch could not
        answer (a rate limit inside it, a broken part) is asked again on its own, with
        the client's retries. A message deleted since the list answered is left out. The
        answers' bytes are summed in order: past ``graph_body_bytes`` the page ends."""
        answers: dict[int, tuple[Any, int]] = {}
        size = self.box.limits.gmail_batch_calls
        for start in range(0, len(ids), size):
            chunk = ids[start : start + size]
            for offset, found in enumerate(await self._batch(chunk)):
                answers[start + offset] = found
        items: list[MessageSummary] = []
        budget = self.box.limits.graph_body_bytes
        spent = 0
        for index in range(len(ids)):
            answer, cost = answers.get(index, (None, 0))
            spent += cost
            if spent > budget and items:
                return items, index
            if isinstance(answer, dict):
                items.append(summary_of(answer, self.box.tag, tree, self.box.limits, folder))
        return items, len(ids)

    async def _batch(self, ids: Sequence[str]) -> list[tuple[Any, int]]:
        """(message resource or None, answer bytes) for each id."""
        client = await self.box.client()
        query = urlencode(
            [("format", "metadata"), *(("metadataHeaders", h) for h in METADATA_HEADERS)]
        )
        paths = [f"{API_PATH}/messages/{quote(i, safe='')}?{query}" for i in ids]
        try:
            parts = await client.batch_get(paths)
        except NotFound:  # a proxy without the batch endpoint: one get each
            parts = [(0, b"")] * len(ids)
        out: list[tuple[Any, int]] = []
        again: list[int] = []
        for index, (status, body) in enumerate(parts):
            out.append((None, len(body)))
            if status == 200:
                try:
                    out[-1] = (client.parse_json(body), len(body))
                except ActionFailure:  # a part that is not JSON: asked again on its own
                    again.append(index)
                continue
            if status == 404:
                continue
            if status in (0, 429) or status >= 500 or is_rate_limited(status, body):
                again.append(index)
                continue
            raise failure_from_answer(status, {}, body, login_command=self.box.login_command)
        if again:
            await self._one_by_one(ids, again, out)
        return out

    async def _one_by_one(
        self, ids: Sequence[str], indexes: Sequence[int], out: list[tuple[Any, int]]
    ) -> None:
        client = await self.box.client()
        query = [("format", "metadata"), *(("metadataHeaders", h) for h in METADATA_HEADERS)]

        async def one(index: int) -> None:
            before = client.counter.bytes_read
            with contextlib.suppress(NotFound):
                out[index] = (await client.get("messages", ids[index], query=query), 0)
            out[index] = (out[index][0], max(client.counter.bytes_read - before, 0))

        async with trio.open_nursery() as nursery:
            for index in indexes:
                nursery.start_soon(one, index)

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:
        client = await self.box.client()
        minimal = await client.get(*self._message_path(message), query=[("format", "minimal")])
        thread_id = _thread_id(minimal)
        query = [("format", "metadata"), *(("metadataHeaders", h) for h in METADATA_HEADERS)]
        answer = await client.get("threads", thread_id, query=query)
        _, start = _position(page)
        entries = ids_of(answer, "messages")
        tree = await self.box.labels()
        chosen = entries[start : start + page.limit]
        items = [summary_of(entry, self.box.tag, tree, self.box.limits) for entry in chosen]
        following = start + len(chosen)
        return Page(
            items=items,
            here={"offset": start - page.skip},
            next={"offset": following} if following < len(entries) else None,
            total=len(entries),
        )

    def _message_path(self, message: Reference) -> tuple[str, ...]:
        native = checked_message(message)
        return ("drafts", native) if is_draft_id(native) else ("messages", native)

    # --- reading ---------------------------------------------------------------------

    async def _full(self, message: Reference) -> dict[str, Any]:
        client = await self.box.client()
        answer = await client.get(*self._message_path(message), query=[("format", "full")])
        if is_draft_id(message.native) and isinstance(answer, dict):
            answer = answer.get("message")
        if not isinstance(answer, dict):
            raise NotFound("Gmail has no such message (any more)")
        return answer

    async def read(self, message: Reference, request: ReadRequest) -> Message:
        item = await self._full(message)
        limits = self.box.limits
        walked = walk_payload(item.get("payload"), limits)
        body = (
            await self._body(walked.text, walked.html, walked.notes) if request.with_body else None
        )
        files = walked.files[: limits.list_field_items]
        attachments = tuple(self._attachment(f) for f in files)
        tree = await self.box.labels()
        native = {
            "label_ids": [lb for lb in item.get("labelIds") or [] if isinstance(lb, str)][
                : limits.list_field_items
            ],
            "history_id": str(item.get("historyId", ""))[:40] or None,
        }
        message_obj = message_of(
            item,
            self.box.tag,
            tree,
            limits,
            {
                "body": body,
                "attachments": attachments,
                "more_attachments": len(walked.files) > len(files),
                "has_attachments": bool(walked.files),
                "native": native,
            },
        )
        return message_obj

    def _attachment(self, part: PartFile) -> Attachment:
        kind: Literal["file", "message"] = (
            "message" if part.mime_type == "message/rfc822" else "file"
        )
        return Attachment(
            ref=Reference(self.box.tag, part.part_id),
            name=part.name,
            content_type=part.mime_type,
            size=part.size,
            kind=kind,
            inline=part.inline,
            content_id=part.content_id,
        )

    async def _body(self, text: str | None, html: str | None, notes: Sequence[str] = ()) -> Body:
        limit = None
        if text is None and html is not None:
            convert = partial(
                convert_html,
                html,
                max_tags=self.box.limits.html_tags,
                check=trio.from_thread.check_cancelled,
            )
            converted = await trio.to_thread.run_sync(convert)
            text, limit = converted.text, converted.limit
        cleaned, redactions = redact_text(text or "")
        return Body(cleaned, redactions=redactions, conversion_limit=limit, notes=tuple(notes))

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        """A message's attachments (metadata, from one ``format=full`` read), one page."""
        item = await self._full(message)
        files = walk_payload(item.get("payload"), self.box.limits).files
        _, start = _position(page)
        chosen = files[start : start + page.limit]
        following = start + len(chosen)
        return Page(
            items=[self._attachment(f) for f in chosen],
            here={"offset": start - page.skip},
            next={"offset": following} if following < len(files) else None,
            total=len(files),
        )

    async def _part(self, message: Reference, attachment: Reference) -> tuple[str, PartFile]:
        checked_part(attachment)
        item = await self._full(message)
        walked = walk_payload(item.get("payload"), self.box.limits)
        part = next((f for f in walked.files if f.part_id == attachment.native), None)
        if part is None:
            raise NotFound("the message has no such attachment (any more)")
        return str(item.get("id")), part

    async def _bytes(self, message_id: str, part: PartFile, max_bytes: int) -> tuple[bytes, bool]:
        if part.attachment_id is None:
            data = part.inline_data or b""
            return data[:max_bytes], len(data) <= max_bytes
        client = await self.box.client()
        return await client.get_base64_field(
            ("messages", message_id, "attachments", part.attachment_id), "data", max_bytes
        )

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:
        """Its bytes up to ``max_bytes`` (0: metadata only); an attached email parsed
        under the MIME limits (``data`` then empty)."""
        if max_bytes < 0:
            raise ToolInputError("max_bytes must not be negative")
        message_id, part = await self._part(message, attachment)
        described = self._attachment(part)
        if described.kind == "message":
            limits = self.box.limits
            raw, _ = await self._bytes(message_id, part, limits.mime_message_bytes)
            return AttachmentContent(
                described, b"", True, attached_message(raw, self.box.tag, limits)
            )
        if max_bytes == 0:
            return AttachmentContent(described, b"", part.size == 0)
        data, complete = await self._bytes(message_id, part, max_bytes)
        return AttachmentContent(described, data, complete)

    @contextlib.asynccontextmanager
    async def spool_attachment(
        self,
        message: Reference,
        attachment: Reference,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AsyncIterator[SpooledAttachment]:
        message_id, part = await self._part(message, attachment)
        data, complete = await self._bytes(message_id, part, limit + 1)
        async with spooled_bytes(
            data,
            complete,
            limit=limit,
            declared=part.size or None,
            suffix=suffix,
            on_bytes=on_bytes,
        ) as spooled:
            yield spooled

    async def profile(self) -> dict[str, str]:
        """Who is signed in (``getProfile``): the address; Gmail gives no display name."""
        return {"address": await self.box.address(), "provider": "gmail"}


def _thread_id(answer: Any) -> str:
    if isinstance(answer, dict) and isinstance(answer.get("message"), dict):
        answer = answer["message"]
    thread = answer.get("threadId") if isinstance(answer, dict) else None
    if not isinstance(thread, str):
        raise NotFound("Gmail gave no thread for this message")
    return thread
