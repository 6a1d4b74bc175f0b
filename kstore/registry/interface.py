"""The registry contract: what the REST facade and the embedding API call to read and write
objects of one resource, with Kubernetes' create/update/delete semantics on top of storage.

Objects cross this interface in their kind's **hub** form (the REST layer decodes a request
body to the hub and encodes the result in the version the client asked for). The registry owns
everything between: system fields (uid, creationTimestamp, generation), ``generateName``,
per-kind strategies, validation, admission, finalizers and graceful deletion, dry-run, TTLs,
``managedFields``, and the mapping of storage outcomes to Kubernetes errors
(``AlreadyExists``, ``Conflict`` with Kubernetes' wording, ``NotFound`` naming the resource).

Updates are expressed as an :data:`UpdatedObject` function applied to the current object, so
an update, a patch and a server-side apply are one mechanism and each conflict retry applies
the change to fresh state (Kubernetes' ``rest.UpdatedObjectInfo``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from kstore.api.gvk import GroupVersion, Object
from kstore.api.scheme import KindDefinition, ResourceInfo, Scheme
from kstore.errors import InternalError
from kstore.storage.interface import ListOptions, ListResult, Preconditions, Watcher

__all__ = [
    "AdmissionAttributes",
    "AdmissionHook",
    "CreateOptions",
    "DeleteOptions",
    "DeleteResult",
    "NeedsWorkerThread",
    "Operation",
    "Registry",
    "RequestContext",
    "ResourceStore",
    "UpdateOptions",
    "UpdatedObject",
    "UserInfo",
    "WriteResult",
    "writing_on_loop",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    #: Kubernetes' ``user.Info.Extra`` as (key, values) pairs, in the order they came.
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def fields(self) -> dict[str, Any]:
        """Kubernetes' UserInfo fields (``username``, ``uid``, ``groups``, ``extra``), the empty
        ones left out: an AdmissionRequest's ``userInfo``, a CertificateSigningRequest's spec."""
        out: dict[str, Any] = {}
        if self.name:
            out["username"] = self.name
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra}
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestContext:
    """Who asks, in which namespace, speaking which version.

    ``namespace`` is the request's namespace ("" for cluster-scoped resources and for lists or
    watches across all namespaces). ``request_version`` is the group/version the client used;
    strategies that behave per version (e.g. Deployment selector immutability) read it.
    """

    namespace: str = ""
    request_version: GroupVersion | None = None
    user: UserInfo | None = None
    #: Where admission leaves the request's audit annotations (None: nobody records them).
    audit_annotations: dict[str, str] | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class CreateOptions:
    dry_run: bool = False
    field_manager: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class UpdateOptions:
    """``force`` is server-side apply's force flag; ``subresource`` is "" or e.g. "status".

    ``preconditions`` must hold on the stored object before ``updated`` is applied (409
    Conflict otherwise). A PUT passes the uid of its body here, as Kubernetes'
    ``DefaultUpdatedObjectInfo.Preconditions`` does, so replacing an object that was deleted
    and recreated is a Conflict rather than an immutable-uid Invalid.

    ``apply`` says that ``updated`` is a server-side apply: as in Kubernetes, a missing
    object is then created whatever the kind's create-on-update rule, and the store records no
    Update entry in ``managedFields`` (the apply maintains its own Apply entry).
    """

    dry_run: bool = False
    field_manager: str = ""
    subresource: str = ""
    force: bool = False
    preconditions: Preconditions | None = None
    apply: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteOptions:
    """Kubernetes' DeleteOptions. ``grace_period_seconds`` None means the strategy default."""

    dry_run: bool = False
    grace_period_seconds: int | None = None
    preconditions: Preconditions | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteResult:
    """The stored object (hub), the warnings to return, and whether an update created it."""

    object: Object
    warnings: tuple[str, ...] = ()
    created: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class DeleteResult:
    """``deleted`` False means the object is still there (finalizers or grace period pending);
    ``object`` is then its current state, else its last state."""

    object: Object
    deleted: bool
    warnings: tuple[str, ...] = ()


#: Computes the new hub object from the current one (``{}`` when it does not exist and the
#: update may create it). Raises to abort. Must not mutate its argument; may run once per
#: conflict retry.
UpdatedObject = Callable[[Object], Object]


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@dataclass(kw_only=True, slots=True)
class AdmissionAttributes:
    """What an admission hook sees. Mutating hooks may change ``object`` in place."""

    operation: Operation
    definition: KindDefinition
    namespace: str
    name: str
    object: Object | None
    old_object: Object | None = None
    subresource: str = ""
    dry_run: bool = False
    user: UserInfo | None = None
    warnings: list[str] = field(default_factory=list)
    #: Audit annotations the hooks add (``key`` -> value), for the request's audit event.
    audit_annotations: dict[str, str] = field(default_factory=dict)
    #: The group/version the client spoke (:attr:`RequestContext.request_version`); None for
    #: a caller that did not say (the kind's storage version is then taken).
    request_version: GroupVersion | None = None
    #: Kubernetes' reinvocation context: a mutating hook sets ``reinvoke`` to have every
    #: mutating hook run once more after the first pass (a webhook changed the object);
    #: ``reinvoking`` is true during that pass; ``plugin_state`` keeps plugins' notes on the
    #: request between the passes, by plugin name.
    reinvoke: bool = False
    reinvoking: bool = False
    plugin_state: dict[str, Any] = field(default_factory=dict)


