"""The emulator behind httpx's transport seam, where live mode has the network.

Everything above the seam (the Graph client's caps, retries, redirect handling without
the token, the tools' shaping and markers) runs exactly as it does against Graph. Bodies
stream in chunks of at most 64 KiB (httpcore's own read size), so byte caps see the same
chunking as with a live server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import trio

from mfconnector.emulator.core import Emulator

__all__ = ["CHUNK_BYTES", "EmulatorTransport"]

CHUNK_BYTES = 65_536


class _Chunks(httpx.AsyncByteStream):
    """A body in chunks; a plain iterator so an early stop leaves nothing half-run."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._sent = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        await trio.lowlevel.checkpoint()
        if self._sent >= len(self._data):
            raise StopAsyncIteration
        chunk = self._data[self._sent : self._sent + CHUNK_BYTES]
        self._sent += len(chunk)
        return chunk

    async def aclose(self) -> None:
        self._sent = len(self._data)


class EmulatorTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` answering every request from an :class:`Emulator`."""

    def __init__(self, emulator: Emulator | None = None) -> None:
        self.emulator = emulator or Emulator()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        headers: dict[str, str] = {}
        for name, value in request.headers.multi_items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        answer = self.emulator.handle(request.method, str(request.url), headers, body)
        if answer.content is not None:
            data = answer.content
        elif answer.json is not None or answer.json_text is not None:
            text = answer.json_text
            if text is None:
                text = json.dumps(answer.json, ensure_ascii=False, separators=(",", ":"))
            data = text.encode()
            answer.headers.setdefault(
                "Content-Type",
                "application/json; odata.metadata=minimal; odata.streaming=true; "
                "IEEE754Compatible=false; charset=utf-8",
            )
        else:
            data = b""
        answer.headers["Content-Length"] = str(len(data))
        return httpx.Response(
            answer.status,
            headers=list(answer.headers.items()),
            stream=_Chunks(data),
            request=request,
        )
