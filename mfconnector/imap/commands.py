"""The IMAP commands the backend needs, each returning a typed result (``results``).

Every function takes an open ``ImapConnection``. Commands that need a mailbox open take
its name and SELECT (or EXAMINE) it only when it is not open already in that mode.
Capabilities are checked before sending: a command the server lacks raises
``ImapUnsupportedError`` and nothing is sent. Only UID forms are used, never message
sequence numbers, which shift under other clients.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mfconnector.imap import results
from mfconnector.imap.connection import CommandResult, ImapConnection
from mfconnector.imap.encode import Literal, Piece, astring, encode_mailbox, uid_set
from mfconnector.imap.errors import (
    ImapProtocolError,
    ImapStaleReferenceError,
    ImapUnsupportedError,
)
from mfconnector.imap.results import (
    AppendResult,
    CopyResult,
    FetchedMessage,
    MailboxEntry,
    MailboxStatus,
    SearchResult,
    SelectedMailbox,
    StoreResult,
    ThreadNode,
)

__all__ = [
    "append",
    "copy",
    "create",
    "delete",
    "enable",
    "examine",
    "expunge_uids",
    "fetch",
    "fetch_range",
    "list_mailboxes",
    "move",
    "noop",
    "open_checked",
    "rename",
    "search",
    "select",
    "status",
    "store_flags",
    "thread",
]

STATUS_ITEMS = ("MESSAGES", "UNSEEN", "UIDNEXT", "UIDVALIDITY")
_FLAG = re.compile(r"\\?[!#$&'+\-.0-9:;<=>?@A-Z^_`a-z|~]{1,100}")
"""A system flag (``\\Seen``) or a keyword: atom characters only (RFC 3501 ``flag``), so a
keyword can never close the list or start another command."""


def _flag_list(flags: Iterable[str]) -> bytes:
    names = list(flags)
    for name in names:
        if not _FLAG.fullmatch(name):
            raise ValueError(f"{name[:40]!r} is not an IMAP flag or keyword")
    return ("(" + " ".join(names) + ")").encode("ascii")


def _require(connection: ImapConnection, capability: str, what: str) -> None:
    if capability not in connection.capabilities:
        raise ImapUnsupportedError(capability, what)


def _join(*words: str) -> bytes:
    return " ".join(words).encode("ascii")


async def noop(connection: ImapConnection) -> CommandResult:
    return await connection.command("NOOP")


async def enable(connection: ImapConnection, *extensions: str) -> frozenset[str]:
    """ENABLE (RFC 5161) what the server offers of ``extensions``; returns what it enabled."""
    offered = [e for e in extensions if e in connection.capabilities]
    if not offered or "ENABLE" not in connection.capabilities:
        return connection.enabled
    result = await connection.command(_join("ENABLE", *offered))
    enabled = {str(v).upper() for r in result.untagged if r.keyword == "ENABLED" for v in r.data}
    connection.enabled = connection.enabled | enabled
    return connection.enabled


async def list_mailboxes(
    connection: ImapConnection, *, with_status: bool = False
) -> list[MailboxEntry]:
    """LIST "" "*", with SPECIAL-USE attributes (RFC 6154) and, where LIST-STATUS (RFC 5819)
    exists and ``with_status`` asks, the counts in the same round trip."""
    returns: list[str] = []
    if "SPECIAL-USE" in connection.capabilities:
        returns.append("SPECIAL-USE")
    if with_status and "LIST-STATUS" in connection.capabilities:
        returns.append("STATUS (" + " ".join(STATUS_ITEMS) + ")")
    command = b'LIST "" "*"'
    if returns and "LIST-EXTENDED" in connection.capabilities:
        command += b" RETURN (" + " ".join(returns).encode("ascii") + b")"
    result = await connection.command(command)
    entries = results.mailbox_entries(result.untagged)
    if with_status and not any(entry.status for entry in entries):
        entries = [
            _with_status(entry, await status(connection, entry.name)) if entry.selectable else entry
            for entry in entries
        ]
    return entries


def _with_status(entry: MailboxEntry, found: MailboxStatus) -> MailboxEntry:
    return MailboxEntry(entry.name, entry.delimiter, entry.attributes, entry.special_use, found)


async def status(connection: ImapConnection, mailbox: str) -> MailboxStatus:
    items = list(STATUS_ITEMS)
    if "CONDSTORE" in connection.capabilities:
        items.append("HIGHESTMODSEQ")
    result = await connection.command(
        b"STATUS", encode_mailbox(mailbox), _join("(" + " ".join(items) + ")")
    )
    found = results.mailbox_statuses(result.untagged)
    if not found:
        raise ImapProtocolError(f"the IMAP server sent no STATUS for {mailbox!r}")
    return found[0]


async def select(connection: ImapConnection, mailbox: str) -> SelectedMailbox:
    return await _open(connection, mailbox, read_only=False)


async def examine(connection: ImapConnection, mailbox: str) -> SelectedMailbox:
    return await _open(connection, mailbox, read_only=True)


async def _open(connection: ImapConnection, mailbox: str, *, read_only: bool) -> SelectedMailbox:
    verb = b"EXAMINE" if read_only else b"SELECT"
    pieces: list[Piece] = [verb, encode_mailbox(mailbox)]
    if "CONDSTORE" in connection.capabilities and "CONDSTORE" not in connection.enabled:
        pieces.append(b"(CONDSTORE)")
    connection.selected = None
    result = await connection.command(*pieces)
    opened = results.selected_mailbox(mailbox, result.untagged, result.tagged.code)
    connection.selected = opened
    return opened


async def open_checked(
    connection: ImapConnection, mailbox: str, uidvalidity: int, *, writable: bool
) -> SelectedMailbox:
    """Open ``mailbox`` and refuse if its UIDVALIDITY is not the reference's: a UID made
    under another UIDVALIDITY may name a different message now."""
    opened = await _ensure_open(connection, mailbox, writable=writable)
    if opened.uidvalidity != uidvalidity:
        raise ImapStaleReferenceError(mailbox, uidvalidity, opened.uidvalidity)
    return opened


async def _ensure_open(
    connection: ImapConnection, mailbox: str, *, writable: bool
) -> SelectedMailbox:
    current = connection.selected
    if current is not None and current.name == mailbox and (not writable or not current.read_only):
        return current
    return await _open(connection, mailbox, read_only=not writable)


async def search(
    connection: ImapConnection, mailbox: str, criteria: Sequence[Piece] = (b"ALL",)
) -> SearchResult:
    """UID SEARCH with criteria built by the caller (strings through ``encode.astring``)."""
    await _ensure_open(connection, mailbox, writable=False)
    pieces: list[Piece] = [b"UID SEARCH"]
    if any(isinstance(piece, Literal) for piece in criteria):
        pieces.append(b"CHARSET UTF-8")
    pieces.extend(criteria)
    result = await connection.command(*pieces)
    return results.search_result(result.untagged)


async def fetch(
    connection: ImapConnection, mailbox: str, uids: Iterable[int], items: Sequence[str]
) -> list[FetchedMessage]:
    """UID FETCH of ``items`` (e.g. ``FLAGS``, ``MODSEQ``, ``RFC822.SIZE``, ``ENVELOPE``,
    ``BODYSTRUCTURE``, ``BODY.PEEK[HEADER]``, ``BODY.PEEK[]<0.1048576>``), in UID order.
    Each literal is bounded by the reader before a byte of it is held."""
    wanted = list(items)
    if "MODSEQ" in (item.upper() for item in wanted):
        _require(connection, "CONDSTORE", "MODSEQ in a fetch")
    asked = set(uids)
    await _ensure_open(connection, mailbox, writable=False)
    result = await connection.command(
        b"UID FETCH", uid_set(asked), ("(" + " ".join(wanted) + ")").encode("ascii")
    )
    # With CONDSTORE/QRESYNC on, a flag change another client made arrives as an
    # unsolicited FETCH that carries its UID too: only the UIDs asked for are answers.
    found = [m for m in results.fetched_messages(result.untagged) if m.uid in asked]
    return sorted(found, key=lambda m: m.uid)


async def store_flags(
    connection: ImapConnection,
    mailbox: str,
    uids: Iterable[int],
    flags: Iterable[str],
    *,
    add: bool,
    unchanged_since: int | None = None,
) -> StoreResult:
    """UID STORE +FLAGS/-FLAGS; with ``unchanged_since`` (RFC 7162 UNCHANGEDSINCE) the
    server changes only messages whose MODSEQ is not newer, and lists the rest in
    ``[MODIFIED]`` (``StoreResult.modified``)."""
    if unchanged_since is not None:
        _require(connection, "CONDSTORE", "a conditional flag change (unchanged_since)")
    asked = set(uids)
    await _ensure_open(connection, mailbox, writable=True)
    pieces: list[Piece] = [b"UID STORE", uid_set(asked)]
    if unchanged_since is not None:
        pieces.append(b"(UNCHANGEDSINCE %d)" % unchanged_since)
    pieces.append(b"+FLAGS" if add else b"-FLAGS")
    pieces.append(_flag_list(flags))
    result = await connection.command(*pieces)
    stored = results.store_result(result.untagged, result.tagged.code)
    return StoreResult(  # unsolicited updates of other messages are not this answer
        {uid: f for uid, f in stored.flags.items() if uid in asked},
        {uid: m for uid, m in stored.modseqs.items() if uid in asked},
        stored.modified,
    )


async def copy(
    connection: ImapConnection, mailbox: str, uids: Iterable[int], target: str
) -> CopyResult | None:
    """UID COPY; the COPYUID mapping where the server has UIDPLUS (RFC 4315)."""
    await _ensure_open(connection, mailbox, writable=False)
    result = await connection.command(b"UID COPY", uid_set(uids), encode_mailbox(target))
    return results.copy_result([result.tagged.code])


async def move(
    connection: ImapConnection, mailbox: str, uids: Iterable[int], target: str
) -> CopyResult | None:
    """UID MOVE (RFC 6851); COPYUID arrives in an untagged OK before the EXPUNGEs."""
    _require(connection, "MOVE", "moving a message")
    await _ensure_open(connection, mailbox, writable=True)
    result = await connection.command(b"UID MOVE", uid_set(uids), encode_mailbox(target))
    return results.copy_result([result.tagged.code, *(r.code for r in result.untagged)])


async def expunge_uids(connection: ImapConnection, mailbox: str, uids: Iterable[int]) -> None:
    """UID EXPUNGE (RFC 4315) of exactly these UIDs; never a bare EXPUNGE, which would
    also remove every other message marked ``\\Deleted``."""
    _require(connection, "UIDPLUS", "expunging exactly one message")
    await _ensure_open(connection, mailbox, writable=True)
    await connection.command(b"UID EXPUNGE", uid_set(uids))


async def append(
    connection: ImapConnection,
    mailbox: str,
    message: bytes,
    flags: Iterable[str] = (),
    internal_date: str | None = None,
) -> AppendResult:
    """APPEND the exact bytes; APPENDUID names the new message where UIDPLUS exists."""
    pieces: list[Piece] = [b"APPEND", encode_mailbox(mailbox)]
    flag_list = list(flags)
    if flag_list:
        pieces.append(_flag_list(flag_list))
    if internal_date is not None:
        pieces.append(astring(internal_date))
    pieces.append(Literal(message))
    result = await connection.command(*pieces)
    return results.append_result(result.tagged.code)


async def create(connection: ImapConnection, mailbox: str) -> None:
    await connection.command(b"CREATE", encode_mailbox(mailbox))


async def rename(connection: ImapConnection, mailbox: str, new_name: str) -> None:
    await connection.command(b"RENAME", encode_mailbox(mailbox), encode_mailbox(new_name))


async def delete(connection: ImapConnection, mailbox: str) -> None:
    current = connection.selected
    if current is not None and current.name == mailbox:
        connection.selected = None
        if "UNSELECT" in connection.capabilities:
            await connection.command("UNSELECT")
    await connection.command(b"DELETE", encode_mailbox(mailbox))


async def thread(
    connection: ImapConnection, mailbox: str, criteria: Sequence[Piece] = (b"ALL",)
) -> list[ThreadNode]:
    """UID THREAD REFERENCES (RFC 5256) as trees of UIDs."""
    _require(connection, "THREAD=REFERENCES", "threads")
    await _ensure_open(connection, mailbox, writable=False)
    result = await connection.command(b"UID THREAD REFERENCES UTF-8", *criteria)
    return results.threads(result.untagged)


async def fetch_range(
    connection: ImapConnection,
    mailbox: str,
    uid: int,
    offset: int,
    count: int,
    section: str = "",
) -> bytes:
    """``count`` bytes of a section from ``offset`` (``BODY.PEEK[section]<offset.count>``):
    how a large message is read a chunk at a time. Fewer bytes mean the end was reached."""
    if offset < 0 or count < 1:
        raise ValueError("a range needs offset >= 0 and count >= 1")
    found = await fetch(connection, mailbox, [uid], [f"BODY.PEEK[{section}]<{offset}.{count}>"])
    if not found:
        return b""
    return found[0].sections.get(f"BODY[{section}]<{offset}>", b"")
