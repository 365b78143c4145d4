"""hypercorn's settings for hosted mode, and its listening sockets' send-stall bound.

hypercorn has no write timeout: it writes a response with ``send_all`` shielded from
cancellation, so a client that stops reading (its TCP window stays shut) holds the writing
request forever, with its request slot (``http_requests``, ``http_requests_per_subject``)
and the bytes not yet sent; 64 such clients shut everyone else out. ``TCP_USER_TIMEOUT``
on the listening sockets (accepted connections inherit it) has the kernel close a
connection whose sent bytes stay unacknowledged, or whose queued bytes cannot go out for a
shut window, for ``http_send_stall_seconds``: the blocked write then fails, hypercorn
closes the connection, the app sees ``http.disconnect`` and everything it held is freed.
A client that reads slowly but takes bytes within each bound is never cut (a window that
opens again restarts the clock).

Source: tcp(7), ``TCP_USER_TIMEOUT`` (Linux 2.6.37; zero-window probes honour it).
"""

from __future__ import annotations

import logging
import socket

from hypercorn.config import Config, Sockets

from mfconnector.limits import Limits

__all__ = ["hypercorn_config"]


class _StallBoundConfig(Config):
    send_stall_ms = 0

    def create_sockets(self) -> Sockets:
        sockets = super().create_sockets()
        for sock in (*sockets.secure_sockets, *sockets.insecure_sockets):
            bound_send_stall(sock, self.send_stall_ms)
        return sockets


def bound_send_stall(sock: socket.socket, milliseconds: int) -> None:
    """Set ``TCP_USER_TIMEOUT`` where the platform has it (Linux); elsewhere nothing."""
    option = getattr(socket, "TCP_USER_TIMEOUT", None)
    if option is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, option, milliseconds)


def hypercorn_config(
    bind: str, limits: Limits, *, tls_cert: str | None = None, tls_key: str | None = None
) -> Config:
    """hypercorn's ``Config`` for ``bind`` (``host:port``, ``[v6]:port``) under ``limits``."""
    config = _StallBoundConfig()
    config.send_stall_ms = max(1, round(limits.http_send_stall_seconds * 1000))
    config.bind = [bind]
    config.h11_max_incomplete_size = limits.http_header_bytes
    config.keep_alive_timeout = limits.http_idle_seconds
    config.read_timeout = int(limits.http_idle_seconds)
    config.graceful_timeout = limits.eof_grace_seconds
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    if tls_cert:
        config.certfile, config.keyfile = tls_cert, tls_key
    return config
