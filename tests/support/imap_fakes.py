"""Misbehaving peers for the IMAP fault tests: a proxy that cuts a connection after a
number of bytes, and a scripted fake server (both stdlib threads on 127.0.0.1)."""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Callable
from typing import Literal

__all__ = ["CuttingProxy", "ScriptedServer"]

_TIMEOUT = 10.0


class CuttingProxy:
    """Relays to ``127.0.0.1:upstream``; once ``cut_after`` is set, the server-to-client
    direction is closed after that many more bytes (both ways, abruptly)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.cut_after: int | None = None
        self.security: Literal["plain", "tls"] = "plain"
        """How the client should talk through it (the proxy only relays bytes)."""
        self.cuts = 0
        self.cut_on: bytes | None = None
        """Once set, the connection is closed (both ways) right after the client sends bytes
        holding this: the command has left and its answer never comes back."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream), timeout=_TIMEOUT)
            self._sockets += [client, server]
            for source, target, cutting in ((client, server, False), (server, client, True)):
                thread = threading.Thread(
                    target=self._pump, args=(source, target, cutting), daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _pump(self, source: socket.socket, target: socket.socket, cutting: bool) -> None:
        sent_since_armed = 0
        try:
            while data := source.recv(65_536):
                if not cutting and self.cut_on is not None and self.cut_on in data:
                    self.cut_on = None
                    target.sendall(data)
                    self.cuts += 1
                    break
                if cutting and self.cut_after is not None:
                    room = self.cut_after - sent_since_armed
                    if room <= len(data):
                        target.sendall(data[:room])
                        self.cut_after = None
                        self.cuts += 1
                        break
                    sent_since_armed += len(data)
                target.sendall(data)
        except OSError:
            pass
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
        for thread in self._threads:
            thread.join(_TIMEOUT)


class ScriptedServer:
    """A fake IMAP server: greets, accepts any login, then answers every further command
    with ``answer(tag, line)`` (bytes to send; None sends nothing and keeps waiting)."""

    def __init__(
        self,
        answer: Callable[[bytes, bytes], bytes | None],
        greeting: bytes = b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN SASL-IR] fake ready\r\n",
    ) -> None:
        self.answer = answer
        self.greeting = greeting
        self.commands: list[bytes] = []
        self.close_after_reply = False
        """Close the connection after the next scripted reply (as after a BYE)."""
        """Each command whole, literals included (as the server received it)."""
        self.sent_bytes = 0
        self.lines: list[bytes] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            client, _ = self._listener.accept()
        except OSError:
            return
        client.settimeout(_TIMEOUT)
        with client, contextlib.suppress(OSError):
            client.sendall(self.greeting)
            reader = client.makefile("rb")
            while line := reader.readline(65_536):
                self.lines.append(line)
                whole = line
                while (mark := re.search(rb"\{(\d+)\}\r\n\Z", whole)) is not None:
                    client.sendall(b"+ send it\r\n")
                    whole += reader.read(int(mark.group(1))) + reader.readline(65_536)
                self.commands.append(whole)
                tag = line.split(b" ", 1)[0]
                if b"CAPABILITY" in line.upper():
                    client.sendall(b"* CAPABILITY IMAP4rev1\r\n" + tag + b" OK done\r\n")
                    continue
                if line.upper() == tag.upper() + b" AUTHENTICATE PLAIN\r\n":
                    client.sendall(b"+ \r\n")
                    self.commands.append(reader.readline(65_536))
                    client.sendall(tag + b" OK [CAPABILITY IMAP4rev1] logged in\r\n")
                    continue
                if (
                    line.upper().startswith(tag.upper() + b" LOGIN")
                    or b"AUTHENTICATE" in line.upper()
                ):
                    client.sendall(tag + b" OK [CAPABILITY IMAP4rev1 UIDPLUS] logged in\r\n")
                    continue
                reply = self.answer(tag, line)
                if reply is None:
                    self._done.wait(_TIMEOUT)
                    return
                client.sendall(reply)
                self.sent_bytes += len(reply)
                if self.close_after_reply:
                    return

    def close(self) -> None:
        self._done.set()
        self._listener.close()
        self._thread.join(_TIMEOUT)
