"""The generic store: one resource's create, read, update and delete with Kubernetes' semantics.

:class:`GenericStore` is Kubernetes' ``genericregistry.Store`` together with the parts of the
create/update/delete handlers that are not HTTP (system fields, ``managedFields``, admission,
owner-reference de-duplication), over one :class:`~kstore.storage.interface.Storage`. What
differs per kind is its :class:`~kstore.registry.strategies.base.Strategy`.

Create (Kubernetes' order): wipe system fields → reconcile the namespace with the request's
(400 on a mismatch) → de-duplicate ownerReferences → ``managedFields`` → namespace lifecycle
(404 missing, 403 terminating) → mutating admission → de-duplicate again → fill uid and
creationTimestamp, generate the name → ``prepare_for_create`` → kind validation, then generic
ObjectMeta validation (422) → validating admission → storage create (with the kind's TTL).
A generated name that collides is regenerated up to 8 times, then 409 with Kubernetes'
"not able to generate a unique name" wording.

Update: one ``guaranteed_update`` whose function applies the caller's :data:`UpdatedObject` to
the current object, then ``managedFields``, mutating admission, the resourceVersion rules
(422 when missing unless the kind allows unconditional updates, 409 ``OptimisticLockErrorMsg``
when stale), ``prepare_for_update`` (generation, status/spec split), validation, validating
admission; an update that removes the last finalizer of an object being deleted deletes it.
A missing object is created when the kind allows create on update, or for a server-side apply
(``created=True``).

Delete and DeleteCollection: :mod:`kstore.registry.deletion` (rules in
:mod:`kstore.registry.graceful`); graceful deletion and finalizers keep the object
(``deleted=False``) with a ``deletionTimestamp``. The metadata rules shared by every write are
in :mod:`kstore.registry.object_meta`.

Dry run (every verb): the same checks, validation and admission, and nothing written; a dry-run
create returns the object without a resourceVersion.

Per-request work is kept small: the field manager's type tree, zero value and reset fields
are built once per (version, subresource), admission attributes only when a hook is
registered; what the store caches is invalidated by what it depends on (a strategy's reset
fields are part of the cache key).

Storage errors are re-worded for this resource (``pods "x" not found``, ``deployments.apps "x"
already exists``, ``Operation cannot be fulfilled on pods "x": ...``). Objects passed in are
never mutated; objects returned are owned by the caller.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.gvk import HUB_VERSION, GroupVersionKind, Object
from kstore.api.patch_meta import DEDUCED, TypeNode, type_for_gvk, zero_object
from kstore.api.scheme import KindDefinition, ResourceInfo, Scheme
from kstore.api.validation.field import JSONValue, Path, invalid
from kstore.cache.cacher import Cacher
from kstore.errors import (
    AlreadyExists,
    BadRequest,
    Cause,
    Conflict,
    Invalid,
    KStoreError,
    MethodNotAllowed,
    NotFound,
)
from kstore.registry.admission import AdmissionChain
from kstore.registry.deletion import Deleter
from kstore.registry.interface import (
    WRITING_ON_LOOP,
    AdmissionAttributes,
    CreateOptions,
    DeleteOptions,
    DeleteResult,
    Operation,
    RequestContext,
    ResourceStore,
    UpdatedObject,
    UpdateOptions,
    WriteResult,
)
from kstore.registry.names import MAX_GENERATE_NAME_ATTEMPTS, generate_name, random_bytes
from kstore.registry.object_meta import (
    dedup_owner_references,
    ensure_namespace,
    keep_managed_fields_times,
    name_of,
    wipe_system_fields,
)
from kstore.registry.passthrough import Raised, guarded
from kstore.registry.patch.fieldsets import FieldSet
from kstore.registry.patch.managed import current_time, reset_field_set, track_update
from kstore.registry.patch.typed import SchemaError
from kstore.registry.strategies.base import (
    Strategy,
    copy_value,
    meta,
    read_meta,
    update_warnings,
)
from kstore.storage.aio import AsyncStorage, as_async
from kstore.storage.interface import (
    GetOptions,
    ListOptions,
    ListResult,
    Preconditions,
    Storage,
    Watcher,
)
from kstore.storage.versioner import object_resource_version

__all__ = [
    "OPTIMISTIC_LOCK_ERROR",
    "GenericStore",
    "NamespaceCheck",
]

OPTIMISTIC_LOCK_ERROR: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

#: Checks that namespace ``namespace`` accepts new content (404 / 403); ``name`` is the name
#: the error is about, ``resource`` the qualified resource being created.
NamespaceCheck = Callable[[str, str, str], None]


class _EmptiedFinalizers(Exception):
    """An update removed the last finalizer of an object being deleted: delete it instead."""

    def __init__(self, obj: Object) -> None:
        super().__init__("emptied finalizers")
        self.obj = obj


@dataclass(frozen=True, kw_only=True, slots=True)
class _Tracking:
    """The field manager's inputs for one (version, subresource) of a resource."""

    node: TypeNode
    zero: Object
    api_version: str
    reset_fields: FieldSet


