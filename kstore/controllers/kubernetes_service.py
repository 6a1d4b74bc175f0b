"""The ``kubernetes`` Service in ``default``, and its Endpoints and EndpointSlice, pointing at
the API servers themselves (kube-apiserver's bootstrap controller and its ``lease`` endpoint
reconciler).

Every server runs this loop (it is not one of the leader's controllers): each server keeps a
Lease of its own in ``kube-system`` (:data:`LEASE_PREFIX` plus a digest of its address, the
address ``ip:port`` as holder), renewed every ``renew_seconds`` and valid for
``lease_seconds``, and removed when the server stops. The Endpoints and the EndpointSlice list
the addresses of the servers whose Lease is live, so several servers on one store write the
same thing and never undo each other's writes.

* The Service: ``ClusterIP`` (the first address of ``--service-cluster-ip-range``), port 443
  named ``https`` to the servers' port, labels ``component: apiserver`` and ``provider:
  kubernetes``. Created when missing; its ports are only put back when the port they name is
  no live server's, so servers listening on different ports (tests on one machine) do not
  fight: the Service's target port decides which servers are listed.
* The Endpoints (labelled ``endpointslice.kubernetes.io/skip-mirror: "true"``) hold one subset
  of those addresses and the port; the EndpointSlice ``kubernetes`` (labelled
  ``kubernetes.io/service-name: kubernetes``) holds one ready endpoint per address.

With ``--endpoint-reconciler-type=none`` only the Service is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller, ControllerTimings
from kstore.errors import AlreadyExists, BadRequest, Conflict, KStoreError, NotFound
from kstore.registry.interface import (
    DeleteOptions,
    Registry,
    RequestContext,
    UpdateOptions,
)
from kstore.storage.interface import ListOptions, Preconditions

__all__ = [
    "EMBEDDED_TARGET_PORT",
    "ENDPOINT_RECONCILER_TYPES",
    "LEASE_PREFIX",
    "SERVICE_NAME",
    "EmbeddedKubernetesService",
    "KubernetesServiceController",
    "advertise_address_for",
    "first_service_ip",
]

_log = logging.getLogger("kstore.controllers.kubernetes_service")

SERVICE_NAME: Final = "kubernetes"
SERVICE_NAMESPACE: Final = "default"
LEASE_NAMESPACE: Final = "kube-system"
#: The servers' Leases are named this plus a digest of ``ip:port``.
LEASE_PREFIX: Final = "kube-apiserver-endpoint-"
#: kube-apiserver's ``--endpoint-reconciler-type`` values.
ENDPOINT_RECONCILER_TYPES: Final = ("lease", "none")
_KEY: Final = SERVICE_NAME
_SERVICE_KEY: Final = f"{SERVICE_NAMESPACE}/{SERVICE_NAME}"
_SERVICES: Final = ("", "services")
_ENDPOINTS: Final = ("", "endpoints")
_SLICES: Final = ("discovery.k8s.io", "endpointslices")
_LEASES: Final = ("coordination.k8s.io", "leases")
_MANAGER: Final = "kube-apiserver"
_SKIP_MIRROR: Final = "endpointslice.kubernetes.io/skip-mirror"
_SERVICE_NAME_LABEL: Final = "kubernetes.io/service-name"
_SERVICE_LABELS: Final = {"component": "apiserver", "provider": "kubernetes"}
#: The target port of a Service an embedded store creates: kube-apiserver's secure port.
EMBEDDED_TARGET_PORT: Final = 6443


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def first_service_ip(service_cluster_ip_range: str) -> str:
    """The ``kubernetes`` Service's cluster IP: the first address of the primary range."""
    primary = service_cluster_ip_range.split(",")[0].strip()
    try:
        network = ipaddress.ip_network(primary, strict=False)
    except ValueError as exc:
        raise BadRequest(f"--service-cluster-ip-range: {exc}") from None
    return str(network.network_address + 1)


