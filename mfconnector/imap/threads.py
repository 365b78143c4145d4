"""A message's conversation over IMAP, oldest first, within a stated bound.

Where the server offers THREAD=REFERENCES (RFC 5256) it computes the thread in the
message's folder; otherwise the folder is searched for the message's Message-ID and
References (a bounded walk, two rounds). Either way the Sent folder is searched too, for
replies whose References name the conversation's messages, since a reply the person wrote
lives there. At most ``imap_thread_messages`` messages; the page's ``note`` says what was
searched and the bound.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mfconnector.imap import commands
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.encode import Piece, astring
from mfconnector.imap.pages import offset_page
from mfconnector.imap.refs import MessageAddress, folder_reference
from mfconnector.imap.results import ThreadNode
from mfconnector.imap.summaries import summary_of
from mfconnector.mail.model import MessageSummary, Page
from mfconnector.mail.query import PageRequest

if TYPE_CHECKING:
    from mfconnector.imap.session import ImapSession, Stage

__all__ = ["conversation"]

_MESSAGE_ID = re.compile(r"<[^<>\s]{1,250}>")
_IDS_SEARCHED = 20
"""Most Message-IDs one search names (an OR chain per id)."""


def _ids(*values: str | None) -> list[str]:
    found: list[str] = []
    for value in values:
        for match in _MESSAGE_ID.findall(value or ""):
            if match not in found:
                found.append(match)
    return found


def _any_of(ids: Sequence[str]) -> list[Piece]:
    """``OR HEADER Message-ID a OR HEADER References a ...`` for each id."""
    keys: list[list[Piece]] = []
    for value in ids[:_IDS_SEARCHED]:
        keys.append([b"HEADER", b"Message-ID", astring(value)])
        keys.append([b"HEADER", b"References", astring(value)])
        keys.append([b"HEADER", b"In-Reply-To", astring(value)])
    pieces: list[Piece] = []
    for index, key in enumerate(keys):
        if index < len(keys) - 1:
            pieces.append(b"OR")
        pieces.extend(key)
    return pieces


def _tree_with(roots: Iterable[ThreadNode], uid: int) -> list[int]:
    for root in roots:
        members: list[int] = []
        stack = [root]
        while stack:
            node = stack.pop()
            if node.uid:
                members.append(node.uid)
            stack.extend(node.children)
        if uid in members:
            return members
    return [uid]


async def conversation(
    backend: ImapSession, where: MessageAddress, page: PageRequest
) -> Page[MessageSummary]:
    bound = backend.limits.imap_thread_messages
    sent = await backend.role_folder("sent")
    sent_name = backend.folder_name(sent) if sent is not None else None

    async def operation(
        connection: ImapConnection, stage: Stage
    ) -> tuple[list[MessageSummary], str]:
        await commands.open_checked(connection, where.folder, where.uidvalidity, writable=False)
        items = ["UID", "ENVELOPE", "BODY.PEEK[HEADER.FIELDS (REFERENCES)]"]
        found = await commands.fetch(connection, where.folder, [where.uid], items)
        if not found:
            from mfconnector.mail.failures import NotFound

            raise NotFound("the message is no longer in its folder", hint="list the folder again")
        head = found[0]
        references = b"".join(found[0].sections.values()).decode("utf-8", "replace")
        envelope = head.envelope
        ids = _ids(
            envelope.message_id if envelope else None,
            envelope.in_reply_to if envelope else None,
            references,
        )
        how: str
        if "THREAD=REFERENCES" in connection.capabilities:
            uids = _tree_with(await commands.thread(connection, where.folder), where.uid)
            how = f"the server's THREAD=REFERENCES in {where.folder}"
        else:
            uids = [where.uid]
            for _ in range(2):  # the walk: ids of what was found lead to more
                if not ids:
                    break
                result = await commands.search(connection, where.folder, _any_of(ids))
                uids = sorted(set(uids) | set(result.uids))
                if len(uids) >= bound:
                    break
                more = await commands.fetch(
                    connection,
                    where.folder,
                    uids[:bound],
                    ["UID", "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID REFERENCES)]"],
                )
                grown = _ids(
                    *(b"".join(m.sections.values()).decode("utf-8", "replace") for m in more)
                )
                if set(grown) <= set(ids):
                    break
                ids = list(dict.fromkeys([*ids, *grown]))
            how = f"a search of References and In-Reply-To in {where.folder} (two rounds)"
        summaries = await _summaries(backend, connection, where.folder, uids[:bound])
        if sent_name is not None and sent_name != where.folder and ids:
            result = await commands.search(connection, sent_name, _any_of(ids))
            room = bound - len(summaries)
            if result.uids and room > 0:
                newest = sorted(result.uids)[-room:]
                summaries += await _summaries(backend, connection, sent_name, newest)
            how += f" and of {sent_name} for replies"
        return summaries, how

    summaries, how = await backend.run("gathering the conversation", operation)
    summaries.sort(key=lambda s: (s.received is None, s.received))
    note = f"found by {how}; at most {bound} messages (imap_thread_messages)"
    return offset_page(summaries, page, note=note)


async def _summaries(
    backend: ImapSession, connection: ImapConnection, folder: str, uids: Sequence[int]
) -> list[MessageSummary]:
    if not uids:
        return []
    opened = (
        await commands.examine(connection, folder)
        if (connection.selected is None or connection.selected.name != folder)
        else connection.selected
    )
    fetched = await commands.fetch(connection, folder, uids, backend.summary_items(connection))
    ref = folder_reference(backend.tag, folder)
    return [summary_of(backend.tag, folder, opened.uidvalidity, m, ref) for m in fetched]
