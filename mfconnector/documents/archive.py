"""Open an Office (OOXML) zip only after its directory says it is safe to inflate.

Nothing in the archive is trusted. The central directory is read without inflating
anything, and refused when it has too many entries, declares too many uncompressed bytes
in all, has an entry compressed past a sane ratio, or uses a method other than stored or
deflate (Office writes nothing else; ``zipfile`` inflates bzip2 and LZMA without an output
bound, so a 1,816-byte docx reached 1 GB). Each entry's local header is then read and must
agree with the directory (name, method, sizes), and its compressed bytes must fit between
that header and the next entry: a directory that declares a larger ``compress_size`` to
pass the ratio check, or reuses one stream for many entries (the non-recursive zip bomb),
is refused. Finally every byte inflated is counted as it comes, across all entries: past
``archive_uncompressed_bytes`` the read stops. That count is the bound that holds on every
platform, Windows included, where the worker has no rlimits (docs/LIMITS.md).
XML inside is parsed by ``xmlstream``: no DTD, so no entity of any kind.
"""

from __future__ import annotations

import itertools
import struct
import zipfile
from typing import IO, Any, cast

from mfconnector.errors import DocumentError
from mfconnector.limits import Limits

__all__ = ["SafeZip", "corrupt", "open_zip", "protected"]

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""An OLE compound file: what Office writes for a password-protected .docx/.xlsx/.pptx,
and what the old binary formats (.doc, .xls, .ppt) are."""
ACCEPTED_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_DATA_DESCRIPTOR_FLAG = 0x08
_ZIP64_SIZE = 0xFFFFFFFF


class _Inflated:
    """What all members of one archive have inflated so far, against one limit."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit, self.what, self.count = limit, what, 0

    def add(self, size: int) -> None:
        self.count += size
        if self.count > self.limit:
            raise DocumentError(
                f"the {self.what} unpacked to more than {self.limit:,} bytes; reading stopped",
                code="too_large",
                hint="this looks like a zip bomb or an unusually large document; it is not read",
            )


class _CountedMember:
    """A member stream whose every inflated byte is counted as it is read."""

    def __init__(self, stream: IO[bytes], inflated: _Inflated) -> None:
        self._stream, self._inflated = stream, inflated

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._inflated.add(len(data))
        return data

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> _CountedMember:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class SafeZip:
    """A checked zip archive; members are opened by name, missing ones are None."""

    def __init__(self, archive: zipfile.ZipFile, inflated: _Inflated) -> None:
        self._zip = archive
        self._names = {info.filename for info in archive.infolist()}
        self._inflated = inflated

    def has(self, name: str) -> bool:
        return name in self._names

    def open(self, name: str) -> IO[bytes] | None:
        if name not in self._names:
            return None
        member = _CountedMember(self._zip.open(name), self._inflated)
        return cast("IO[bytes]", member)  # read(), close() and `with` are all callers use

    def close(self) -> None:
        self._zip.close()


def corrupt(what: str) -> DocumentError:
    return DocumentError(
        f"the {what} is damaged or not what its name says; no text could be read",
        code="corrupt",
        hint="open it in its application to repair it, or ask the sender for a new copy",
    )


def old_binary(what: str) -> DocumentError:
    return DocumentError(
        f"the {what} is in an old binary Office format (.doc, .xls or .ppt, renamed); "
        "its text cannot be read here",
        code="unsupported",
        hint="open it in Office and save it as .docx, .xlsx or .pptx",
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
    for info in infos:
        if info.compress_type not in ACCEPTED_METHODS:
            raise _refuse(
                what,
                f"an entry uses compression method {info.compress_type} "
                "(only stored and deflate are read; Office writes nothing else)",
            )


def check_local_headers(
    handle: IO[bytes], infos: list[zipfile.ZipInfo], end: int, what: str
) -> None:
    """Each entry's local header agrees with the directory, and its compressed bytes fit
    before the next entry (or the directory, at ``end``): nothing is declared, all is read."""
    ordered = sorted(infos, key=lambda info: info.header_offset)
    bounds = [info.header_offset for info in ordered[1:]] + [end]
    for info, limit in zip(ordered, bounds, strict=True):
        handle.seek(info.header_offset)
        raw = handle.read(_LOCAL_HEADER.size)
        if len(raw) < _LOCAL_HEADER.size:
            raise corrupt(what)
        signature, _, flags, method, _, _, _, packed, size, name_len, extra_len = (
            _LOCAL_HEADER.unpack(raw)
        )
        name = handle.read(name_len)
        mismatch = (
            signature != _LOCAL_SIGNATURE
            or method != info.compress_type
            or name.decode("utf-8" if flags & 0x800 else "cp437", "replace") != info.orig_filename
        )
        if not flags & _DATA_DESCRIPTOR_FLAG:
            mismatch = mismatch or (
                _ZIP64_SIZE not in (packed, size)
                and (packed != info.compress_size or size != info.file_size)
            )
        if mismatch:
            raise _refuse(what, "an entry's local header disagrees with the directory")
        data_start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
        if data_start + info.compress_size > limit:
            raise _refuse(
                what, "an entry's compressed size runs past the next entry (or is used twice)"
            )


_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
"""The OLE stream in which Office stores an encrypted .docx/.xlsx/.pptx (MS-OFFCRYPTO)."""


def _is_encrypted_package(path: str) -> bool:
    """Whether an OLE file holds an encrypted OOXML package rather than an old binary one
    (its directory names the ``EncryptedPackage`` stream); one pass, 1 MB at a time."""
    tail = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if _ENCRYPTED_PACKAGE in tail + chunk:
                return True
            tail = chunk[-len(_ENCRYPTED_PACKAGE) :]
    return False


def open_zip(path: str, limits: Limits, what: str) -> SafeZip:
    """The checked archive at ``path``; a protected, corrupt or bomb-shaped file is an error."""
    with open(path, "rb") as handle:
        magic = handle.read(len(OLE_MAGIC))
    if magic == OLE_MAGIC:
        raise protected(what) if _is_encrypted_package(path) else old_binary(what)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise corrupt(what) from None
    try:
        infos = archive.infolist()
        check_directory(infos, limits, what)
        directory_start = archive.start_dir
        with open(path, "rb") as handle:
            check_local_headers(handle, infos, directory_start, what)
    except BaseException:
        archive.close()
        raise
    return SafeZip(archive, _Inflated(limits.archive_uncompressed_bytes, what))
