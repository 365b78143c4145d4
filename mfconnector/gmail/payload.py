"""A ``format=full`` Message payload walked part by part under the MIME limits.

Gmail sends the MIME tree already parsed: each part has ``partId``, ``mimeType``,
``filename``, ``headers`` and ``body`` (``data`` in base64url for small bodies,
``attachmentId`` for attachments). The walk uses an explicit stack, reads at most
``mime_parts`` parts and ``mime_depth`` levels, ``mime_header_lines`` headers a part and
``mime_text_bytes`` decoded bytes of each text body, exactly like the IMAP reader; what it
cuts is said in ``Walked.notes``. The first text/plain (else text/html) not marked as an
attachment is the body; parts with a file name or an ``attachmentId`` are attachments.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from mfconnector.limits import Limits
from mfconnector.mime.decode import decode_text

__all__ = ["PartFile", "Walked", "walk_payload"]


@dataclass(frozen=True, slots=True)
class PartFile:
    """An attachment part: Gmail's attachmentId (None: its bytes came inline)."""

    part_id: str
    name: str
    mime_type: str
    size: int
    attachment_id: str | None
    inline: bool
    content_id: str | None
    inline_data: bytes | None = None


@dataclass(slots=True)
class Walked:
    text: str | None = None
    html: str | None = None
    files: list[PartFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parts: int = 0

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < 20:
            self.notes.append(text)


def _headers(part: dict[str, Any], limits: Limits, walked: Walked) -> dict[str, str]:
    raw = part.get("headers")
    headers: dict[str, str] = {}
    if not isinstance(raw, list):
        return headers
    if len(raw) > limits.mime_header_lines:
        walked.note(
            f"more than {limits.mime_header_lines:,} header fields in a part: the rest "
            "not read (mime_header_lines)"
        )
    for entry in raw[: limits.mime_header_lines]:
        if isinstance(entry, dict):
            name, value = entry.get("name"), entry.get("value")
            if isinstance(name, str) and isinstance(value, str):
                headers.setdefault(name.lower(), value[: limits.mime_header_bytes])
    return headers


def b64url_bytes(text: str, max_bytes: int | None = None) -> bytes | None:
    """base64url as Gmail writes it, padded or not; None when it does not decode.
    ``max_bytes``: decode only enough text for that many bytes."""
    if max_bytes is not None:
        text = text[: (max_bytes // 3 + 1) * 4]
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def _charset(content_type: str) -> str | None:
    for piece in content_type.split(";")[1:]:
        key, _, value = piece.strip().partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"') or None
    return None


def _text_of(part: dict[str, Any], headers: dict[str, str], limits: Limits, walked: Walked) -> str:
    body = part.get("body") if isinstance(part.get("body"), dict) else {}
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, str):
        return ""
    cap = limits.mime_text_bytes
    decoded = b64url_bytes(data, cap + 3)
    if decoded is None:
        walked.note("a text body that is not base64url: not shown")
        return ""
    if len(decoded) > cap:
        walked.note(f"a text body over {cap:,} bytes: cut there (mime_text_bytes)")
        decoded = decoded[:cap]
    text, problem = decode_text(decoded, _charset(headers.get("content-type", "")))
    if problem:
        walked.note(problem)
    return text.replace("\r\n", "\n")


def _file(part: dict[str, Any], headers: dict[str, str], limits: Limits) -> PartFile:
    body = part.get("body") if isinstance(part.get("body"), dict) else {}
    assert isinstance(body, dict)
    attachment_id = body.get("attachmentId")
    size = body.get("size")
    disposition = headers.get("content-disposition", "").lower()
    content_id = headers.get("content-id", "").strip().strip("<>") or None
    inline_data = None
    if not isinstance(attachment_id, str):
        attachment_id = None
        data = body.get("data")
        if isinstance(data, str):
            inline_data = b64url_bytes(data, limits.graph_body_bytes)
    name = part.get("filename") if isinstance(part.get("filename"), str) else ""
    return PartFile(
        part_id=str(part.get("partId", "")),
        name=str(name)[: limits.attachment_name_chars] or "(no name)",
        mime_type=str(part.get("mimeType") or "application/octet-stream")[:200],
        size=size if isinstance(size, int) and size >= 0 else 0,
        attachment_id=attachment_id,
        inline=disposition.startswith("inline"),
        content_id=content_id,
        inline_data=inline_data,
    )


def walk_payload(payload: Any, limits: Limits) -> Walked:
    """Body texts and attachment parts of one payload; never raises on content."""
    walked = Walked()
    if not isinstance(payload, dict):
        walked.note("the message has no readable payload")
        return walked
    stack: list[tuple[dict[str, Any], int]] = [(payload, 0)]
    while stack:
        part, depth = stack.pop()
        if walked.parts >= limits.mime_parts:
            walked.note(f"more than {limits.mime_parts} MIME parts: the rest not read (mime_parts)")
            break
        walked.parts += 1
        mime_type = str(part.get("mimeType") or "").lower()
        headers = _headers(part, limits, walked)
        children = part.get("parts")
        if mime_type.startswith("multipart/") or isinstance(children, list):
            if depth >= limits.mime_depth:
                walked.note(
                    f"MIME parts nested deeper than {limits.mime_depth} levels not read "
                    "(mime_depth)"
                )
                continue
            kids = [child for child in children or [] if isinstance(child, dict)]
            stack.extend((child, depth + 1) for child in reversed(kids))
            continue
        body = part.get("body") if isinstance(part.get("body"), dict) else {}
        named = bool(part.get("filename"))
        attached = headers.get("content-disposition", "").lower().startswith("attachment")
        has_id = isinstance(body, dict) and isinstance(body.get("attachmentId"), str)
        if mime_type in ("text/plain", "text/html") and not (named or attached or has_id):
            slot = "text" if mime_type == "text/plain" else "html"
            if getattr(walked, slot) is None:
                setattr(walked, slot, _text_of(part, headers, limits, walked))
            continue
        if named or attached or has_id:
            walked.files.append(_file(part, headers, limits))
    return walked
