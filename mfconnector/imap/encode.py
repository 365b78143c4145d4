"""Building IMAP commands: strings, literals, mailbox names (modified UTF-7), UID sets.

A command is a list of pieces: ``bytes`` are sent as they are, a ``Literal`` is announced
as ``{N}`` and sent after the server's ``+`` (RFC 3501 section 4.3). Anything a quoted
string cannot carry (CR, LF, NUL, 8-bit) becomes a literal, so no argument can smuggle a
second command onto the line.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Literal",
    "Piece",
    "astring",
    "decode_mailbox",
    "encode_mailbox",
    "parse_uid_set",
    "uid_set",
]


@dataclass(frozen=True, slots=True)
class Literal:
    """Bytes sent as a synchronizing literal."""

    data: bytes


Piece = bytes | Literal

_ATOM_SAFE = frozenset(
    b"!#$&'+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ^_`abcdefghijklmnopqrstuvwxyz|~"
)


def astring(value: str | bytes) -> Piece:
    """An atom when safe, else a quoted string, else a literal."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    if raw and all(byte in _ATOM_SAFE for byte in raw):
        return raw
    if all(0x20 <= byte < 0x7F for byte in raw):
        return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
    return Literal(raw)


def encode_mailbox(name: str) -> Piece:
    """A mailbox name in modified UTF-7 (RFC 3501 section 5.1.3), quoted as needed."""
    return astring(_mutf7_encode(name))


def _mutf7_encode(name: str) -> bytes:
    out = bytearray()
    pending: list[str] = []

    def flush() -> None:
        if pending:
            utf16 = "".join(pending).encode("utf-16-be")
            out.extend(b"&" + base64.b64encode(utf16).rstrip(b"=").replace(b"/", b",") + b"-")
            pending.clear()

    for char in name:
        if 0x20 <= ord(char) <= 0x7E:
            flush()
            out.extend(b"&-" if char == "&" else char.encode("ascii"))
        else:
            pending.append(char)
    flush()
    return bytes(out)


def decode_mailbox(raw: bytes | str) -> str:
    """A mailbox name from modified UTF-7; undecodable runs are kept as sent."""
    text = raw.decode("ascii", "replace") if isinstance(raw, bytes) else raw
    out: list[str] = []
    pos = 0
    while pos < len(text):
        amp = text.find("&", pos)
        if amp < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:amp])
        end = text.find("-", amp)
        if end < 0:
            out.append(text[amp:])
            break
        chunk = text[amp + 1 : end]
        if not chunk:
            out.append("&")
        else:
            padded = chunk.replace(",", "/") + "=" * (-len(chunk) % 4)
            try:
                out.append(base64.b64decode(padded).decode("utf-16-be"))
            except ValueError:
                out.append(text[amp : end + 1])
        pos = end + 1
    return "".join(out)


def uid_set(uids: Iterable[int]) -> bytes:
    """``1:3,7`` for 1, 2, 3 and 7 (sorted, ranges joined)."""
    ordered = sorted(set(uids))
    if not ordered or ordered[0] < 1:
        raise ValueError("a UID set needs UIDs of 1 or more")
    runs: list[str] = []
    start = prev = ordered[0]
    for uid in ordered[1:]:
        if uid == prev + 1:
            prev = uid
            continue
        runs.append(f"{start}:{prev}" if start != prev else str(start))
        start = prev = uid
    runs.append(f"{start}:{prev}" if start != prev else str(start))
    return ",".join(runs).encode("ascii")


def parse_uid_set(value: int | str, max_items: int) -> list[int]:
    """The UIDs of a set such as ``5:7,9`` (as a server sends in COPYUID), at most max_items."""
    if isinstance(value, int):
        return [value]
    uids: list[int] = []
    for run in value.split(","):
        low, _, high = run.partition(":")
        first, last = int(low), int(high or low)
        if first > last:
            first, last = last, first
        if len(uids) + last - first + 1 > max_items:
            raise ValueError(f"a UID set of more than {max_items} UIDs")
        uids.extend(range(first, last + 1))
    return uids