def advertise_address_for(bind_address: str, advertise_address: str | None) -> str:
    """``--advertise-address``: as given; else the bind address, or 127.0.0.1 (::1) when the
    server binds every address (no better one is known without asking the network)."""
    address = advertise_address or bind_address
    if address in ("", "0.0.0.0"):
        address = "127.0.0.1"
    elif address == "::":
        address = "::1"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise BadRequest(f"--advertise-address: {address!r} is not an IP address") from None
    if ip.is_unspecified:
        raise BadRequest("--advertise-address: must not be an unspecified address")
    return str(ip)


def _publishable(ip: str) -> bool:
    """Whether Endpoints and EndpointSlices may hold ``ip``: their validation refuses
    loopback, link-local, multicast and unspecified addresses, so a server advertising one
    (the default of a server bound to 127.0.0.1) keeps the Service's port there, not its
    address."""
    address = ipaddress.ip_address(ip)
    return not (
        address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
    )


def _micro_time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True, order=True, slots=True)
class _Endpoint:
    ip: str
    port: int

    @property
    def holder(self) -> str:
        return f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"

    @property
    def lease_name(self) -> str:
        return LEASE_PREFIX + hashlib.sha256(self.holder.encode()).hexdigest()[:16]

    @staticmethod
    def parse(holder: str) -> _Endpoint | None:
        host, sep, port = holder.rpartition(":")
        if not sep or not port.isdigit():
            return None
        return _Endpoint(host.strip("[]"), int(port))


