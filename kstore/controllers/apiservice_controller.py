"""The ``Available`` condition of APIServices, as kube-aggregator's availability controllers keep
it on a server that can reach no aggregated API server.

kstore proxies nothing: it stores APIServices (:mod:`kstore.api.kinds.apiregistration`) but
never forwards a request to the service one names. So each APIService's condition is what the
aggregator's controllers write when no backend answers, with their reasons and messages:

- a local APIService (no ``spec.service``): ``True``, ``Local``, ``Local APIServices are always
  available`` (the strategy already sets it on create; this loop restores it after a status
  write that changed it, as the aggregator's local controller does);
- the named Service is missing: ``False``, ``ServiceNotFound``,
  ``service/<name> in "<namespace>" is not present``;
- a ``ClusterIP`` Service without the APIService's port: ``False``, ``ServicePortError``,
  ``service/<name> in "<namespace>" is not listening on port <port>``;
- a ``ClusterIP`` Service without EndpointSlices (``kubernetes.io/service-name``; none exist
  while discovery.k8s.io is not served): ``False``, ``EndpointsNotFound``,
  ``cannot find endpointslices for service/<name> in "<namespace>"``; with slices but no ready
  endpoint on the port's name: ``False``, ``MissingEndpoints``,
  ``endpointslices for service/<name> in "<namespace>" have no addresses with port name "<p>"``;
- otherwise the aggregator would GET ``/apis/<group>/<version>`` from the backend; kstore makes
  no such request, so the check fails: ``False``, ``FailedDiscoveryCheck``, ``failing or
  missing response from https://<name>.<namespace>.svc:<port>/apis/<group>/<version>: kstore
  proxies no aggregated APIs`` (the aggregator names the address it resolved and Go's error).

As in ``SetAPIServiceCondition``, ``lastTransitionTime`` changes only when the status does, and
nothing is written when the condition is already as computed.

Discovery: kube-apiserver lists the group version of every APIService in ``/apis`` (and kubectl
then warns "unable to retrieve the complete list of server APIs" for the unavailable ones).
kstore lists only what it serves: a group it cannot answer for would send every discovery
client (kubectl, the Python client's dynamic client, controllers' RESTMappers) to a path that
404s, and kubectl's warning on every command says no more than the condition does. This is a
documented difference (README).

One thread per registry follows the APIServices and Services (and EndpointSlices when served)
through the store's watches and reconciles the APIServices each event touches, plus all of them
every :data:`RESYNC_SECONDS` (the aggregator's resync). Several servers on one etcd each run
it: they derive the same condition from the same objects and write only a change, so they
settle after at most one redundant write each (a conflict means a newer object, whose event
brings the APIService back here).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.api.kinds.apiregistration import AVAILABLE, GROUP, LOCAL_AVAILABLE
from kstore.errors import Conflict, Expired, NotFound
from kstore.registry.interface import Registry, RequestContext, ResourceStore, UpdateOptions
from kstore.storage.interface import EventType, ListOptions, Watcher

__all__ = ["RESYNC_SECONDS", "APIServiceAvailabilityController", "availability"]

_log = logging.getLogger("kstore.controllers.apiservice")

#: The aggregator's resync period of APIServices.
RESYNC_SECONDS: Final = 30.0
#: The field manager of the status writes: kube-aggregator's controllers write through
#: kube-apiserver's loopback client, whose user agent names the manager "kube-apiserver".
_MANAGER: Final = "kube-apiserver"
_CONTEXT: Final = RequestContext(request_version=GroupVersion(GROUP, "v1"))
_SERVICE_NAME_LABEL: Final = "kubernetes.io/service-name"
#: How long one wait on one watch lasts before the others are looked at.
_POLL_SECONDS: Final = 0.2
_DEFAULT_PORT: Final = 443


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _false(reason: str, message: str) -> dict[str, str]:
    return {"type": AVAILABLE, "status": "False", "reason": reason, "message": message}


def _ready_on_port(slices: list[Object], port_name: str) -> bool:
    """``hasAvailableEndpoint``: a slice with a ready (or unknown) endpoint and a port of that
    name with a number."""
    for item in slices:
        endpoints = [_map(e) for e in item.get("endpoints") or []]
        if not any(_map(e.get("conditions")).get("ready") in (None, True) for e in endpoints):
            continue
        for port in item.get("ports") or []:
            port = _map(port)
            if port.get("name") == port_name and port.get("port") is not None:
                return True
    return False


def availability(
    api_service: Object,
    service: Object | None,
    slices: list[Object] | None,
) -> dict[str, str]:
    """The ``Available`` condition (without its time) of ``api_service``, given the Service it
    names (None: missing) and that Service's EndpointSlices (None: none served)."""
    spec = _map(api_service.get("spec"))
    ref = spec.get("service")
    if not isinstance(ref, Mapping):
        return dict(LOCAL_AVAILABLE)
    name, namespace = str(ref.get("name") or ""), str(ref.get("namespace") or "")
    port = ref.get("port") if isinstance(ref.get("port"), int) else _DEFAULT_PORT
    where = f'service/{name} in "{namespace}"'
    if service is None:
        return _false("ServiceNotFound", f"{where} is not present")
    service_spec = _map(service.get("spec"))
    if service_spec.get("type", "ClusterIP") == "ClusterIP":
        ports = [_map(p) for p in service_spec.get("ports") or []]
        matching = [p for p in ports if p.get("port") == port]
        if not matching:
            return _false("ServicePortError", f"{where} is not listening on port {port}")
        port_name = str(matching[0].get("name") or "")
        if not slices:
            return _false("EndpointsNotFound", f"cannot find endpointslices for {where}")
        if not _ready_on_port(slices, port_name):
            return _false(
                "MissingEndpoints",
                f'endpointslices for {where} have no addresses with port name "{port_name}"',
            )
    path = f"/apis/{spec.get('group') or ''}/{spec.get('version') or ''}"
    if api_service.get("metadata", {}).get("name") == "v1.":
        path = f"/api/{spec.get('version') or ''}"
    url = f"https://{name}.{namespace}.svc:{port}{path}"
    return _false(
        "FailedDiscoveryCheck",
        f"failing or missing response from {url}: kstore proxies no aggregated APIs",
    )


