"""An RFC 5322 / MIME message (RFC 2045-2046) as Gmail presents it: a tree of parts.

``parse(raw, seed)`` reads the bytes once with the standard ``email`` package and keeps
what ``messages.get`` and search need: the headers (RFC 2047 words decoded, as Gmail's
``payload.headers`` shows them), the part tree with Gmail's ``partId`` numbering (``""``
for the root, ``"0"``, ``"1"``, then ``"1.0"`` ...), the decoded body of every leaf,
attachment ids for parts with a filename, the searchable text and the snippet.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from html.parser import HTMLParser
from typing import Any

__all__ = ["Parsed", "Part", "b64url", "parse", "payload_json", "unb64url"]

SNIPPET_CHARS = 200
"""Gmail's snippets are about this long (observed; the reference says only "a short part")."""
_SPACE = re.compile(r"\s+")
_MSGID = re.compile(r"<[^<>\s]+>")


def b64url(data: bytes) -> str:
    """URL-safe base64 as Gmail writes ``raw`` and ``body.data`` (RFC 4648 section 5)."""
    return base64.urlsafe_b64encode(data).decode("ascii")


def unb64url(text: str) -> bytes:
    """Reads base64url with or without padding; raises ``ValueError`` on anything else."""
    cleaned = text.strip()
    if not re.fullmatch(r"[A-Za-z0-9_\-]*=*", cleaned):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(cleaned + "=" * (-len(cleaned) % 4))


@dataclass(frozen=True)
class Part:
    part_id: str
    mime_type: str
    filename: str
    headers: tuple[tuple[str, str], ...]
    data: bytes = b""
    attachment_id: str | None = None
    children: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Parsed:
    headers: tuple[tuple[str, str], ...]
    root: Part
    text: str
    """Body text (plain parts, and HTML parts as text) for search."""
    snippet: str
    attachments: dict[str, bytes] = field(default_factory=dict)
    filenames: tuple[str, ...] = ()

    def header(self, name: str) -> str:
        """All values of a header, joined by ``, `` (empty when absent)."""
        wanted = name.lower()
        return ", ".join(value for key, value in self.headers if key.lower() == wanted)

    @property
    def message_id(self) -> str:
        found = _MSGID.search(self.header("Message-ID"))
        return found.group(0) if found else ""

    @property
    def referenced_ids(self) -> tuple[str, ...]:
        """Message-IDs named by ``In-Reply-To`` and ``References`` (RFC 5322 section 3.6.4)."""
        text = self.header("In-Reply-To") + " " + self.header("References")
        return tuple(_MSGID.findall(text))

    def addresses(self, name: str) -> list[tuple[str, str]]:
        return getaddresses([self.header(name)])

    def date(self) -> datetime | None:
        try:
            value = parsedate_to_datetime(self.header("Date"))
        except (TypeError, ValueError, IndexError):
            return None
        return value if value.tzinfo is not None else None


class _TextOfHtml(HTMLParser):
    _SKIP = frozenset({"script", "style", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        self.out.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        self.out.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.out.append(data)


def html_text(html: str) -> str:
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    return _SPACE.sub(" ", "".join(parser.out)).strip()


def decoded_header(value: str) -> str:
    """A header value unfolded, RFC 2047 words decoded, raw UTF-8 read as UTF-8."""
    if any("\udc80" <= c <= "\udcff" for c in value):
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    value = _SPACE.sub(" ", value).strip()
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (HeaderParseError, LookupError, UnicodeDecodeError, ValueError):
        return value


def _headers(part: Message) -> tuple[tuple[str, str], ...]:
    return tuple((name, decoded_header(str(value))) for name, value in part.items())


def _attachment_id(seed: str, part_id: str) -> str:
    digest = hashlib.sha256(f"{seed}:{part_id}".encode()).digest()
    return "ANGjdJ" + base64.urlsafe_b64encode(digest * 3).decode("ascii").rstrip("=")


def _leaf_bytes(part: Message) -> bytes:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        message = inner[0] if isinstance(inner, list) and inner else None
        return message.as_bytes() if isinstance(message, Message) else b""
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _charset_text(part: Message, data: bytes) -> str:
    charset = part.get_content_charset() or "utf-8"
    try:
        return data.decode(charset, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


class _Walk:
    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.attachments: dict[str, bytes] = {}
        self.filenames: list[str] = []
        self.plain: list[str] = []
        self.html: list[str] = []

    def part(self, node: Message, part_id: str) -> Part:
        mime_type = node.get_content_type()
        headers = _headers(node)
        if node.is_multipart() and mime_type != "message/rfc822":
            children = node.get_payload()
            assert isinstance(children, list)
            kids = tuple(
                self.part(child, f"{part_id}.{index}" if part_id else str(index))
                for index, child in enumerate(children)
            )
            return Part(part_id, mime_type, "", headers, children=kids)
        filename = decoded_header(node.get_filename() or "")
        data = _leaf_bytes(node)
        if filename or node.get_content_disposition() == "attachment":
            attachment_id = _attachment_id(self.seed, part_id)
            self.attachments[attachment_id] = data
            if filename:
                self.filenames.append(filename)
            return Part(part_id, mime_type, filename, headers, data, attachment_id)
        if mime_type == "text/plain":
            self.plain.append(_charset_text(node, data))
        elif mime_type == "text/html":
            self.html.append(html_text(_charset_text(node, data)))
        return Part(part_id, mime_type, "", headers, data)


def escape_snippet(text: str) -> str:
    """Gmail's snippets are HTML-escaped (``&#39;`` for an apostrophe)."""
    for plain, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")):
        text = text.replace(plain, entity)
    return text.replace("'", "&#39;")


def parse(raw: bytes, seed: str) -> Parsed:
    """Reads one message; ``seed`` (the message id) makes its attachment ids its own.

    The ``compat32`` policy: the modern one parses every header into objects and costs
    twenty times as much, for nothing the emulator needs."""
    message = BytesParser(policy=policy.compat32).parsebytes(raw)
    walk = _Walk(seed)
    root = walk.part(message, "")
    body = walk.plain or walk.html
    text = " ".join(walk.plain + walk.html)
    first = _SPACE.sub(" ", body[0]).strip() if body else ""
    return Parsed(
        headers=root.headers,
        root=root,
        text=text,
        snippet=escape_snippet(first[:SNIPPET_CHARS]),
        attachments=walk.attachments,
        filenames=tuple(walk.filenames),
    )


def payload_json(part: Part, *, full: bool, wanted: frozenset[str] | None = None) -> dict[str, Any]:
    """``payload`` of ``format=full`` (the part tree) or ``format=metadata`` (headers only).

    ``wanted`` is ``metadataHeaders`` lower-cased (None: every header).
    """
    headers = [
        {"name": name, "value": value}
        for name, value in part.headers
        if wanted is None or name.lower() in wanted
    ]
    if not full:
        return {"partId": part.part_id, "mimeType": part.mime_type, "headers": headers}
    body: dict[str, Any] = {"size": len(part.data)}
    if part.attachment_id is not None:
        body["attachmentId"] = part.attachment_id
    elif part.data and not part.children:
        body["data"] = b64url(part.data)
    out: dict[str, Any] = {
        "partId": part.part_id,
        "mimeType": part.mime_type,
        "filename": part.filename,
        "headers": headers,
        "body": body,
    }
    if part.children:
        out["parts"] = [payload_json(child, full=True) for child in part.children]
    return out
