"""A large file attachment through an Outlook upload session.

Microsoft Learn, "Attach large files to Outlook messages or events": attachments of 3 MB to
150 MB are not sent in one request. ``POST {message}/attachments/createUploadSession`` with
``{"AttachmentItem": {"attachmentType": "file", "name", "size"}}`` answers 201 with an
``uploadUrl``; the bytes then go there in order with ``PUT`` and ``Content-Range: bytes
first-last/size``, each chunk under 4 MB, answered 200 with ``nextExpectedRanges`` until the
last, answered 201. The upload URL is pre-authenticated (its ``authtoken`` is the
credential): it gets no Authorization header, is never logged and never shown, and must be
``https`` (or on the Graph root's own origin, as a test server is).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio

from mfconnector.errors import GraphError
from mfconnector.graph.body import read_capped
from mfconnector.graph.client import GraphClient
from mfconnector.graph.errors import AmbiguousWriteError

__all__ = ["ReadChunk", "upload_attachment"]

_log = logging.getLogger("mfconnector.graph")

ReadChunk = Callable[[int, int], Awaitable[bytes]]
"""``(offset, length)`` -> exactly those bytes of the file being attached."""
OnUploaded = Callable[[int, int], None]
"""Told ``(bytes uploaded so far, size)`` after each chunk the upload host accepted."""


async def upload_attachment(
    client: GraphClient,
    message_path: str,
    *,
    name: str,
    content_type: str,
    size: int,
    read_chunk: ReadChunk,
    chunk_bytes: int,
    on_uploaded: OnUploaded | None = None,
) -> None:
    """Attach ``size`` bytes to the draft at ``message_path`` through an upload session."""
    item = {"attachmentType": "file", "name": name, "size": size, "contentType": content_type}
    answer = await client.write_json(
        "POST",
        f"{message_path}/attachments/createUploadSession",
        body={"AttachmentItem": item},
    )
    body: dict[str, Any] = answer.body if isinstance(answer.body, dict) else {}
    upload_url = _checked_upload_url(body.get("uploadUrl"), client.root)
    sent = 0
    while sent < size:
        length = min(chunk_bytes, size - sent)
        chunk = await read_chunk(sent, length)
        if len(chunk) != length:
            raise GraphError(
                "the file being attached changed size while it was uploaded",
                retry_safe=True,
                hint="attach it again",
            )
        status = await _put(client, upload_url, chunk, sent, size)
        sent += length
        if on_uploaded is not None:
            on_uploaded(sent, size)
        if status == 201 and sent < size:
            raise GraphError("the upload host ended the upload early", retry_safe=False)
        if sent == size and status != 201:
            raise AmbiguousWriteError(
                "the upload host took every byte but did not say the attachment was made",
                hint="read the draft (mail_review draft) to see whether it is attached",
            )


def _checked_upload_url(value: Any, root: str) -> str:
    """Graph's ``uploadUrl``, refused unless it is https or on the Graph root's origin."""
    if not isinstance(value, str) or not value:
        raise GraphError("Graph created an upload session without an upload URL", retry_safe=True)
    url, graph = urlsplit(value), urlsplit(root)
    same_origin = (url.scheme, url.netloc) == (graph.scheme, graph.netloc)
    if not url.netloc or (url.scheme != "https" and not same_origin):
        raise GraphError(
            "Graph answered an upload URL that is not https; nothing was uploaded",
            retry_safe=False,
        )
    return value


async def _put(client: GraphClient, url: str, chunk: bytes, first: int, size: int) -> int:
    """One chunk to the pre-authenticated URL: no token, no cookies; the status it answered."""
    limits = client.limits
    request = client._http.build_request(
        "PUT",
        url,
        content=chunk,
        headers={
            "Content-Range": f"bytes {first}-{first + len(chunk) - 1}/{size}",
            "Content-Type": "application/octet-stream",
        },
    )
    request.headers.pop("Authorization", None)
    request.headers.pop("Cookie", None)
    failure: GraphError | None = None
    status = 0
    async with client._limiter:
        try:
            with trio.fail_after(limits.graph_request_seconds):
                response = await client._http.send(request)
                try:
                    status = response.status_code
                    await read_capped(response, limits.graph_body_bytes, limits=limits)
                finally:
                    with trio.move_on_after(limits.graph_close_seconds) as scope:
                        scope.shield = True
                        await response.aclose()
        except (httpx.TransportError, trio.TooSlowError, GraphError):
            failure = AmbiguousWriteError(
                f"the upload host did not answer for bytes {first:,}-{first + len(chunk) - 1:,}",
                hint="the draft may lack this attachment: read it (mail_review draft) and "
                "attach the file again if it is missing",
            )
    if failure is not None:
        raise failure
    _log.debug(
        "PUT <upload host> bytes %d-%d/%d -> %d", first, first + len(chunk) - 1, size, status
    )
    if status not in (200, 201, 202):
        raise GraphError(
            f"the upload host answered {status} for bytes {first:,}-{first + len(chunk) - 1:,}; "
            "the attachment was not completed",
            status=status,
            retry_safe=True,
            hint="attach the file again",
        )
    return status
