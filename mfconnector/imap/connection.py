"""One IMAP connection on a trio stream: the thin I/O adapter around ``wire.ResponseReader``.

Connect (TLS from the first byte, STARTTLS, or plain text to loopback only), read the
greeting, log in (AUTHENTICATE PLAIN when offered, else LOGIN), then run one command at a
time, each under ``imap_command_seconds``. Any failure inside a command that leaves the
stream's framing unknown (a timeout, a cancel, a dropped connection, a protocol or limit
violation) marks the connection broken and closes it: it is never reused, so a late answer
to an abandoned command can never be read as the answer to the next one.
"""

from __future__ import annotations

import base64
import contextlib
import ssl
from collections.abc import Sequence
from dataclasses import dataclass

import trio

from mfconnector.imap.encode import Literal, Piece
from mfconnector.imap.errors import (
    ImapCommandError,
    ImapConnectionError,
    ImapError,
    ImapProtocolError,
    ImapTimeoutError,
)
from mfconnector.imap.results import SelectedMailbox, capabilities
from mfconnector.imap.settings import ServerSettings
from mfconnector.imap.tls import TlsStream
from mfconnector.imap.wire import Continuation, Response, ResponseReader, Tagged, Untagged
from mfconnector.limits import Limits

__all__ = ["CommandResult", "ImapConnection"]

_RECEIVE_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class CommandResult:
    """A command's tagged completion and the untagged responses that arrived before it."""

    tagged: Tagged
    untagged: tuple[Untagged, ...]


