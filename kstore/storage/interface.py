"""The storage contract every backend (LMDB, etcd) and the watch cache implement.

Consistency rule, which everything else leans on: **revisions only increase.** A backend keeps
one global revision; every write transaction (create, update, delete, TTL expiry) takes the next
one, and an object's ``metadata.resourceVersion`` is the revision of its last write. A deleted
object is reported with the revision of the delete. Revisions are opaque to API clients but
totally ordered inside kstore.

Objects cross this interface as dicts (the hub form of their kind, as the resource's
:class:`StorageCodec` decodes them). Objects a backend returns are fresh and owned by the caller
unless a backend documents otherwise (the watch cache hands out shared, read-only objects).

Errors raised (all from :mod:`kstore.errors`):

- ``NotFound`` — the key does not exist (get without ``ignore_not_found``, update, delete);
- ``AlreadyExists`` — create on an existing key;
- ``Conflict`` — a precondition (uid, resourceVersion) does not hold;
- ``BadRequest`` — invalid key, resourceVersion, continue token or option combination;
- ``Expired`` — a revision older than the retained history (410);
- ``TooLargeResourceVersion`` — a revision newer than the store has reached (504);
- ``CorruptObject`` — stored bytes that cannot be transformed or decoded;
- ``Unavailable`` / ``Timeout`` — the backend cannot be reached in time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from kstore.api.gvk import Object
from kstore.api.selectors import FieldSelector, LabelSelector
from kstore.errors import InternalError

__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "Backend",
    "EventType",
    "GetOptions",
    "IdentityTransformer",
    "ListOptions",
    "ListResult",
    "Preconditions",
    "ResourceStorageConfig",
    "ResourceVersionMatch",
    "Stats",
    "Storage",
    "StorageCodec",
    "TryUpdate",
    "ValueTransformer",
    "WatchEvent",
    "Watcher",
    "WouldWait",
]

#: Annotation on the bookmark that ends the initial events of a watch-list (sendInitialEvents).
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"


class StorageCodec(Protocol):
    """Object <-> stored bytes for one resource (storage version, storage media type)."""

    def encode(self, obj: Object) -> bytes:
        """Encode deterministically: equal objects give equal bytes."""
        ...

    def decode(self, data: bytes) -> Object:
        """Decode stored bytes in any format and version the resource has ever used."""
        ...


class ValueTransformer(Protocol):
    """Transforms stored bytes (encryption at rest). The full storage key is authenticated data."""

    def to_storage(self, data: bytes, key: str) -> bytes: ...

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        """Return the plain bytes and whether they are ``stale`` (e.g. encrypted with an old
        key), which forces the next update to rewrite them even when unchanged."""
        ...


class IdentityTransformer(ValueTransformer):
    """The transformer that changes nothing."""

    def to_storage(self, data: bytes, key: str) -> bytes:
        return data

    def from_storage(self, data: bytes, key: str) -> tuple[bytes, bool]:
        return data, False


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceStorageConfig:
    """What a backend needs to store one resource.

    ``resource_prefix`` is the key prefix of the resource without the backend's own prefix,
    e.g. ``/pods`` or ``/example.com/widgets``; keys passed to :class:`Storage` start with it.
    ``get_attrs`` gives an object's labels and selectable fields (``metadata.name``,
    ``metadata.namespace`` and per-kind fields such as ``spec.nodeName``).
    """

    resource_prefix: str
    codec: StorageCodec
    get_attrs: Callable[[Object], tuple[dict[str, str], dict[str, str]]]
    transformer: ValueTransformer = field(default_factory=IdentityTransformer)
    namespaced: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class Preconditions:
    """Must hold on the current object for an update or delete to proceed (else Conflict).

    ``None`` means "not checked"."""

    uid: str | None = None
    resource_version: str | None = None


class ResourceVersionMatch(StrEnum):
    UNSET = ""
    NOT_OLDER_THAN = "NotOlderThan"
    EXACT = "Exact"


@dataclass(frozen=True, kw_only=True, slots=True)
class GetOptions:
    """``resource_version``: "" latest (linearizable), "0" any, "N" not older than N."""

    resource_version: str = ""
    ignore_not_found: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ListOptions:
    """Options of list and watch, as Kubernetes' storage ``ListOptions``.

    ``recursive`` False makes ``key`` an exact key (a 0- or 1-item list); True makes
    ``key + "/"`` a prefix. ``limit`` counts matching items; ``continue_token`` resumes a paged
    list at its pinned revision. For watch, ``resource_version`` is exclusive (events after it);
    ``send_initial_events`` None is the legacy behaviour (initial ADDED events when the
    resourceVersion is "" or "0").
    """

    resource_version: str = ""
    resource_version_match: ResourceVersionMatch = ResourceVersionMatch.UNSET
    label_selector: LabelSelector = field(default_factory=LabelSelector.everything)
    field_selector: FieldSelector = field(default_factory=FieldSelector.everything)
    limit: int = 0
    continue_token: str = ""
    recursive: bool = True
    send_initial_events: bool | None = None
    allow_bookmarks: bool = False
    progress_notify: bool = False
    #: False for a reader that must not wait (on an event loop's thread): a list the watch
    #: cache could answer only after catching up raises :class:`WouldWait` instead.
    wait: bool = True


class WouldWait(InternalError):
    """A list given ``ListOptions(wait=False)`` that would have waited for the watch cache:
    nothing was read; the caller asks again where it may wait. Should one ever reach a
    client, it is a 500."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ListResult:
    """Items sorted by key, read at ``resource_version``."""

    items: Sequence[Object]
    resource_version: int
    continue_token: str = ""
    remaining_item_count: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Stats:
    object_count: int
    estimated_average_object_size_bytes: int = 0


class EventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event. ``object`` is the object (with its resourceVersion set), a bookmark
    object carrying only ``metadata.resourceVersion`` (and annotations), or for ERROR a
    ``Status`` dict. ``resource_version`` is the event's revision (0 for ERROR)."""

    type: EventType
    object: Object
    resource_version: int


@runtime_checkable
class Watcher(Protocol):
    """A running watch. Events arrive in revision order, exactly once, with no gaps.

    After an ERROR event no further events are delivered and the watcher is closed.
    """

    def next(self, timeout: float | None = None) -> WatchEvent | None:
        """The next event; None when ``timeout`` passed with none, or the watch has ended."""
        ...

    def stop(self) -> None:
        """End the watch; iteration then stops. Idempotent."""
        ...

    @property
    def stopped(self) -> bool: ...

    def __iter__(self) -> Iterator[WatchEvent]:
        """Blocking iteration until the watch ends."""
        ...


#: Computes the new object from the current one. Gets ``{}`` when the key is missing and
#: ``ignore_not_found`` is set. Raising aborts the update with that error. Must not mutate its
#: argument. May be called several times (once per conflict retry).
TryUpdate = Callable[[Object], Object]


@runtime_checkable
class Storage(Protocol):
    """Versioned storage of one resource. All methods are thread-safe."""

    def create(self, key: str, obj: Object, *, ttl_seconds: int | None = None) -> Object:
        """Store ``obj`` at ``key`` unless the key exists (AlreadyExists). ``obj`` must not
        carry a resourceVersion (BadRequest). Returns the stored object with its new
        resourceVersion. A ``ttl_seconds`` object expires after that time (a DELETED event)."""
        ...

    def get(self, key: str, opts: GetOptions = GetOptions()) -> Object:
        """The current object at ``key``; ``{}`` when missing and ``ignore_not_found``."""
        ...

    def list(self, key: str, opts: ListOptions = ListOptions()) -> ListResult:
        """Objects under ``key`` (see ListOptions), filtered, paged, all at one revision."""
        ...

    def guaranteed_update(
        self,
        key: str,
        try_update: TryUpdate,
        *,
        ignore_not_found: bool = False,
        preconditions: Preconditions | None = None,
        cached_existing: Object | None = None,
        ttl_seconds: int | None = None,
    ) -> Object:
        """Compare-and-swap loop: read (or start from ``cached_existing``), check
        preconditions, apply ``try_update``, write if the revision is still the one read,
        else retry with fresh state. Conflicts never reach the caller. When the encoded result
        equals the stored bytes (and they are not stale) nothing is written and the current
        object is returned with its unchanged resourceVersion. ``ttl_seconds`` None stores the
        new value without expiry."""
        ...

    def delete(
        self,
        key: str,
        *,
        preconditions: Preconditions | None = None,
        validate_deletion: Callable[[Object], None] | None = None,
        cached_existing: Object | None = None,
    ) -> Object:
        """Delete the object at ``key`` if preconditions and ``validate_deletion`` pass (on
        the current state). Returns the last state with the delete's revision."""
        ...

    def watch(self, key: str, opts: ListOptions = ListOptions()) -> Watcher:
        """Watch ``key`` (exact or prefix per ``recursive``) from ``opts.resource_version``.

        A revision below the retained history yields one ERROR event (410 Expired) and the
        end of the watch, never a silent later start."""
        ...

    def stats(self) -> Stats:
        """Object count (and average stored size) under the resource prefix, now."""
        ...

    def current_revision(self) -> int:
        """The backend's current global revision (a linearizable read)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """A storage engine holding many resources under one global revision."""

    def storage_for(self, config: ResourceStorageConfig) -> Storage:
        """The storage of one resource, sharing this backend's revision and history."""
        ...

    def current_revision(self) -> int: ...

    def compact(self, revision: int | None = None) -> int:
        """Drop history up to ``revision`` (default: what the retention policy allows) and
        return the compacted revision; reads and watches below it then get 410 Expired."""
        ...

    @property
    def compacted_revision(self) -> int: ...

    def close(self) -> None:
        """Stop background work and release the store; pending writes are finished first."""
        ...


@runtime_checkable
class SharedBackend(Protocol):
    """A backend several processes may open at once (LMDB workers), which elects one of them
    to run the loops that must run once per store (its own housekeeping, and what the layers
    above gate on it: the namespace finalizer). A backend without this ability is either
    opened by one process, or (etcd) shared by servers that each run their own loops."""

    @property
    def leads(self) -> bool:
        """Whether this process runs the store's leader-only loops now (taking the lead when
        no process holds it)."""
        ...
