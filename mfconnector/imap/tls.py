"""TLS over a trio stream that hands back every decrypted record a read brought in.

``trio.SSLStream`` returns one TLS record per ``receive_some``; Dovecot writes records of
about 4 KB, so a 20 MB read took ~5,300 trips through the scheduler (bench/README.md).
This stream feeds whatever the socket gave into an ``ssl.MemoryBIO`` and then reads
*all* the plaintext it holds, up to the caller's ``max_bytes``, in one call. Verification
is the context's (hostname and chain checked in the handshake, as with ``SSLStream``).
An end of stream without ``close_notify`` reads as an end of stream: the IMAP layer
above treats any end in the middle of a response as a lost connection anyway.
"""

from __future__ import annotations

import ssl

import trio

__all__ = ["TlsStream"]

_RECEIVE_BYTES = 65_536


class TlsStream(trio.abc.Stream):
    def __init__(
        self, transport: trio.abc.Stream, context: ssl.SSLContext, server_hostname: str
    ) -> None:
        self._transport = transport
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._ssl = context.wrap_bio(
            self._incoming, self._outgoing, server_side=False, server_hostname=server_hostname
        )
        self._eof = False

    async def do_handshake(self) -> None:
        while True:
            try:
                self._ssl.do_handshake()
            except ssl.SSLWantReadError:
                await self._flush()
                if not await self._fill():
                    raise ssl.SSLEOFError(
                        "the server closed the connection in the handshake"
                    ) from None
                continue
            await self._flush()
            return

    async def _flush(self) -> None:
        data = self._outgoing.read()
        if data:
            await self._transport.send_all(data)

    async def _fill(self) -> bool:
        data = await self._transport.receive_some(_RECEIVE_BYTES)
        if not data:
            self._incoming.write_eof()
            self._eof = True
            return False
        self._incoming.write(data)
        return True

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        wanted = max_bytes or _RECEIVE_BYTES
        while True:
            chunks: list[bytes] = []
            total = 0
            ended = False
            try:
                while total < wanted:
                    piece = self._ssl.read(wanted - total)
                    if not piece:
                        ended = True
                        break
                    chunks.append(piece)
                    total += len(piece)
            except ssl.SSLWantReadError:
                pass
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                ended = True
            if chunks or ended or self._eof:
                await self._flush()  # a TLS 1.3 key update may want an answer
                return b"".join(chunks)
            await self._flush()
            await self._fill()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self._ssl.write(data)
        await self._flush()

    async def wait_send_all_might_not_block(self) -> None:
        await self._transport.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self._transport.aclose()
