"""The emulator as a real HTTP/1.1 server on 127.0.0.1, for tests over real sockets.

Stdlib only (``ThreadingHTTPServer`` in a background thread); one lock around the emulator,
whose state is not thread-safe. Every response closes its connection.

    with serve_on_loopback(GmailEmulator()) as server:
        httpx.get(f"{server.url}/gmail/v1/users/me/profile", headers=...)
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from mfconnector.gmail_emulator.core import GmailEmulator
from mfconnector.gmail_emulator.transport import answer_bytes

__all__ = ["LoopbackGmail", "serve_on_loopback"]

MAX_REQUEST_BYTES = 50 * 1024 * 1024
"""Larger bodies are refused with 413 (Gmail's own ceiling for a message upload is 35 MB)."""
_SOCKET_TIMEOUT_SECONDS = 10.0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT_SECONDS
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: stderr stays clean
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.close_connection = True
        if length > MAX_REQUEST_BYTES:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name: value for name, value in self.headers.items()}
        with self.server.lock:
            answer = self.server.emulator.handle(self.command, self.path, headers, body)
        data = answer_bytes(answer)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, emulator: GmailEmulator) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.emulator = emulator
        self.lock = threading.Lock()


class LoopbackGmail:
    """A running server; ``url`` is its root (``http://127.0.0.1:PORT``)."""

    def __init__(self, emulator: GmailEmulator) -> None:
        self.emulator = emulator
        self._server = _Server(emulator)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="gmail-emulator", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> LoopbackGmail:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def serve_on_loopback(emulator: GmailEmulator | None = None) -> LoopbackGmail:
    """Starts serving at once on a free port of 127.0.0.1; close it (or use ``with``)."""
    return LoopbackGmail(emulator or GmailEmulator())
