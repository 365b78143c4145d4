"""``POST /batch/gmail/v1``: several API calls in one multipart/mixed body (RFC 2046 5.1).

As Google's "Batching requests" guide describes: each part has ``Content-Type:
application/http`` and holds one HTTP request (request line, headers, blank line, body);
an inner call without an Authorization header uses the outer one; at most 100 calls; each
is answered as if sent alone, in a part with ``Content-ID: <response-ID>`` for a request
part that had ``Content-ID: <ID>``. Each inner call counts on its own (Google: "a set of n
requests batched together counts toward your usage limit as n requests").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from email import policy
from email.message import Message
from email.parser import BytesParser
from http import HTTPStatus
from urllib.parse import urlsplit

from mfconnector.gmail_emulator.calls import Answer
from mfconnector.gmail_emulator.errors import GmailError, bad_request

__all__ = ["MAX_BATCH_CALLS", "run_batch"]

MAX_BATCH_CALLS = 100
""""You're limited to 100 calls in a single batch request" (the Batching requests guide)."""


def _inner_request(data: bytes) -> tuple[str, str, dict[str, str], bytes]:
    """(method, target, headers, body) of the HTTP request inside one part (CRLF or LF)."""
    head, _, body = data.replace(b"\r\n", b"\n").lstrip(b"\n").partition(b"\n\n")
    lines = head.decode("utf-8", errors="replace").split("\n")
    words = lines[0].split()
    if len(words) < 2:
        raise bad_request("Each batch part must hold an HTTP request line.")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return words[0].upper(), words[1], headers, body.strip()


def _response_part(answer: Answer, content_id: str | None) -> bytes:
    if answer.content is not None:
        payload = answer.content
    elif answer.json is not None:
        payload = json.dumps(answer.json, ensure_ascii=False, indent=1).encode()
    else:
        payload = b""
    lines = ["Content-Type: application/http"]
    if content_id:
        lines.append(f"Content-ID: <response-{content_id}>")
    status = answer.status
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines += ["", f"HTTP/1.1 {status} {phrase}"]
    headers = dict(answer.headers)
    if answer.json is not None:
        headers.setdefault("Content-Type", "application/json; charset=UTF-8")
    headers["Content-Length"] = str(len(payload))
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload + b"\r\n"


def _parts(headers: dict[str, str], body: bytes) -> list[Message]:
    content_type = headers.get("content-type", "")
    envelope = f"Content-Type: {content_type}\r\n\r\n".encode() + body
    message = BytesParser(policy=policy.compat32).parsebytes(envelope)
    if message.get_content_type() != "multipart/mixed" or not message.get_boundary():
        raise bad_request("A batch request must be multipart/mixed with a boundary.")
    parts = message.get_payload()
    if not isinstance(parts, list) or not parts:
        raise bad_request("The batch request holds no calls.")
    if len(parts) > MAX_BATCH_CALLS:
        raise bad_request(f"A batch request cannot contain more than {MAX_BATCH_CALLS} calls.")
    return [part for part in parts if isinstance(part, Message)]


ApiCall = Callable[[str, str, str, dict[str, str], bytes], Answer]
"""(method, path, query, headers, body) to an answer: the emulator's own ``call``."""


def run_batch(call_api: ApiCall, headers: dict[str, str], body: bytes) -> Answer:
    parts = _parts(headers, body)
    boundary = "batch_" + hashlib.sha256(body).hexdigest()[:22]
    out = bytearray()
    for part in parts:
        content_id = (part.get("Content-ID") or "").strip().strip("<>") or None
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            data = b""
        try:
            if part.get_content_type() != "application/http":
                raise bad_request("Each batch part must be application/http.")
            method, target, inner_headers, inner_body = _inner_request(data)
            inner_headers.setdefault("authorization", headers.get("authorization", ""))
            target_parts = urlsplit(target)
            if target_parts.path.rstrip("/") in ("/batch/gmail/v1", "/batch"):
                raise bad_request("A batch cannot hold another batch.")
            answer = call_api(
                method, target_parts.path, target_parts.query, inner_headers, inner_body
            )
        except GmailError as error:
            answer = Answer(error.status, error.body(), dict(error.headers))
        out += f"--{boundary}\r\n".encode() + _response_part(answer, content_id)
    out += f"--{boundary}--\r\n".encode()
    return Answer(
        200, content=bytes(out), headers={"Content-Type": f"multipart/mixed; boundary={boundary}"}
    )