class ImapConnection:
    """Use ``await ImapConnection.open(settings, limits)``; close with ``aclose``."""

    def __init__(self, stream: trio.abc.Stream, settings: ServerSettings, limits: Limits):
        self._stream = stream
        self._settings = settings
        self._limits = limits
        self._reader = ResponseReader(limits)
        self._tags = 0
        self._lock = trio.Lock()
        self.broken = False
        self.capabilities: frozenset[str] = frozenset()
        self.enabled: frozenset[str] = frozenset()
        self.selected: SelectedMailbox | None = None
        """The mailbox now open, kept by ``commands``."""
        self.last_used = trio.current_time()

    # --- opening --------------------------------------------------------------------

    @classmethod
    async def open(cls, settings: ServerSettings, limits: Limits) -> ImapConnection:
        try:
            with trio.fail_after(limits.imap_connect_seconds):
                connection = await cls._connect(settings, limits)
        except trio.TooSlowError:
            raise ImapTimeoutError(
                f"no IMAP greeting from {settings.host}:{settings.port} within "
                f"{limits.imap_connect_seconds:g} s (imap_connect_seconds)"
            ) from None
        try:
            await connection._login()
        except BaseException:
            await connection.discard()
            raise
        return connection

    @classmethod
    async def _connect(cls, settings: ServerSettings, limits: Limits) -> ImapConnection:
        try:
            tcp: trio.abc.Stream = await trio.open_tcp_stream(settings.host, settings.port)
        except OSError as error:
            raise ImapConnectionError(
                f"cannot connect to IMAP server {settings.host}:{settings.port}: "
                f"{error.strerror or type(error).__name__}"
            ) from None
        stream = tcp
        try:
            if settings.security == "tls":
                stream = await _tls(tcp, settings)
            connection = cls(stream, settings, limits)
            greeting = await connection._read_response()
            if not isinstance(greeting, Untagged) or greeting.keyword not in ("OK", "PREAUTH"):
                raise ImapConnectionError("the IMAP server did not greet with OK")
            connection.capabilities = capabilities([greeting])
            if settings.security == "starttls":
                await connection.command("STARTTLS")
                if connection._reader.buffered_bytes:
                    # Bytes sent before the handshake could be an attacker's injection.
                    raise ImapProtocolError("the IMAP server sent data ahead of STARTTLS")
                connection._stream = await _tls(tcp, settings)
                connection.capabilities = frozenset()  # never trust what came before TLS
            return connection
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise

    async def _login(self) -> None:
        settings = self._settings
        if not self.capabilities:
            await self.refresh_capabilities()
        if "AUTH=PLAIN" in self.capabilities:
            token = base64.b64encode(
                b"\0" + settings.user.encode() + b"\0" + settings.password.encode()
            )
            if "SASL-IR" in self.capabilities:
                result = await self._login_command(b"AUTHENTICATE PLAIN " + token)
            else:
                result = await self._login_command(b"AUTHENTICATE PLAIN", continuation=token)
        elif "LOGINDISABLED" in self.capabilities:
            raise ImapConnectionError("the IMAP server allows no login on this connection")
        else:
            from mfconnector.imap.encode import astring

            result = await self._login_command(
                b"LOGIN", astring(settings.user), astring(settings.password)
            )
        found = capabilities(result.untagged, result.tagged.code)
        if found:
            self.capabilities = found
        else:
            await self.refresh_capabilities()

    async def _login_command(
        self, *pieces: Piece, continuation: bytes | None = None
    ) -> CommandResult:
        try:
            return await self.command(*pieces, continuation=continuation)
        except ImapCommandError as error:
            # The server's text only: never the command, which holds the password.
            raise ImapConnectionError(
                f"the IMAP server refused the login for {self._settings.user!r}: {error.text}"
            ) from None

    async def refresh_capabilities(self) -> frozenset[str]:
        result = await self.command("CAPABILITY")
        self.capabilities = capabilities(result.untagged, result.tagged.code)
        return self.capabilities

    # --- commands -------------------------------------------------------------------

    async def command(
        self, *pieces: Piece | str, continuation: bytes | None = None, check: bool = True
    ) -> CommandResult:
        """Send one command and collect its responses. ``check`` raises on NO/BAD."""
        if self.broken:
            raise ImapConnectionError("this IMAP connection was discarded")
        async with self._lock:
            self._tags += 1
            tag = f"M{self._tags}"
            name = _command_name(pieces)
            try:
                with trio.fail_after(self._limits.imap_command_seconds):
                    result = await self._exchange(tag, pieces, continuation)
            except trio.TooSlowError:
                await self.discard()
                raise ImapTimeoutError(
                    f"the IMAP server did not finish {name} within "
                    f"{self._limits.imap_command_seconds:g} s (imap_command_seconds)"
                ) from None
            except BaseException:
                await self.discard()
                raise
            self.last_used = trio.current_time()
        if check and result.tagged.status != "OK":
            code = result.tagged.code.name if result.tagged.code else None
            raise ImapCommandError(name, result.tagged.status, code, result.tagged.text)
        return result

    async def _exchange(
        self, tag: str, pieces: Sequence[Piece | str], continuation: bytes | None
    ) -> CommandResult:
        untagged: list[Untagged] = []
        line = bytearray(tag.encode("ascii"))
        for piece in pieces:
            line += b" "
            if isinstance(piece, Literal):
                line += b"{%d}\r\n" % len(piece.data)
                await self._send(bytes(line))
                await self._await_continuation(untagged)
                line = bytearray(piece.data)
            else:
                line += piece.encode("ascii") if isinstance(piece, str) else piece
        await self._send(bytes(line) + b"\r\n")
        if continuation is not None:
            await self._await_continuation(untagged)
            await self._send(continuation + b"\r\n")
        while True:
            response = await self._read_response()
            if isinstance(response, Tagged):
                if response.tag != tag:
                    raise ImapProtocolError("the IMAP server answered a command never sent")
                return CommandResult(response, tuple(untagged))
            if isinstance(response, Continuation):
                raise ImapProtocolError("the IMAP server asked for data no command offered")
            self._note(response)
            untagged.append(response)

    async def _await_continuation(self, untagged: list[Untagged]) -> None:
        while True:
            response = await self._read_response()
            if isinstance(response, Continuation):
                return
            if isinstance(response, Tagged):
                code = response.code.name if response.code else None
                raise ImapCommandError("a literal", response.status, code, response.text)
            self._note(response)
            untagged.append(response)

    def _note(self, response: Untagged) -> None:
        if response.keyword == "BYE":
            self.broken = True
        elif response.keyword == "CAPABILITY":
            self.capabilities = capabilities([response])

    async def _send(self, data: bytes) -> None:
        try:
            await self._stream.send_all(data)
        except (trio.BrokenResourceError, ssl.SSLError, OSError) as error:
            raise ImapConnectionError(
                f"the IMAP connection was lost while sending ({type(error).__name__})"
            ) from None

    async def _read_response(self) -> Response:
        while True:
            response = self._reader.next_response()
            if response is not None:
                return response
            wanted = self._reader.wants_literal_bytes or _RECEIVE_BYTES
            try:
                data = await self._stream.receive_some(min(wanted, _RECEIVE_BYTES))
            except (trio.BrokenResourceError, ssl.SSLError, OSError) as error:
                raise ImapConnectionError(
                    f"the IMAP connection was lost while reading ({type(error).__name__})"
                ) from None
            if not data:
                raise ImapConnectionError(
                    "the IMAP server closed the connection"
                    + (" in the middle of a literal" if self._reader.wants_literal_bytes else "")
                )
            self._reader.feed(data)

    # --- closing --------------------------------------------------------------------

    async def discard(self) -> None:
        """Close at once, without LOGOUT: the framing may be lost."""
        self.broken = True
        await trio.aclose_forcefully(self._stream)

    async def logout(self) -> None:
        """LOGOUT politely (bounded by the command deadline), then close."""
        if not self.broken:
            with contextlib.suppress(ImapError):
                await self.command("LOGOUT", check=False)
        await self.discard()


async def _tls(stream: trio.abc.Stream, settings: ServerSettings) -> TlsStream:
    wrapped = TlsStream(stream, settings.tls_context(), settings.host)
    try:
        await wrapped.do_handshake()
    except (trio.BrokenResourceError, OSError) as error:
        reason = getattr(error, "verify_message", None) or getattr(error, "reason", None)
        raise ImapConnectionError(
            f"TLS with {settings.host}:{settings.port} failed"
            + (f": {str(reason)[:200]}" if reason else "")
        ) from None
    return wrapped


def _command_name(pieces: Sequence[Piece | str]) -> str:
    first = pieces[0] if pieces else b""
    if isinstance(first, Literal):
        return "a command"
    text = first if isinstance(first, str) else first.decode("ascii", "replace")
    words = text.split()
    if words and words[0].upper() == "UID" and len(words) > 1:
        return " ".join(words[:2]).upper()
    return (words[0] if words else "a command").upper()
