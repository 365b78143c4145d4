"""A TCP relay between server processes and Redis that can stop or gather their writes.

``freeze_after`` names bytes (a Lua script's SHA1, as EVALSHA sends it): once a chunk
a process sent that contains them has been passed on, everything that process's
connections send afterwards is held, never delivered, while Redis's answers still come
back. So a test can let a replica's claim through and catch its outcome before it reaches
Redis: ``held`` is set when the first held bytes arrive.

``gather_on`` with ``gather`` N instead holds each chunk containing those bytes until N
of them have arrived, over every connection through the relay, then passes them all on at
once (``gathered`` is set): N replicas' claims reach Redis together, and Redis alone
decides between them. Later ones pass straight through.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

GATHER_SECONDS = 120.0
"""The longest a gathered chunk waits for the others (then it goes on alone)."""


@dataclass
class RedisProxy:
    port: int
    freeze_after: bytes | None = None
    gather_on: bytes | None = None
    gather: int = 0
    frozen: threading.Event = field(default_factory=threading.Event)
    held: threading.Event = field(default_factory=threading.Event)
    gathered: threading.Event = field(default_factory=threading.Event)
    arrived: int = 0
    """Chunks holding ``gather_on`` seen so far."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def arrive(self) -> None:
        """One gathered chunk: wait until ``gather`` of them have come."""
        with self._lock:
            self.arrived += 1
            if self.arrived >= self.gather:
                self.gathered.set()
        self.gathered.wait(GATHER_SECONDS)


def _pump(source: socket.socket, sink: socket.socket, proxy: RedisProxy, upstream: bool) -> None:
    with suppress(OSError):
        while chunk := source.recv(65_536):
            if upstream and proxy.frozen.is_set():
                proxy.held.set()
                continue
            if upstream and proxy.gather_on is not None and proxy.gather_on in chunk:
                proxy.arrive()
            sink.sendall(chunk)
            if upstream and proxy.freeze_after is not None and proxy.freeze_after in chunk:
                proxy.frozen.set()
    for end in (source, sink):
        with suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)


@contextmanager
def redis_proxy(
    redis_port: int,
    freeze_after: bytes | None = None,
    *,
    gather_on: bytes | None = None,
    gather: int = 0,
) -> Iterator[RedisProxy]:
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = RedisProxy(listener.getsockname()[1], freeze_after, gather_on, gather)
    connections: list[socket.socket] = []

    def accept() -> None:
        with suppress(OSError):
            while True:
                client, _ = listener.accept()
                server = socket.create_connection(("127.0.0.1", redis_port))
                connections.extend((client, server))
                for args in ((client, server, proxy, True), (server, client, proxy, False)):
                    threading.Thread(target=_pump, args=args, daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield proxy
    finally:
        proxy.gathered.set()  # nothing waits past the test
        listener.close()
        for connection in connections:
            with suppress(OSError):
                connection.close()
