"""Values derived from a memory item, kept with the item object.

Items are values: nothing changes one in place (every change is a `model_copy(update=...)`,
see `store._own_copy`), so what is derived from an item object stays true for as long as the
object lives. A long-lived process (the app, the MCP server) hands the same parsed objects
to every memorize of a branch; keeping derived values by object makes the work grow with the
new items, not the branch. Each entry holds the item itself, so an id is never taken for
another object's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from app.core.models import MemoryItem

__all__ = ["PerItem"]

T = TypeVar("T")


class PerItem(Generic[T]):
    """`derive(item)`, computed once per item object; bounded, cleared when full."""

    def __init__(self, derive: Callable[[MemoryItem], T], limit: int) -> None:
        self._derive = derive
        self._limit = limit
        self._known: dict[int, tuple[MemoryItem, T]] = {}

    def __call__(self, item: MemoryItem) -> T:
        """The value derived from `item`, from memory when this object was seen before."""
        known = self._known.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        if len(self._known) >= self._limit:
            self._known.clear()
        value = self._derive(item)
        self._known[id(item)] = (item, value)
        return value

    def clear(self) -> None:
        """Forget every value (tests that compare cold and warm runs)."""
        self._known.clear()
