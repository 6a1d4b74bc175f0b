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

Objects of one resource share their structure (the same keys, the same shape of
``managedFields``), which a small object cannot repeat within itself. A cache may compress
against a dictionary made of one of its objects' structure (:func:`structure_dictionary`: the
JSON with every string emptied, so no value of that object is kept in it) and keep
:class:`DictPacked` bodies: a ~0.5 KiB ConfigMap then keeps about half its JSON, a ~5 KiB Pod
about a quarter. Dictionaries are numbered process-wide, equal ones once.

A value that JSON cannot carry as it is (a tuple, a non-string key, a number JSON cannot
write) is kept decoded: :func:`compact` checks that decoding its bytes gives back an equal
object and keeps the object itself otherwise, so what a reader gets never differs from what
the cache was fed. An object a storage decoder made holds JSON's types only (the JSON and
protobuf decoders build dicts, lists, strings, numbers, booleans and None; defaults and
conversions to the hub add values of those types, checked for every Kubernetes fixture by
``tests/cache/test_decoded_objects_are_json.py``): a cache fed by storage skips the check
(``checked=False``), a decode and a deep comparison that were a third of caching a ~8 KiB Pod.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Protocol, overload

import lz4.block
import orjson

from kstore.api.gvk import Object

__all__ = [
    "Body",
    "DictPacked",
    "HasObject",
    "LazyObjects",
    "Packed",
    "compact",
    "expand",
    "structure_dictionary",
]

#: Bodies shorter than this stay as they are: compressing them saves little.
_PACK_FROM = 256
#: LZ4 looks back at most 64 KiB: a longer dictionary's start would never be used.
_DICTIONARY_MAX = 64 * 1024

_dictionaries: list[bytes] = []
_dictionary_numbers: dict[bytes, int] = {}
_dictionaries_lock = threading.Lock()


class Packed(bytes):
    """JSON bytes LZ4-compressed (a block that carries its uncompressed size)."""

    __slots__ = ()


class DictPacked(bytes):
    """JSON bytes LZ4-compressed against a dictionary: the dictionary's number (two bytes,
    little-endian), then the block."""

    __slots__ = ()


#: Below this depth a structure is left out of its dictionary (custom objects may nest
#: thousands of levels; their first levels are what other objects share).
_SKELETON_DEPTH = 64


def _skeleton(value: object, depth: int = 0) -> object:
    if depth >= _SKELETON_DEPTH:
        return None
    if isinstance(value, dict):
        return {k: _skeleton(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_skeleton(v, depth + 1) for v in value]
    return "" if isinstance(value, str) else value


def structure_dictionary(sample: Object) -> int | None:
    """The number of a compression dictionary made of ``sample``'s structure (its JSON with
    every string emptied), for :func:`compact`; None when JSON cannot carry it or the
    numbers ran out."""
    try:
        skeleton = orjson.dumps(_skeleton(sample))[-_DICTIONARY_MAX:]
    except TypeError:
        return None
    with _dictionaries_lock:
        number = _dictionary_numbers.get(skeleton)
        if number is None:
            if len(_dictionaries) >= 1 << 16:
                return None
            number = len(_dictionaries)
            _dictionaries.append(skeleton)
            _dictionary_numbers[skeleton] = number
        return number


#: An object as the cache keeps it: its JSON bytes, them compressed, or (when JSON cannot
#: carry it) the object itself.
Body = bytes | Object


def compact(obj: Object, dictionary: int | None = None, *, checked: bool = True) -> Body:
    """``obj`` as exact-size JSON bytes when they decode back to an equal object, compressed
    (against dictionary number ``dictionary``, if given) when that saves an eighth.
    ``checked=False`` trusts that ``obj`` holds JSON's types only (a storage decoder made it)
    and skips decoding the bytes to compare."""
    try:
        raw = orjson.dumps(obj)
    except TypeError:
        return obj
    if checked and orjson.loads(raw) != obj:
        return obj
    if len(raw) >= _PACK_FROM:
        worth = len(raw) - len(raw) // 8
        if dictionary is not None:
            # One try: a dictionary only adds matches, so LZ4 alone would not do better.
            block = lz4.block.compress(raw, store_size=True, dict=_dictionaries[dictionary])
            if len(block) + 2 <= worth:
                return DictPacked(dictionary.to_bytes(2, "little") + block)
        else:
            packed = lz4.block.compress(raw, store_size=True)
            if len(packed) <= worth:
                return Packed(packed)
    # orjson's buffer has room to spare: a copy holds just the bytes.
    return bytes(memoryview(raw))


def expand(body: Body) -> Object:
    """The object ``body`` keeps (a new object for JSON bytes)."""
    if isinstance(body, bytes):
        kind = type(body)
        raw: bytes = body
        if kind is Packed:
            raw = lz4.block.decompress(body)
        elif kind is DictPacked:
            dictionary = _dictionaries[body[0] | body[1] << 8]
            raw = lz4.block.decompress(memoryview(body)[2:], dict=dictionary)
        decoded: Object = orjson.loads(raw)
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
