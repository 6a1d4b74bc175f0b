"""CustomResourceDefinitions served live: names, conditions, the Scheme, and cleanup on delete.

One thread per registry watches the stored CRDs and, for every change, does what
apiextensions-apiserver's controllers and handler do together:

1. **names and conditions** (:mod:`kstore.controllers.crd_names`): grant the requested names
   that nobody else in the group holds, set ``NamesAccepted`` and ``Established``, written
   through the ``status`` subresource;
2. **the Scheme**: every CRD that is ``Established`` is turned into a kind
   (:func:`kstore.api.custom_kinds.kind_definition_for`) and the registry is handed the built-in
   Scheme plus those kinds (:meth:`Registry.apply_scheme`), which also rebuilds the server's
   routes, discovery and OpenAPI through its scheme listeners;
3. **cleanup**: a CRD being deleted with the ``customresourcecleanup.apiextensions.k8s.io``
   finalizer is marked ``Terminating``, its objects are deleted, and then the finalizer goes
   (which completes the CRD's deletion).

Why every server agrees (several ``kstore serve`` on one etcd): each runs this loop over the
same stored CRDs, in the order of the store's watch, so each derives the same Scheme from the
same CRD states. The status writes are computed from the object being replaced (the store's
update retries them on a conflict with the fresh object), and they are idempotent: a server
that finds the status already as it would write it writes nothing, so two servers settle after
at most one redundant write each. A watch that expires (410) is answered by listing again.

Events that arrive together are taken together: the Scheme is rebuilt once per batch, so
installing hundreds of CRDs at once does not rebuild it hundreds of times.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

from kstore.api.custom_kinds import (
    CLEANUP_FINALIZER,
    CRD_GROUP,
    CRD_RESOURCE,
    ESTABLISHED,
    TERMINATING,
    condition_true,
    kind_definition_for,
    set_condition,
)
from kstore.api.gvk import GroupVersion, Object
from kstore.api.scheme import KindDefinition, Scheme
from kstore.controllers.crd_names import NameClaims, accepted_names
from kstore.errors import Conflict, Expired, KStoreError, NotFound
from kstore.registry.interface import (
    DeleteOptions,
    Registry,
    RequestContext,
    ResourceStore,
    UpdateOptions,
)
from kstore.storage.interface import EventType, ListOptions

__all__ = ["CLEANUP_FINALIZER", "CustomResourceDefinitionController"]

_log = logging.getLogger("kstore.controllers.crd")

_MANAGER: Final = "kstore-apiextensions-controller"
_CONTEXT: Final = RequestContext(request_version=GroupVersion(CRD_GROUP, "v1"))
_DELETION_IN_PROGRESS: Final = {
    "type": TERMINATING,
    "status": "True",
    "reason": "InstanceDeletionInProgress",
    "message": "CustomResource deletion is in progress",
}
_DELETION_COMPLETED: Final = {
    "type": TERMINATING,
    "status": "False",
    "reason": "InstanceDeletionCompleted",
    "message": "removed all instances",
}
#: How often a CRD whose cleanup waits (on its objects' own finalizers) is looked at again.
_RETRY_SECONDS: Final = 1.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _name(obj: Object) -> str:
    return str(_map(obj.get("metadata")).get("name") or "")


def _definition_key(crd: Object) -> tuple[Any, ...]:
    """What a CRD's kind is derived from: its spec (by generation), its accepted names, and
    whether it is terminating (creates are refused then)."""
    meta = _map(crd.get("metadata"))
    accepted = repr(_map(crd.get("status")).get("acceptedNames"))
    return (meta.get("uid"), meta.get("generation"), accepted, condition_true(crd, TERMINATING))


class CustomResourceDefinitionController:
    """Keeps the registry serving what its stored CRDs define (see the module docstring)."""

    def __init__(
        self,
        registry: Registry,
        *,
        definition_for: Callable[[Object], KindDefinition | None] = kind_definition_for,
    ) -> None:
        self._registry = registry
        self._base: Scheme = registry.scheme
        self._definition_for = definition_for
        self._crds: dict[str, Object] = {}
        self._definitions: dict[str, tuple[tuple[Any, ...], KindDefinition | None]] = {}
        self._served: dict[str, KindDefinition] = {}
        self._cleanups: set[str] = set()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._resource_version = ""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """List the CRDs and serve what they define (before returning), then follow them."""
        self._relist()
        self._thread = threading.Thread(target=self._run, name="crd-controller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)

    # -- the loop ----------------------------------------------------------------------------

    def _store(self) -> ResourceStore:
        return self._registry.store(CRD_GROUP, CRD_RESOURCE)

    def _relist(self) -> None:
        listing = self._store().list(_CONTEXT, ListOptions())
        self._crds = {_name(crd): crd for crd in listing.items}
        self._resource_version = str(listing.resource_version)
        for name in sorted(self._crds):
            self._reconcile(name)
        self._sync_scheme()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._follow()
            except Expired:
                self._safely(self._relist)
            except Exception:
                _log.exception("watching CustomResourceDefinitions failed; listing again")
                self._stopping.wait(_RETRY_SECONDS)
                self._safely(self._relist)

    def _follow(self) -> None:
        opts = ListOptions(resource_version=self._resource_version, allow_bookmarks=True)
        watcher = self._store().watch(_CONTEXT, opts)
        try:
            while not self._stopping.is_set():
                event = watcher.next(timeout=_RETRY_SECONDS)
                if event is None:
                    if watcher.stopped:
                        return
                    self._retry_cleanups()
                    continue
                changed: set[str] = set()
                while event is not None:
                    changed |= self._take(event)
                    event = watcher.next(timeout=0) if not watcher.stopped else None
                for name in sorted(changed):
                    self._safely(partial(self._reconcile, name))
                self._safely(self._sync_scheme)
        finally:
            watcher.stop()

    def _take(self, event: Any) -> set[str]:
        """Record one watch event; the names of the CRDs to reconcile."""
        if event.type is EventType.ERROR:
            raise Expired("the CustomResourceDefinition watch ended with an error")
        rv = _map(_map(event.object).get("metadata")).get("resourceVersion")
        if rv:
            self._resource_version = str(rv)
        if event.type is EventType.BOOKMARK:
            return set()
        name = _name(event.object)
        if event.type is EventType.DELETED:
            gone = self._crds.pop(name, None)
            self._cleanups.discard(name)
            group = _map((gone or event.object).get("spec")).get("group")
            # The names it held are free: the others of its group may take theirs now.
            return {n for n, c in self._crds.items() if _map(c.get("spec")).get("group") == group}
        self._crds[name] = event.object
        return {name}

    def _safely(self, step: Callable[[], None]) -> None:
        try:
            step()
        except Exception:
            _log.exception("CustomResourceDefinition controller step failed")

    # -- names, conditions, cleanup -------------------------------------------------------------

    def _builtin_names(self, group: str) -> list[tuple[str, ...]]:
        return [
            (
                r.info.plural,
                r.info.singular,
                r.definition.kind,
                r.definition.list_kind or f"{r.definition.kind}List",
                *r.info.short_names,
            )
            for r in self._base.resources()
            if r.group_version.group == group
        ]

    def _reconcile(self, name: str) -> None:
        crd = self._crds.get(name)
        if crd is None:
            return
        if _map(crd.get("metadata")).get("deletionTimestamp"):
            self._clean_up(name, crd)
            return
        group = str(_map(crd.get("spec")).get("group") or "")
        claims = NameClaims.of(group, self._crds.values(), self._builtin_names(group))
        self._write_status(name, claims)

    def _write_status(self, name: str, claims: NameClaims) -> None:
        def with_status(current: Object) -> Object:
            granted, condition = accepted_names(current, claims)
            status = dict(_map(current.get("status")))
            now = _now()
            changed = status.get("acceptedNames") != granted
            status["acceptedNames"] = granted
            changed |= set_condition(status, condition, now)
            if condition["status"] == "True" and not condition_true(current, ESTABLISHED):
                established = {
                    "type": ESTABLISHED,
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                }
                changed |= set_condition(status, established, now)
            elif not any(c.get("type") == ESTABLISHED for c in status.get("conditions") or []):
                not_yet = {
                    "type": ESTABLISHED,
                    "status": "False",
                    "reason": "NotAccepted",
                    "message": "not all names are accepted",
                }
                changed |= set_condition(status, not_yet, now)
            if not changed:
                raise _Unchanged
            return {**current, "status": status}

        self._update(name, with_status, subresource="status")

    def _update(
        self, name: str, updated: Callable[[Object], Object], *, subresource: str = ""
    ) -> None:
        opts = UpdateOptions(field_manager=_MANAGER, subresource=subresource)
        try:
            result = self._store().update(_CONTEXT, name, updated, opts)
        except (_Unchanged, NotFound):
            return
        except Conflict:
            return  # changed meanwhile: its event brings it back here
        self._crds[name] = result.object

    def _set_condition(self, name: str, condition: dict[str, str]) -> None:
        """Write ``condition`` into the CRD's status (nothing when it is there already)."""

        def with_condition(current: Object) -> Object:
            status = dict(_map(current.get("status")))
            if not set_condition(status, condition, _now()):
                raise _Unchanged
            return {**current, "status": status}

        self._update(name, with_condition, subresource="status")

    def _clean_up(self, name: str, crd: Object) -> None:
        finalizers = _map(crd.get("metadata")).get("finalizers") or []
        if CLEANUP_FINALIZER not in finalizers:
            return
        self._set_condition(name, _DELETION_IN_PROGRESS)
        if not self._delete_objects(crd):
            self._cleanups.add(name)
            return
        self._cleanups.discard(name)
        self._set_condition(name, _DELETION_COMPLETED)

        def without_finalizer(current: Object) -> Object:
            meta = dict(_map(current.get("metadata")))
            kept = [f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER]
            if len(kept) == len(meta.get("finalizers") or []):
                raise _Unchanged
            meta["finalizers"] = kept
            return {**current, "metadata": meta}

        self._update(name, without_finalizer)

    def _delete_objects(self, crd: Object) -> bool:
        """Delete every object of the CRD's resource; whether none is left."""
        accepted = _map(_map(crd.get("status")).get("acceptedNames"))
        group = str(_map(crd.get("spec")).get("group") or "")
        plural = str(accepted.get("plural") or "")
        if not plural:
            return True
        try:
            store = self._registry.store(group, plural)
        except NotFound:
            return True
        items = store.list(RequestContext(), ListOptions()).items
        for item in items:
            meta = _map(item.get("metadata"))
            ctx = RequestContext(namespace=str(meta.get("namespace") or ""))
            try:
                store.delete(ctx, str(meta.get("name")), DeleteOptions())
            except NotFound:
                continue
            except KStoreError:
                _log.warning("deleting %s of a deleted CRD failed", meta.get("name"), exc_info=True)
        return not store.list(RequestContext(), ListOptions(limit=1)).items

    def _retry_cleanups(self) -> None:
        for name in sorted(self._cleanups):
            self._safely(partial(self._reconcile, name))

    # -- the Scheme --------------------------------------------------------------------------

    def _sync_scheme(self) -> None:
        served: dict[str, KindDefinition] = {}
        for name, crd in self._crds.items():
            if not condition_true(crd, ESTABLISHED):
                continue
            key = _definition_key(crd)
            cached = self._definitions.get(name)
            if cached is None or cached[0] != key:
                cached = (key, self._definition_for(crd))
                self._definitions[name] = cached
            if cached[1] is not None:
                served[name] = cached[1]
        for name in set(self._definitions) - set(self._crds):
            del self._definitions[name]
        if served.keys() == self._served.keys() and all(
            served[n] is self._served[n] for n in served
        ):
            return
        started = time.perf_counter()
        self._registry.apply_scheme(self._base.with_definitions(add=served.values()))
        self._served = served
        _log.info(
            "serving %d custom resource kinds (scheme applied in %.1f ms)",
            len(served),
            (time.perf_counter() - started) * 1000,
        )


class _Unchanged(Exception):
    """Raised by an update function to write nothing (the object is already as wanted)."""