class KubernetesServiceController(Controller):
    name: ClassVar[str] = "kubernetes-service"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_SERVICES, _ENDPOINTS, _SLICES, _LEASES)

    def __init__(
        self,
        registry: Registry,
        *,
        advertise_address: str,
        port: int,
        service_ip: str,
        endpoint_reconciler_type: str = "lease",
        lease_seconds: float = 15.0,
        renew_seconds: float = 10.0,
        timings: ControllerTimings | None = None,
    ) -> None:
        if endpoint_reconciler_type not in ENDPOINT_RECONCILER_TYPES:
            raise BadRequest(
                f"--endpoint-reconciler-type: unknown type {endpoint_reconciler_type!r}"
                f" (known: {', '.join(ENDPOINT_RECONCILER_TYPES)})"
            )
        timings = timings or ControllerTimings()
        # The resync is the Lease's renewal.
        super().__init__(
            registry,
            timings=ControllerTimings(
                resync_seconds=renew_seconds,
                base_backoff_seconds=timings.base_backoff_seconds,
                max_backoff_seconds=min(timings.max_backoff_seconds, renew_seconds),
                relist_pause_seconds=timings.relist_pause_seconds,
            ),
        )
        self.me = _Endpoint(str(ipaddress.ip_address(advertise_address)), port)
        if endpoint_reconciler_type == "lease" and not _publishable(self.me.ip):
            _log.info(
                "the advertise address %s may not be an endpoint: the kubernetes Service's"
                " endpoints do not list this server (give --advertise-address)",
                self.me.ip,
            )
        self.service_ip = service_ip
        self.reconciler_type = endpoint_reconciler_type
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        self._renewed_at = 0.0

    # -- the Controller hooks ------------------------------------------------------------------

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        if watched == _LEASES:
            namespace, _, name = key.partition("/")
            relevant = namespace == LEASE_NAMESPACE and name.startswith(LEASE_PREFIX)
            return (_KEY,) if relevant else ()
        return (_KEY,) if key == _SERVICE_KEY else ()

    def resync_keys(self) -> Iterable[str]:
        return (_KEY,)

    def start(self) -> None:
        super().start()
        self.queue.add(_KEY)

    def stop(self) -> None:
        """Stop, taking this server out of the Endpoints (as kube-apiserver does on a clean
        shutdown): its Lease is deleted and the others' addresses written."""
        super().stop()
        if self.reconciler_type != "lease":
            return
        try:
            self._delete_lease(self.me.lease_name, None)
            leases = (
                self._store(_LEASES)
                .list(self._ctx(LEASE_NAMESPACE, _LEASES[0]), ListOptions())
                .items
            )
            others = [e for e in self._live(leases, time.time()) if e != self.me]
            self._sync_endpoints(others, self._read(_SERVICES, SERVICE_NAMESPACE, SERVICE_NAME))
        except KStoreError as exc:
            _log.info("leaving the kubernetes Endpoints: %s", exc)

    def reconcile(self, key: str) -> None:
        now = time.time()
        if self.reconciler_type == "lease":
            self._renew(now)
        live = self._live(self.informer(*_LEASES).items(), now)
        if self.me not in live and self.reconciler_type == "lease":
            live.append(self.me)
        service = self._ensure_service(live)
        if self.reconciler_type != "lease":
            return
        self._drop_expired(now)
        self._sync_endpoints(live, service)

    # -- the Lease of this server --------------------------------------------------------------

    def _lease_spec(self, now: float) -> dict[str, Any]:
        return {
            "holderIdentity": self.me.holder,
            "leaseDurationSeconds": max(1, round(self.lease_seconds)),
            "renewTime": _micro_time(now),
        }

    def _renew(self, now: float) -> None:
        current = self.informer(*_LEASES).get(f"{LEASE_NAMESPACE}/{self.me.lease_name}")
        if current is not None and now - self._renewed_at < self.renew_seconds / 2:
            return
        ctx = self._ctx(LEASE_NAMESPACE, _LEASES[0])
        spec = self._lease_spec(now)
        if current is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.me.lease_name, "namespace": LEASE_NAMESPACE},
                "spec": spec,
            }
            try:
                self.create(*_LEASES, LEASE_NAMESPACE, body)
            except AlreadyExists:
                pass  # its event is on the way; renewed on the next look
            else:
                self._renewed_at = now
                return

        def renewed(stored: Object) -> Object:
            return {**stored, "spec": {**_map(stored.get("spec")), **spec}}

        try:
            self._store(_LEASES).update(ctx, self.me.lease_name, renewed, self._update_options())
        except NotFound:
            self.queue.add(_KEY)  # deleted meanwhile: created again on the next look
            return
        self._renewed_at = now

    def _live(self, leases: Iterable[Object], now: float) -> list[_Endpoint]:
        """The servers whose Lease has not expired."""
        out: set[_Endpoint] = set()
        for lease in leases:
            meta = _map(lease.get("metadata"))
            if meta.get("namespace") != LEASE_NAMESPACE:
                continue
            if not str(meta.get("name") or "").startswith(LEASE_PREFIX):
                continue
            if self._expired(lease, now):
                continue
            endpoint = _Endpoint.parse(str(_map(lease.get("spec")).get("holderIdentity") or ""))
            if endpoint is not None:
                out.add(endpoint)
        return sorted(out)

    @staticmethod
    def _expired(lease: Object, now: float) -> bool:
        spec = _map(lease.get("spec"))
        renewed = _parse_time(str(spec.get("renewTime") or ""))
        duration = spec.get("leaseDurationSeconds")
        if renewed is None or not isinstance(duration, int):
            return True
        return renewed + duration < now

    def _drop_expired(self, now: float) -> None:
        """Delete the Leases of servers that stopped renewing them (conditionally: a server
        that renews meanwhile keeps its Lease)."""
        for lease in self.informer(*_LEASES).items():
            meta = _map(lease.get("metadata"))
            name = str(meta.get("name") or "")
            if meta.get("namespace") != LEASE_NAMESPACE or not name.startswith(LEASE_PREFIX):
                continue
            if name != self.me.lease_name and self._expired(lease, now):
                version = str(meta.get("resourceVersion") or "")
                self._delete_lease(name, Preconditions(resource_version=version))

    def _delete_lease(self, name: str, preconditions: Preconditions | None) -> None:
        with contextlib.suppress(NotFound, Conflict):
            self._store(_LEASES).delete(
                self._ctx(LEASE_NAMESPACE, _LEASES[0]),
                name,
                DeleteOptions(preconditions=preconditions),
            )

    # -- the Service ----------------------------------------------------------------------------

    def _ports(self, target: int) -> list[dict[str, Any]]:
        return [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": target}]

    @staticmethod
    def _target_port(service: Object | None) -> int | None:
        for port in _map(_map(service).get("spec")).get("ports") or []:
            if isinstance(port, dict) and port.get("name") == "https":
                target = port.get("targetPort")
                return target if isinstance(target, int) else None
        return None

    def _create_service(self) -> Object | None:
        """Create the Service, pointing at this server's port; the stored one when another
        server (or a client) created it first."""
        family = "IPv6" if ":" in self.service_ip else "IPv4"
        body = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": SERVICE_NAME,
                "namespace": SERVICE_NAMESPACE,
                "labels": dict(_SERVICE_LABELS),
            },
            "spec": {
                "type": "ClusterIP",
                "clusterIP": self.service_ip,
                "clusterIPs": [self.service_ip],
                "ipFamilies": [family],
                "ipFamilyPolicy": "SingleStack",
                "ports": self._ports(self.me.port),
                "sessionAffinity": "None",
            },
        }
        try:
            return self.create(*_SERVICES, SERVICE_NAMESPACE, body)
        except AlreadyExists:
            return self._read(_SERVICES, SERVICE_NAMESPACE, SERVICE_NAME)

    def _ensure_service(self, live: Sequence[_Endpoint]) -> Object | None:
        service = self.informer(*_SERVICES).get(_SERVICE_KEY)
        if service is None:
            # The informer may not have seen a create of a moment ago: creating again would be
            # refused for the cluster IP before the name.
            service = self._read(_SERVICES, SERVICE_NAMESPACE, SERVICE_NAME)
        if service is None:
            return self._create_service()
        target = self._target_port(service)
        spec = _map(service.get("spec"))
        ports_kept = target is not None and (
            target == self.me.port or any(e.port == target for e in live)
        )
        if ports_kept and len(spec.get("ports") or []) == 1 and spec.get("type") == "ClusterIP":
            return service
        wanted = self._ports(self.me.port if not ports_kept or target is None else target)

        def reset(stored: Object) -> Object:
            stored_spec = _map(stored.get("spec"))
            return {**stored, "spec": {**stored_spec, "type": "ClusterIP", "ports": wanted}}

        ctx = self._ctx(SERVICE_NAMESPACE)
        stored: Object = (
            self._store(_SERVICES).update(ctx, SERVICE_NAME, reset, self._update_options()).object
        )
        return stored

    # -- the Endpoints and the EndpointSlice ----------------------------------------------------

    def _sync_endpoints(self, live: Sequence[_Endpoint], service: Object | None) -> None:
        port = self._target_port(service) or self.me.port
        primary_v6 = ":" in self.service_ip
        ips = sorted(
            e.ip
            for e in {e for e in live if e.port == port and (":" in e.ip) == primary_v6}
            if _publishable(e.ip)
        )
        endpoint_port = {"name": "https", "port": port, "protocol": "TCP"}
        subsets = [{"addresses": [{"ip": ip} for ip in ips], "ports": [endpoint_port]}]
        self._put(
            _ENDPOINTS,
            {"labels": {_SKIP_MIRROR: "true"}},
            {"subsets": subsets if ips else []},
            "Endpoints",
            "v1",
        )
        self._put(
            _SLICES,
            {"labels": {_SERVICE_NAME_LABEL: SERVICE_NAME}},
            {
                "addressType": "IPv6" if primary_v6 else "IPv4",
                "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in ips],
                "ports": [endpoint_port],
            },
            "EndpointSlice",
            "discovery.k8s.io/v1",
        )

    def _put(
        self,
        resource: tuple[str, str],
        metadata: dict[str, Any],
        fields: dict[str, Any],
        kind: str,
        api_version: str,
    ) -> None:
        """Create or update the object named ``kubernetes`` in ``default`` so that it carries
        ``fields`` and the labels of ``metadata`` (written only when they differ)."""
        current = self.informer(*resource).get(_SERVICE_KEY)
        if current is None:
            body = {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": SERVICE_NAME, "namespace": SERVICE_NAMESPACE, **metadata},
                **fields,
            }
            try:
                self.create(*resource, SERVICE_NAMESPACE, body)
            except AlreadyExists:
                self.queue.add(_KEY)
            return
        labels = _map(metadata.get("labels"))
        if self._matches(current, fields, labels):
            return

        def rewritten(stored: Object) -> Object:
            meta = dict(_map(stored.get("metadata")))
            meta["labels"] = dict(labels)
            return {**stored, "metadata": meta, **fields}

        ctx = self._ctx(SERVICE_NAMESPACE, resource[0])
        self._store(resource).update(ctx, SERVICE_NAME, rewritten, self._update_options())

    @staticmethod
    def _matches(current: Object, fields: dict[str, Any], labels: dict[str, Any]) -> bool:
        if _map(_map(current.get("metadata")).get("labels")) != labels:
            return False
        return all((current.get(k) or []) == (v or []) for k, v in fields.items())

    # -- helpers ------------------------------------------------------------------------------

    def _store(self, resource: tuple[str, str]) -> Any:
        return self.store(*resource)

    def _ctx(self, namespace: str, group: str = "") -> RequestContext:
        return RequestContext(namespace=namespace, request_version=GroupVersion(group, "v1"))

    def _update_options(self) -> UpdateOptions:
        return UpdateOptions(field_manager=_MANAGER)

    def _read(self, resource: tuple[str, str], namespace: str, name: str) -> Object | None:
        try:
            found: Object = self._store(resource).get(self._ctx(namespace, resource[0]), name)
        except NotFound:
            return None
        return found