@dataclass(slots=True)
class _Request:
    """Per-request state collected while a write runs (warnings, outcome flags)."""

    warnings: list[str] = field(default_factory=list)
    created: bool = False


@dataclass(slots=True)
class _UpdatePlan:
    """An update's key, whether it may create, its request state and its update function."""

    key: str
    allow_create: bool
    request: _Request
    try_update: Callable[[Object], Object]

    def result(self, stored: Object) -> WriteResult:
        request = self.request
        return WriteResult(object=stored, warnings=tuple(request.warnings), created=request.created)


def _schema_type(definition: KindDefinition, version: str) -> TypeNode | None:
    """The type a version's schema gives (kinds defined by data), None without one."""
    try:
        rules = definition.version(version).schema_rules
    except NotFound:
        return None
    node: TypeNode | None = rules.type_node if rules is not None else None
    return node


class GenericStore(ResourceStore):
    """The objects of one resource (see the module docstring). Thread-safe."""

    def __init__(
        self,
        *,
        scheme: Scheme,
        definition: KindDefinition,
        strategy: Strategy,
        storage: Storage,
        resource_prefix: str,
        admission: AdmissionChain,
        namespace_check: NamespaceCheck | None = None,
    ) -> None:
        if definition.resource is None:
            raise ValueError(f"kind {definition.kind} is not an API resource")
        self._scheme = scheme
        self._definition = definition
        self._info = definition.resource
        self._strategy = strategy
        self._storage = storage
        self._prefix = resource_prefix.rstrip("/")
        self._admission = admission
        self._namespace_check = namespace_check
        plural = definition.resource.plural
        self._qualified = f"{plural}.{definition.group}" if definition.group else plural
        self._deleter = Deleter(self)
        # (version, subresource, reset fields) -> field-manager inputs; filled on first use
        # (a racing fill stores an equal value).
        self._trackings: dict[tuple[str, str, frozenset[tuple[str, ...]]], _Tracking] = {}
        # This storage's verbs as coroutines, made on the first create_async.
        self._aio: AsyncStorage | None = None

    # -- identity --------------------------------------------------------------------------

    @property
    def definition(self) -> KindDefinition:
        return self._definition

    @property
    def info(self) -> ResourceInfo:
        return self._info

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def qualified_resource(self) -> str:
        """The resource as Kubernetes' messages name it (``pods``, ``deployments.apps``)."""
        return self._qualified

    def key(self, ctx: RequestContext, name: str) -> str:
        if not name:
            # Kubernetes' NamespaceKeyFunc / NoNamespaceKeyFunc wording.
            raise BadRequest("Name parameter required.")
        if self._info.namespaced:
            if not ctx.namespace:
                raise BadRequest("Namespace parameter required.")
            return f"{self._prefix}/{ctx.namespace}/{name}"
        return f"{self._prefix}/{name}"

    def _collection_key(self, ctx: RequestContext) -> str:
        if self._info.namespaced and ctx.namespace:
            return f"{self._prefix}/{ctx.namespace}"
        return self._prefix

    # -- errors ----------------------------------------------------------------------------

    def not_found(self, name: str) -> NotFound:
        return NotFound(
            f'{self._qualified} "{name}" not found',
            name=name,
            kind=self._info.plural,
            group=self._definition.group,
        )

    def _already_exists(self, name: str, *, generated: bool = False) -> AlreadyExists:
        if generated:
            return AlreadyExists(
                f'{self._qualified} "{name}" already exists, the server was not able to '
                "generate a unique name for the object",
                name=name,
                kind=self._info.plural,
                group=self._definition.group,
                retry_after_seconds=1,
            )
        return AlreadyExists(
            f'{self._qualified} "{name}" already exists',
            name=name,
            kind=self._info.plural,
            group=self._definition.group,
        )

    def conflict(self, name: str, problem: str) -> Conflict:
        return Conflict(
            f'Operation cannot be fulfilled on {self._qualified} "{name}": {problem}',
            name=name,
            kind=self._info.plural,
            group=self._definition.group,
        )

    def interpret_error(self, exc: KStoreError, name: str) -> KStoreError:
        """A storage error re-worded for this resource (the backend names keys, not
        resources: ``/services/specs`` is ``services``)."""
        if isinstance(exc, NotFound):
            return self.not_found(name)
        if isinstance(exc, AlreadyExists):
            return self._already_exists(name)
        if isinstance(exc, Conflict):
            _, sep, problem = exc.message.partition(f'"{name}": ')
            return self.conflict(name, problem if sep else exc.message)
        return exc

    # -- reads -----------------------------------------------------------------------------

    def get(self, ctx: RequestContext, name: str, *, resource_version: str = "") -> Object:
        key = self.key(ctx, name)
        try:
            return self._storage.get(key, GetOptions(resource_version=resource_version))
        except KStoreError as exc:
            raise self.interpret_error(exc, name) from None

    def list(self, ctx: RequestContext, opts: ListOptions) -> ListResult:
        return self._storage.list(self._collection_key(ctx), opts)

    def list_now(self, ctx: RequestContext, opts: ListOptions) -> ListResult:
        """A consistent :meth:`list` that never waits for the watch cache to catch up (it
        reads storage instead): for reads on a write's path, such as admission plugins'."""
        key = self._collection_key(ctx)
        if isinstance(self._storage, Cacher):
            return self._storage.list_now(key, opts)
        return self._storage.list(key, opts)

    def watch(self, ctx: RequestContext, opts: ListOptions) -> Watcher:
        return self._storage.watch(self._collection_key(ctx), opts)

    # -- helpers shared by the writes ------------------------------------------------------

    def _request_version(self, ctx: RequestContext) -> str:
        gv = ctx.request_version
        if gv is not None and gv.group == self._definition.group and gv.version != HUB_VERSION:
            return gv.version
        return self._definition.storage_group_version.version

    def _external(self, obj: Object, version: str) -> Object:
        if not obj:
            return obj
        hub = obj if obj.get("apiVersion") == self._definition.hub_api_version else None
        if hub is None:
            return obj
        return self._scheme.from_hub(hub, version)

    def _tracking(self, version: str, subresource: str) -> _Tracking:
        """What the field manager needs for writes in ``version`` to ``subresource``: the
        type tree, zero value and reset fields, built once (as ``record_update`` would on
        every write)."""
        reset = self._strategy.reset_fields(subresource)
        key = (version, subresource, reset)
        found = self._trackings.get(key)
        if found is None:
            gvk = GroupVersionKind(self._definition.group, version, self._definition.kind)
            found = _Tracking(
                node=type_for_gvk(gvk) or _schema_type(self._definition, version) or DEDUCED,
                zero=zero_object(gvk),
                api_version=gvk.group_version.api_version,
                reset_fields=reset_field_set(sorted(reset)),
            )
            self._trackings[key] = found
        return found

    def _manage_fields(
        self,
        ctx: RequestContext,
        live: Object | None,
        new: Object,
        manager: str,
        subresource: str,
    ) -> None:
        """Set ``new``'s managedFields for an Update by ``manager`` (``live`` None: create),
        computed in the request's version as Kubernetes' field manager does.

        An object the kind's schema cannot walk (a keyed list element without its key, such
        as a container without a name) gets no managedFields rather than an error, as
        Kubernetes' ``UpdateNoErrors`` drops them: validation, which runs later, is what
        answers such an object (422 naming the field), not the field manager (a 500)."""
        version = self._request_version(ctx)
        tracking = self._tracking(version, subresource)
        try:
            recorded = track_update(
                {} if live is None else self._external(live, version),
                self._external(new, version),
                tracking.node,
                api_version=tracking.api_version,
                manager=manager,
                subresource=subresource,
                reset_fields=tracking.reset_fields,
                zero=tracking.zero,
            )
        except SchemaError:
            meta(new).pop("managedFields", None)
            return
        entries = read_meta(recorded).get("managedFields")
        if entries is None:
            meta(new).pop("managedFields", None)
        else:
            meta(new)["managedFields"] = entries

    def _attributes(
        self,
        ctx: RequestContext,
        operation: Operation,
        name: str,
        obj: Object | None,
        old: Object | None,
        subresource: str,
        dry_run: bool,
        warnings: builtins.list[str],
    ) -> AdmissionAttributes:
        return AdmissionAttributes(
            operation=operation,
            definition=self._definition,
            namespace=ctx.namespace if self._info.namespaced else "",
            name=name,
            object=obj,
            old_object=old,
            subresource=subresource,
            dry_run=dry_run,
            user=ctx.user,
            warnings=warnings,
            audit_annotations={} if ctx.audit_annotations is None else ctx.audit_annotations,
            request_version=ctx.request_version,
        )

    def _invalid(self, obj: Object, causes: Sequence[Any]) -> Invalid:
        d = self._definition
        return Invalid.for_object(d.kind, name_of(obj), causes, group=d.group)

    def _admit_create(
        self,
        ctx: RequestContext,
        obj: Object,
        manager: str,
        subresource: str,
        dry_run: bool,
        request: _Request,
        *,
        track_fields: bool = True,
    ) -> None:
        """What Kubernetes' create handler does before the store: system fields wiped,
        namespace reconciled, owners de-duplicated, managedFields (unless a server-side apply
        already recorded them), namespace lifecycle, mutating admission."""
        if self._info.namespaced and not ctx.namespace:
            raise BadRequest("Namespace parameter required.")
        wipe_system_fields(obj)
        m = read_meta(obj)
        ensure_namespace(obj, ctx.namespace if self._info.namespaced else "")
        request.warnings.extend(dedup_owner_references(obj, after_admission=False))
        if track_fields:
            self._manage_fields(ctx, None, obj, manager, subresource)
        name = name_of(obj) or str(m.get("generateName") or "")
        if self._namespace_check is not None and self._info.namespaced:
            self._namespace_check(ctx.namespace, name, self._qualified)
        if not self._admission.empty:
            self._admission.mutate(
                self._attributes(
                    ctx,
                    Operation.CREATE,
                    name_of(obj),
                    obj,
                    None,
                    subresource,
                    dry_run,
                    request.warnings,
                )
            )
            request.warnings.extend(dedup_owner_references(obj, after_admission=True))

    def _before_create(
        self,
        ctx: RequestContext,
        obj: Object,
        subresource: str,
        dry_run: bool,
        request: _Request,
    ) -> None:
        """System fields, the generated name, prepare, validate, validating admission."""
        m = meta(obj)
        m["creationTimestamp"] = current_time()
        m["uid"] = new_uid()
        generate = m.get("generateName")
        if generate and not m.get("name"):
            m["name"] = generate_name(str(generate))
        ensure_namespace(obj, ctx.namespace if self._info.namespaced else "")
        request.warnings.extend(self._strategy.prepare_for_create(ctx, obj))
        causes = self._strategy.validate_create(ctx, obj)
        if causes:
            raise self._invalid(obj, causes)
        if self._admission.has_validating:
            self._admission.validate(
                self._attributes(
                    ctx,
                    Operation.CREATE,
                    name_of(obj),
                    obj,
                    None,
                    subresource,
                    dry_run,
                    request.warnings,
                )
            )

    # -- create ----------------------------------------------------------------------------

    def create(self, ctx: RequestContext, obj: Object, opts: CreateOptions) -> WriteResult:
        request = _Request()
        obj = self._admitted_for_create(ctx, obj, opts, request)
        for candidate, last in self._create_candidates(obj):
            key = self._prepared_create(ctx, candidate, opts, request)
            try:
                stored = self._stored_create(key, candidate, opts)
            except AlreadyExists:
                if last:
                    raise
                continue
            return WriteResult(object=stored, warnings=tuple(request.warnings))
        raise AssertionError("unreachable")  # pragma: no cover

    async def create_async(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions
    ) -> WriteResult:
        """:meth:`create` on an event loop: the registry's work runs on the loop's thread and
        the storage write is awaited (natively where the storage can: LMDB), so no thread is
        held while the commit waits. For registries whose reads are local and whose admission
        hooks do not block (:attr:`~kstore.registry.interface.Registry.writes_on_loop`).
        A hook that would have to wait raises
        :class:`~kstore.registry.interface.NeedsWorkerThread` before anything is stored: the
        caller then runs :meth:`create` on a worker thread instead."""
        # Task-local: other requests running on the loop meanwhile do not see it.
        on_loop = WRITING_ON_LOOP.set(True)
        try:
            return await self._create_async(ctx, obj, opts)
        finally:
            WRITING_ON_LOOP.reset(on_loop)

    async def _create_async(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions
    ) -> WriteResult:
        request = _Request()
        obj = self._admitted_for_create(ctx, obj, opts, request)
        for candidate, last in self._create_candidates(obj):
            key = self._prepared_create(ctx, candidate, opts, request)
            try:
                stored = await self._stored_create_async(key, candidate, opts)
            except AlreadyExists:
                if last:
                    raise
                continue
            return WriteResult(object=stored, warnings=tuple(request.warnings))
        raise AssertionError("unreachable")  # pragma: no cover

    def _admitted_for_create(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions, request: _Request
    ) -> Object:
        if self._info.create_refused:
            raise MethodNotAllowed(self._info.create_refused)
        obj = copy_value(obj)
        self._admit_create(ctx, obj, opts.field_manager, "", opts.dry_run, request)
        return obj

    @staticmethod
    def _create_candidates(obj: Object) -> Iterator[tuple[Object, bool]]:
        """The objects to try storing, each with whether it is the last try: one, or, for a
        generateName without a name, a fresh copy per attempt (each gets its own name)."""
        m = read_meta(obj)
        retries = MAX_GENERATE_NAME_ATTEMPTS if m.get("generateName") and not m.get("name") else 1
        for attempt in range(retries):
            last = attempt + 1 == retries
            yield (obj if last else copy_value(obj)), last

    def _prepared_create(
        self, ctx: RequestContext, obj: Object, opts: CreateOptions, request: _Request
    ) -> str:
        """System fields, prepare, validate and validating admission; the storage key."""
        self._before_create(ctx, obj, "", opts.dry_run, request)
        return self.key(ctx, name_of(obj))

    def _stored_create(self, key: str, obj: Object, opts: CreateOptions) -> Object:
        try:
            if opts.dry_run:
                return self._dry_run_create(key, obj)
            return self._storage.create(key, obj, ttl_seconds=self._strategy.ttl_seconds)
        except KStoreError as exc:
            raise self._create_error(exc, key, obj) from None

    async def _stored_create_async(self, key: str, obj: Object, opts: CreateOptions) -> Object:
        try:
            if opts.dry_run:
                return self._dry_run_create(key, obj)
            return await self._storage_aio().create(
                key, obj, ttl_seconds=self._strategy.ttl_seconds
            )
        except KStoreError as exc:
            raise self._create_error(exc, key, obj) from None

    def _dry_run_create(self, key: str, obj: Object) -> Object:
        if self._storage.get(key, GetOptions(ignore_not_found=True)):
            raise self._already_exists(name_of(obj))
        return obj

    def _create_error(self, exc: KStoreError, key: str, obj: Object) -> KStoreError:
        if isinstance(exc, AlreadyExists):
            return self._create_conflict(key, obj)
        return self.interpret_error(exc, name_of(obj))

    def _create_conflict(self, key: str, obj: Object) -> AlreadyExists:
        m = read_meta(obj)
        name = name_of(obj)
        if m.get("generateName"):
            return self._already_exists(name, generated=True)
        error = self._already_exists(name)
        try:
            existing = self._storage.get(key)
        except KStoreError:
            return error
        if read_meta(existing).get("deletionTimestamp"):
            error.message = f"object is being deleted: {error.message}"
            error.args = (error.message,)
        return error

    # -- update ----------------------------------------------------------------------------

    def update(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        plan = self._update_plan(ctx, name, updated, opts)
        try:
            if opts.dry_run:
                stored = self._dry_run_update(
                    plan.key, plan.try_update, plan.allow_create, opts.preconditions
                )
            else:
                stored = self._storage.guaranteed_update(
                    plan.key,
                    plan.try_update,
                    ignore_not_found=plan.allow_create,
                    preconditions=opts.preconditions,
                    ttl_seconds=self._strategy.ttl_seconds,
                )
        except _EmptiedFinalizers as emptied:
            if not opts.dry_run:
                self._delete_emptied(plan.key, name, opts)
            return plan.result(emptied.obj)
        except (Raised, KStoreError) as exc:
            raise self._update_error(exc, name, plan.request) from None
        return plan.result(stored)

    async def update_async(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        """:meth:`update` on an event loop, as :meth:`create_async`: ``updated`` and the
        registry's work run on the loop's thread, the storage's writes are awaited (a hook
        that would wait raises :class:`~kstore.registry.interface.NeedsWorkerThread`, as in
        :meth:`create_async`)."""
        on_loop = WRITING_ON_LOOP.set(True)
        try:
            return await self._update_async(ctx, name, updated, opts)
        finally:
            WRITING_ON_LOOP.reset(on_loop)

    async def _update_async(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> WriteResult:
        plan = self._update_plan(ctx, name, updated, opts)
        try:
            if opts.dry_run:
                stored = self._dry_run_update(
                    plan.key, plan.try_update, plan.allow_create, opts.preconditions
                )
            else:
                stored = await self._storage_aio().guaranteed_update(
                    plan.key,
                    plan.try_update,
                    ignore_not_found=plan.allow_create,
                    preconditions=opts.preconditions,
                    ttl_seconds=self._strategy.ttl_seconds,
                )
        except _EmptiedFinalizers as emptied:
            if not opts.dry_run:
                await self._delete_emptied_async(plan.key, name, opts)
            return plan.result(emptied.obj)
        except (Raised, KStoreError) as exc:
            raise self._update_error(exc, name, plan.request) from None
        return plan.result(stored)

    def _update_plan(
        self, ctx: RequestContext, name: str, updated: UpdatedObject, opts: UpdateOptions
    ) -> _UpdatePlan:
        subresource = opts.subresource
        if subresource and subresource not in self._strategy.subresources():
            raise NotFound("the server could not find the requested resource")
        key = self.key(ctx, name)
        # Subresources never create (Kubernetes passes forceAllowCreate=false for them); a
        # server-side apply always may (its forceAllowCreate).
        allow_create = (self._strategy.allow_create_on_update or opts.apply) and not subresource
        request = _Request()

        def try_update(current: Object) -> Object:
            request.warnings.clear()
            request.created = False
            return self._updated(ctx, name, current, updated, opts, allow_create, request)

        return _UpdatePlan(key, allow_create, request, guarded(try_update))

    def _update_error(self, exc: Exception, name: str, request: _Request) -> BaseException:
        if isinstance(exc, Raised):
            return exc.error
        assert isinstance(exc, KStoreError)
        if request.created and isinstance(exc, AlreadyExists):
            return self._already_exists(name)
        return self.interpret_error(exc, name)

    def _storage_aio(self) -> AsyncStorage:
        aio = self._aio
        if aio is None:
            aio = self._aio = as_async(self._storage)
        return aio

    def _dry_run_update(
        self,
        key: str,
        try_update: Callable[[Object], Object],
        allow_create: bool,
        preconditions: Preconditions | None,
    ) -> Object:
        current = self._storage.get(key, GetOptions(ignore_not_found=allow_create))
        if current and preconditions is not None:
            self.check_storage_preconditions(current, preconditions)
        return try_update(current)

    def check_storage_preconditions(self, obj: Object, preconditions: Preconditions) -> None:
        m = read_meta(obj)
        uid, rv = str(m.get("uid") or ""), str(m.get("resourceVersion") or "")
        if preconditions.uid is not None and preconditions.uid != uid:
            raise self.conflict(
                name_of(obj),
                f"Precondition failed: UID in precondition: {preconditions.uid}, "
                f"UID in object meta: {uid}",
            )
        if preconditions.resource_version is not None and preconditions.resource_version != rv:
            raise self.conflict(
                name_of(obj),
                "Precondition failed: ResourceVersion in precondition: "
                f"{preconditions.resource_version}, ResourceVersion in object meta: {rv}",
            )

    def _updated(
        self,
        ctx: RequestContext,
        name: str,
        current: Object,
        updated: UpdatedObject,
        opts: UpdateOptions,
        allow_create: bool,
        request: _Request,
    ) -> Object:
        """The object to store, computed from ``current`` ({} when missing)."""
        existing_rv = object_resource_version(current) if current else 0
        if not current and not allow_create:
            raise self.not_found(name)
        obj = copy_value(updated(current))
        if not isinstance(obj, dict):
            raise BadRequest("the updated object is not an object")
        if not current:
            return self._create_on_update(ctx, name, obj, opts, request)
        subresource = opts.subresource
        if not opts.apply:
            self._manage_fields(ctx, current, obj, opts.field_manager, subresource)
        if not self._admission.empty:
            self._admission.mutate(
                self._attributes(
                    ctx,
                    Operation.UPDATE,
                    name,
                    obj,
                    current,
                    subresource,
                    opts.dry_run,
                    request.warnings,
                )
            )
        # Also after no admission: an update's body was not de-duplicated before.
        request.warnings.extend(dedup_owner_references(obj, after_admission=True))
        new_rv = object_resource_version(obj)
        if new_rv == 0:
            if not self._strategy.allow_unconditional_update:
                raise Invalid.for_object(
                    self._info.plural,
                    name,
                    [_rv_required()],
                    group=self._definition.group,
                )
            meta(obj)["resourceVersion"] = str(existing_rv)
        elif new_rv != existing_rv:
            raise self.conflict(name, OPTIMISTIC_LOCK_ERROR)
        self._before_update(ctx, obj, current, subresource, request.warnings)
        keep_managed_fields_times(obj, current)
        if self._admission.has_validating:
            self._admission.validate(
                self._attributes(
                    ctx,
                    Operation.UPDATE,
                    name,
                    obj,
                    current,
                    subresource,
                    opts.dry_run,
                    request.warnings,
                )
            )
        if self._strategy.should_delete_during_update(obj, current):
            raise _EmptiedFinalizers(obj)
        return obj

    def _create_on_update(
        self,
        ctx: RequestContext,
        name: str,
        obj: Object,
        opts: UpdateOptions,
        request: _Request,
    ) -> Object:
        meta(obj).pop("resourceVersion", None)
        if not name_of(obj):
            meta(obj)["name"] = name
        self._admit_create(
            ctx, obj, opts.field_manager, "", opts.dry_run, request, track_fields=not opts.apply
        )
        self._before_create(ctx, obj, "", opts.dry_run, request)
        request.created = True
        return obj

    def _before_update(
        self,
        ctx: RequestContext,
        obj: Object,
        old: Object,
        subresource: str,
        warnings: builtins.list[str],
    ) -> None:
        """Kubernetes' rest.BeforeUpdate."""
        ensure_namespace(obj, ctx.namespace if self._info.namespaced else "")
        m, old_meta = meta(obj), read_meta(old)
        if "generation" in old_meta:
            m["generation"] = old_meta["generation"]
        else:
            m.pop("generation", None)
        self._strategy.prepare_for_update(ctx, obj, old, subresource)
        m = meta(obj)
        if not m.get("uid") and old_meta.get("uid"):
            m["uid"] = old_meta["uid"]
        if old_meta.get("creationTimestamp"):
            m["creationTimestamp"] = old_meta["creationTimestamp"]
        if old_meta.get("deletionTimestamp"):
            m["deletionTimestamp"] = old_meta["deletionTimestamp"]
        if old_meta.get("deletionGracePeriodSeconds") is not None and (
            m.get("deletionGracePeriodSeconds") is None
        ):
            m["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
        token = update_warnings.set(warnings)
        try:
            causes = self._strategy.validate_update(ctx, obj, old, subresource)
        finally:
            update_warnings.reset(token)
        if causes:
            raise self._invalid(obj, causes)

    def _delete_emptied(self, key: str, name: str, opts: UpdateOptions) -> None:
        try:
            self._storage.delete(key, preconditions=opts.preconditions)
        except NotFound:
            return
        except KStoreError as exc:
            raise self.interpret_error(exc, name) from None

    async def _delete_emptied_async(self, key: str, name: str, opts: UpdateOptions) -> None:
        try:
            await self._storage_aio().delete(key, preconditions=opts.preconditions)
        except NotFound:
            return
        except KStoreError as exc:
            raise self.interpret_error(exc, name) from None

    # -- delete (kstore.registry.deletion) ---------------------------------------------------

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult:
        return self._deleter.delete(ctx, name, opts)

    def delete_collection(
        self, ctx: RequestContext, list_opts: ListOptions, opts: DeleteOptions
    ) -> Sequence[Object]:
        return self._deleter.delete_collection(ctx, list_opts, opts)

    def admit_delete(self, ctx: RequestContext, name: str, existing: Object, dry_run: bool) -> None:
        """Delete admission: mutating then validating hooks, ``old_object`` a copy of the
        stored object."""
        warnings: builtins.list[str] = []
        attributes = self._attributes(
            ctx, Operation.DELETE, name, None, copy_value(existing), "", dry_run, warnings
        )
        self._admission.mutate(attributes)
        self._admission.validate(attributes)


def new_uid() -> str:
    """A random (version 4) UUID as ``str(uuid.uuid4())`` writes it, without building a
    ``UUID`` object (a third of the cost)."""
    raw = bytearray(random_bytes(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _rv_required() -> Cause:
    return invalid(
        Path("metadata", "resourceVersion"), JSONValue(0), "must be specified for an update"
    )
