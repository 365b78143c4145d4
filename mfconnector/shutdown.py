"""Which signals ask this process to stop, on this platform.

Each one starts the same orderly shutdown as end of input: stop reading, give in-flight
requests the grace period, write their replies, exit 0 (a second signal stops at once).
Windows never delivers SIGTERM to a Python process; there a client stops the server by
closing its stdin, and a console sends Ctrl+C (SIGINT) or Ctrl+Break (SIGBREAK). (A console
window that closes also raises SIGBREAK, but Windows ends the process as soon as the
handler returns, so that case is not orderly.)
"""

from __future__ import annotations

import signal

__all__ = ["shutdown_signals"]


def shutdown_signals() -> tuple[signal.Signals, ...]:
    """SIGTERM and SIGINT everywhere, plus SIGBREAK where it exists (Windows)."""
    signals = [signal.SIGTERM, signal.SIGINT]
    sigbreak = getattr(signal, "SIGBREAK", None)
    if sigbreak is not None:
        signals.append(sigbreak)
    return tuple(signals)
