"""The capped body reader: an HTTP answer never costs more memory than its byte cap.

Shared by every client that reads a provider's answers (Graph, Gmail). httpx reads up to
64 KiB per network read and its own gzip decoder inflates each read without a bound, so a
50 KB gzip body can become 50 MB before any check runs. Here we read ``aiter_raw()`` (the
bytes as they arrive), count them, and inflate gzip/deflate ourselves with
``decompress(data, max_length)`` so the *decoded* size is capped too (or refuse any coding,
``inflate=False``, for a client that asked for none). Anything held is at most the cap plus
one network chunk.

- ``read_capped``: a whole answer; past the cap is an error.
- ``read_prefix``: a download's first bytes; past the cap we stop and say it was partial.
- ``parse_json_body``: strict UTF-8 and standard JSON only, its values counted first.

Every failure is a ``BodyError`` that says what went wrong and never holds the body's
bytes; each client words it as its provider's error (``graph.body``, ``gmail.client``).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx
import trio

from mfconnector.jsoncost import values_over_limit
from mfconnector.limits import Limits
from mfconnector.strictjson import StrictJsonError, parse_strict

__all__ = [
    "BodyError",
    "Inflater",
    "checked_cost",
    "content_coding",
    "decode_utf8_strict",
    "parse_json_body",
    "parse_json_text",
    "raw_chunks",
    "read_capped",
    "read_prefix",
]

BodyProblem = Literal["too_large", "coding", "corrupt", "too_many_values", "not_json"]

_DECODABLE = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": 0}
"""Content-Encodings we inflate ourselves (deflate's window bits are chosen on first bytes)."""


class BodyError(Exception):
    """An answer that could not be read within its bounds: ``problem`` says which bound,
    ``detail`` how far it got (a count, a coding's name, a reason), never its bytes."""

    def __init__(
        self,
        problem: BodyProblem,
        status: int | None = None,
        *,
        detail: str = "",
        limit: int = 0,
    ) -> None:
        super().__init__(f"{problem}: {detail}" if detail else problem)
        self.problem: BodyProblem = problem
        self.status = status
        self.detail = detail
        self.limit = limit


def content_coding(headers: Mapping[str, str], status: int, *, inflate: bool = True) -> str | None:
    """The one coding to undo, or None for identity. Anything else is refused (with
    ``inflate`` False, any coding at all); ``detail`` names the codings, cut short."""
    raw = headers.get("content-encoding", "")
    codings = [c.strip().lower() for c in raw.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if inflate and len(codings) == 1 and codings[0] in _DECODABLE:
        return codings[0]
    shown = ", ".join(c[:20] for c in codings[:3])
    raise BodyError("coding", status, detail=shown)


def _declared_length(headers: Mapping[str, str]) -> int | None:
    value = headers.get("content-length")
    if value is None:
        return None
    try:
        length = int(value.strip())
    except ValueError:
        return None
    return length if length >= 0 else None


class Inflater:
    """Bounded gzip/deflate decoding: each feed produces at most ``room + 1`` bytes, in
    pieces of at most ``step_bytes`` (the ``graph_inflate_step_bytes`` limit)."""

    def __init__(self, coding: str, *, step_bytes: int) -> None:
        self._coding = coding
        self._step = step_bytes
        self._zlib: Any = None  # zlib's decompressobj type is not public
        self._pending = b""

    def _start(self, data: bytes) -> bytes:
        """Pick window bits: HTTP deflate is zlib-wrapped, but some servers send it raw."""
        if self._coding != "deflate":
            self._zlib = zlib.decompressobj(_DECODABLE[self._coding])
            return data
        data = self._pending + data
        if len(data) < 2:
            self._pending = data
            return b""
        self._pending = b""
        zlib_header = (data[0] & 0x0F) == 8 and ((data[0] << 8) | data[1]) % 31 == 0
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
        return data

    def feed(self, data: bytes, room: int) -> list[bytes]:
        """Decode ``data`` into pieces of at most ``step_bytes``, ``room + 1`` bytes in all.

        Stopping one byte past ``room`` is how the caller learns the cap was passed;
        whatever input is left then is never inflated.
        """
        if self._zlib is None:
            data = self._start(data)
            if self._zlib is None:
                return []
        pieces: list[bytes] = []
        produced = 0
        while True:
            step = min(self._step, room + 1 - produced)
            if step <= 0:
                return pieces
            piece = self._zlib.decompress(data, step)
            if piece:
                pieces.append(piece)
                produced += len(piece)
            data = self._zlib.unconsumed_tail
            if self._zlib.eof or (not data and len(piece) < step):
                return pieces

    def finish(self) -> bool:
        """True when the compressed stream ended properly."""
        if self._zlib is None:
            return not self._pending
        return bool(self._zlib.eof)


@asynccontextmanager
async def raw_chunks(
    response: httpx.Response, *, limits: Limits
) -> AsyncIterator[AsyncIterator[bytes]]:
    """``response.aiter_raw()``, left finished however the reading ends.

    httpx and httpcore stream through several layers of async generators, and closing
    the outer one does not close the inner ones (encode/httpx#3686): trio then warns
    about each half-read generator when it is garbage collected. So after stopping
    early we close the response (the connection goes away) and step the iterator until
    the read on the closed connection fails at the bottom and every layer finishes.
    Only bytes already buffered can still arrive, so this is a few steps at most
    (``graph_stream_finish_steps``, within ``graph_stream_finish_seconds``).
    """
    stream = response.aiter_raw()
    try:
        yield stream
    finally:
        with trio.move_on_after(limits.graph_stream_finish_seconds) as scope:
            scope.shield = True
            await response.aclose()
            for _ in range(limits.graph_stream_finish_steps):
                try:
                    await anext(stream)
                except Exception:  # StopAsyncIteration, or the read on a closed connection
                    break


class _CappedReader:
    """Reads one response's body into at most ``limit`` bytes (raw and decoded)."""

    def __init__(
        self, response: httpx.Response, limit: int, *, limits: Limits, inflate: bool = True
    ) -> None:
        self.response = response
        self.limit = limit
        self._limits = limits
        self.raw_count = 0
        self.decoded_count = 0
        coding = content_coding(response.headers, response.status_code, inflate=inflate)
        self._inflater = (
            Inflater(coding, step_bytes=limits.graph_inflate_step_bytes) if coding else None
        )

    @property
    def encoded(self) -> bool:
        return self._inflater is not None

    def declared_length(self) -> int | None:
        return _declared_length(self.response.headers)

    def _decode(self, raw: bytes, room: int) -> list[bytes]:
        if self._inflater is None:
            return [raw]
        try:
            return self._inflater.feed(raw, room)
        except zlib.error:
            raise BodyError("corrupt", self.response.status_code) from None

    async def read(self, skip: int = 0) -> tuple[list[bytes], bool]:
        """Read until the end or past the cap. Returns (chunks, overflowed).

        The chunks hold at most ``limit`` bytes; on overflow the bytes past the cap are
        dropped and ``decoded_count`` says how many arrived before we stopped. The first
        ``skip`` decoded bytes are counted and dropped as they arrive (a download host that
        ignored a Range request sends the whole file: memory stays within the cap).
        """
        chunks: list[bytes] = []
        held = 0
        async with raw_chunks(self.response, limits=self._limits) as stream:
            async for raw in stream:
                self.raw_count += len(raw)
                for piece in self._decode(raw, self.limit - held + skip):
                    self.decoded_count += len(piece)
                    if skip:
                        dropped = min(skip, len(piece))
                        skip -= dropped
                        piece = piece[dropped:]
                        if not piece:
                            continue
                    if held + len(piece) > self.limit:
                        if held < self.limit:
                            chunks.append(piece[: self.limit - held])
                        return chunks, True
                    chunks.append(piece)
                    held += len(piece)
                if self.raw_count > self.limit + self.decoded_count - held:
                    # compressed input alone passed the cap
                    return chunks, True
        if self._inflater is not None and not self._inflater.finish():
            raise BodyError("corrupt", self.response.status_code)
        return chunks, False


def _too_large(reader: _CappedReader, *, declared: int | None = None) -> BodyError:
    if declared is not None:
        detail = f"it declared {declared:,} bytes; nothing was read"
    elif reader.encoded:
        detail = (
            f"decoded {reader.decoded_count:,} bytes from {reader.raw_count:,} compressed "
            "bytes before stopping"
        )
    else:
        detail = f"read {reader.raw_count:,} bytes before stopping"
    return BodyError("too_large", reader.response.status_code, detail=detail, limit=reader.limit)


async def read_capped(
    response: httpx.Response, limit: int, *, limits: Limits, inflate: bool = True
) -> bytes:
    """The whole body of a streamed response; ``BodyError("too_large")`` past ``limit``.

    The declared Content-Length is checked first (refused before reading anything), then
    raw bytes are counted as they arrive, so a lying or absent Content-Length changes
    nothing. Reading stops at the first chunk past the cap. ``limits`` bounds the inflating
    and the finishing of the stream (``limit`` is the caller's byte cap).
    """
    reader = _CappedReader(response, limit, limits=limits, inflate=inflate)
    declared = reader.declared_length()
    if declared is not None and declared > limit:
        raise _too_large(reader, declared=declared)
    chunks, overflowed = await reader.read()
    if overflowed:
        chunks.clear()
        raise _too_large(reader)
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)


async def read_prefix(
    response: httpx.Response, limit: int, skip: int = 0, *, limits: Limits, inflate: bool = True
) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body after its first ``skip``, and True when that was
    all of it.

    For downloads: a file larger than the cap is not an error, we just stop reading.
    """
    reader = _CappedReader(response, limit, limits=limits, inflate=inflate)
    chunks, overflowed = await reader.read(skip)
    return b"".join(chunks), not overflowed


def checked_cost(data: bytes, max_values: int) -> bytes:
    """``data``, unless it holds more JSON values than ``max_values`` (keys included).

    Counted before parsing, with the same count as a request line (``jsoncost``): a body's
    bytes say little about its parsed size, and 2 MB of ``[{},{},...]`` would be about
    100 MB of Python objects. A real Graph page holds at most about one value per 13 bytes.
    """
    over = values_over_limit(data, max_values, find_top=False)
    if over is None:
        return data
    raise BodyError("too_many_values", detail=f"{over.values:,}", limit=max_values)


def decode_utf8_strict(data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped); ``BodyError("not_json")`` otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError("not_json", detail="not UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def parse_json_text(text: str) -> Any:
    """Standard JSON only: NaN, Infinity and overflowing numbers (``1e999``) are refused,
    and so is absurd nesting: none of them could be sent on to the client."""
    try:
        return parse_strict(text).value  # refused at the first problem; last key wins
    except StrictJsonError as exc:
        reason = "nested too deeply" if exc.kind == "too_deep" else "not valid JSON"
        raise BodyError("not_json", detail=reason) from None


def parse_json_body(data: bytes, max_values: int) -> Any:
    """A JSON answer: its values counted (at most ``max_values``), strict UTF-8, standard
    JSON only. Callers holding a large body can write the three steps themselves and drop
    the bytes before the (larger) Python objects are built."""
    return parse_json_text(decode_utf8_strict(checked_cost(data, max_values)))
