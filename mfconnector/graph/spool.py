"""A document download streamed to a private temporary file, never held in memory.

``spooled_download`` asks the client for the file (Graph's redirect is followed without
the token, as for every download), writes each chunk as it arrives to a file that only
this user can read (``mkstemp``: mode 0600), and deletes it when the caller is done,
however that ends. The file may be at most ``document_bytes``: a larger declared size is
refused before a byte is read, a larger stream as soon as it passes the limit, and the
error says how large the file is.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx
import trio

from mfconnector.errors import DocumentError, document_too_large
from mfconnector.graph.body import content_coding
from mfconnector.graph.client import GraphClient
from mfconnector.limits import Limits
from mfconnector.net.capped_body import Inflater, raw_chunks

__all__ = ["SpooledFile", "spooled_download"]

_log = logging.getLogger("mfconnector.documents")

_TOTAL_HEADERS = ("content-range", "content-length")

OnBytes = Callable[[int, "int | None"], None]
"""Told ``(bytes written so far, the file's declared size or None)`` after each chunk."""


@dataclass(frozen=True, slots=True)
class SpooledFile:
    path: str
    size: int
    sha256: str
    """Hex SHA-256 of the bytes written (computed as they arrive)."""


def _declared_total(response: httpx.Response) -> int | None:
    """The whole file's size from Content-Range (``bytes 0-9/123``) or Content-Length."""
    if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
        return None
    content_range = response.headers.get("content-range", "")
    if "/" in content_range:
        total = content_range.rsplit("/", 1)[1].strip()
        return int(total) if total.isdigit() else None
    if response.status_code == 200:
        length = response.headers.get("content-length", "").strip()
        return int(length) if length.isdigit() else None
    return None


async def _write(
    response: httpx.Response,
    handle: trio.abc.AsyncResource,
    limit: int,
    limits: Limits,
    on_bytes: OnBytes | None = None,
    digest: hashlib._Hash | None = None,
) -> int:
    declared = _declared_total(response)
    if declared is not None and declared > limit:
        raise document_too_large(declared, limit)
    coding = content_coding(response.headers, response.status_code)
    inflater = Inflater(coding, step_bytes=limits.graph_inflate_step_bytes) if coding else None
    written = 0
    async with raw_chunks(response, limits=limits) as stream:
        async for raw in stream:
            try:
                pieces = inflater.feed(raw, limit - written) if inflater else [raw]
            except zlib.error:
                raise DocumentError(
                    "the download arrived damaged (bad compression)", code="corrupt"
                ) from None
            for piece in pieces:
                written += len(piece)
                if written > limit:
                    raise document_too_large(declared, limit)
                await handle.write(piece)  # type: ignore[attr-defined]
                if digest is not None:
                    digest.update(piece)
            if on_bytes is not None:
                on_bytes(written, declared)
    if inflater is not None and not inflater.finish():
        raise DocumentError("the download arrived cut short", code="corrupt", retry_safe=True)
    return written


@contextlib.asynccontextmanager
async def spooled_download(
    graph: GraphClient,
    path: str,
    *,
    limit: int,
    suffix: str = "",
    on_bytes: OnBytes | None = None,
) -> AsyncIterator[SpooledFile]:
    """The file at ``path`` (``.../content`` or ``.../$value``) in a private temporary file."""
    descriptor, name = tempfile.mkstemp(prefix="mfc-doc-", suffix=suffix)
    try:
        async with trio.wrap_file(os.fdopen(descriptor, "wb")) as handle:

            async def read(response: httpx.Response) -> int:
                return await _write(response, handle, limit, graph.limits, on_bytes, digest)

            digest = hashlib.sha256()
            size = await graph.download_stream(path, read, range_bytes=limit + 1)
        yield SpooledFile(name, size, digest.hexdigest())
    finally:
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        except OSError as error:  # Windows: still open somewhere; never fail the call for it
            _log.warning("could not delete a document's temporary file: %s", error.strerror)
