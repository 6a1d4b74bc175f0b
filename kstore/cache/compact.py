"""Cached objects kept as their JSON bytes, decoded when a reader needs the object.

A decoded object costs Python several times its JSON size (a dict, a str and an int object
per field); the watch cache holds every object of a resource for as long as it runs, so it
keeps each one as compact JSON (:func:`compact`) plus the few attributes selectors read, and
decodes (:func:`expand`) only what a request touches. Every decode returns a new object, so a
reader may keep or change what it got without affecting anyone else.

:class:`LazyObjects` is a list's items as a read-only sequence that decodes item by item, so
a list of the whole cache never holds every decoded object at once (a streamed response
encodes and drops them one by one).

Bodies of a few hundred bytes or more are kept LZ4-compressed when that saves at least an
eighth (:class:`Packed`): JSON objects repeat their keys and much of their structure, a ~5 KiB
Pod keeps about a third of its size, and LZ4 gives it back in a few microseconds, against the
tens a decode of the JSON takes anyway.

A value that JSON cannot carry as it is (a tuple, a non-string key, a number JSON cannot
write) is kept decoded: :func:`compact` checks that decoding its bytes gives back an equal
object and keeps the object itself otherwise, so what a reader gets never differs from what
the cache was fed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, overload

import lz4.block
import orjson

from kstore.api.gvk import Object

__all__ = ["Body", "HasObject", "LazyObjects", "Packed", "compact", "expand"]

#: Bodies shorter than this stay as they are: compressing them saves little.
_PACK_FROM = 256


class Packed(bytes):
    """JSON bytes LZ4-compressed (a block that carries its uncompressed size)."""

    __slots__ = ()


#: An object as the cache keeps it: its JSON bytes, them compressed, or (when JSON cannot
#: carry it) the object itself.
Body = bytes | Object


def compact(obj: Object) -> Body:
    """``obj`` as exact-size JSON bytes when they decode back to an equal object."""
    try:
        raw = orjson.dumps(obj)
    except TypeError:
        return obj
    if orjson.loads(raw) != obj:
        return obj
    if len(raw) >= _PACK_FROM:
        packed = lz4.block.compress(raw, store_size=True)
        if len(packed) <= len(raw) - len(raw) // 8:
            return Packed(packed)
    # orjson's buffer has room to spare: a copy holds just the bytes.
    return bytes(memoryview(raw))


def expand(body: Body) -> Object:
    """The object ``body`` keeps (a new object for JSON bytes)."""
    if isinstance(body, bytes):
        decoded: Object = orjson.loads(lz4.block.decompress(body) if type(body) is Packed else body)
        return decoded
    return body


class HasObject(Protocol):
    @property
    def object(self) -> Object: ...


class LazyObjects(Sequence[Object]):
    """The objects of ``holders``, decoded when read (each read decodes again). Equal to any
    sequence of equal objects."""

    __slots__ = ("_holders",)

    def __init__(self, holders: Sequence[HasObject]) -> None:
        self._holders = holders

    def __len__(self) -> int:
        return len(self._holders)

    @overload
    def __getitem__(self, index: int) -> Object: ...

    @overload
    def __getitem__(self, index: slice) -> LazyObjects: ...

    def __getitem__(self, index: int | slice) -> Object | LazyObjects:
        if isinstance(index, slice):
            return LazyObjects(self._holders[index])
        return self._holders[index].object

    def __iter__(self) -> Iterator[Object]:
        for holder in self._holders:
            yield holder.object

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyObjects({len(self)} objects)"
