"""The cached objects' keys grouped by label set, for LISTs by label that skip most objects.

A page of a LIST by label (``?labelSelector=app=web&limit=100``) walks the keys in order and
tests each object's labels until the page is full; objects of other labels before the first
match are tested too, one Python step each (about 0.2 us: a page behind 2,000 objects of
another label cost 400 us). But equal label sets are one shared dict
(:class:`~kstore.cache.attributes.LabelSets`), and the objects of a resource mostly carry few
distinct ones. :class:`LabelGroups` keeps, per label dict, its objects' keys in order: a
selector is judged once per group, and the page is the first keys of the matching groups,
merged. Where groups are nearly as many as objects (labels unique per object), the walk is
cheaper and :meth:`LabelGroups.select` declines.

Used under the cache's lock, as the cache's key arrays are.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterator, Mapping

__all__ = ["LabelGroups"]

#: A walk of ``n`` keys costs about as much as judging and slicing ``n / _WALK_PER_GROUP``
#: groups.
_WALK_PER_GROUP = 4


class LabelGroups:
    """Keys in key order, per label dict (by identity: entries share their label dicts)."""

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: dict[int, tuple[Mapping[str, str], list[str]]] = {}

    def __len__(self) -> int:
        return len(self._groups)

    def clear(self) -> None:
        self._groups.clear()

    def add(self, labels: Mapping[str, str], key: str) -> None:
        group = self._groups.get(id(labels))
        if group is None:
            # The group holds the dict: its id stays its own while the group lives.
            self._groups[id(labels)] = (labels, [key])
            return
        keys = group[1]
        if not keys or keys[-1] < key:
            keys.append(key)
        else:
            bisect.insort(keys, key)

    def discard(self, labels: Mapping[str, str], key: str) -> None:
        group = self._groups.get(id(labels))
        if group is None:
            return
        keys = group[1]
        position = bisect.bisect_left(keys, key)
        if position < len(keys) and keys[position] == key:
            del keys[position]
            if not keys:
                del self._groups[id(labels)]

    def select(
        self, matches: Callable[[Mapping[str, str]], bool], lo_key: str, hi_key: str, span: int
    ) -> Iterator[str] | None:
        """The keys in ``[lo_key, hi_key)`` whose labels ``matches``, in key order; None when
        walking the ``span`` keys of that range is the cheaper way."""
        if len(self._groups) * _WALK_PER_GROUP > span:
            return None
        ranges: list[Iterator[str]] = []
        for labels, keys in self._groups.values():
            if not matches(labels):
                continue
            lo = bisect.bisect_left(keys, lo_key)
            hi = bisect.bisect_left(keys, hi_key, lo)
            if lo < hi:
                # Read as far as the page goes, not copied whole.
                ranges.append(map(keys.__getitem__, range(lo, hi)))
        if not ranges:
            return iter(())
        if len(ranges) == 1:
            return ranges[0]
        return heapq.merge(*ranges)
