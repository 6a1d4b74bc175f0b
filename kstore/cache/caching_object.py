"""Encode once: serialized forms of shared, read-only objects, computed once and reused.

The watch cache hands the same object dict to every watcher and every list that needs it
(objects out of the cache are **shared and read-only**: a caller that wants to change one makes
its own copy, e.g. by decoding the bytes below again; nothing here deep-copies). What the REST
layer sends for an object depends only on the object and on the *encoding* it asks for (API
version plus media type, e.g. ``("v1", "application/json")``). So each object carries an
:class:`Encodings` memo: the first request for an encoding runs the encoder, every later one,
from any thread, gets the same ``bytes`` object. This is Kubernetes' ``cachingObject``.

Where the memo lives:

- every watch event the cache emits is a :class:`CachedWatchEvent` (a
  :class:`~kstore.storage.interface.WatchEvent`, so plain consumers see nothing new) whose
  ``object_encodings`` memoizes the object and ``frame_encodings`` the whole event frame (the
  ``{"type": ..., "object": ...}`` envelope), shared by every watcher receiving that event;
- every list the cache serves is a :class:`CachedListResult`, whose ``item_encodings[i]`` is
  the memo of ``items[i]`` (the same memo the object's watch events use).

:func:`encoded_object` and :func:`encoded_frame` are what a consumer calls: they use the memo
when the event came from the cache and simply encode otherwise.

Invariant: an encoder is called at most once per (memo, encoding) — concurrent first requests
wait for the one running (a striped lock, taken only on a miss).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from kstore.api.gvk import Object
from kstore.storage.interface import ListResult, WatchEvent

__all__ = [
    "CachedListResult",
    "CachedWatchEvent",
    "Encodings",
    "encoded_frame",
    "encoded_object",
]

# Misses take one of these locks (by the memo's identity): enough stripes that unrelated
# objects rarely wait for each other, few enough to cost nothing per object.
_STRIPES = tuple(threading.Lock() for _ in range(64))
_NO_FORMS: dict[Hashable, bytes] = {}


class Encodings:
    """The serialized forms of one immutable value, by encoding. Thread-safe."""

    __slots__ = ("_forms",)

    def __init__(self) -> None:
        # Shared while empty: a miss replaces the dict, never changes it.
        self._forms: dict[Hashable, bytes] = _NO_FORMS

    def get(self, encoding: Hashable, produce: Callable[[], bytes]) -> bytes:
        """The bytes for ``encoding``, calling ``produce`` only if no one has yet."""
        data = self._forms.get(encoding)
        if data is not None:
            return data
        with _STRIPES[(id(self) >> 4) % len(_STRIPES)]:
            forms = self._forms  # again: another thread may have produced it meanwhile
            data = forms.get(encoding)
            if data is None:
                data = produce()
                # A new dict per miss: readers outside the lock only ever see complete ones.
                updated = dict(forms)
                updated[encoding] = data
                self._forms = updated
            return data

    def has(self, encoding: Hashable) -> bool:
        """Whether the bytes for ``encoding`` have been produced."""
        return encoding in self._forms

    def peek(self, encoding: Hashable) -> bytes | None:
        """The bytes for ``encoding`` if they were produced already (never waits)."""
        return self._forms.get(encoding)

    def __len__(self) -> int:
        return len(self._forms)


@dataclass(frozen=True, slots=True, eq=False)
class CachedWatchEvent(WatchEvent):
    """A watch event shared by every watcher it is delivered to, with its encodings memoized.

    ``object`` is shared and read-only. ``object_encodings`` is the memo of ``object`` (the
    same memo the cache's lists use for that object version); ``frame_encodings`` memoizes
    encodings of the whole event. Equal to any WatchEvent with the same type, object and
    revision (the memos are not part of its value).
    """

    object_encodings: Encodings = field(default_factory=Encodings, compare=False, repr=False)
    frame_encodings: Encodings = field(default_factory=Encodings, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WatchEvent):
            return NotImplemented
        return (self.type, self.object, self.resource_version) == (
            other.type,
            other.object,
            other.resource_version,
        )

    def __hash__(self) -> int:
        return hash((self.type, self.resource_version))


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class CachedListResult(ListResult):
    """A list served from the cache: ``items`` are shared, read-only objects and
    ``item_encodings[i]`` is the memo of ``items[i]``. Equal to any ListResult with the same
    items, revision, continue token and remaining count."""

    item_encodings: Sequence[Encodings] = field(default=(), compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ListResult):
            return NotImplemented
        return _list_value(self) == _list_value(other)

    __hash__ = None  # type: ignore[assignment]  # holds a list, as ListResult does


def _list_value(result: ListResult) -> tuple[object, ...]:
    return (
        result.items,
        result.resource_version,
        result.continue_token,
        result.remaining_item_count,
    )


def encoded_object(
    event: WatchEvent, encoding: Hashable, encode: Callable[[Object], bytes]
) -> bytes:
    """``encode(event.object)``, computed once per encoding when ``event`` came from the cache."""
    if isinstance(event, CachedWatchEvent):
        obj = event.object
        return event.object_encodings.get(encoding, lambda: encode(obj))
    return encode(event.object)


def encoded_frame(
    event: WatchEvent, encoding: Hashable, encode: Callable[[WatchEvent], bytes]
) -> bytes:
    """``encode(event)`` for a whole event frame, computed once per encoding when ``event``
    came from the cache. ``encode`` may itself call :func:`encoded_object`."""
    if isinstance(event, CachedWatchEvent):
        return event.frame_encodings.get(encoding, lambda: encode(event))
    return encode(event)
