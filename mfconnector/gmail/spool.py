"""An attachment's bytes in a private temporary file, for the document extractor.

Gmail has no ranged download: ``attachments.get`` answers the whole attachment as
base64url in JSON. The answer is read only as far as ``limit`` + 1 bytes need (an
attachment past ``limit`` is refused as ``too_large`` without reading the rest), written to
a file only this user can read (``mkstemp``: mode 0600) and deleted when the caller is done.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import trio

from mfconnector.errors import DocumentError

__all__ = ["OnBytes", "SpooledAttachment", "spooled_bytes"]

OnBytes = Callable[[int, "int | None"], None]


@dataclass(frozen=True, slots=True)
class SpooledAttachment:
    path: str
    size: int


def _write(data: bytes, suffix: str) -> str:
    fd, path = tempfile.mkstemp(prefix="mfc-gmail-", suffix=suffix[:16])
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return path


@contextlib.asynccontextmanager
async def spooled_bytes(
    data: bytes,
    complete: bool,
    *,
    limit: int,
    declared: int | None,
    suffix: str,
    on_bytes: OnBytes | None,
) -> AsyncIterator[SpooledAttachment]:
    if not complete or len(data) > limit:
        size = declared if declared is not None and declared > limit else limit + 1
        raise DocumentError(
            f"the attachment is larger than {limit:,} bytes (document_bytes): not read",
            code="too_large",
            hint=f"it is about {size:,} bytes; open it in Gmail",
        )
    if on_bytes is not None:
        on_bytes(len(data), declared)
    path = await trio.to_thread.run_sync(_write, data, suffix)
    try:
        yield SpooledAttachment(path, len(data))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
