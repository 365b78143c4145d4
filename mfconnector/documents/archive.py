"""Open an Office (OOXML) zip only after its directory says it is safe to inflate.

The central directory is read without inflating anything. It is refused when it has too
many entries, declares too many uncompressed bytes in all, has an entry compressed past a
sane ratio, or has entries that overlap (the non-recursive zip bomb reuses one compressed
stream for many entries). ``zipfile`` then never yields more than an entry's declared size
and checks its CRC, so an entry that lies about its size ends in an error, not a bomb.
XML inside is parsed by ``xmlstream``: no DTD, so no entity of any kind.
"""

from __future__ import annotations

import itertools
import zipfile
from typing import IO

from mfconnector.errors import DocumentError
from mfconnector.limits import Limits

__all__ = ["SafeZip", "corrupt", "open_zip", "protected"]

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""An OLE compound file: what Office writes for a password-protected .docx/.xlsx/.pptx."""


class SafeZip:
    """A checked zip archive; members are opened by name, missing ones are None."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self._zip = archive
        self._names = {info.filename for info in archive.infolist()}

    def has(self, name: str) -> bool:
        return name in self._names

    def open(self, name: str) -> IO[bytes] | None:
        if name not in self._names:
            return None
        return self._zip.open(name)

    def close(self) -> None:
        self._zip.close()


def corrupt(what: str) -> DocumentError:
    return DocumentError(
        f"the {what} is damaged or not what its name says; no text could be read",
        code="corrupt",
        hint="open it in its application to repair it, or ask the sender for a new copy",
    )


def protected(what: str) -> DocumentError:
    return DocumentError(
        f"the {what} is password-protected (encrypted); its text cannot be read here",
        code="protected",
        hint="ask the owner for an unprotected copy",
    )


def _refuse(what: str, reason: str) -> DocumentError:
    return DocumentError(
        f"the {what} was refused before unpacking: {reason}",
        code="too_large",
        hint="this looks like a zip bomb or an unusually large document; it is not read",
    )


def check_directory(infos: list[zipfile.ZipInfo], limits: Limits, what: str) -> None:
    """Refuse an archive from its directory alone (nothing inflated yet)."""
    if len(infos) > limits.archive_members:
        raise _refuse(what, f"{len(infos):,} entries (the limit is {limits.archive_members:,})")
    total = sum(info.file_size for info in infos)
    if total > limits.archive_uncompressed_bytes:
        raise _refuse(
            what,
            f"its entries unpack to {total:,} bytes "
            f"(the limit is {limits.archive_uncompressed_bytes:,})",
        )
    for info in infos:
        if (
            info.file_size > limits.archive_ratio_min_bytes
            and info.file_size > info.compress_size * limits.archive_ratio
        ):
            ratio = info.file_size // max(info.compress_size, 1)
            raise _refuse(
                what,
                f"an entry is compressed {ratio:,} to 1 (the limit is {limits.archive_ratio:,})",
            )
    ordered = sorted(infos, key=lambda info: info.header_offset)
    for first, second in itertools.pairwise(ordered):
        if first.header_offset + first.compress_size > second.header_offset:
            raise _refuse(what, "its entries overlap (one compressed stream used twice)")


def open_zip(path: str, limits: Limits, what: str) -> SafeZip:
    """The checked archive at ``path``; a protected, corrupt or bomb-shaped file is an error."""
    with open(path, "rb") as handle:
        magic = handle.read(len(OLE_MAGIC))
    if magic == OLE_MAGIC:
        raise protected(what)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise corrupt(what) from None
    try:
        check_directory(archive.infolist(), limits, what)
    except BaseException:
        archive.close()
        raise
    return SafeZip(archive)
