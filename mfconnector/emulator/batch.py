"""JSON batching (``POST /$batch``) and attachment upload sessions.

``$batch`` (Graph's JSON batching): up to 20 requests in ``{"requests": [{"id", "method",
"url", "headers"?, "body"?}]}``, each answered as if sent alone (with the batch's token),
in ``{"responses": [{"id", "status", "headers", "body"}]}``. More than 20, a duplicate or
missing id, or a malformed entry answers 400 for the whole batch. ``dependsOn`` is
accepted; requests run in the order given, which satisfies any dependency.

Upload sessions (attachments of 3 to 150 MB): ``POST .../attachments/createUploadSession``
answers 201 with a pre-authenticated ``uploadUrl`` on ``outlook.office.com``; the bytes go
there with ``PUT`` and ``Content-Range``, without an Authorization header (one with it is
refused, as Outlook refuses it). Each chunk is answered 200 with ``nextExpectedRanges``;
the last one 201 with the attachment's ``Location``, and the attachment appears on the
message.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, parse_qs, unquote

from mfconnector.emulator import ids
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import GRAPH, Attachment, Mailbox, Message, iso

if TYPE_CHECKING:
    from mfconnector.emulator.core import Answer, Call, Emulator

__all__ = [
    "MAX_BATCH_REQUESTS",
    "MAX_UPLOAD_BYTES",
    "UPLOAD_HOST",
    "UploadSession",
    "create_upload_session",
    "run_batch",
    "serve_upload",
]

MAX_BATCH_REQUESTS = 20
"""Graph's limit of requests in one JSON batch."""
MAX_UPLOAD_BYTES = 150 * 1024 * 1024
"""Outlook's limit for an attachment sent through an upload session."""
MAX_CHUNK_BYTES = 4 * 1024 * 1024
"""Outlook refuses a chunk over 4 MB."""
UPLOAD_HOST = "https://outlook.office.com"
_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")


def run_batch(emulator: Emulator, call: Call) -> Answer:
    from mfconnector.emulator.core import Answer, error_answer

    body = call.json_body()
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise GraphHttpError(400, "BadRequest", "The batch needs a non-empty 'requests' array.")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise GraphHttpError(
            400,
            "BadRequest",
            f"The number of requests in the batch exceeds the limit of {MAX_BATCH_REQUESTS}.",
        )
    seen: set[str] = set()
    for entry in requests:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), str)
            or not isinstance(entry.get("method"), str)
            or not isinstance(entry.get("url"), str)
        ):
            raise GraphHttpError(
                400, "BadRequest", "Each batch request needs string id, method and url."
            )
        if entry["id"] in seen:
            raise GraphHttpError(400, "BadRequest", f"Duplicate request id '{entry['id'][:40]}'.")
        seen.add(entry["id"])
    responses = []
    for entry in requests:
        headers = {k.lower(): str(v) for k, v in (entry.get("headers") or {}).items()}
        headers["authorization"] = call.headers.get("authorization", "")
        url = entry["url"] if entry["url"].startswith("/") else "/" + entry["url"]
        raw = entry.get("body")
        data = json.dumps(raw).encode() if raw is not None else b""
        request_id = ids.guid(f"batch:{emulator.requests}:{entry['id']}")
        try:
            answer = emulator.route(entry["method"].upper(), GRAPH + url, headers, data)
        except GraphHttpError as error:
            answer = error_answer(error, request_id, headers.get("client-request-id"))
        response: dict[str, Any] = {"id": entry["id"], "status": answer.status}
        out_headers = dict(answer.headers)
        if answer.json is not None:
            out_headers.setdefault("Content-Type", "application/json")
            response["body"] = answer.json
        elif answer.content:
            response["body"] = base64.b64encode(answer.content).decode("ascii")
        response["headers"] = out_headers
        responses.append(response)
    return Answer(200, json={"responses": responses})


@dataclass
class UploadSession:
    mailbox: Mailbox
    message: Message
    name: str
    size: int
    content_type: str
    token: str
    data: bytearray = field(default_factory=bytearray)


def create_upload_session(
    emulator: Emulator, call: Call, mailbox: Mailbox, message: Message
) -> Answer:
    from mfconnector.emulator.core import Answer

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
    emulator: Emulator, method: str, url: SplitResult, headers: dict[str, str], body: bytes
) -> Answer:
    from mfconnector.emulator.core import Answer

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
