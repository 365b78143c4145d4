"""The part walk: an explicit stack over byte ranges, boundaries found with ``bytes.find``.

Each part is a range ``[start, end)`` of the (already capped) raw message. Its header ends
at the first blank line; only the first ``mime_header_bytes`` of it and at most
``mime_header_lines`` fields are read. A multipart's children are the ranges between its
delimiter lines (RFC 2046 section 5.1.1); they are pushed on the stack, never recursed
into, and not at all past ``mime_depth``. At most ``mime_parts`` parts are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mfconnector.limits import Limits
from mfconnector.mime.decode import (
    ContentInfo,
    content_info,
    decode_body,
    decode_header_value,
    decode_text,
    decoded_size,
)

__all__ = ["MimeAttachment", "MimeMessage", "read_message"]

ADDRESS_HEADERS = ("from", "to", "cc", "reply-to")
KEPT_HEADERS = (
    "from",
    "to",
    "cc",
    "reply-to",
    "subject",
    "date",
    "message-id",
    "in-reply-to",
    "references",
)
_PART_HEADERS = frozenset({"content-type", "content-disposition", "content-transfer-encoding"})
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_FIELD = re.compile(rb"([!-9;-~]{1,76})[ \t]*:")


@dataclass(frozen=True, slots=True)
class MimeAttachment:
    name: str | None
    mime_type: str
    size: int
    """Decoded bytes (estimated from the encoded length for base64)."""
    path: str
    """Part path as IMAP numbers it (``2``, ``1.3``): ``BODY[2]`` fetches it."""
    disposition: str | None


@dataclass(frozen=True, slots=True)
class MimeMessage:
    headers: dict[str, str]
    """The kept headers (``KEPT_HEADERS``), lower-case names, decoded, first of each."""
    text: str | None
    html: str | None
    attachments: tuple[MimeAttachment, ...]
    notes: tuple[str, ...]
    """Everything cut, skipped or replaced, in our words; empty when read whole."""
    parts_read: int
    truncated: bool
    """The raw message was longer than ``mime_message_bytes``; only its prefix was read."""


@dataclass(slots=True)
class _Part:
    start: int
    end: int
    depth: int
    path: str
    default_type: str
    in_alternative: bool = False


class _Walk:
    def __init__(self, raw: bytes, limits: Limits) -> None:
        self.raw = raw
        self.limits = limits
        self.notes: list[str] = []
        self.headers: dict[str, str] = {}
        self.text: str | None = None
        self.html: str | None = None
        self.attachments: list[MimeAttachment] = []
        self.parts = 0

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 20:
            self.notes.append(text)

    def run(self) -> None:
        stack = [_Part(0, len(self.raw), 0, "", "text/plain")]
        while stack:
            part = stack.pop()
            if self.parts >= self.limits.mime_parts:
                self.note(
                    f"more than {self.limits.mime_parts} MIME parts: the rest not read (mime_parts)"
                )
                break
            self.parts += 1
            stack.extend(reversed(self._read_part(part)))

    def _read_part(self, part: _Part) -> list[_Part]:
        fields, body_start = self._header(part)
        if part.path == "":
            self._keep_headers(fields)
        info = content_info(
            fields.get("content-type"),
            fields.get("content-disposition"),
            fields.get("content-transfer-encoding"),
            part.default_type,
        )
        body = (body_start, part.end)
        if info.mime_type.startswith("multipart/"):
            if part.depth >= self.limits.mime_depth:
                self.note(
                    f"MIME parts nested deeper than {self.limits.mime_depth} levels not read "
                    "(mime_depth)"
                )
                return []
            if not info.boundary:
                self.note("a multipart without a boundary: read as text")
                self._leaf(part, body, content_info(None, None, None, "text/plain"))
                return []
            return self._children(part, body, info.boundary, info.mime_type)
        self._leaf(part, body, info)
        return []

    def _header(self, part: _Part) -> tuple[dict[str, bytes], int]:
        limits = self.limits
        if self.raw.startswith((b"\n", b"\r\n"), part.start):  # an empty header
            return {}, part.start + (1 if self.raw[part.start] == 0x0A else 2)
        blank = _BLANK_LINE.search(self.raw, part.start, part.end)
        if blank is None:  # no body at all: the whole part is header
            header_end, body_start = part.end, part.end
        else:
            # The header block ends with its last line's line break.
            header_end = blank.start() + (2 if self.raw[blank.start()] == 0x0D else 1)
            body_start = blank.end()
        block_end = min(header_end, part.start + limits.mime_header_bytes)
        if block_end < header_end:
            self.note(
                f"a header block over {limits.mime_header_bytes:,} bytes: only its start "
                "read (mime_header_bytes)"
            )
        fields: dict[str, bytes] = {}
        count = 0
        name: bytes | None = None
        value = bytearray()
        for line in self.raw[part.start : block_end].split(b"\n"):
            if line[:1] in (b" ", b"\t") and name is not None:
                value += b"\n" + line  # a folded continuation
                continue
            if name is not None:
                fields.setdefault(name.decode("ascii").lower(), bytes(value).rstrip(b"\r"))
                name = None
            if not line.rstrip(b"\r"):
                continue
            count += 1
            if count > limits.mime_header_lines:
                self.note(
                    f"more than {limits.mime_header_lines:,} header fields in a part: the "
                    "rest not read (mime_header_lines)"
                )
                break
            match = _FIELD.match(line)
            if match is None:
                continue  # not a field: skipped, as mail readers do
            name, value = match.group(1), bytearray(line[match.end() :].lstrip())
        if name is not None:
            fields.setdefault(name.decode("ascii").lower(), bytes(value).rstrip(b"\r"))
        return fields, body_start

    def _keep_headers(self, fields: dict[str, bytes]) -> None:
        for name in KEPT_HEADERS:
            if name in fields:
                self.headers[name] = decode_header_value(fields[name])[
                    : self.limits.mime_header_bytes
                ]

    def _children(
        self, part: _Part, body: tuple[int, int], boundary: str, mime_type: str
    ) -> list[_Part]:
        raw, (start, end) = self.raw, body
        delimiter = b"--" + boundary.encode("ascii", "replace")
        positions: list[tuple[int, int]] = []  # (delimiter line start, content start)
        closed = False
        search = start
        while search < end:
            hit = raw.find(delimiter, search, end)
            if hit < 0:
                break
            search = hit + len(delimiter)
            if hit != start and raw[hit - 1] != 0x0A:
                continue  # not at the start of a line
            after = hit + len(delimiter)
            line_end = raw.find(b"\n", after, end)
            line_end = end if line_end < 0 else line_end + 1
            rest = raw[after:line_end]
            if rest.startswith(b"--"):
                positions.append((hit, line_end))
                closed = True
                break
            if rest.strip():
                continue  # a longer boundary that starts with ours
            positions.append((hit, line_end))
            if len(positions) > self.limits.mime_parts:
                break
        if not positions:
            self.note("a multipart whose boundary never appears: read as text")
            self._leaf(part, body, content_info(None, None, None, "text/plain"))
            return []
        if not closed:
            self.note("a multipart without its closing boundary: read to the end")
            positions.append((end, end))
        children = []
        default = "message/rfc822" if mime_type == "multipart/digest" else "text/plain"
        for index in range(len(positions) - 1):
            content_start = positions[index][1]
            content_end = _strip_line_end(raw, content_start, positions[index + 1][0])
            path = f"{part.path}.{index + 1}" if part.path else str(index + 1)
            children.append(
                _Part(
                    content_start,
                    content_end,
                    part.depth + 1,
                    path,
                    default,
                    mime_type == "multipart/alternative",
                )
            )
        return children

    def _leaf(self, part: _Part, body: tuple[int, int], info: ContentInfo) -> None:
        raw = self.raw[body[0] : body[1]]
        path = part.path or "1"
        is_text = info.mime_type in ("text/plain", "text/html")
        if is_text and info.disposition != "attachment":
            slot = "text" if info.mime_type == "text/plain" else "html"
            if getattr(self, slot) is None:
                setattr(self, slot, self._text(raw, info.encoding, info.charset))
                return
            if part.in_alternative:
                return  # a second rendering of the same text
        self.attachments.append(
            MimeAttachment(
                info.filename,
                info.mime_type,
                decoded_size(raw, info.encoding),
                path,
                info.disposition,
            )
        )

    def _text(self, raw: bytes, encoding: str, charset: str | None) -> str:
        cap = self.limits.mime_text_bytes
        if encoding == "base64":
            raw = raw[: 2 * cap + 1_024]  # base64 in 76-character lines is 1.37 bytes a byte
        elif len(raw) > 3 * cap:
            raw = raw[: 3 * cap]  # quoted-printable is at most 3 bytes a byte
        data, note = decode_body(raw, encoding)
        if note and not (encoding == "base64" and len(data) >= cap):
            self.note(note)
        if len(data) > cap:
            self.note(f"a text body over {cap:,} bytes: cut there (mime_text_bytes)")
            data = data[:cap]
        text, note = decode_text(data, charset)
        if note:
            self.note(note)
        return text.replace("\r\n", "\n")  # one line break, whatever the wire used


def _strip_line_end(raw: bytes, start: int, end: int) -> int:
    """The CRLF before a delimiter belongs to the delimiter (RFC 2046 section 5.1.1)."""
    if end > start and raw[end - 1] == 0x0A:
        end -= 1
        if end > start and raw[end - 1] == 0x0D:
            end -= 1
    return end


def read_message(raw: bytes, limits: Limits) -> MimeMessage:
    """Read a raw message (or its prefix) under the MIME limits; never raises on content."""
    cap = limits.mime_message_bytes
    truncated = len(raw) > cap
    walk = _Walk(raw[:cap] if truncated else raw, limits)
    if truncated:
        walk.note(f"the message is over {cap:,} bytes: only its start read (mime_message_bytes)")
    walk.run()
    return MimeMessage(
        walk.headers,
        walk.text,
        walk.html,
        tuple(walk.attachments),
        tuple(walk.notes),
        walk.parts,
        truncated,
    )
