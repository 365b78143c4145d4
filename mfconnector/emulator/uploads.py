"""Attachment upload sessions (attachments of 3 to 150 MB).

``POST .../attachments/createUploadSession`` answers 201 with a pre-authenticated
``uploadUrl`` on ``outlook.office.com``; the bytes go there with ``PUT`` and
``Content-Range``, without an Authorization header (one with it is refused, as Outlook
refuses it). Each chunk is answered 200 with ``nextExpectedRanges``; the last one 201 with
the attachment's ``Location``, and the attachment appears on the message.
"""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import SplitResult, parse_qs, unquote

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import Attachment, Mailbox, Message
from mfconnector.emulator.render import GRAPH, iso
from mfconnector.emulator.state import EmulatorState, UploadSession

__all__ = [
    "MAX_UPLOAD_BYTES",
    "UPLOAD_HOST",
    "create_upload_session",
    "serve_upload",
]

MAX_UPLOAD_BYTES = 150 * 1024 * 1024
"""Outlook's limit for an attachment sent through an upload session."""
MAX_CHUNK_BYTES = 4 * 1024 * 1024
"""Outlook refuses a chunk over 4 MB."""
UPLOAD_HOST = "https://outlook.office.com"
_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")


def create_upload_session(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    item = call.json_body().get("AttachmentItem")
    if not isinstance(item, dict) or item.get("attachmentType", "file") != "file":
        raise GraphHttpError(400, "ErrorInvalidRequest", "AttachmentItem of type file needed.")
    name, size = item.get("name"), item.get("size")
    if not isinstance(name, str) or not name or not isinstance(size, int) or size < 1:
        raise GraphHttpError(400, "ErrorInvalidRequest", "AttachmentItem needs name and size.")
    if size > MAX_UPLOAD_BYTES:
        raise GraphHttpError(
            400, "ErrorAttachmentSizeLimitExceeded", "The attachment is larger than 150 MB."
        )
    session_id = ids.guid(f"upload:{emulator.requests}:{message.label}")
    token = ids.tempauth("upload:" + session_id, 1)
    content_type = item.get("contentType")
    emulator.uploads[session_id] = UploadSession(
        mailbox,
        message,
        name,
        size,
        content_type if isinstance(content_type, str) else "application/octet-stream",
        token,
    )
    url = (
        f"{UPLOAD_HOST}/api/v2.0/Users('{mailbox.user_id}@{mailbox.mail.split('@')[1]}')"
        f"/Messages('{message.immutable_id}')/AttachmentSessions('{session_id}')"
        f"?authtoken={token}"
    )
    return Answer(
        201,
        json={
            "@odata.context": f"{GRAPH}/$metadata#microsoft.graph.uploadSession",
            "uploadUrl": url,
            "expirationDateTime": iso(call.now + timedelta(hours=6)),
            "nextExpectedRanges": ["0-"],
        },
    )


def serve_upload(
    emulator: EmulatorState, method: str, url: SplitResult, headers: dict[str, str], body: bytes
) -> Answer:
    match = re.search(r"AttachmentSessions\('([^']+)'\)$", unquote(url.path))
    session = emulator.uploads.get(match.group(1)) if match else None
    token = parse_qs(url.query).get("authtoken", [""])[0]
    if session is None or token != session.token:
        raise GraphHttpError(404, "ErrorItemNotFound", "The upload session was not found.")
    if "authorization" in headers:
        raise GraphHttpError(
            401,
            "InvalidAuthenticationToken",
            "An upload URL is pre-authenticated: send no Authorization header.",
        )
    if method == "DELETE":
        emulator.uploads.pop(match.group(1), None)  # type: ignore[union-attr]
        return Answer(204)
    if method != "PUT":
        raise GraphHttpError(405, "ErrorInvalidRequest", "Upload chunks are sent with PUT.")
    found = _RANGE.match(headers.get("content-range", ""))
    if found is None:
        raise GraphHttpError(400, "ErrorInvalidRequest", "A Content-Range header is required.")
    first, last, total = (int(found.group(n)) for n in (1, 2, 3))
    if (
        total != session.size
        or first != len(session.data)
        or last < first
        or last >= total
        or len(body) != last - first + 1
        or len(body) > MAX_CHUNK_BYTES
    ):
        raise GraphHttpError(
            416,
            "ErrorInvalidRange",
            f"The range {first}-{last}/{total} is not the next expected range "
            f"({len(session.data)}-).",
        )
    session.data += body
    if len(session.data) < session.size:
        return Answer(
            200,
            json={
                "expirationDateTime": iso(emulator.now() + timedelta(hours=6)),
                "nextExpectedRanges": [f"{len(session.data)}-"],
            },
        )
    emulator.uploads.pop(match.group(1), None)  # type: ignore[union-attr]
    message = session.message
    data = bytes(session.data)
    now = emulator.now()
    attachment = Attachment(
        id=ids.attachment_id(message.label, 2000 + len(message.attachments)),
        name=session.name,
        content_type=session.content_type,
        kind="file",
        declared_size=None,
        modified=now,
        data=lambda: data,
    )
    message.attachments.append(attachment)
    message.touch(now)
    location = (
        f"{GRAPH}/users('{session.mailbox.user_id}')/messages('{message.immutable_id}')"
        f"/attachments('{attachment.id}')"
    )
    return Answer(201, headers={"Location": location})
