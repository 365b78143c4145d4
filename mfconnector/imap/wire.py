"""The sans-I/O IMAP response reader: bytes in, responses out (after h11's ``_receivebuffer``).

``ResponseReader.feed(data)`` takes whatever the socket gave; ``next_response()`` returns
one complete ``Response`` or None until more bytes arrive. Three named limits hold at every
step, checked while a response is incomplete:

- a line (the text between literals) longer than ``imap_line_bytes`` is refused as soon as
  the buffer holds that many bytes without a CRLF;
- a literal's announced size (``{N}``) is checked against ``imap_literal_bytes`` *before*
  one byte of it is buffered: a server announcing ``{999999999}`` is refused at once;
- a whole response (lines and literals) stops at ``imap_response_bytes``.

The CRLF search resumes where the last one stopped, so a line trickling in byte by byte is
scanned once (h11's "never re-scan" rule). After any error the reader is broken: the
connection must be discarded, since its framing is lost.

Tokens (``parse_values``) are read iteratively, lists nested at most ``imap_nesting_depth``
deep: ints for numbers, str for atoms (flags, ``BODY[HEADER]<0>`` section names with their
brackets), bytes for quoted strings and literals, None for NIL, lists for parentheses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mfconnector.imap.errors import ImapLimitError, ImapProtocolError
from mfconnector.limits import Limits

__all__ = [
    "Continuation",
    "LiteralData",
    "Response",
    "ResponseCode",
    "ResponseReader",
    "Tagged",
    "Untagged",
    "Value",
    "parse_values",
]

Value = int | str | bytes | None | list["Value"]

_LITERAL_MARK = re.compile(rb"~?\{(\d{1,20})\}\Z")
_STATUS = frozenset({"OK", "NO", "BAD", "PREAUTH", "BYE"})
_TEXT_CHARS = 1_000


@dataclass(frozen=True, slots=True)
class ResponseCode:
    """A bracketed response code such as ``[UIDVALIDITY 7]`` or ``[COPYUID 7 1:2 5:6]``."""

    name: str
    args: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Tagged:
    """The tagged completion of one command."""

    tag: str
    status: str
    code: ResponseCode | None
    text: str


@dataclass(frozen=True, slots=True)
class Untagged:
    """``* ...``: server data (``keyword`` upper-cased; ``number`` for ``* 3 FETCH``)."""

    keyword: str
    number: int | None
    data: tuple[Value, ...]
    code: ResponseCode | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class Continuation:
    """``+ ...``: the server waits for the rest of a command (a literal)."""

    text: str


Response = Tagged | Untagged | Continuation


class ResponseReader:
    """Splits a server's byte stream into responses under the limits (see the module)."""

    def __init__(self, limits: Limits) -> None:
        self._line_cap = limits.imap_line_bytes
        self._literal_cap = limits.imap_literal_bytes
        self._response_cap = limits.imap_response_bytes
        self._depth_cap = limits.imap_nesting_depth
        self._buffer = bytearray()
        self._scanned = 0
        self._parts: list[bytes | LiteralData] = []
        self._literal: list[bytes] | None = None
        self._literal_size = 0
        self._literal_left = 0
        self._response_bytes = 0
        self._broken: ImapProtocolError | None = None

    @property
    def buffered_bytes(self) -> int:
        """Bytes held for the response being read (buffer, parts and literal so far)."""
        held = len(self._buffer) + sum(
            len(part.data if isinstance(part, LiteralData) else part) for part in self._parts
        )
        return held + (self._literal_size - self._literal_left if self._literal is not None else 0)

    @property
    def wants_literal_bytes(self) -> int:
        """Bytes of the current literal still to come (0 when reading a line)."""
        return self._literal_left

    def feed(self, data: bytes | bytearray) -> None:
        if self._broken is not None:
            raise self._broken
        self._buffer += data

    def next_response(self) -> Response | None:
        """The next complete response, or None when more bytes are needed."""
        if self._broken is not None:
            raise self._broken
        try:
            return self._next()
        except ImapProtocolError as error:
            self._broken = error
            self._buffer.clear()
            self._parts.clear()
            self._literal = None
            raise

    def _next(self) -> Response | None:
        while True:
            if self._literal is not None:
                if not self._take_literal():
                    return None
                continue
            line = self._take_line()
            if line is None:
                return None
            mark = _LITERAL_MARK.search(line)
            if mark is None:
                self._parts.append(line)
                parts, self._parts, self._response_bytes = self._parts, [], 0
                return _build(parts, self._depth_cap)
            size = int(mark.group(1))
            if size > self._literal_cap:
                raise ImapLimitError(
                    f"the IMAP server announced a {size:,}-byte literal, over the "
                    f"{self._literal_cap:,}-byte limit (imap_literal_bytes)",
                    limit="imap_literal_bytes",
                    value=self._literal_cap,
                )
            self._count(size)
            self._parts.append(line[: mark.start()])
            self._literal = []
            self._literal_size = self._literal_left = size

    def _count(self, size: int) -> None:
        self._response_bytes += size
        if self._response_bytes > self._response_cap:
            raise ImapLimitError(
                f"an IMAP response passed the {self._response_cap:,}-byte limit "
                "(imap_response_bytes)",
                limit="imap_response_bytes",
                value=self._response_cap,
            )

    def _take_line(self) -> bytes | None:
        end = self._buffer.find(b"\r\n", max(self._scanned - 1, 0))
        if end < 0:
            self._scanned = len(self._buffer)
            if self._scanned > self._line_cap:
                raise self._line_error()
            return None
        if end + 2 > self._line_cap:
            raise self._line_error()
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 2]
        self._scanned = 0
        self._count(end + 2)
        return line

    def _line_error(self) -> ImapLimitError:
        return ImapLimitError(
            f"an IMAP response line passed the {self._line_cap:,}-byte limit (imap_line_bytes)",
            limit="imap_line_bytes",
            value=self._line_cap,
        )

    def _take_literal(self) -> bool:
        assert self._literal is not None
        taken = min(self._literal_left, len(self._buffer))
        if taken:
            # Chunks joined once at the end: no re-allocation doubling a growing buffer.
            self._literal.append(bytes(self._buffer[:taken]))
            del self._buffer[:taken]
            self._literal_left -= taken
        if self._literal_left:
            return False
        self._parts.append(LiteralData(b"".join(self._literal)))
        self._literal = None
        return True


