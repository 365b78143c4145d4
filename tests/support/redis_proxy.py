"""A TCP relay between one server process and Redis that can stop the process's writes.

``freeze_after`` names bytes (a Lua script's SHA1, as EVALSHA sends it): once a chunk
the process sent that contains them has been passed on, everything the process sends
afterwards is held, never delivered, while Redis's answers still come back. So a test can
let a replica's claim through and catch its outcome before it reaches Redis: ``held`` is
set when the first held bytes arrive.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field


@dataclass
class RedisProxy:
    port: int
    freeze_after: bytes
    frozen: threading.Event = field(default_factory=threading.Event)
    held: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def _pump(source: socket.socket, sink: socket.socket, proxy: RedisProxy, upstream: bool) -> None:
    with suppress(OSError):
        while chunk := source.recv(65_536):
            if upstream and proxy.frozen.is_set():
                proxy.held.set()
                continue
            sink.sendall(chunk)
            if upstream and proxy.freeze_after in chunk:
                proxy.frozen.set()
    for end in (source, sink):
        with suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)


@contextmanager
def redis_proxy(redis_port: int, freeze_after: bytes) -> Iterator[RedisProxy]:
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = RedisProxy(listener.getsockname()[1], freeze_after)
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
        listener.close()
        for connection in connections:
            with suppress(OSError):
                connection.close()
