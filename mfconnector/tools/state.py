"""What the read tools learn once per process and reuse: time zones, folder names and ids.

Bounded (oldest entries go first), per mailbox, and held in the ToolContext rather than at
module level, so two servers in one process (tests) never share it.
"""

from __future__ import annotations

from mfconnector.bounded_cache import BoundedCache
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.timezones import ZoneChoice

__all__ = ["BoundedCache", "ReadState"]


class ReadState:
    """Per-process memory of the read tools, keyed by mailbox path (``/me``, ``/users/x``)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.zones: BoundedCache[str, ZoneChoice] = BoundedCache(limits.cached_zones)
        self.folder_names: BoundedCache[tuple[str, str], str] = BoundedCache(limits.cached_folders)
        """(mailbox, folder id) -> display name."""
        self.folder_ids: BoundedCache[tuple[str, str], str] = BoundedCache(limits.cached_folders)
        """(mailbox, lower-cased folder path) -> folder id."""
