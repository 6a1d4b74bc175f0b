"""Namespace lifecycle: system namespaces, admission of namespaced content, and deletion.

- :data:`SYSTEM_NAMESPACES` exist once the registry starts (``default`` as kube-apiserver's
  bootstrap controller creates it; ``kube-system``, ``kube-public``, ``kube-node-lease`` as its
  system-namespaces controller does); :data:`IMMORTAL_NAMESPACES` cannot be deleted (403).
- :class:`NamespaceLifecycle` is Kubernetes' NamespaceLifecycle admission for creates of
  namespaced objects: 404 ``namespaces "x" not found`` when the namespace is missing, 403
  ``unable to create new content in namespace x because it is being terminated`` (with the
  ``NamespaceTerminating`` cause) when it is being deleted. It reads the namespace from the
  (possibly cached) store and falls back to a linearizable read when it is missing or was
  deleted here in the last 30 s, as Kubernetes' live-lookup cache does.
- :class:`NamespaceStore` deletes as Kubernetes' namespace storage: the first delete marks the
  namespace (``deletionTimestamp``, phase ``Terminating``, garbage-collection finalizers) and
  keeps it; it is removed once ``spec.finalizers`` (``kubernetes``) and ``metadata.finalizers``
  are empty.
- :class:`NamespaceFinalizer` is the namespace controller: one background thread that, for
  each terminating namespace, deletes its content in every namespaced resource, force-deletes
  objects whose grace period has run out (there is no kubelet to do it), and once nothing is
  left removes the ``kubernetes`` finalizer (and the garbage-collection ones, no dependents
  being left), which deletes the namespace. Work is one namespace at a time from a
  de-duplicated queue, retried with capped back-off while content remains (finalizers of
  other controllers), and rescanned periodically so namespaces marked by another process or
  before a restart are finished too.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Final

from kstore.api.gvk import Object
from kstore.cache.cacher import Cacher
from kstore.cache.watch_cache import Entry
from kstore.errors import Cause, Forbidden, KStoreError, NotFound
from kstore.registry.graceful import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    format_time,
    now,
    parse_time,
)
from kstore.registry.interface import (
    CreateOptions,
    DeleteOptions,
    DeleteResult,
    RequestContext,
    UpdateOptions,
)
from kstore.registry.passthrough import Raised, guarded
from kstore.registry.store import GenericStore
from kstore.registry.strategies.base import STATUS, copy_value, meta, read_meta
from kstore.registry.strategies.core import FINALIZE, KUBERNETES_FINALIZER
from kstore.storage.interface import GetOptions, ListOptions

__all__ = [
    "IMMORTAL_NAMESPACES",
    "SYSTEM_NAMESPACES",
    "NamespaceFinalizer",
    "NamespaceLifecycle",
    "NamespaceStore",
    "ensure_system_namespaces",
]

_log = logging.getLogger(__name__)

SYSTEM_NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")
IMMORTAL_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public"})
_TERMINATING: Final = "Terminating"
#: How long a namespace deleted here is always read live (Kubernetes' forceLiveLookupTTL).
_LIVE_LOOKUP_SECONDS: Final = 30.0
#: The conditions the namespace controller keeps, with their reason and message when fine.
_CONDITIONS: Final = {
    "NamespaceDeletionDiscoveryFailure": (
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    "NamespaceDeletionGroupVersionParsingFailure": (
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    "NamespaceDeletionContentFailure": (
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentRemoved", "All content successfully removed"),
}
#: How the namespace controller deletes content (Kubernetes' namespaced resources deleter).
_CONTENT_DELETE: Final = DeleteOptions(propagation_policy="Background")


_CLUSTER: Final = RequestContext()
_ANY_REVISION: Final = GetOptions(resource_version="0", ignore_not_found=True)
_LATEST: Final = GetOptions(ignore_not_found=True)


def _forbidden(resource: str, name: str, reason: str) -> Forbidden:
    """Kubernetes' NewForbidden wording: ``<resource> "<name>" is forbidden: <reason>``."""
    plural, _, group = resource.partition(".")
    subject = f'{resource} "{name}"' if name else resource
    return Forbidden(f"{subject} is forbidden: {reason}", name=name, kind=plural, group=group)