class APIServiceAvailabilityController:
    """Keeps every APIService's ``Available`` condition (see the module docstring)."""

    def __init__(self, registry: Registry, *, resync_seconds: float = RESYNC_SECONDS) -> None:
        self._registry = registry
        self._resync_seconds = resync_seconds
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._api_services: dict[str, Object] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Bring every APIService's condition up to date (before returning), then follow."""
        self._resync()
        self._thread = threading.Thread(
            target=self._run, name="apiservice-availability", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)

    # -- the loop ----------------------------------------------------------------------------

    def _store(self, group: str, plural: str) -> ResourceStore | None:
        try:
            return self._registry.store(group, plural)
        except NotFound:
            return None

    def _api_service_store(self) -> ResourceStore:
        store = self._store(GROUP, "apiservices")
        if store is None:
            raise NotFound("apiservices.apiregistration.k8s.io is not served")
        return store

    def _resync(self) -> dict[str, str]:
        """Reconcile every APIService; the current resource version of each followed resource."""
        versions: dict[str, str] = {}
        listing = self._api_service_store().list(_CONTEXT, ListOptions())
        versions["apiservices"] = str(listing.resource_version)
        self._api_services = {str(_map(o.get("metadata")).get("name")): o for o in listing.items}
        for extra in self._followed()[1:]:
            store = self._store(*extra)
            if store is not None:
                ctx = RequestContext()
                versions[extra[1]] = str(store.list(ctx, ListOptions(limit=1)).resource_version)
        for name in sorted(self._api_services):
            self._safely(partial(self._reconcile, name))
        return versions

    def _followed(self) -> list[tuple[str, str]]:
        return [(GROUP, "apiservices"), ("", "services"), ("discovery.k8s.io", "endpointslices")]

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._follow()
            except Exception:
                _log.exception("following APIServices failed; listing again")
                self._stopping.wait(1.0)

    def _follow(self) -> None:
        versions = self._resync()
        watchers: list[tuple[str, Watcher]] = []
        try:
            for group, plural in self._followed():
                store = self._store(group, plural)
                if store is None:
                    continue
                opts = ListOptions(resource_version=versions[plural], allow_bookmarks=True)
                watchers.append((plural, store.watch(RequestContext(), opts)))
            next_resync = time.monotonic() + self._resync_seconds
            while not self._stopping.is_set():
                names: set[str] = set()
                for plural, watcher in watchers:
                    event = watcher.next(timeout=_POLL_SECONDS)
                    while event is not None:
                        names |= self._take(plural, event)
                        event = watcher.next(timeout=0)
                    if watcher.stopped:
                        return
                for name in sorted(names):
                    self._safely(partial(self._reconcile, name))
                if time.monotonic() >= next_resync:
                    return  # the caller lists again: the aggregator's periodic resync
        finally:
            for _, watcher in watchers:
                watcher.stop()

    def _take(self, plural: str, event: Any) -> set[str]:
        """Record one watch event; the names of the APIServices to reconcile."""
        if event.type is EventType.ERROR:
            raise Expired(f"the {plural} watch ended with an error")
        if event.type is EventType.BOOKMARK:
            return set()
        meta = _map(event.object.get("metadata"))
        name = str(meta.get("name") or "")
        if plural == "apiservices":
            if event.type is EventType.DELETED:
                self._api_services.pop(name, None)
                return set()
            self._api_services[name] = event.object
            return {name}
        service = name
        if plural == "endpointslices":
            service = str(_map(meta.get("labels")).get(_SERVICE_NAME_LABEL) or "")
        namespace = str(meta.get("namespace") or "")
        return {
            n
            for n, obj in self._api_services.items()
            if (
                (ref := _map(_map(obj.get("spec")).get("service")))
                and ref.get("namespace") == namespace
                and ref.get("name") == service
            )
        }

    def _safely(self, step: Callable[[], None]) -> None:
        try:
            step()
        except Exception:
            _log.exception("APIService availability step failed")

    # -- one APIService ------------------------------------------------------------------------

    def _backend(self, api_service: Object) -> tuple[Object | None, list[Object] | None]:
        ref = _map(_map(api_service.get("spec")).get("service"))
        if not ref:
            return None, None
        namespace, name = str(ref.get("namespace") or ""), str(ref.get("name") or "")
        services = self._store("", "services")
        if services is None:
            return None, None
        try:
            service = services.get(RequestContext(namespace=namespace), name)
        except NotFound:
            return None, None
        slices_store = self._store("discovery.k8s.io", "endpointslices")
        if slices_store is None:
            return service, None
        listing = slices_store.list(RequestContext(namespace=namespace), ListOptions())
        slices = [
            s
            for s in listing.items
            if _map(_map(s.get("metadata")).get("labels")).get(_SERVICE_NAME_LABEL) == name
        ]
        return service, slices

    def _reconcile(self, name: str) -> None:
        store = self._api_service_store()
        try:
            current = store.get(_CONTEXT, name)
        except NotFound:
            return
        wanted = availability(current, *self._backend(current))

        def with_condition(obj: Object) -> Object:
            status = dict(_map(obj.get("status")))
            conditions = [dict(_map(c)) for c in status.get("conditions") or []]
            existing = next((c for c in conditions if c.get("type") == AVAILABLE), None)
            if existing is None:
                conditions.append({**wanted, "lastTransitionTime": _now()})
            else:
                if all(existing.get(k) == wanted[k] for k in ("status", "reason", "message")):
                    raise _Unchanged
                if existing.get("status") != wanted["status"]:
                    existing["lastTransitionTime"] = _now()
                existing.update(wanted)
            status["conditions"] = conditions
            return {**obj, "status": status}

        opts = UpdateOptions(field_manager=_MANAGER, subresource="status")
        try:
            store.update(_CONTEXT, name, with_condition, opts)
        except (_Unchanged, NotFound, Conflict):
            return


class _Unchanged(Exception):
    """Raised by the update function to write nothing (the condition is already as computed)."""
