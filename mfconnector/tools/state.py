"""What the read tools learn once per process and reuse: time zones, folder names and ids.

Bounded (oldest entries go first), per mailbox, and held in the ToolContext rather than at
module level, so two servers in one process (tests) never share it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.timezones import ZoneChoice

__all__ = ["BoundedCache", "ReadState"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A small LRU map: ``get`` refreshes an entry, ``put`` evicts the oldest past ``size``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class ReadState:
    """Per-process memory of the read tools, keyed by mailbox path (``/me``, ``/users/x``)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.zones: BoundedCache[str, ZoneChoice] = BoundedCache(limits.cached_zones)
        self.folder_names: BoundedCache[tuple[str, str], str] = BoundedCache(limits.cached_folders)
        """(mailbox, folder id) -> display name."""
        self.folder_ids: BoundedCache[tuple[str, str], str] = BoundedCache(limits.cached_folders)
        """(mailbox, lower-cased folder path) -> folder id."""
        self.drives: BoundedCache[str, str] = BoundedCache(limits.cached_zones)
        """lower-cased ``site/library`` -> the drive's Graph path."""