class EmbeddedKubernetesService(KubernetesServiceController):
    """The ``kubernetes`` Service of a store opened without a server (``kstore.open``).

    kube-apiserver always has the Service, and clients of a store expect it; but an embedded
    store serves no address, so it keeps the Service only: created when missing (before
    :meth:`start` returns, so a client sees it at once, and again when deleted), port 443 to
    :data:`EMBEDDED_TARGET_PORT`, never changed once there. It holds no Lease and writes no
    Endpoints or EndpointSlice: they would name an address where nothing answers. A
    ``kstore serve`` on the same store takes the Service over (its port becomes the server's,
    which this loop leaves alone) and lists its own address in the endpoints.
    """

    watches: ClassVar[tuple[tuple[str, str], ...]] = (_SERVICES,)
    field_selectors: ClassVar[dict[tuple[str, str], str]] = {
        _SERVICES: f"metadata.name={SERVICE_NAME}"
    }

    def __init__(
        self, registry: Registry, *, service_ip: str, timings: ControllerTimings | None = None
    ) -> None:
        super().__init__(
            registry,
            advertise_address="127.0.0.1",
            port=EMBEDDED_TARGET_PORT,
            service_ip=service_ip,
            endpoint_reconciler_type="none",
            timings=timings,
        )

    def start(self) -> None:
        self._create_when_missing()
        super().start()

    def reconcile(self, key: str) -> None:
        if self.informer(*_SERVICES).get(_SERVICE_KEY) is None:
            self._create_when_missing()

    def _create_when_missing(self) -> None:
        if self._read(_SERVICES, SERVICE_NAMESPACE, SERVICE_NAME) is not None:
            return
        try:
            self._create_service()
        except KStoreError as exc:
            # No default namespace yet, or the cluster IP held by another Service: the next
            # change of the Service, or the resync, tries again.
            _log.info("the kubernetes Service is not created: %s", exc)