#: An admission hook raises a kstore error (Forbidden, Invalid, ...) to reject the request.
AdmissionHook = Callable[[AdmissionAttributes], None]

#: True while a write runs on an event loop's thread (``create_async``, ``update_async``):
#: task-local, so other requests on the loop do not see it.
WRITING_ON_LOOP: ContextVar[bool] = ContextVar("kstore_writing_on_loop", default=False)


def writing_on_loop() -> bool:
    """Whether the write being admitted runs on an event loop's thread, where a hook must not
    wait (it would hold every other request of the loop)."""
    return WRITING_ON_LOOP.get()


class NeedsWorkerThread(InternalError):
    """Raised by an admission hook that has to wait (say, for an object a controller is about
    to make) in a write running on an event loop's thread (:func:`writing_on_loop`), before
    anything of the request is stored. The caller of ``create_async`` / ``update_async``
    then runs the same request again with ``create`` / ``update`` on a worker thread, where
    the hook may wait. Should one ever reach a client, it is a 500."""


@runtime_checkable
class ResourceStore(Protocol):
    """The objects of one resource, all versions served through the hub."""

    @property
    def definition(self) -> KindDefinition: ...

    @property
    def info(self) -> ResourceInfo: ...

    def create(self, ctx: RequestContext, obj: Object, opts: CreateOptions) -> WriteResult:
        """Create; 409 AlreadyExists (or a generateName conflict after retries), 422 Invalid,
        404 when the namespace does not exist, 403 when it is terminating."""
        ...

    async def create_async(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions
    ) -> WriteResult:
        """:meth:`create` awaited on an event loop, its registry work on the loop's thread:
        only where :attr:`Registry.writes_on_loop` holds."""
        ...

    def get(self, ctx: RequestContext, name: str, *, resource_version: str = "") -> Object: ...

    def list(self, ctx: RequestContext, opts: ListOptions) -> ListResult: ...

    def update(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        """Update (or create, where the kind allows create-on-update); 409 Conflict on a stale
        resourceVersion in the object ``updated`` returns."""
        ...

    async def update_async(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        """:meth:`update` awaited on an event loop, ``updated`` and the registry's work on the
        loop's thread: only where :attr:`Registry.writes_on_loop` holds."""
        ...

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult: ...

    def delete_collection(
        self, ctx: RequestContext, list_opts: ListOptions, opts: DeleteOptions
    ) -> Sequence[Object]: ...

    def watch(self, ctx: RequestContext, opts: ListOptions) -> Watcher: ...


@runtime_checkable
class Registry(Protocol):
    """Every resource of a Scheme over one storage backend, plus the admission chain."""

    @property
    def scheme(self) -> Scheme:
        """The Scheme served now. It is replaced whole when kinds come and go (see
        :meth:`apply_scheme`): take it once per request."""
        ...

    def apply_scheme(self, scheme: Scheme) -> None:
        """Serve ``scheme`` from now on: stores for the resources it adds or changes, none for
        those it drops; then every scheme listener is called with it."""
        ...

    def add_scheme_listener(self, listener: Callable[[Scheme], None]) -> None:
        """Call ``listener(scheme)`` after each :meth:`apply_scheme`."""
        ...

    @property
    def reads_are_local(self) -> bool:
        """Whether a read of one object with no resourceVersion (or ``0``) is a short local
        read that never waits on anything outside this process (LMDB, not etcd): the REST
        routes then serve such GETs on the event loop instead of a worker thread."""
        ...

    @property
    def writes_on_loop(self) -> bool:
        """Whether :meth:`ResourceStore.create_async` and :meth:`ResourceStore.update_async`
        may run on an event loop's thread: reads are local (:attr:`reads_are_local`) and no
        admission hook may block. The REST routes then run creates, updates and patches on
        the loop, awaiting the storage's commits there."""
        ...

    def store(self, group: str, resource: str) -> ResourceStore:
        """The store of a resource by group and plural name; NotFound when not served."""
        ...

    def stores(self) -> Sequence[ResourceStore]: ...

    def add_admission(
        self,
        *,
        mutating: AdmissionHook | None = None,
        validating: AdmissionHook | None = None,
        blocking: bool | Callable[[], bool] = True,
        reads_only: bool = False,
    ) -> None:
        """Append hooks: all mutating hooks run before all validating hooks, in order.
        ``blocking=False`` promises they never block (no I/O, no waiting); a callable is
        asked, per request, whether they may block now. ``reads_only=True`` promises that
        the validating hook never changes the object, which it is then given uncopied."""
        ...

    def on_close(self, stop: Callable[[], None]) -> None:
        """Call ``stop()`` when the registry closes, before its stores stop (admission
        plugins end their informers there)."""
        ...

    def close(self) -> None: ...
