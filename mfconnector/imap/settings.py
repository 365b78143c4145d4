"""Where and how to reach a mail server: host, port, transport security, credentials.

``plain`` (no TLS at all) is accepted only for a loopback address: anywhere else a
password would cross the network in clear, so it is refused before connecting.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Literal

from mfconnector.imap.errors import MailSettingsError
from mfconnector.net.hosts import is_loopback_host

__all__ = ["Security", "ServerSettings"]

Security = Literal["tls", "starttls", "plain"]


@dataclass(frozen=True)
class ServerSettings:
    """One IMAP or SMTP server; the password never appears in a repr or a log line."""

    host: str
    port: int
    security: Security
    user: str
    password: str = field(repr=False)
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.security not in ("tls", "starttls", "plain"):
            raise MailSettingsError(f"unknown security {self.security!r}: tls, starttls or plain")
        if self.security == "plain" and not is_loopback_host(self.host):
            raise MailSettingsError(
                f"security 'plain' sends the password in clear: allowed only to a loopback "
                f"address, not {self.host!r} (use tls or starttls)"
            )
        if not 0 < self.port < 65536:
            raise MailSettingsError(f"port {self.port} is not a TCP port")

    def tls_context(self) -> ssl.SSLContext:
        """The configured context, else the system's defaults (verification on)."""
        return self.ssl_context or ssl.create_default_context()
