"""Which hosts are this machine: where plain http or plain IMAP may be allowed. Pure code."""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback_host"]


def is_loopback_host(host: str | None) -> bool:
    """``localhost`` or a literal loopback address (127.0.0.0/8, ``::1``, bracketed or not)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
