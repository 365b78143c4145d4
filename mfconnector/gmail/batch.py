"""The Gmail API's batch endpoint: several GETs in one ``multipart/mixed`` request.

As Google's "Batching requests" guide describes: each part is ``Content-Type:
application/http`` holding one request line and headers (the outer Authorization applies
to each); the answer is ``multipart/mixed`` with one ``application/http`` part per call,
matched back by ``Content-ID: <response-N>``, each with its own status. Google allows 100
calls a batch and advises at most 50 (``gmail_batch_calls``). Parsing is bounded: the
whole answer was read under the body cap, boundaries are found with ``bytes.find``, and a
part that cannot be read counts as a failed call, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mfconnector.mail.failures import ActionFailure

__all__ = ["BATCH_BOUNDARY", "batch_body", "parse_batch"]

BATCH_BOUNDARY = "mfconnector_batch_7f3a9c"
_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")
_CONTENT_ID = re.compile(rb"(?im)^content-id:\s*<response-(\d+)>")
_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.IGNORECASE)


def batch_body(paths: Sequence[str]) -> bytes:
    """``paths``: the request targets (``/gmail/v1/users/me/messages/…?format=…``)."""
    out = bytearray()
    for index, path in enumerate(paths):
        out += (
            f"--{BATCH_BOUNDARY}\r\nContent-Type: application/http\r\n"
            f"Content-ID: <{index}>\r\n\r\nGET {path}\r\n\r\n"
        ).encode()
    out += f"--{BATCH_BOUNDARY}--\r\n".encode()
    return bytes(out)


def _split_head(data: bytes) -> tuple[bytes, bytes]:
    for mark in (b"\r\n\r\n", b"\n\n"):
        cut = data.find(mark)
        if cut >= 0:
            return data[:cut], data[cut + len(mark) :]
    return data, b""


def parse_batch(data: bytes, content_type: str, calls: int) -> list[tuple[int, bytes]]:
    """(status, body) per call in request order; a call with no readable answer is
    ``(0, b"")``."""
    found = _BOUNDARY.search(content_type)
    if found is None or not content_type.lower().startswith("multipart/mixed"):
        raise ActionFailure(
            "Gmail's batch answer is not multipart/mixed", details={"provider": "gmail"}
        )
    delimiter = b"--" + found.group(1).strip().encode("ascii", "replace")
    answers: list[tuple[int, bytes]] = [(0, b"")] * calls
    for chunk in data.split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        part_head, inner = _split_head(chunk.lstrip(b"\r\n"))
        which = _CONTENT_ID.search(part_head)
        if which is None:
            continue
        index = int(which.group(1))
        status_head, body = _split_head(inner)
        status = _STATUS.match(status_head.lstrip())
        if status is None or not 0 <= index < calls:
            continue
        answers[index] = (int(status.group(1)), body.rstrip(b"\r\n"))
    return answers
