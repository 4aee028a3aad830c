"""Values worked out once per object, for objects that are not hashable or not worth hashing.

Tasks, tool lists and schema lists are handed to every episode as the same objects, and what
is derived from them (a parse, an encoding, a hash) is the same every time. An
:class:`IdentityMemo` keys a value by the object's identity and holds the object in the entry,
so its ``id`` cannot be reused by another object while the entry is kept. It assumes that
the object is not mutated after its first use, which is how these objects are used.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, TypeVar

__all__ = ["IdentityMemo"]

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``get(obj, make)``: ``make(obj)`` the first time, the same value after. ``size``: at
    most that many entries, the least recently used dropped first (None: no bound, for memos
    that live as long as one sweep's objects). ``make``'s exceptions are not kept."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int | None = None) -> None:
        self._entries: OrderedDict[int, tuple[K, V]] = OrderedDict()
        self._size = size

    def get(self, obj: K, make: Callable[[K], V]) -> V:
        entries, key = self._entries, id(obj)
        hit = entries.get(key)
        if hit is not None and hit[0] is obj:
            if self._size is not None:
                entries.move_to_end(key)
            return hit[1]
        value = make(obj)
        entries[key] = (obj, value)
        if self._size is not None and len(entries) > self._size:
            entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)