class NamespaceLifecycle:
    """Admission of new namespaced content (see the module docstring). Thread-safe."""

    def __init__(self, namespaces: GenericStore, *, clock: Callable[[], float] = time.monotonic):
        self._namespaces = namespaces
        self._clock = clock
        self._lock = threading.Lock()
        self._recently_deleted: dict[str, float] = {}
        # Each namespace's phase per cached version: read on every namespaced create.
        self._phases: dict[str, tuple[Entry, tuple[object]]] = {}

    def deleted(self, namespace: str) -> None:
        """Note that ``namespace`` was just marked for deletion (read it live for a while)."""
        with self._lock:
            self._recently_deleted[namespace] = self._clock() + _LIVE_LOOKUP_SECONDS

    def _must_read_live(self, namespace: str) -> bool:
        with self._lock:
            deadline = self._recently_deleted.get(namespace)
            if deadline is None:
                return False
            if deadline < self._clock():
                del self._recently_deleted[namespace]
                return False
            return True

    def _read(self, namespace: str) -> Object:
        storage = self._namespaces.storage
        key = self._namespaces.key(_CLUSTER, namespace)
        if not self._recently_deleted or not self._must_read_live(namespace):
            # Any revision will do: served from the watch cache when there is one.
            found = storage.get(key, _ANY_REVISION)
            if found:
                return found
        found = storage.get(key, _LATEST)
        if not found:
            raise self._namespaces.not_found(namespace)
        return found

    def _phase(self, namespace: str) -> object:
        storage = self._namespaces.storage
        if isinstance(storage, Cacher) and (
            not self._recently_deleted or not self._must_read_live(namespace)
        ):
            key = self._namespaces.key(_CLUSTER, namespace)
            known = storage.cached_view(key, _phase_of, self._phases)
            if known is not None:
                return known[0]
        return _phase_of(self._read(namespace))[0]

    def check(self, namespace: str, name: str, resource: str) -> None:
        """Raise 404 / 403 unless ``namespace`` accepts a new ``resource`` named ``name``."""
        if self._phase(namespace) != _TERMINATING:
            return
        error = _forbidden(
            resource,
            name,
            f"unable to create new content in namespace {namespace} because it is being terminated",
        )
        error.causes = (
            Cause(
                "NamespaceTerminating",
                f"namespace {namespace} is being terminated",
                "metadata.namespace",
            ),
        )
        raise error


def _phase_of(namespace: Object) -> tuple[object]:
    status = namespace.get("status")
    return (status.get("phase") if isinstance(status, dict) else None,)


def _gc_finalizer_wanted(opts: DeleteOptions, present: bool, finalizer: str) -> bool:
    """Kubernetes' shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer."""
    orphan = finalizer == ORPHAN_FINALIZER
    if opts.orphan_dependents is not None:
        return opts.orphan_dependents if orphan else not opts.orphan_dependents
    if opts.propagation_policy is not None:
        return opts.propagation_policy == ("Orphan" if orphan else "Foreground")
    return present


