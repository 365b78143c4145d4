"""What the sign-in commands say on the terminal: one stream (stderr), exit codes, wording.

Everything a person sees from ``login``, ``logout`` and ``status`` goes through ``say`` to
the stream they were given (stderr by default), never stdout. Text from the identity
provider is made printable first: no escape sequences reach the terminal.
"""

from __future__ import annotations

import math
from typing import TextIO

from mfconnector.errors import AuthError

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "duration",
    "fail",
    "printable",
    "say",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def say(stream: TextIO, text: str) -> None:
    stream.write(text + "\n")
    stream.flush()


def printable(text: str) -> str:
    """IdP text for a terminal: no escape sequences or control characters."""
    return "".join(ch if ch.isprintable() or ch == "\n" else " " for ch in text)[:2000]


def fail(stream: TextIO, exc: AuthError) -> int:
    say(stream, f"error: {exc.message}")
    if exc.hint:
        say(stream, f"hint: {exc.hint}")
    return EXIT_FAILED


def duration(seconds: float) -> str:
    seconds = max(0, math.ceil(seconds))
    if seconds >= 120:
        return f"{seconds // 60} min"
    return f"{seconds} s"
