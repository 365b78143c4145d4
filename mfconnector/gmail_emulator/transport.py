"""The emulator behind httpx's transport seam, where live mode has the network.

``GmailTransport`` (async) and ``GmailSyncTransport`` answer every request from one
``GmailEmulator``, so a client's own code (caps, retries, batching, paging) runs exactly as
against Google. Bodies stream in chunks of at most 64 KiB, so byte caps see chunking as with
a live server. No event-loop library is assumed: the stream never awaits anything.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx

from mfconnector.gmail_emulator.calls import Answer
from mfconnector.gmail_emulator.core import GmailEmulator

__all__ = ["CHUNK_BYTES", "GmailSyncTransport", "GmailTransport", "answer_bytes"]

CHUNK_BYTES = 65_536


def answer_bytes(answer: Answer) -> bytes:
    """The body on the wire: JSON as Google writes it (UTF-8, not ASCII-escaped)."""
    if answer.content is not None:
        return answer.content
    if answer.json is not None:
        return json.dumps(answer.json, ensure_ascii=False, indent=2).encode()
    return b""


class _Chunks(httpx.AsyncByteStream, httpx.SyncByteStream):
    def __init__(self, data: bytes) -> None:
        self._data = data

    def _pieces(self) -> Iterator[bytes]:
        for start in range(0, len(self._data), CHUNK_BYTES):
            yield self._data[start : start + CHUNK_BYTES]

    def __iter__(self) -> Iterator[bytes]:
        return self._pieces()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces():
            yield piece


def _response(emulator: GmailEmulator, request: httpx.Request, body: bytes) -> httpx.Response:
    headers = {name: value for name, value in request.headers.items()}
    answer = emulator.handle(request.method, str(request.url), headers, body)
    data = answer_bytes(answer)
    answer.headers["Content-Length"] = str(len(data))
    return httpx.Response(
        answer.status, headers=list(answer.headers.items()), stream=_Chunks(data), request=request
    )


class GmailTransport(httpx.AsyncBaseTransport):
    """For ``httpx.AsyncClient(transport=GmailTransport(emulator))``."""

    def __init__(self, emulator: GmailEmulator | None = None) -> None:
        self.emulator = emulator or GmailEmulator()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return _response(self.emulator, request, await request.aread())


class GmailSyncTransport(httpx.BaseTransport):
    """For ``httpx.Client(transport=GmailSyncTransport(emulator))``."""

    def __init__(self, emulator: GmailEmulator | None = None) -> None:
        self.emulator = emulator or GmailEmulator()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return _response(self.emulator, request, request.read())
