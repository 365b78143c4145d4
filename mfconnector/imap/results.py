"""Typed results of IMAP commands, read from the untagged responses a command collected.

Everything here is pure: ``Untagged`` values in, frozen dataclasses out. A value of the
wrong shape raises ``ImapProtocolError`` (the server broke the grammar), never a
``TypeError`` from deep inside.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mfconnector.imap.encode import decode_mailbox, parse_uid_set
from mfconnector.imap.errors import ImapProtocolError
from mfconnector.imap.wire import ResponseCode, Untagged, Value
from mfconnector.mime.decode import decode_header_value

__all__ = [
    "Address",
    "AppendResult",
    "BodyPart",
    "CopyResult",
    "Envelope",
    "FetchedMessage",
    "MailboxEntry",
    "MailboxStatus",
    "SearchResult",
    "SelectedMailbox",
    "StoreResult",
    "ThreadNode",
]

SPECIAL_USE_FLAGS = frozenset(
    {"\\All", "\\Archive", "\\Drafts", "\\Flagged", "\\Junk", "\\Sent", "\\Trash"}
)
_SPECIAL_BY_LOWER = {flag.lower(): flag for flag in SPECIAL_USE_FLAGS}
_UID_SET_ITEMS = 100_000
"""Most UIDs read from one COPYUID/MODIFIED set (a bound on what a server can make us list)."""


def _int(value: Value, what: str) -> int:
    if isinstance(value, int):
        return value
    raise ImapProtocolError(f"the IMAP server sent {what} that is not a number")


def _text(value: Value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (str, int)):
        return str(value)
    raise ImapProtocolError("the IMAP server sent a list where a string belongs")


def _list(value: Value, what: str) -> list[Value]:
    if isinstance(value, list):
        return value
    raise ImapProtocolError(f"the IMAP server sent {what} that is not a list")


@dataclass(frozen=True, slots=True)
class MailboxEntry:
    """One LIST answer: name (decoded), delimiter, attributes, SPECIAL-USE role if any."""

    name: str
    delimiter: str | None
    attributes: frozenset[str]
    special_use: str | None
    status: MailboxStatus | None = None

    @property
    def selectable(self) -> bool:
        return not {"\\noselect", "\\nonexistent"} & {a.lower() for a in self.attributes}


@dataclass(frozen=True, slots=True)
class MailboxStatus:
    """STATUS counts (None when not asked or not sent)."""

    name: str
    messages: int | None = None
    unseen: int | None = None
    uidnext: int | None = None
    uidvalidity: int | None = None
    highestmodseq: int | None = None


@dataclass(frozen=True, slots=True)
class SelectedMailbox:
    """What SELECT/EXAMINE said about the mailbox now open."""

    name: str
    read_only: bool
    exists: int
    uidvalidity: int
    uidnext: int | None
    highestmodseq: int | None
    flags: frozenset[str]
    permanent_flags: frozenset[str]


@dataclass(frozen=True, slots=True)
class SearchResult:
    uids: tuple[int, ...]
    highest_modseq: int | None = None


@dataclass(frozen=True, slots=True)
class Address:
    name: str | None
    mailbox: str | None
    host: str | None

    @property
    def email(self) -> str | None:
        if self.mailbox is None:
            return None
        return f"{self.mailbox}@{self.host}" if self.host else self.mailbox


@dataclass(frozen=True, slots=True)
class Envelope:
    date: str | None
    subject: str | None
    from_: tuple[Address, ...]
    sender: tuple[Address, ...]
    reply_to: tuple[Address, ...]
    to: tuple[Address, ...]
    cc: tuple[Address, ...]
    bcc: tuple[Address, ...]
    in_reply_to: str | None
    message_id: str | None


@dataclass(frozen=True, slots=True)
class BodyPart:
    """One leaf of a BODYSTRUCTURE, with its part path (``1.2``) for ``BODY[1.2]``."""

    path: str
    mime_type: str
    params: tuple[tuple[str, str], ...]
    encoding: str | None
    size: int | None
    disposition: str | None
    filename: str | None

    @property
    def is_attachment(self) -> bool:
        return self.disposition == "attachment" or (
            self.filename is not None and not self.mime_type.startswith("text/")
        )


@dataclass(frozen=True, slots=True)
class FetchedMessage:
    """One FETCH answer, by UID. ``sections`` maps a section name as the server wrote it
    (``BODY[]<0>``, ``BODY[HEADER.FIELDS (FROM)]``) to its bytes."""

    uid: int
    sequence: int
    flags: frozenset[str] | None = None
    modseq: int | None = None
    size: int | None = None
    internal_date: str | None = None
    envelope: Envelope | None = None
    parts: tuple[BodyPart, ...] | None = None
    sections: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoreResult:
    """UID STORE: the new flags per UID, and the UIDs ``[MODIFIED]`` left unchanged."""

    flags: dict[int, frozenset[str]]
    modseqs: dict[int, int]
    modified: frozenset[int]


@dataclass(frozen=True, slots=True)
class CopyResult:
    """COPYUID (RFC 4315): destination UIDVALIDITY and the UID each source became."""

    uidvalidity: int
    mapping: dict[int, int]


@dataclass(frozen=True, slots=True)
class AppendResult:
    """APPENDUID (RFC 4315), or None fields when the server has no UIDPLUS."""

    uidvalidity: int | None
    uid: int | None


@dataclass(frozen=True, slots=True)
class ThreadNode:
    """One message of a THREAD answer and the replies under it."""

    uid: int
    children: tuple[ThreadNode, ...] = ()


# --- readers ----------------------------------------------------------------------------


def capabilities(responses: Iterable[Untagged], code: ResponseCode | None = None) -> frozenset[str]:
    words: list[str] = []
    if code is not None and code.name == "CAPABILITY":
        words.extend(str(v) for v in code.args)
    for response in responses:
        if response.keyword == "CAPABILITY":
            words.extend(str(v) for v in response.data)
        elif response.code is not None and response.code.name == "CAPABILITY":
            words.extend(str(v) for v in response.code.args)
    return frozenset(word.upper() for word in words)


def mailbox_entries(responses: Iterable[Untagged]) -> list[MailboxEntry]:
    statuses = {s.name: s for s in mailbox_statuses(responses)}
    entries = []
    for response in responses:
        if response.keyword not in ("LIST", "LSUB") or len(response.data) < 3:
            continue
        attributes = frozenset(str(a) for a in _list(response.data[0], "LIST attributes"))
        delimiter = _text(response.data[1])
        name = decode_mailbox(_text(response.data[2]) or "")
        special = next(
            (_SPECIAL_BY_LOWER[a.lower()] for a in attributes if a.lower() in _SPECIAL_BY_LOWER),
            None,
        )
        entries.append(MailboxEntry(name, delimiter, attributes, special, statuses.get(name)))
    return entries


def mailbox_statuses(responses: Iterable[Untagged]) -> list[MailboxStatus]:
    out = []
    for response in responses:
        if response.keyword != "STATUS" or len(response.data) < 2:
            continue
        name = decode_mailbox(_text(response.data[0]) or "")
        items = _list(response.data[1], "STATUS items")
        values = {str(items[i]).upper(): items[i + 1] for i in range(0, len(items) - 1, 2)}

        def number(key: str, values: dict[str, Value] = values) -> int | None:
            value = values.get(key)
            return _int(value, key) if value is not None else None

        out.append(
            MailboxStatus(
                name,
                number("MESSAGES"),
                number("UNSEEN"),
                number("UIDNEXT"),
                number("UIDVALIDITY"),
                number("HIGHESTMODSEQ"),
            )
        )
    return out


def selected_mailbox(
    name: str, responses: Sequence[Untagged], tagged_code: ResponseCode | None
) -> SelectedMailbox:
    exists = 0
    uidvalidity: int | None = None
    uidnext = highestmodseq = None
    flags: frozenset[str] = frozenset()
    permanent: frozenset[str] = frozenset()
    for response in responses:
        if response.keyword == "EXISTS" and response.number is not None:
            exists = response.number
        elif response.keyword == "FLAGS" and response.data:
            flags = frozenset(str(f) for f in _list(response.data[0], "FLAGS"))
        code = response.code
        if code is None or (not code.args and code.name != "NOMODSEQ"):
            continue
        if code.name == "UIDVALIDITY":
            uidvalidity = _int(code.args[0], "UIDVALIDITY")
        elif code.name == "UIDNEXT":
            uidnext = _int(code.args[0], "UIDNEXT")
        elif code.name == "HIGHESTMODSEQ":
            highestmodseq = _int(code.args[0], "HIGHESTMODSEQ")
        elif code.name == "PERMANENTFLAGS":
            permanent = frozenset(str(f) for f in _list(code.args[0], "PERMANENTFLAGS"))
    if uidvalidity is None:
        raise ImapProtocolError(f"the IMAP server opened {name!r} without a UIDVALIDITY")
    read_only = tagged_code is not None and tagged_code.name == "READ-ONLY"
    return SelectedMailbox(
        name, read_only, exists, uidvalidity, uidnext, highestmodseq, flags, permanent
    )


def search_result(responses: Iterable[Untagged]) -> SearchResult:
    uids: list[int] = []
    modseq = None
    for response in responses:
        if response.keyword != "SEARCH":
            continue
        for value in response.data:
            if isinstance(value, int):
                uids.append(value)
            elif isinstance(value, list) and len(value) == 2 and str(value[0]).upper() == "MODSEQ":
                modseq = _int(value[1], "MODSEQ")
    return SearchResult(tuple(uids), modseq)


def _addresses(value: Value) -> tuple[Address, ...]:
    if value is None:
        return ()
    out = []
    for item in _list(value, "an address list"):
        fields = _list(item, "an address")
        if len(fields) < 4:
            raise ImapProtocolError("the IMAP server sent an address with too few fields")
        out.append(Address(_header_text(fields[0]), _text(fields[2]), _text(fields[3])))
    return tuple(out)


def _header_text(value: Value) -> str | None:
    """An ENVELOPE string as the server sent it, RFC 2047 encoded words decoded."""
    if isinstance(value, bytes):
        return decode_header_value(value)
    return _text(value)


def envelope(value: Value) -> Envelope:
    fields = _list(value, "an ENVELOPE")
    if len(fields) < 10:
        raise ImapProtocolError("the IMAP server sent an ENVELOPE with too few fields")
    return Envelope(
        _text(fields[0]),
        _header_text(fields[1]),
        _addresses(fields[2]),
        _addresses(fields[3]),
        _addresses(fields[4]),
        _addresses(fields[5]),
        _addresses(fields[6]),
        _addresses(fields[7]),
        _text(fields[8]),
        _text(fields[9]),
    )


def _params(value: Value) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        return ()
    pairs = []
    for i in range(0, len(value) - 1, 2):
        pairs.append(((_text(value[i]) or "").lower(), _text(value[i + 1]) or ""))
    return tuple(pairs)


def body_parts(value: Value) -> tuple[BodyPart, ...]:
    """The leaves of a BODYSTRUCTURE, walked with an explicit stack (no recursion)."""
    out: list[BodyPart] = []
    stack: list[tuple[Value, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        fields = _list(node, "a BODYSTRUCTURE")
        if fields and isinstance(fields[0], list):  # multipart: children, then the subtype
            children: list[Value] = []
            for child in fields:  # the parts come first, then the subtype and extensions
                if not isinstance(child, list):
                    break
                children.append(child)
            for index in range(len(children) - 1, -1, -1):
                child_path = f"{path}.{index + 1}" if path else str(index + 1)
                stack.append((children[index], child_path))
            continue
        if len(fields) < 7:
            raise ImapProtocolError("the IMAP server sent a body part with too few fields")
        kind = (_text(fields[0]) or "application").lower()
        subtype = (_text(fields[1]) or "octet-stream").lower()
        params = _params(fields[2])
        size = fields[6] if isinstance(fields[6], int) else None
        disposition, filename = _disposition(fields, kind, subtype)
        name = filename or dict(params).get("name")
        out.append(
            BodyPart(
                path or "1",
                f"{kind}/{subtype}",
                params,
                (_text(fields[5]) or "").lower() or None,
                size,
                disposition,
                name,
            )
        )
    return tuple(out)


def _disposition(fields: list[Value], kind: str, subtype: str) -> tuple[str | None, str | None]:
    # Extension data: text parts carry a line count at [7], message/rfc822 three more fields.
    start = 8
    if kind == "text":
        start = 9
    elif kind == "message" and subtype == "rfc822":
        start = 11
    for candidate in fields[start - 1 : start + 2]:
        if isinstance(candidate, list) and len(candidate) == 2 and isinstance(candidate[0], bytes):
            params = dict(_params(candidate[1]))
            return (_text(candidate[0]) or "").lower(), params.get("filename")
    return None, None


def fetched_messages(responses: Iterable[Untagged]) -> list[FetchedMessage]:
    out = []
    for response in responses:
        if response.keyword != "FETCH" or response.number is None or not response.data:
            continue
        items = _list(response.data[0], "FETCH data")
        values: dict[str, Value] = {}
        sections: dict[str, bytes] = {}
        for i in range(0, len(items) - 1, 2):
            key = str(items[i])
            upper = key.upper()
            if upper.startswith(("BODY[", "BINARY[", "RFC822")) and upper != "RFC822.SIZE":
                data = items[i + 1]
                sections[key] = data if isinstance(data, bytes) else b""
            else:
                values[upper] = items[i + 1]
        if "UID" not in values:
            continue  # an unsolicited flag update for a message we did not ask about
        modseq = values.get("MODSEQ")
        out.append(
            FetchedMessage(
                uid=_int(values["UID"], "a UID"),
                sequence=response.number,
                flags=frozenset(str(f) for f in _list(values["FLAGS"], "FLAGS"))
                if "FLAGS" in values
                else None,
                modseq=_int(_list(modseq, "MODSEQ")[0], "MODSEQ") if modseq is not None else None,
                size=_int(values["RFC822.SIZE"], "RFC822.SIZE")
                if "RFC822.SIZE" in values
                else None,
                internal_date=_text(values.get("INTERNALDATE")),
                envelope=envelope(values["ENVELOPE"]) if "ENVELOPE" in values else None,
                parts=body_parts(values["BODYSTRUCTURE"]) if "BODYSTRUCTURE" in values else None,
                sections=sections,
            )
        )
    return out


def store_result(responses: Iterable[Untagged], tagged_code: ResponseCode | None) -> StoreResult:
    flags: dict[int, frozenset[str]] = {}
    modseqs: dict[int, int] = {}
    for message in fetched_messages(responses):
        if message.flags is not None:
            flags[message.uid] = message.flags
        if message.modseq is not None:
            modseqs[message.uid] = message.modseq
    modified: frozenset[int] = frozenset()
    if tagged_code is not None and tagged_code.name == "MODIFIED" and tagged_code.args:
        modified = frozenset(_uids(tagged_code.args[0]))
    return StoreResult(flags, modseqs, modified)


def _uids(value: Value) -> list[int]:
    if not isinstance(value, (int, str)):
        raise ImapProtocolError("the IMAP server sent a UID set that is not one")
    try:
        return parse_uid_set(value, _UID_SET_ITEMS)
    except ValueError as error:
        raise ImapProtocolError(f"the IMAP server sent a bad UID set ({error})") from None


def copy_result(codes: Iterable[ResponseCode | None]) -> CopyResult | None:
    for code in codes:
        if code is not None and code.name == "COPYUID" and len(code.args) >= 3:
            sources, targets = _uids(code.args[1]), _uids(code.args[2])
            if len(sources) != len(targets):
                raise ImapProtocolError("the IMAP server sent a COPYUID with unequal sets")
            return CopyResult(
                _int(code.args[0], "UIDVALIDITY"), dict(zip(sources, targets, strict=True))
            )
    return None


def append_result(code: ResponseCode | None) -> AppendResult:
    if code is not None and code.name == "APPENDUID" and len(code.args) >= 2:
        return AppendResult(_int(code.args[0], "UIDVALIDITY"), _int(code.args[1], "a UID"))
    return AppendResult(None, None)


def threads(responses: Iterable[Untagged]) -> list[ThreadNode]:
    """THREAD answers as trees: ``(3 6 (4 23)(44 7 96))`` is 3 → 6 → {4 → 23, 44 → 7 → 96}."""
    roots: list[ThreadNode] = []
    for response in responses:
        if response.keyword == "THREAD":
            roots.extend(_thread(_list(v, "a thread")) for v in response.data)
    return roots


def _thread(items: list[Value]) -> ThreadNode:
    # Depth is bounded by the reader's nesting limit, so this recursion is too.
    chain = [v for v in items if isinstance(v, int)]
    branches = tuple(_thread(_list(v, "a thread")) for v in items if isinstance(v, list))
    if not chain:
        if len(branches) == 1:
            return branches[0]
        # A thread whose root message is missing: hang the branches under UID 0.
        return ThreadNode(0, branches)
    node = ThreadNode(chain[-1], branches)
    for uid in reversed(chain[:-1]):
        node = ThreadNode(uid, (node,))
    return node
