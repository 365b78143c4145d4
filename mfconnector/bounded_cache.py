"""A small bounded LRU map for what a process learns once and reuses (zones, folder ids).

Pure: the Graph backend keeps its folder and zone caches in it, the files tools their
drive paths; each owner holds its own, so two servers in one process never share one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """``get`` refreshes an entry, ``put`` evicts the oldest past ``size``."""

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

    def drop(self, stale: Callable[[K], bool]) -> None:
        """Forget every entry whose key is ``stale`` (what a write made untrue)."""
        for key in [key for key in self._items if stale(key)]:
            del self._items[key]

    def __len__(self) -> int:
        return len(self._items)
