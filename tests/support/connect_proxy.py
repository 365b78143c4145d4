"""A loopback HTTP CONNECT proxy that counts its tunnels.

Clients configured with ``http://127.0.0.1:<port>`` send ``CONNECT host:443``; the proxy
records the target (and any ``Proxy-Authorization``), answers 200 and relays bytes both ways.
Every tunnel goes to one ``upstream`` address on 127.0.0.1 whatever host was asked for, so a
test can stand in for login.microsoftonline.com and graph.microsoft.com with one loopback TLS
server and never touch the internet. Stdlib only; threads; ``close()`` joins them all.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["ConnectProxy"]

_HEAD_LIMIT = 65_536
_TIMEOUT_SECONDS = 10.0


class ConnectProxy:
    """Counts CONNECT tunnels; refuses other methods (405) and, if asked, missing auth (407)."""

    def __init__(self, upstream: tuple[str, int], *, require_auth: str | None = None) -> None:
        self.upstream = upstream
        self.require_auth = require_auth
        self.tunnels: list[str] = []
        self.auth_headers: list[str | None] = []
        self.refused: list[str] = []
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._sockets: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port = int(self._listener.getsockname()[1])
        self._stopping = threading.Event()
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ConnectProxy:
        self._acceptor.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stopping.set()
        self._acceptor.join()
        self._listener.close()
        with self._lock:
            for sock in list(self._sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            threads = list(self._threads)
        for thread in threads:
            thread.join()

    def hosts(self) -> list[str]:
        """The ``host:port`` of each tunnel, in order."""
        with self._lock:
            return list(self.tunnels)

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            with self._lock:
                self._threads.append(thread)
                self._sockets.add(client)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(_TIMEOUT_SECONDS)
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            method, target = [*lines[0].split(" "), "", ""][:2]
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in lines[1:])
            }
            if method != "CONNECT":
                with self._lock:
                    self.refused.append(f"{method} {target}")
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            auth = headers.get("proxy-authorization")
            with self._lock:
                self.auth_headers.append(auth)
            if self.require_auth is not None and auth != self.require_auth:
                with self._lock:
                    self.refused.append(f"CONNECT {target} (no credentials)")
                client.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                    b'Proxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n'
                )
                return
            upstream = socket.create_connection(self.upstream, timeout=_TIMEOUT_SECONDS)
            with self._lock:
                self.tunnels.append(target)
                self._sockets.add(upstream)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
            upstream.close()
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                client.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until end of stream, then pass the end on."""
    try:
        while True:
            data = source.recv(65_536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