class NamespaceStore(GenericStore):
    """The namespaces resource: deletion marks first, removes when finalized."""

    lifecycle: NamespaceLifecycle | None = None
    on_marked: Callable[[str], None] | None = None

    def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> DeleteResult:
        ns = self.get(ctx, name)
        m = read_meta(ns)
        if opts.preconditions is not None:
            self.check_storage_preconditions(ns, opts.preconditions)
        if name in IMMORTAL_NAMESPACES:
            raise _forbidden(self.qualified_resource, name, "this namespace may not be deleted")
        if not m.get("deletionTimestamp"):
            marked = self._mark(ctx, name, opts)
            if not opts.dry_run:
                if self.lifecycle is not None:
                    self.lifecycle.deleted(name)
                if self.on_marked is not None:
                    self.on_marked(name)
            return DeleteResult(object=marked, deleted=False)
        spec = ns.get("spec")
        if isinstance(spec, dict) and spec.get("finalizers"):
            return DeleteResult(object=ns, deleted=False)
        return super().delete(ctx, name, opts)

    def _mark(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> Object:
        @guarded
        def mark(existing: Object) -> Object:
            self.admit_delete(ctx, name, existing, opts.dry_run)
            obj = copy_value(existing)
            m = meta(obj)
            if not m.get("deletionTimestamp"):
                m["deletionTimestamp"] = format_time(now())
            status = obj.get("status")
            if not isinstance(status, dict):
                status = {}
                obj["status"] = status
            status["phase"] = _TERMINATING
            current = [f for f in m.get("finalizers") or [] if isinstance(f, str)]
            wanted = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
            for finalizer in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
                if _gc_finalizer_wanted(opts, finalizer in current, finalizer):
                    wanted.append(finalizer)
            if set(wanted) != set(current):
                m["finalizers"] = wanted
            return obj

        key = self.key(ctx, name)
        storage_preconditions = opts.preconditions
        try:
            if opts.dry_run:
                return mark(self.storage.get(key))
            return self.storage.guaranteed_update(key, mark, preconditions=storage_preconditions)
        except Raised as raised:
            raise raised.error from None
        except KStoreError as exc:
            raise self.interpret_error(exc, name) from None


def ensure_system_namespaces(namespaces: GenericStore) -> None:
    """Create the system namespaces that do not exist yet."""
    ctx = RequestContext()
    for name in SYSTEM_NAMESPACES:
        try:
            namespaces.get(ctx, name)
            continue
        except NotFound:
            pass
        obj = {
            "apiVersion": namespaces.definition.hub_api_version,
            "kind": namespaces.definition.kind,
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        }
        try:
            namespaces.create(ctx, obj, CreateOptions())
        except KStoreError as exc:
            if exc.code != 409:
                raise


class NamespaceFinalizer:
    """The namespace controller's deletion loop (see the module docstring).

    ``content`` gives the stores of every namespaced resource. ``retry_seconds`` is the first
    delay before a namespace with content left is looked at again (doubling up to
    ``max_retry_seconds``); ``rescan_seconds`` how often every namespace is checked for a
    deletion this process did not see. ``leads``, when given, says whether this process is
    the one (of several sharing a store) that finishes namespaces: the others leave the work
    to it (which finds their deletions by its rescans) and take over if it goes away.
    """

    def __init__(
        self,
        namespaces: NamespaceStore,
        content: Callable[[], Sequence[GenericStore]],
        *,
        retry_seconds: float = 0.5,
        max_retry_seconds: float = 10.0,
        rescan_seconds: float = 30.0,
        leads: Callable[[], bool] | None = None,
    ) -> None:
        self._namespaces = namespaces
        self._leads = leads
        self._content = content
        self._retry = retry_seconds
        self._max_retry = max_retry_seconds
        self._rescan = rescan_seconds
        self._cond = threading.Condition()
        # name -> (monotonic time it is due, current back-off)
        self._due: dict[str, tuple[float, float]] = {}
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, name="kstore-namespace-finalizer", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def enqueue(self, name: str) -> None:
        with self._cond:
            if name not in self._due:
                self._due[name] = (time.monotonic(), self._retry)
                self._cond.notify_all()

    def idle(self) -> bool:
        """Whether no namespace is waiting to be finished."""
        with self._cond:
            return not self._due

    def _run(self) -> None:
        next_scan = time.monotonic()
        while True:
            with self._cond:
                if self._stopping:
                    return
                clock = time.monotonic()
                ready = [n for n, (due, _) in self._due.items() if due <= clock]
                if not ready and clock < next_scan:
                    wake = min([next_scan, *(due for due, _ in self._due.values())])
                    self._cond.wait(max(0.0, wake - clock))
                    continue
            if self._leads is not None and not self._leads():
                # Another process finishes namespaces; look again later, in case it is gone.
                with self._cond:
                    self._due.clear()
                next_scan = time.monotonic() + self._rescan
                continue
            if not ready:
                self._scan()
                next_scan = time.monotonic() + self._rescan
                continue
            for name in ready:
                self._process(name)

    def _scan(self) -> None:
        try:
            listed = self._namespaces.list(RequestContext(), ListOptions())
        except KStoreError as exc:
            _log.warning("namespace rescan failed: %s", exc)
            return
        for ns in listed.items:
            if read_meta(ns).get("deletionTimestamp"):
                self.enqueue(str(read_meta(ns).get("name") or ""))

    def _process(self, name: str) -> None:
        try:
            finished = self._finish(name)
        except Exception:
            _log.exception("namespace %s: deleting its content failed", name)
            finished = False
        with self._cond:
            if finished:
                self._due.pop(name, None)
                return
            _, backoff = self._due.get(name, (0.0, self._retry))
            self._due[name] = (time.monotonic() + backoff, min(backoff * 2, self._max_retry))

    def _finish(self, name: str) -> bool:
        """One pass over ``name``; True when there is nothing more to do."""
        ctx = RequestContext()
        try:
            ns = self._namespaces.get(ctx, name)
        except NotFound:
            return True
        if not read_meta(ns).get("deletionTimestamp"):
            return True
        inside = RequestContext(namespace=name)
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for store in self._content():
            if self._stopping:
                return False
            store.delete_collection(inside, ListOptions(), _CONTENT_DELETE)
            for obj in store.list(inside, ListOptions()).items:
                resource = f"{store.info.plural}.{store.definition.group}"
                remaining[resource] = remaining.get(resource, 0) + 1
                for finalizer in read_meta(obj).get("finalizers") or []:
                    finalizers[str(finalizer)] = finalizers.get(str(finalizer), 0) + 1
                self._force_expired(store, inside, obj)
        self._report(name, remaining, finalizers)
        if remaining:
            return False
        self._finalize(name)
        return True

    def _report(self, name: str, remaining: dict[str, int], finalizers: dict[str, int]) -> None:
        """Kubernetes' namespace deletion conditions on the namespace's status."""
        failing: dict[str, tuple[str, str]] = {}
        if remaining:
            parts = sorted(f"{r} has {n} resource instances" for r, n in remaining.items())
            failing["NamespaceContentRemaining"] = (
                "SomeResourcesRemain",
                f"Some resources are remaining: {', '.join(parts)}",
            )
        if finalizers:
            parts = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items())
            failing["NamespaceFinalizersRemaining"] = (
                "SomeFinalizerRemain",
                f"Some finalizers are remaining: {', '.join(parts)}",
            )

        def with_conditions(current: Object) -> Object:
            obj = copy_value(current)
            status = obj.get("status")
            if not isinstance(status, dict):
                status = obj["status"] = {}
            conditions = status.get("conditions")
            if not isinstance(conditions, list):
                conditions = status["conditions"] = []
            for kind, (ok_reason, ok_message) in _CONDITIONS.items():
                reason, message = failing.get(kind, (ok_reason, ok_message))
                state = "True" if kind in failing else "False"
                old = next(
                    (c for c in conditions if isinstance(c, dict) and c.get("type") == kind), None
                )
                if old is None:
                    conditions.append(
                        {
                            "type": kind,
                            "status": state,
                            "lastTransitionTime": format_time(now()),
                            "reason": reason,
                            "message": message,
                        }
                    )
                    continue
                if old.get("status") != state:
                    old["lastTransitionTime"] = format_time(now())
                old.update(status=state, reason=reason, message=message)
            return obj

        with contextlib.suppress(NotFound):
            self._namespaces.update(
                RequestContext(), name, with_conditions, UpdateOptions(subresource=STATUS)
            )

    @staticmethod
    def _force_expired(store: GenericStore, ctx: RequestContext, obj: Object) -> None:
        m = read_meta(obj)
        deadline = parse_time(m.get("deletionTimestamp"))
        if deadline is None or not m.get("deletionGracePeriodSeconds") or deadline > now():
            return
        with contextlib.suppress(NotFound):
            store.delete(ctx, str(m.get("name") or ""), DeleteOptions(grace_period_seconds=0))

    def _finalize(self, name: str) -> None:
        ctx = RequestContext()

        def without_kubernetes(current: Object) -> Object:
            obj = copy_value(current)
            spec = obj.get("spec")
            if isinstance(spec, dict) and isinstance(spec.get("finalizers"), list):
                kept = [f for f in spec["finalizers"] if f != KUBERNETES_FINALIZER]
                spec["finalizers"] = kept
            return obj

        def without_gc(current: Object) -> Object:
            obj = copy_value(current)
            m = meta(obj)
            finalizers = m.get("finalizers")
            if isinstance(finalizers, list):
                gc = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)
                kept = [f for f in finalizers if f not in gc]
                if kept:
                    m["finalizers"] = kept
                else:
                    m.pop("finalizers", None)
            return obj

        try:
            self._namespaces.update(ctx, name, without_gc, UpdateOptions())
            finalize = UpdateOptions(subresource=FINALIZE)
            self._namespaces.update(ctx, name, without_kubernetes, finalize)
        except NotFound:
            return
