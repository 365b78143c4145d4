"""An attachment's bytes in a private temporary file, for the document extractor.

The file is made by ``mkstemp`` (mode 0600, readable by this user only) and deleted when the
caller's context ends. Bytes are written as each partial fetch arrives
(``imap_fetch_chunk_bytes`` at a time, decoded by the server with BINARY where it can, else
base64 decoded here chunk by chunk), so memory stays at one chunk whatever the size; more
than ``limit`` bytes is ``DocumentError`` too_large, said before the extractor runs.
"""

from __future__ import annotations

import binascii
import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from mfconnector.errors import DocumentError
from mfconnector.imap import commands
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.refs import parse_attachment, parse_message
from mfconnector.mail.backend import OnBytes
from mfconnector.mail.failures import NotFound, StaleReference
from mfconnector.mail.refs import Reference

if TYPE_CHECKING:
    from mfconnector.imap.session import ImapSession, Stage

__all__ = ["SpooledAttachment", "spool_attachment"]

_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/=]")


@dataclass(frozen=True, slots=True)
class SpooledAttachment:
    path: str
    size: int
    sha256: str


class _Base64Stream:
    """Base64 decoded across chunk boundaries (a quantum may straddle two fetches)."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, data: bytes) -> bytes:
        compact = self._rest + _NOT_BASE64.sub(b"", data)
        usable = len(compact) - len(compact) % 4
        self._rest = compact[usable:]
        try:
            return binascii.a2b_base64(compact[:usable])
        except binascii.Error:
            return b""


@contextlib.asynccontextmanager
async def spool_attachment(
    backend: ImapSession,
    message: Reference,
    attachment: Reference,
    *,
    limit: int,
    suffix: str = "",
    on_bytes: OnBytes | None = None,
) -> AsyncIterator[SpooledAttachment]:
    address = parse_attachment(attachment)
    where = address.message
    if parse_message(message) != where:
        raise StaleReference("the attachment does not belong to that message")
    descriptor, name = tempfile.mkstemp(prefix="mfc-doc-", suffix=suffix)
    try:
        async with trio.wrap_file(os.fdopen(descriptor, "wb")) as handle:

            async def operation(connection: ImapConnection, stage: Stage) -> tuple[int, str]:
                await commands.open_checked(
                    connection, where.folder, where.uidvalidity, writable=False
                )
                found = await commands.fetch(
                    connection, where.folder, [where.uid], ["UID", "BODYSTRUCTURE"]
                )
                part = (
                    next((p for p in (found[0].parts or ()) if p.path == address.part), None)
                    if found
                    else None
                )
                if part is None:
                    raise NotFound("the message has no such attachment", hint="read it again")
                await handle.seek(0)
                await handle.truncate()
                encoding = part.encoding or "7bit"
                binary = "BINARY" in connection.capabilities and encoding in (
                    "base64",
                    "quoted-printable",
                )
                decoder = _Base64Stream() if encoding == "base64" and not binary else None
                verb = "BINARY" if binary else "BODY"
                chunk = backend.limits.imap_fetch_chunk_bytes
                digest, written, offset = hashlib.sha256(), 0, 0
                while True:
                    got = await commands.fetch(
                        connection,
                        where.folder,
                        [where.uid],
                        [f"{verb}.PEEK[{part.path}]<{offset}.{chunk}>"],
                    )
                    data = (
                        got[0].sections.get(f"{verb}[{part.path}]<{offset}>", b"") if got else b""
                    )
                    offset += len(data)
                    piece = decoder.feed(data) if decoder is not None else data
                    written += len(piece)
                    if written > limit:
                        raise DocumentError(
                            f"the attachment is over {limit:,} bytes, more than can be read here",
                            code="too_large",
                        )
                    digest.update(piece)
                    await handle.write(piece)
                    if on_bytes is not None:
                        on_bytes(written, part.size if not decoder and not binary else None)
                    if len(data) < chunk:
                        return written, digest.hexdigest()

            size, sha256 = await backend.run("fetching the attachment", operation)
        yield SpooledAttachment(name, size, sha256)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
