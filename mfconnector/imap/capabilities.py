"""What a server's capabilities mean for the tools, for ``account_status`` (pure).

Capabilities are the server's truth, read from its CAPABILITY answer after login (and
after STARTTLS), never assumed from its name; a setting never adds one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["FEATURES", "CapabilityStatus", "describe"]


@dataclass(frozen=True, slots=True)
class CapabilityStatus:
    name: str
    offered: bool
    used_for: str
    without_it: str


FEATURES: tuple[tuple[str, str, str], ...] = (
    (
        "CONDSTORE",
        "MODSEQ in reads; conditional flag changes (unchanged_since)",
        "unchanged_since is unsupported; reads carry no MODSEQ",
    ),
    ("QRESYNC", "cheap resynchronisation of a folder", "folders are re-read in full"),
    (
        "MOVE",
        "moving messages in one step",
        "moves use COPY + \\Deleted + UID EXPUNGE with UIDPLUS, else are unsupported",
    ),
    (
        "UIDPLUS",
        "exact references for appended and copied messages; expunging one UID",
        "no reference after a copy or draft; permanent deletion is unsupported",
    ),
    (
        "SPECIAL-USE",
        "Sent, Drafts, Trash, Junk and Archive found by attribute",
        "those folders are found by common names (a guess, said as such)",
    ),
    (
        "THREAD=REFERENCES",
        "threads computed by the server",
        "threads are a bounded walk of References and In-Reply-To",
    ),
    ("LIST-STATUS", "folder counts in the folder listing", "one STATUS request per folder"),
)
"""(capability, what the tools use it for, what its absence disables)."""

_APPENDLIMIT = re.compile(r"APPENDLIMIT=(\d{1,15})\Z")


def describe(capabilities: Iterable[str]) -> tuple[list[CapabilityStatus], int | None]:
    """Each feature the tools use, offered or not; and the server's APPENDLIMIT (RFC 7889,
    the largest message it accepts) when it says one."""
    offered = {c.upper() for c in capabilities}
    statuses = [
        CapabilityStatus(name, name in offered, used_for, without_it)
        for name, used_for, without_it in FEATURES
    ]
    limit = next(
        (int(m.group(1)) for c in offered if (m := _APPENDLIMIT.match(c)) is not None), None
    )
    return statuses, limit
