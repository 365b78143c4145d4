"""A real HTTP/1.1 server on 127.0.0.1 for tests: Graph, download hosts, misbehaviour.

Stdlib only (``ThreadingHTTPServer`` in a background thread), so the client under test
goes through real sockets, real framing and real timing. Each route answers with a
``Reply`` (or a callable making one, or a list consumed one per request, the last one
repeating). A Reply can stream chunks slowly, declare a false Content-Length, use chunked
encoding or none, drop the connection mid-body, or send raw bytes verbatim. Every request
is recorded with its headers, in arrival order.

    with LoopbackServer() as server:
        server.route("GET", "/v1.0/me", Reply.json({"id": "1"}))
        ... GET f"{server.url}/v1.0/me" ...
        assert server.requests[0].header("authorization") == "Bearer t"

Every response closes its connection (``Connection: close``), so a lying Content-Length
never poisons the next request. ``close()`` wakes slow senders and joins all threads.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = ["LoopbackServer", "RecordedRequest", "Reply"]

_SOCKET_TIMEOUT_SECONDS = 10.0
"""A handler blocked on a silent client gives up after this (a safety net, not a test knob)."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request as it arrived: method, raw target, headers in order, body."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> str:
        return urlsplit(self.target).query

    def header(self, name: str) -> str | None:
        """The first value of a header, case-insensitively, or None."""
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


@dataclass
class Reply:
    """What the server sends back. The defaults give a well-formed 200 with Content-Length."""

    status: int = 200
    headers: Sequence[tuple[str, str]] = ()
    body: bytes | Iterable[bytes] = b""
    content_length: int | Literal["auto"] | None = "auto"
    """"auto": the true length (bytes bodies only); an int: declared as is (may lie);
    None: no Content-Length (the body then ends when the connection closes)."""
    chunked: bool = False
    """Use Transfer-Encoding: chunked (implies no Content-Length)."""
    chunk_size: int = 65_536
    """How a bytes body is cut into writes."""
    chunk_delay: float = 0.0
    """Seconds to wait before each body write after the first."""
    drop_after: int | None = None
    """Close the connection abruptly after this many body bytes."""
    raw: bytes | None = None
    """Send exactly these bytes (status line and all) instead of building a response."""
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.content_length == "auto" and not self.chunked and not self._sized():
            raise TypeError("content_length='auto' needs a bytes body: pass an int or None")

    def _sized(self) -> bool:
        return isinstance(self.body, bytes | bytearray | memoryview)

    @classmethod
    def json(
        cls, doc: Any, status: int = 200, headers: Sequence[tuple[str, str]] = (), **kw: Any
    ) -> Reply:
        """A JSON answer with Content-Type application/json."""
        body = json.dumps(doc).encode("utf-8")
        return cls(status, (("Content-Type", "application/json"), *headers), body, **kw)

    def chunks(self) -> Iterator[bytes]:
        if isinstance(self.body, bytes | bytearray | memoryview):
            data = bytes(self.body)
            for start in range(0, len(data), self.chunk_size):
                yield data[start : start + self.chunk_size]
        else:
            yield from self.body


ReplySource = Reply | Callable[[RecordedRequest], Reply]


@dataclass
class _Route:
    replies: list[ReplySource]
    served: int = 0

    def take(self) -> ReplySource:
        source = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return source


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = _SOCKET_TIMEOUT_SECONDS
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read records
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        request = RecordedRequest(self.command, self.path, tuple(self.headers.items()), body)
        reply = self.server.owner._record_and_route(request)
        self.close_connection = True
        # The client may give up mid-answer: that is often the point of the test.
        with contextlib.suppress(ConnectionError, TimeoutError):
            self._send(reply)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _serve

    def _send(self, reply: Reply) -> None:
        stopping = self.server.owner._stopping
        if reply.raw is not None:
            self.wfile.write(reply.raw)
            return
        reason = reply.reason
        if reason is None:
            try:
                reason = HTTPStatus(reply.status).phrase
            except ValueError:
                reason = "Status"
        head = [f"HTTP/1.1 {reply.status} {reason}"]
        head += [f"{name}: {value}" for name, value in reply.headers]
        if reply.chunked:
            head.append("Transfer-Encoding: chunked")
        elif reply.content_length == "auto":
            head.append(f"Content-Length: {len(reply.body)}")  # type: ignore[arg-type]
        elif reply.content_length is not None:
            head.append(f"Content-Length: {reply.content_length}")
        head.append("Connection: close")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if self.command == "HEAD":
            return
        sent = 0
        for index, chunk in enumerate(reply.chunks()):
            if index and reply.chunk_delay and stopping.wait(reply.chunk_delay):
                return
            if stopping.is_set():
                return
            if reply.drop_after is not None and sent + len(chunk) >= reply.drop_after:
                self._write(chunk[: reply.drop_after - sent], reply.chunked)
                self._drop()
                return
            self._write(chunk, reply.chunked)
            sent += len(chunk)
        if reply.chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _write(self, chunk: bytes, chunked: bool) -> None:
        if not chunk:
            return
        if chunked:
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        else:
            self.wfile.write(chunk)

    def _drop(self) -> None:
        """End the connection now, mid-body (meaningless for a close-delimited body)."""
        self.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        if self.owner.tls is None:
            return sock, address
        # The handshake runs in the handler's thread (finish_request), not the accept loop.
        return self.owner.tls.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        ), address

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self.owner._lock:
            self.owner._connections.add(request)
        try:
            if isinstance(request, ssl.SSLSocket):
                request.settimeout(_SOCKET_TIMEOUT_SECONDS)
                try:
                    request.do_handshake()
                except (ssl.SSLError, OSError):
                    with self.owner._lock:
                        self.owner.tls_failures += 1
                    return
            super().finish_request(request, client_address)
        finally:
            with self.owner._lock:
                self.owner._connections.discard(request)


@dataclass
class LoopbackServer:
    """A threaded HTTP server on an ephemeral 127.0.0.1 port; use as a context manager."""

    _routes: dict[tuple[str, str], _Route] = field(default_factory=dict)
    _requests: list[RecordedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _connections: set[socket.socket] = field(default_factory=set)
    _server: _Server | None = None
    _thread: threading.Thread | None = None
    tls: ssl.SSLContext | None = None
    """A server-side context makes this an HTTPS server (``url`` then says https)."""
    tls_failures: int = 0
    """Connections whose TLS handshake failed (the client refused the certificate)."""

    def start(self) -> LoopbackServer:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake slow senders, cut open connections, join every thread."""
        if self._server is None:
            return
        self._stopping.set()
        with self._lock:
            for conn in list(self._connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (https with ``tls``), no trailing slash."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def route(self, method: str, path: str, *replies: ReplySource) -> None:
        """Answer ``method path`` (path without query) with these replies, in order.

        The last reply repeats. Re-routing a path replaces its replies and counter.
        """
        if not replies:
            raise ValueError("give at least one reply")
        with self._lock:
            self._routes[(method.upper(), path)] = _Route(list(replies))

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def _record_and_route(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests.append(request)
            route = self._routes.get((request.method, request.path))
            source = route.take() if route is not None else None
        if source is None:
            return Reply.json({"error": {"code": "loopbackNoRoute", "message": "no route"}}, 404)
        return source(request) if callable(source) else source
