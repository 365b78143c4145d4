"""Decoding bounded pieces of a message: header fields, parameters, bodies, charsets."""

from __future__ import annotations

import binascii
import codecs
import email.header
import email.message
import email.utils
import re

__all__ = [
    "ContentInfo",
    "content_info",
    "decode_body",
    "decode_header_value",
    "decode_text",
    "decoded_size",
]

_ENCODED_WORD = re.compile(rb"=\?[^?\s]{1,75}\?[bBqQ]\?")
_WHITESPACE = re.compile(rb"[\s]+")


def decode_header_value(raw: bytes) -> str:
    """A header value as text: RFC 2047 encoded words decoded, raw 8-bit read as UTF-8
    (RFC 6532), anything undecodable replaced by U+FFFD."""
    unfolded = re.sub(rb"\r?\n[ \t]", b" ", raw).strip()
    text = unfolded.decode("utf-8", "replace")
    if not _ENCODED_WORD.search(unfolded):
        return text
    try:
        pieces = email.header.decode_header(text)
        out = []
        for value, charset in pieces:
            if isinstance(value, str):
                out.append(value)
            else:
                out.append(value.decode(_codec(charset) or "utf-8", "replace"))
        return "".join(out)
    except (ValueError, LookupError, binascii.Error, UnicodeError):
        return text


def _codec(charset: str | None) -> str | None:
    if not charset:
        return None
    try:
        return codecs.lookup(charset.strip().strip('"')).name
    except LookupError:
        return None


class ContentInfo:
    """What a part's Content-Type, -Disposition and -Transfer-Encoding say."""

    __slots__ = ("boundary", "charset", "disposition", "encoding", "filename", "mime_type")

    def __init__(
        self,
        mime_type: str,
        boundary: str | None,
        charset: str | None,
        disposition: str | None,
        filename: str | None,
        encoding: str,
    ) -> None:
        self.mime_type = mime_type
        self.boundary = boundary
        self.charset = charset
        self.disposition = disposition
        self.filename = filename
        self.encoding = encoding


def content_info(
    content_type: bytes | None,
    disposition: bytes | None,
    encoding: bytes | None,
    default_type: str,
) -> ContentInfo:
    """Parameters parsed by the stdlib on a message holding only these three (bounded)
    fields: RFC 2231 continuations and encoded filenames included."""
    holder = email.message.Message()
    holder.set_default_type(default_type)
    if content_type is not None:
        holder["Content-Type"] = decode_header_value(content_type)
    if disposition is not None:
        holder["Content-Disposition"] = decode_header_value(disposition)
    mime_type = holder.get_content_type()
    boundary = holder.get_boundary() if mime_type.startswith("multipart/") else None
    charset = holder.get_content_charset()
    name = holder.get_filename() or holder.get_param("name")
    if isinstance(name, tuple):  # an RFC 2231 value the stdlib could not collapse
        name = email.utils.collapse_rfc2231_value(name)
    if name is not None and not isinstance(name, str):
        name = None
    if name is not None:
        name = decode_header_value(name.encode("utf-8", "replace"))
    kind = holder.get_content_disposition()
    encoding_name = (
        encoding.decode("ascii", "replace").strip().lower() if encoding is not None else "7bit"
    )
    return ContentInfo(mime_type, boundary, charset, kind, name, encoding_name)


def decode_body(body: bytes, encoding: str) -> tuple[bytes, str | None]:
    """Bytes with the transfer encoding removed, and a note when that went wrong."""
    if encoding == "base64":
        compact = _WHITESPACE.sub(b"", body)
        usable = len(compact) - len(compact) % 4
        note = None if usable == len(compact) else "base64 with a cut-off end"
        try:
            return binascii.a2b_base64(compact[:usable]), note
        except binascii.Error:
            cleaned = re.sub(rb"[^A-Za-z0-9+/=]", b"", compact)
            cleaned = cleaned[: len(cleaned) - len(cleaned) % 4]
            try:
                return binascii.a2b_base64(cleaned), "invalid base64 characters skipped"
            except binascii.Error:
                return b"", "base64 that does not decode: body not shown"
    if encoding == "quoted-printable":
        return binascii.a2b_qp(body), None
    if encoding in ("7bit", "8bit", "binary", ""):
        return body, None
    return body, f"unknown transfer encoding {encoding[:40]!r}: shown as sent"


def decoded_size(body: bytes, encoding: str) -> int:
    """The decoded size of an attachment, without decoding it."""
    if encoding == "base64":
        compact = len(body) - sum(body.count(c) for c in (b"\r", b"\n", b" ", b"\t"))
        padding = body.rstrip()[-2:].count(b"=")
        return max(compact * 3 // 4 - padding, 0)
    return len(body)


def decode_text(data: bytes, charset: str | None) -> tuple[str, str | None]:
    """Text in its declared charset; an unknown charset reads as UTF-8, bad bytes become
    U+FFFD, and either case comes with a note."""
    codec = _codec(charset) or "utf-8"
    note = None
    if charset and _codec(charset) is None:
        note = f"unknown charset {charset[:40]!r}: read as UTF-8"
    text = data.decode(codec, "replace")
    if "\ufffd" in text and note is None and b"\xef\xbf\xbd" not in data:
        note = f"bytes invalid in {codec} replaced"
    return text, note