@dataclass(frozen=True, slots=True)
class LiteralData:
    """The bytes of one literal, told apart from the line text around it (no copy)."""

    data: bytes


def _build(parts: list[bytes | LiteralData], depth_cap: int) -> Response:
    first = parts[0]
    assert isinstance(first, bytes)  # a response always starts with a line
    if any(b"\0" in part for part in parts if not isinstance(part, LiteralData)):
        raise ImapProtocolError("the IMAP server sent a NUL byte outside a literal")
    if first.startswith(b"+"):
        return Continuation(_text(first[1:]))
    tag, _, rest = first.partition(b" ")
    if not tag:
        raise ImapProtocolError("the IMAP server sent an empty response line")
    head, _, tail = rest.partition(b" ")
    word = head.decode("ascii", "replace").upper()
    if tag != b"*":
        if word not in ("OK", "NO", "BAD") or len(parts) > 1:
            raise ImapProtocolError("the IMAP server sent a malformed tagged response")
        code, text = _code_and_text(tail, depth_cap)
        return Tagged(tag.decode("ascii", "replace"), word, code, text)
    if word in _STATUS and len(parts) == 1:
        code, text = _code_and_text(tail, depth_cap)
        return Untagged(word, None, (), code, text)
    if head.isdigit():
        keyword, _, tail = tail.partition(b" ")
        rest_parts: list[bytes | LiteralData] = [tail, *parts[1:]]
        return Untagged(
            keyword.decode("ascii", "replace").upper(),
            int(head),
            tuple(parse_values(rest_parts, depth_cap)),
        )
    return Untagged(word, None, tuple(parse_values([tail, *parts[1:]], depth_cap)))


def _text(raw: bytes) -> str:
    return raw.strip().decode("utf-8", "replace")[:_TEXT_CHARS]


def _code_and_text(raw: bytes, depth_cap: int) -> tuple[ResponseCode | None, str]:
    if not raw.startswith(b"["):
        return None, _text(raw)
    end = raw.find(b"]")
    if end < 0:
        raise ImapProtocolError("the IMAP server sent a response code without its ']'")
    name, _, args = raw[1:end].partition(b" ")
    values = tuple(parse_values([args], depth_cap)) if args else ()
    return ResponseCode(name.decode("ascii", "replace").upper(), values), _text(raw[end + 1 :])


def parse_values(parts: list[bytes | LiteralData], depth_cap: int) -> list[Value]:
    """Tokens of a response's data: line segments and the literals between them."""
    stack: list[list[Value]] = [[]]
    for part in parts:
        if isinstance(part, LiteralData):
            stack[-1].append(part.data)
        else:
            _tokens(part, stack, depth_cap)
    if len(stack) != 1:
        raise ImapProtocolError("the IMAP server sent an unclosed parenthesis")
    return stack[0]


_TOKEN = re.compile(
    rb' *(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|((?:[^ ()"\[]|\[[^\]]*\])+)| +\Z)', re.DOTALL
)
"""Spaces, then ``(``, ``)``, a quoted string, or an atom (sections like ``BODY[HEADER]<0>``
keep their bracketed part, spaces and all). One regex match a token: no per-byte loop."""
_ESCAPE = re.compile(rb"\\(.)", re.DOTALL)


def _tokens(line: bytes, stack: list[list[Value]], depth_cap: int) -> None:
    pos, size = 0, len(line)
    while pos < size:
        match = _TOKEN.match(line, pos)
        if match is None:
            what = {0x22: "an unterminated quoted string", 0x5B: "a section without its ']'"}
            raise ImapProtocolError(
                f"the IMAP server sent {what.get(line[pos], 'a malformed token')}"
            )
        pos = match.end()
        opening, closing, quoted, atom = match.groups()
        if opening is not None:
            if len(stack) > depth_cap:
                raise ImapLimitError(
                    f"an IMAP response nested deeper than {depth_cap} (imap_nesting_depth)",
                    limit="imap_nesting_depth",
                    value=depth_cap,
                )
            inner: list[Value] = []
            stack[-1].append(inner)
            stack.append(inner)
        elif closing is not None:
            if len(stack) == 1:
                raise ImapProtocolError("the IMAP server sent an unbalanced ')'")
            stack.pop()
        elif quoted is not None:
            stack[-1].append(_ESCAPE.sub(rb"\1", quoted) if b"\\" in quoted else quoted)
        elif atom is not None:
            stack[-1].append(_atom_value(atom))


def _atom_value(atom: bytes) -> Value:
    if atom.isdigit():
        return int(atom)
    if atom.upper() == b"NIL":
        return None
    return atom.decode("utf-8", "replace")
