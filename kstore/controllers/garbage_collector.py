"""The ``garbagecollector`` controller: what ``metadata.ownerReferences`` mean, for every kind.

It follows every resource that can be listed, watched and deleted (custom resources too, as
their CRDs are established), except Events (as Kubernetes' collector, which ignores both
Event resources), and keeps an index of owners to dependents by uid. Like Kubernetes', it
keeps only a metadata view of each object (``apiVersion``, ``kind``, ``metadata``: the
watch cache's own decoded metadata, shared, never copied or decoded again), and an object
that names no owner and is not being deleted by it is never queued. Keys are
``<group>/<resource>|<namespace>/<name>``. For each object it is told of:

* **background** cascading: an object none of whose owners exists any more (no object of the
  owner's kind, name and uid) is deleted; one that still has some owner loses the references to
  the owners that are gone. Before deleting, the owner is looked up live, not in the cache.
* **foreground**: an owner being deleted with the ``foregroundDeletion`` finalizer has its
  dependents deleted (those that have dependents of their own in the foreground too); once no
  dependent with ``blockOwnerDeletion`` is left, the finalizer is removed, which completes the
  owner's deletion.
* **orphan**: an owner being deleted with the ``orphan`` finalizer has its references removed
  from its dependents, then the finalizer is removed. Each resource has its own watch, so a
  dependent may reach this controller only after its owner is gone; one that already existed
  then (its resourceVersion at most the revision the owner went at) loses the reference too,
  rather than being deleted for a missing owner. Such owners are remembered for ten minutes.

The registry's delete puts these finalizers on (from ``propagationPolicy``, the deprecated
``orphanDependents``, or the kind's default policy, e.g. batch/v1 Job's ``orphan``); this
controller takes them off again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.scheme import Scheme
from kstore.controllers.base import Controller, Informer, object_key
from kstore.errors import KStoreError, NotFound
from kstore.registry.graceful import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from kstore.registry.interface import DeleteOptions, RequestContext, ResourceStore, UpdateOptions
from kstore.storage.interface import Preconditions
from kstore.storage.versioner import object_resource_version

__all__ = ["GarbageCollector"]

_log = logging.getLogger("kstore.controllers.gc")

_MANAGER: Final = "kstore-garbagecollector-controller"
#: How soon an owner waiting on its dependents (foreground) is looked at again.
_WAIT_SECONDS: Final = 0.2
#: How long an owner's deletion is seen before its dependents are orphaned or its finalizer
#: removed: each resource has its own watch, so a dependent created just before its owner was
#: deleted may reach this controller after the owner's deletion does.
_SETTLE_SECONDS: Final = 0.5
#: How long an owner deleted with the orphan policy is remembered (see the module docstring).
_ORPHANED_MEMORY_SECONDS: Final = 600.0


#: Kubernetes' collector ignores these (its DefaultIgnoredResources): many, short-lived, and
#: never owners.
_IGNORED: Final = frozenset({("", "events"), ("events.k8s.io", "events")})
_GC_FINALIZERS: Final = frozenset({ORPHAN_FINALIZER, FOREGROUND_FINALIZER})


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


#: The metadata fields the collector reads (it writes through the stored object, never these).
_KEPT_METADATA = (
    "name",
    "namespace",
    "uid",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
)


def _metadata_only(obj: Object) -> Object:
    """What the collector keeps of an object: the metadata fields it reads. It follows every
    object of every resource, so it keeps nothing more: the watch cache hands out a new
    decoded object per read, which would otherwise stay whole here. Of a plain object (no
    owners, no finalizers, not being deleted), which is never reconciled itself, it reads only
    the uid its dependents name (the informer's key names the object)."""
    meta = _map(obj.get("metadata"))
    if not (meta.get("ownerReferences") or meta.get("finalizers") or meta.get("deletionTimestamp")):
        return {"metadata": {"uid": meta["uid"]}} if "uid" in meta else {"metadata": {}}
    return {"metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta}}


def _has_work(obj: Object) -> bool:
    """Whether reconciling ``obj`` could do anything: it names owners, or it is being deleted
    with a finalizer of this controller's."""
    meta = _meta(obj)
    if meta.get("ownerReferences"):
        return True
    return bool(meta.get("deletionTimestamp")) and bool(_GC_FINALIZERS & set(_finalizers(obj)))


def _meta(obj: Object) -> dict[str, Any]:
    return _map(obj.get("metadata"))


def _refs(obj: Object) -> list[dict[str, Any]]:
    refs = _meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def _finalizers(obj: Object) -> list[str]:
    value = _meta(obj).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def _with_refs(obj: Object, refs: list[dict[str, Any]]) -> Object:
    """``obj`` with ``refs`` as its owner references (the field dropped when none is left,
    as Kubernetes' encoding omits an empty list)."""
    meta = {k: v for k, v in _meta(obj).items() if k != "ownerReferences"}
    if refs:
        meta["ownerReferences"] = refs
    return {**obj, "metadata": meta}


class _Unchanged(Exception):
    pass


class GarbageCollector(Controller):
    name: ClassVar[str] = "garbagecollector"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._index_lock = threading.Lock()
        #: uid -> key of every object seen, and back.
        self._by_uid: dict[str, str] = {}
        self._uid_of: dict[str, str] = {}
        #: owner uid -> keys of its dependents.
        self._dependents: dict[str, set[str]] = {}
        #: key -> the owner uids it names (to keep ``_dependents`` right on changes).
        self._owners: dict[str, tuple[str, ...]] = {}
        self._kinds: dict[tuple[str, str], ResourceStore] = {}
        #: key -> when the deletion of an owner with a GC finalizer was first seen.
        self._deleting_since: dict[str, float] = {}
        #: uid of an owner deleted with the orphan policy -> (when, the revision it went at;
        #: None while its finalizer is being removed).
        self._orphaned: dict[str, tuple[float, int | None]] = {}

    # -- following every resource --------------------------------------------------------------

    def start(self) -> None:
        self._follow(self.registry.scheme)
        self.registry.add_scheme_listener(self._scheme_changed)
        super().start()

    def _scheme_changed(self, scheme: Scheme) -> None:
        if not self.stopped:
            self._follow(scheme)

    def _follow(self, scheme: Scheme) -> None:
        """Informers for the resources not yet followed (started at once when running)."""
        del scheme
        for store in self.registry.stores():
            verbs = set(store.info.verbs)
            if not {"list", "watch", "delete"} <= verbs:
                continue
            watched = (store.definition.group, store.info.plural)
            if watched in _IGNORED:
                continue
            self._kinds[(store.definition.group, store.definition.kind)] = store
            if watched in self.informers:
                continue
            informer = Informer(
                store,
                self._handler_for(watched),
                stopping=self._stopping,
                relist_pause_seconds=self.timings.relist_pause_seconds,
                transform=_metadata_only,
                inline=True,
            )
            self.informers[watched] = informer
            if self._threads:  # already running: a kind served since
                informer.start()

    def resync_keys(self) -> Iterable[str]:
        keys: list[str] = []
        for (group, plural), informer in list(self.informers.items()):
            keys.extend(f"{group}/{plural}|{k}" for k in informer.keys())  # noqa: SIM118
        return keys

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        full = f"{watched[0]}/{watched[1]}|{key}"
        # Gone, or with something to do: the object itself (a plain object is not queued).
        out = {full} if obj is None or _has_work(obj) else set()
        with self._index_lock:
            for uid in self._owners.pop(full, ()):
                self._dependents.get(uid, set()).discard(full)
                if uid in self._by_uid:
                    out.add(self._by_uid[uid])  # an owner waiting on its dependents
            uid = "" if obj is None else str(_meta(obj).get("uid") or "")
            known = self._uid_of.get(full)
            if known is not None and known != uid:
                # Gone, or replaced by an object of the same name: its dependents' owner is.
                del self._uid_of[full]
                if self._by_uid.get(known) == full:
                    del self._by_uid[known]
                out |= self._dependents.get(known, set())
            if obj is None:
                return out
            if uid:
                self._by_uid[uid] = full
                self._uid_of[full] = uid
            owners = tuple(str(r.get("uid") or "") for r in _refs(obj))
            if owners:
                self._owners[full] = owners
                for owner in owners:
                    self._dependents.setdefault(owner, set()).add(full)
                    if owner in self._by_uid:
                        out.add(self._by_uid[owner])
                    else:
                        out.add(full)
        return out

    # -- reconciling one object ----------------------------------------------------------------

    def _split(self, key: str) -> tuple[tuple[str, str], str, str]:
        resource, _, object_part = key.partition("|")
        group, _, plural = resource.partition("/")
        namespace, _, name = object_part.rpartition("/")
        return (group, plural), namespace, name

    def reconcile(self, key: str) -> None:
        watched, namespace, name = self._split(key)
        informer = self.informers.get(watched)
        if informer is None:
            return
        obj = informer.get(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            self._deleting_since.pop(key, None)
            return
        store = informer.store
        finalizers = _finalizers(obj)
        if _meta(obj).get("deletionTimestamp") and {ORPHAN_FINALIZER, FOREGROUND_FINALIZER} & set(
            finalizers
        ):
            since = self._deleting_since.setdefault(key, time.monotonic())
            wait = since + _SETTLE_SECONDS - time.monotonic()
            if wait > 0:
                self.queue.add_after(key, wait)
                return
            if ORPHAN_FINALIZER in finalizers:
                self._orphan(key, store, namespace, obj)
                return
            if FOREGROUND_FINALIZER in finalizers:
                self._delete_dependents(key, store, namespace, obj)
                return
        if _refs(obj):
            self._check_owners(store, namespace, obj)

    def _dependents_of(self, obj: Object) -> list[tuple[str, Object]]:
        uid = str(_meta(obj).get("uid") or "")
        with self._index_lock:
            keys = sorted(self._dependents.get(uid, set()))
        out = []
        for key in keys:
            watched, namespace, name = self._split(key)
            informer = self.informers.get(watched)
            dependent = (
                None
                if informer is None
                else informer.get(f"{namespace}/{name}" if namespace else name)
            )
            if dependent is not None and any(r.get("uid") == uid for r in _refs(dependent)):
                out.append((key, dependent))
        return out

    def _orphan(self, key: str, store: ResourceStore, namespace: str, owner: Object) -> None:
        uid = _meta(owner).get("uid")
        for dep_key, _dependent in self._dependents_of(owner):
            watched, dep_namespace, dep_name = self._split(dep_key)

            def without_owner(current: Object) -> Object:
                refs = _refs(current)
                kept = [r for r in refs if r.get("uid") != uid]
                if len(kept) == len(refs):
                    raise _Unchanged
                return _with_refs(current, kept)

            self._update(self.informers[watched].store, dep_namespace, dep_name, without_owner)
        # Remembered before the owner can go: a dependent heard of after that is orphaned too.
        owner_uid = str(uid or "")
        now = time.monotonic()
        with self._index_lock:
            for old_uid, (when, _) in list(self._orphaned.items()):
                if now - when > _ORPHANED_MEMORY_SECONDS:
                    del self._orphaned[old_uid]
            self._orphaned[owner_uid] = (now, None)
        gone_at = self._remove_finalizer(store, namespace, owner, ORPHAN_FINALIZER)
        with self._index_lock:
            # Nothing taken off (another pass did): the owner's deletion is the bound known.
            self._orphaned[owner_uid] = (now, gone_at or object_resource_version(owner))

    def _orphaned_by(
        self, store: ResourceStore, namespace: str, dependent: Object, absent: list[Any]
    ) -> bool:
        """Whether ``dependent`` existed, naming one of the ``absent`` owners, when that owner
        was deleted with the orphan policy (see the module docstring)."""
        with self._index_lock:
            bounds = [self._orphaned.get(str(ref.get("uid"))) for ref in absent]
        known = [found[1] for found in bounds if found is not None]
        if not known:
            return False
        if None in known:
            return True  # its finalizer is being removed right now
        # The collector keeps no resourceVersion (metadata it does not read): asked live, on
        # this rare path only.
        ctx = RequestContext(namespace=namespace)
        try:
            version = object_resource_version(store.get(ctx, str(_meta(dependent).get("name"))))
        except KStoreError:
            return False
        return any(bound is not None and version <= bound for bound in known)

    def _delete_dependents(
        self, key: str, store: ResourceStore, namespace: str, owner: Object
    ) -> None:
        uid = _meta(owner).get("uid")
        blocking = 0
        for dep_key, dependent in self._dependents_of(owner):
            blocks = any(
                r.get("uid") == uid and r.get("blockOwnerDeletion") for r in _refs(dependent)
            )
            blocking += blocks
            if _meta(dependent).get("deletionTimestamp"):
                continue
            watched, dep_namespace, _ = self._split(dep_key)
            has_own = bool(self._dependents.get(str(_meta(dependent).get("uid") or "")))
            policy = "Foreground" if has_own else "Background"
            self._delete(self.informers[watched].store, dep_namespace, dependent, policy)
        if blocking:
            self.queue.add_after(key, _WAIT_SECONDS)
            return
        self._remove_finalizer(store, namespace, owner, FOREGROUND_FINALIZER)

    def _check_owners(self, store: ResourceStore, namespace: str, obj: Object) -> None:
        refs = _refs(obj)
        absent = [r for r in refs if not self._owner_exists(namespace, r)]
        if not absent:
            return
        orphaned = self._orphaned_by(store, namespace, obj, absent)
        if len(absent) == len(refs) and not orphaned:
            if _meta(obj).get("deletionTimestamp"):
                return
            self._delete(store, namespace, obj, "Background")
            return
        gone = {str(r.get("uid")) for r in absent}

        def without_dangling(current: Object) -> Object:
            current_refs = _refs(current)
            kept = [r for r in current_refs if str(r.get("uid")) not in gone]
            if len(kept) == len(current_refs):
                raise _Unchanged
            return _with_refs(current, kept)

        self._update(store, namespace, str(_meta(obj).get("name")), without_dangling)

    def _owner_exists(self, namespace: str, ref: dict[str, Any]) -> bool:
        """Whether the owner ``ref`` names exists (looked up live): same kind, name and uid.
        An owner of a kind not served cannot be told gone, so it counts as there."""
        group = GroupVersion.parse(str(ref.get("apiVersion") or "v1")).group
        store = self._kinds.get((group, str(ref.get("kind") or "")))
        if store is None:
            return True
        ctx = RequestContext(namespace=namespace if store.info.namespaced else "")
        try:
            owner = store.get(ctx, str(ref.get("name") or ""))
        except NotFound:
            return False
        except KStoreError:
            return True  # cannot be looked up (e.g. a bad name): not known to be gone
        return bool(_meta(owner).get("uid") == ref.get("uid"))

    # -- writes --------------------------------------------------------------------------------

    def _delete(self, store: ResourceStore, namespace: str, obj: Object, policy: str) -> None:
        meta = _meta(obj)
        ctx = RequestContext(namespace=namespace)
        opts = DeleteOptions(
            propagation_policy=policy, preconditions=Preconditions(uid=str(meta.get("uid")))
        )
        try:
            store.delete(ctx, str(meta.get("name")), opts)
        except NotFound:
            return

    def _update(self, store: ResourceStore, namespace: str, name: str, fn: Any) -> int | None:
        """Apply ``fn``; the revision written (None when nothing was)."""
        ctx = RequestContext(namespace=namespace)
        try:
            result = store.update(ctx, name, fn, UpdateOptions(field_manager=_MANAGER))
        except (_Unchanged, NotFound):
            return None
        return object_resource_version(result.object) or None

    def _remove_finalizer(
        self, store: ResourceStore, namespace: str, obj: Object, finalizer: str
    ) -> int | None:
        """Take ``finalizer`` off ``obj``; the revision of that write (None when there was
        nothing to take off)."""
        uid = _meta(obj).get("uid")

        def without(current: Object) -> Object:
            meta = _meta(current)
            if meta.get("uid") != uid or finalizer not in _finalizers(current):
                raise _Unchanged
            kept = [f for f in _finalizers(current) if f != finalizer]
            return {**current, "metadata": {**meta, "finalizers": kept}}

        try:
            return self._update(store, namespace, str(_meta(obj).get("name")), without)
        except KStoreError:
            _log.warning("removing %s from %s failed", finalizer, object_key(obj), exc_info=True)
            raise
