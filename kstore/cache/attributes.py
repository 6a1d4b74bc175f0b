"""The selector attributes a cache entry keeps, held as compactly as they can be.

Every cached object keeps its labels and fields (what label and field selectors read) for as
long as the cache runs, so their per-object cost counts once per object of the store:

- **labels**: objects of one application carry the same labels (``app=web``,
  ``pod-template-hash=...``), so equal label sets are one shared dict (:class:`LabelSets`),
  its strings interned; a dict of two labels costs ~200 bytes, each object that shares one
  saves them.
- **fields**: most kinds select on ``metadata.name`` and ``metadata.namespace`` alone, both
  parts of the object's key. :class:`KeyFields` reads them from the key, instead of a dict
  and a name string of their own (~260 bytes per object). Kinds with fields of their own
  (a Pod's ``spec.nodeName``) keep a dict.

Everything here is read-only once made: entries share it with every reader.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import TypeVar, overload

__all__ = ["KeyFields", "LabelSets", "compact_fields", "shared_attributes"]

_T = TypeVar("_T")

_NAME = "metadata.name"
_NAMESPACE = "metadata.namespace"

#: Attributes whose values are unique per object: sharing them would only cost.
_UNIQUE_ATTRIBUTES = frozenset({_NAME, "metadata.uid"})

#: Distinct label sets remembered per resource before the table starts afresh (entries keep
#: the dicts they were given; only sharing with later objects is lost).
_LABEL_SETS_LIMIT = 10_000


def shared_attributes(attrs: Mapping[str, str]) -> dict[str, str]:
    """``attrs`` with its strings interned: label keys and values and most field values
    repeat across the objects of a resource (``app=web``, a namespace, a node name)."""
    intern = sys.intern
    return {
        intern(k): v if k in _UNIQUE_ATTRIBUTES or not isinstance(v, str) else intern(v)
        for k, v in attrs.items()
    }


class LabelSets:
    """One shared dict per distinct label set of a resource's objects. Used by the cache's one
    feeding thread; a lost race between two threads only costs a copy."""

    __slots__ = ("_sets",)

    def __init__(self) -> None:
        self._sets: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}

    def shared(self, labels: Mapping[str, str]) -> dict[str, str]:
        """A dict equal to ``labels``, the same one for every equal set (never mutate it)."""
        try:
            found = self._sets.get(tuple(labels.items()))
        except TypeError:  # a value no label may have (a list): kept, not shared
            return shared_attributes(labels)
        if found is not None:
            return found
        made = shared_attributes(labels)
        if len(self._sets) >= _LABEL_SETS_LIMIT:
            self._sets.clear()
        # Keyed by the interned strings: the table keeps no copies of its own.
        self._sets[tuple(made.items())] = made
        return made

    def __len__(self) -> int:
        return len(self._sets)


class KeyFields(Mapping[str, str]):
    """``metadata.name`` (and ``metadata.namespace`` of a namespaced object) read from the
    object's key ``<prefix>[<namespace>/]<name>``."""

    __slots__ = ("_key", "_name_start", "_namespace")

    def __init__(self, key: str, name_start: int, namespace: str | None) -> None:
        self._key = key
        self._name_start = name_start
        self._namespace = namespace

    def __getitem__(self, field: str) -> str:
        value = self.get(field)
        if value is None:
            raise KeyError(field)
        return value

    @overload
    def get(self, field: str, /) -> str | None: ...

    @overload
    def get(self, field: str, default: str | _T, /) -> str | _T: ...

    def get(self, field: str, default: object = None, /) -> object:
        if field == _NAME:
            return self._key[self._name_start :]
        if field == _NAMESPACE and self._namespace is not None:
            return self._namespace
        return default

    def __iter__(self) -> Iterator[str]:
        yield _NAME
        if self._namespace is not None:
            yield _NAMESPACE

    def __len__(self) -> int:
        return 1 if self._namespace is None else 2

    def __repr__(self) -> str:
        return f"KeyFields({dict(self)!r})"


def compact_fields(prefix: str, key: str, fields: Mapping[str, str]) -> Mapping[str, str]:
    """``fields`` as :class:`KeyFields` when they are just the name (and namespace) that
    ``key`` under ``prefix`` spells; else a dict of them, strings interned."""
    name = fields.get(_NAME)
    if name is not None and key.endswith(name):
        if len(fields) == 1 and key == prefix + name:
            return KeyFields(key, len(prefix), None)
        namespace = fields.get(_NAMESPACE)
        if len(fields) == 2 and namespace and key == f"{prefix}{namespace}/{name}":
            return KeyFields(key, len(prefix) + len(namespace) + 1, sys.intern(namespace))
    return shared_attributes(fields)
