"""Service cluster IPs and node ports, allocated as kube-apiserver v1.36 allocates them.

Cluster IPs (Kubernetes' IPAddress-based ``ipallocator``): every allocated address is one
networking.k8s.io/v1 IPAddress object named by the address, labelled with its family and
``ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io``, whose ``parentRef`` names the
Service. Taking an address is creating its object: the store's create-if-absent makes two
servers on one etcd agree (the loser of a race gets AlreadyExists and tries another address).
The ranges are the ``--service-cluster-ip-range`` CIDRs (one per family), which the registry
also keeps as the default ServiceCIDR ``kubernetes``. The network address (and, for IPv4, the
broadcast address) is never handed out; neither is the first address after the network
address by dynamic allocation: it belongs to the ``kubernetes`` Service, which asks for it.
Dynamic allocation picks a random free address in the upper part of the range first and falls
back to the lower part (kept for static choices), as Kubernetes does.

Node ports (Kubernetes' ``portallocator``): one bitmap of the ``--service-node-port-range``,
stored as a ``RangeAllocation`` record at ``/ranges/servicenodeports`` (bit ``i`` is port
``low + i``, the bytes of the big-endian integer, base64 in ``data``) and changed with
compare-and-swap (the storage's guaranteed update), so concurrent servers never hand out one
port twice.

A :class:`Transaction` collects what one Service write allocated (undone if the write fails,
e.g. on a later validation error or a conflict) and what it frees (released only once the
write is stored), as Kubernetes' service storage does with its transactions. A dry run only
checks: it neither creates IPAddress objects nor writes the bitmap.

Messages are Kubernetes': ``failed to allocate IP <ip>: provided IP is already allocated``,
``... the provided network does not match the current range``, ``range is full``,
``provided port is already allocated``, ``provided port is not in the valid range. The range
of valid ports is 30000-32767``.
"""

from __future__ import annotations

import base64
import contextvars
import copy
import ipaddress
import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import orjson

from kstore.api.gvk import Object
from kstore.api.validation.field import JSONValue, Path, invalid
from kstore.errors import AlreadyExists, BadRequest, InternalError, Invalid, KStoreError, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, RequestContext
from kstore.registry.passthrough import Raised, guarded
from kstore.storage.interface import GetOptions, ListOptions, Preconditions, Storage

if TYPE_CHECKING:
    from kstore.registry.store import GenericStore

__all__ = [
    "DEFAULT_NODE_PORT_RANGE",
    "DEFAULT_SERVICE_CIDR",
    "DEFAULT_SERVICE_CIDR_NAME",
    "NODE_PORTS_KEY",
    "ClusterIPAllocator",
    "NodePortAllocator",
    "PortRange",
    "ServiceAllocator",
    "Transaction",
    "current_transaction",
    "parse_node_port_range",
    "parse_service_cidrs",
]

_log = logging.getLogger(__name__)

DEFAULT_SERVICE_CIDR: Final = "10.0.0.0/24"
DEFAULT_NODE_PORT_RANGE: Final = "30000-32767"
#: The ServiceCIDR kube-apiserver creates from its flag.
DEFAULT_SERVICE_CIDR_NAME: Final = "kubernetes"
NODE_PORTS_KEY: Final = "/ranges/servicenodeports"
_RANGES_PREFIX: Final = "/ranges"
FAMILY_LABEL: Final = "ipaddress.kubernetes.io/ip-family"
MANAGED_BY_LABEL: Final = "ipaddress.kubernetes.io/managed-by"
MANAGED_BY: Final = "ipallocator.k8s.io"

ERR_FULL: Final = "range is full"
ERR_IP_ALLOCATED: Final = "provided IP is already allocated"
ERR_MISMATCHED_NETWORK: Final = "the provided network does not match the current range"
ERR_PORT_ALLOCATED: Final = "provided port is already allocated"

IPV4: Final = "IPv4"
IPV6: Final = "IPv6"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddr = ipaddress.IPv4Address | ipaddress.IPv6Address


class AllocationError(Exception):
    """An allocator's refusal, worded as Kubernetes' allocator errors."""


def family_of(version: int) -> str:
    return IPV4 if version == 4 else IPV6


# ---------------------------------------------------------------------------- flags


def parse_service_cidrs(text: str) -> tuple[IPNetwork, ...]:
    """``--service-cluster-ip-range``: one CIDR, or two of different families (``a,b``)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or len(parts) > 2:
        raise BadRequest(
            "--service-cluster-ip-range must hold one CIDR or two of different families"
        )
    try:
        networks = tuple(ipaddress.ip_network(p, strict=False) for p in parts)
    except ValueError as exc:
        raise BadRequest(f"--service-cluster-ip-range: {exc}") from None
    if len(networks) == 2 and networks[0].version == networks[1].version:
        raise BadRequest("--service-cluster-ip-range: the two CIDRs must be of different families")
    return networks


@dataclass(frozen=True, slots=True)
class PortRange:
    base: int
    size: int

    @property
    def last(self) -> int:
        return self.base + self.size - 1

    def __str__(self) -> str:
        return f"{self.base}-{self.last}"

    def contains(self, port: int) -> bool:
        return self.base <= port <= self.last


def parse_node_port_range(text: str) -> PortRange:
    """``--service-node-port-range``: ``low-high`` (or ``low+count``), both inclusive."""
    text = text.strip()
    try:
        if "+" in text:
            low, count = (int(p) for p in text.split("+", 1))
            high = low + count
        else:
            low_text, _, high_text = text.partition("-")
            low, high = int(low_text), int(high_text or low_text)
    except ValueError:
        raise BadRequest(f"--service-node-port-range: invalid port range {text!r}") from None
    if not (0 < low <= high <= 65535):
        raise BadRequest(f"--service-node-port-range: invalid port range {text!r}")
    return PortRange(low, high - low + 1)


def _range_offset(size: int, lo: int, hi: int, divisor: int) -> int:
    """The size of the lower band kept for static choices (Kubernetes' calculateRangeOffset)."""
    if size < lo:
        return 0
    return min(max(lo, size // divisor), hi)


def _banded(size: int, offset: int, rng: random.Random) -> Iterator[int]:
    """Every index of ``range(size)``: the upper band from a random start, then the lower."""
    upper = size - offset
    if upper > 0:
        start = rng.randrange(upper)
        for i in range(upper):
            yield offset + (start + i) % upper
    if offset > 0:
        start = rng.randrange(offset)
        for i in range(offset):
            yield (start + i) % offset


# ---------------------------------------------------------------------------- transaction


@dataclass(slots=True)
class Transaction:
    """What one Service write allocated (``undo``) and frees once stored (``release``)."""

    dry_run: bool = False
    undo: list[Callable[[], None]] = field(default_factory=list)
    release: list[Callable[[], None]] = field(default_factory=list)

    def revert(self) -> None:
        undo, self.undo = self.undo, []
        self.release.clear()
        for step in reversed(undo):
            try:
                step()
            except Exception:
                _log.exception("could not undo a service allocation")

    def commit(self) -> None:
        release, self.release = self.release, []
        self.undo.clear()
        for step in release:
            try:
                step()
            except Exception:
                _log.exception("could not release a service allocation")


_TRANSACTION: contextvars.ContextVar[Transaction | None] = contextvars.ContextVar(
    "kstore_service_allocation", default=None
)


def current_transaction() -> contextvars.ContextVar[Transaction | None]:
    return _TRANSACTION


# ---------------------------------------------------------------------------- cluster IPs


class ClusterIPAllocator:
    """The addresses of one CIDR, kept as IPAddress objects in ``store``."""

    def __init__(self, network: IPNetwork, store: GenericStore) -> None:
        self.network = network
        self.family = family_of(network.version)
        self._store = store
        first = int(network.network_address)
        last = int(network.broadcast_address)
        if network.num_addresses > 2:
            first += 1
            if network.version == 4:
                last -= 1
        self._first, self._last = first, last
        self._rng = random.Random()

    def contains(self, ip: IPAddr) -> bool:
        return ip in self.network

    def _address(self, value: int) -> IPAddr:
        # By the network's family: a small integer is an IPv6 address too (::5).
        return type(self.network.network_address)(value)

    def _check_in_range(self, ip: IPAddr) -> None:
        if not self._first <= int(ip) <= self._last:
            raise AllocationError(
                f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is "
                f"{self.network}"
            )

    def _ip_object(self, ip: IPAddr, svc: Mapping[str, Any]) -> Object:
        meta = svc.get("metadata") or {}
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IPAddress",
            "metadata": {
                "name": str(ip),
                "labels": {FAMILY_LABEL: self.family, MANAGED_BY_LABEL: MANAGED_BY},
            },
            "spec": {
                # The core group is "", which the JSON form leaves out.
                "parentRef": {
                    "resource": "services",
                    "namespace": str(meta.get("namespace") or ""),
                    "name": str(meta.get("name") or ""),
                }
            },
        }

    def _take(self, ip: IPAddr, svc: Mapping[str, Any], dry_run: bool) -> bool:
        """Create the address's object; False when it exists already."""
        if dry_run:
            return not self._exists(ip)
        try:
            self._store.create(RequestContext(), self._ip_object(ip, svc), CreateOptions())
        except AlreadyExists:
            return False
        return True

    def _exists(self, ip: IPAddr) -> bool:
        try:
            self._store.get(RequestContext(), str(ip))
        except NotFound:
            return False
        return True

    def allocate(self, ip: IPAddr, svc: Mapping[str, Any], dry_run: bool) -> None:
        self._check_in_range(ip)
        if not self._take(ip, svc, dry_run):
            raise AllocationError(ERR_IP_ALLOCATED)

    def allocate_next(self, svc: Mapping[str, Any], dry_run: bool) -> IPAddr:
        used = {
            str((item.get("metadata") or {}).get("name") or "")
            for item in self._store.list(RequestContext(), ListOptions()).items
        }
        # The first address belongs to the kubernetes Service.
        first = self._first + 1 if self._last > self._first else self._first
        size = self._last - first + 1
        if size <= 0:
            raise AllocationError(ERR_FULL)
        offset = _range_offset(size, 16, 256, 16)
        for index in _banded(size, offset, self._rng):
            ip = self._address(first + index)
            if str(ip) in used:
                continue
            if self._take(ip, svc, dry_run):
                return ip
        raise AllocationError(ERR_FULL)

    def release(self, ip: str, svc: Mapping[str, Any]) -> None:
        """Delete the address's object if it still belongs to ``svc``."""
        ctx = RequestContext()
        try:
            current = self._store.get(ctx, ip)
        except NotFound:
            return
        parent = ((current.get("spec") or {}).get("parentRef")) or {}
        meta = svc.get("metadata") or {}
        if parent.get("resource") != "services" or (
            parent.get("namespace"),
            parent.get("name"),
        ) != (meta.get("namespace"), meta.get("name")):
            return
        uid = str((current.get("metadata") or {}).get("uid") or "")
        try:
            self._store.delete(ctx, ip, DeleteOptions(preconditions=Preconditions(uid=uid)))
        except NotFound:
            return


# ---------------------------------------------------------------------------- node ports


class _RecordCodec:
    """The RangeAllocation record as JSON."""

    def encode(self, obj: Object) -> bytes:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)

    def decode(self, data: bytes) -> Object:
        value = orjson.loads(data)
        if not isinstance(value, dict):
            raise InternalError("the node port allocation record is not an object")
        return value


def record_codec() -> _RecordCodec:
    return _RecordCodec()


def record_attrs(obj: Object) -> tuple[dict[str, str], dict[str, str]]:
    return {}, {"metadata.name": "servicenodeports"}


def ranges_prefix() -> str:
    return _RANGES_PREFIX


class NodePortAllocator:
    """The node port bitmap at :data:`NODE_PORTS_KEY`, changed by compare-and-swap."""

    def __init__(self, ports: PortRange, storage: Storage) -> None:
        self.range = ports
        self._storage = storage
        self._rng = random.Random()

    def _bits(self, record: Mapping[str, Any]) -> int:
        if not record:
            return 0
        data = base64.b64decode(str(record.get("data") or ""))
        bits = int.from_bytes(data, "big")
        old = parse_node_port_range(str(record.get("range") or str(self.range)))
        if old != self.range:
            moved = 0
            for i in range(old.size):
                if bits >> i & 1 and self.range.contains(old.base + i):
                    moved |= 1 << (old.base + i - self.range.base)
            bits = moved
        return bits

    def _record(self, bits: int, current: Mapping[str, Any]) -> Object:
        data = bits.to_bytes((bits.bit_length() + 7) // 8, "big")
        meta = dict(current.get("metadata") or {}) if current else {}
        meta.setdefault("name", "servicenodeports")
        return {
            "kind": "RangeAllocation",
            "apiVersion": "v1",
            "metadata": meta,
            "range": str(self.range),
            "data": base64.b64encode(data).decode(),
        }

    def read(self) -> int:
        return self._bits(self._storage.get(NODE_PORTS_KEY, GetOptions(ignore_not_found=True)))

    def _change(self, change: Callable[[int], int]) -> None:
        @guarded
        def try_update(current: Object) -> Object:
            return self._record(change(self._bits(current)), current)

        try:
            self._storage.guaranteed_update(NODE_PORTS_KEY, try_update, ignore_not_found=True)
        except Raised as raised:
            raise raised.error from None

    def allocate(self, port: int, dry_run: bool) -> None:
        if not self.range.contains(port):
            raise AllocationError(
                f"provided port is not in the valid range. The range of valid ports is {self.range}"
            )
        bit = 1 << (port - self.range.base)
        if dry_run:
            if self.read() & bit:
                raise AllocationError(ERR_PORT_ALLOCATED)
            return

        def take(bits: int) -> int:
            if bits & bit:
                raise _Taken("taken")
            return bits | bit

        try:
            self._change(take)
        except _Taken:
            raise AllocationError(ERR_PORT_ALLOCATED) from None

    def allocate_next(self, dry_run: bool) -> int:
        chosen: list[int] = []
        size = self.range.size
        offset = _range_offset(size, 16, 128, 32)

        def take(bits: int) -> int:
            chosen.clear()
            for index in _banded(size, offset, self._rng):
                if not bits >> index & 1:
                    chosen.append(index)
                    return bits | 1 << index
            raise _Taken("taken")

        try:
            if dry_run:
                take(self.read())
            else:
                self._change(take)
        except _Taken:
            raise AllocationError(ERR_FULL) from None
        return self.range.base + chosen[0]

    def release(self, port: int) -> None:
        if not self.range.contains(port):
            return
        bit = 1 << (port - self.range.base)
        self._change(lambda bits: bits & ~bit)


class _Taken(KStoreError):
    """Inside a compare-and-swap: the wanted port is taken (or none is free)."""


# ---------------------------------------------------------------------------- services


_SPEC: Final = Path("spec")


def _spec(svc: Object) -> dict[str, Any]:
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        svc["spec"] = spec
    return spec


def _name(svc: Mapping[str, Any]) -> str:
    return str((svc.get("metadata") or {}).get("name") or "")


def _invalid(svc: Mapping[str, Any], path: Path, value: Any, detail: str) -> Invalid:
    return Invalid.for_object("Service", _name(svc), [invalid(path, value, detail)])


def _ips_shown(spec: Mapping[str, Any]) -> JSONValue:
    ips = spec.get("clusterIPs")
    return JSONValue([str(i) for i in ips] if isinstance(ips, list) else None)


def _headless(spec: Mapping[str, Any]) -> bool:
    ips = spec.get("clusterIPs")
    return isinstance(ips, list) and bool(ips) and ips[0] == "None"


def should_allocate_node_ports(spec: Mapping[str, Any]) -> bool:
    kind = spec.get("type")
    if kind == "NodePort":
        return True
    if kind == "LoadBalancer":
        return spec.get("allocateLoadBalancerNodePorts") is not False
    return False


def needs_health_check_node_port(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _ports(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    ports = spec.get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def node_ports_of(spec: Mapping[str, Any]) -> set[int]:
    """Every node port a Service holds (its ports' and its health check's)."""
    held = {int(p.get("nodePort") or 0) for p in _ports(spec)}
    held.add(int(spec.get("healthCheckNodePort") or 0))
    held.discard(0)
    return held


class ServiceAllocator:
    """Cluster IPs and node ports of Services (see the module docstring)."""

    def __init__(
        self, ip_allocators: Sequence[ClusterIPAllocator], node_ports: NodePortAllocator
    ) -> None:
        self.ip_allocators = tuple(ip_allocators)
        self.node_ports = node_ports
        self.families = tuple(a.family for a in self.ip_allocators)

    @property
    def dual_stack(self) -> bool:
        return len(self.families) == 2

    def _allocator_for(self, family: str) -> ClusterIPAllocator | None:
        for allocator in self.ip_allocators:
            if allocator.family == family:
                return allocator
        return None

    # -- families --------------------------------------------------------------------------

    def init_ip_family_fields(self, svc: Object, spec: dict[str, Any]) -> None:
        """Kubernetes' initIPFamilyFields: ``ipFamilyPolicy`` and ``ipFamilies`` from what the
        user gave and the cluster's families."""
        if spec.get("type") == "ExternalName":
            return
        ips = [str(i) for i in spec.get("clusterIPs") or []]
        families = [str(f) for f in spec.get("ipFamilies") or []]
        policy = spec.get("ipFamilyPolicy")
        if policy is None and (len(ips) == 2 or len(families) == 2):
            policy = "RequireDualStack"
        if ips and ips[0] == "None" and not spec.get("selector"):
            if policy is None:
                policy = "RequireDualStack"
            if not families:
                families = list(self.families)
            if policy == "SingleStack":
                families = families[:1]
            elif len(families) == 1 and self.dual_stack:
                families.append(IPV6 if families[0] == IPV4 else IPV4)
            spec["ipFamilyPolicy"] = policy
            spec["ipFamilies"] = families
            return
        for i, text in enumerate(ips):
            if text == "None":
                break
            try:
                family = family_of(ipaddress.ip_address(text).version)
            except ValueError:
                raise _invalid(
                    svc,
                    _SPEC.child("clusterIPs").index(i),
                    text,
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                ) from None
            if i >= len(families):
                families.append(family)
            elif families[i] != family:
                raise _invalid(
                    svc,
                    _SPEC.child("ipFamilies").index(i),
                    JSONValue(families[i]),
                    f"must match the address family of clusterIPs[{i}]",
                )
        if policy is None:
            policy = "SingleStack"
        if not families:
            families = [self.families[0]]
        if policy in ("RequireDualStack", "PreferDualStack"):
            if len(families) == 1 and self.dual_stack:
                families.append(IPV6 if families[0] == IPV4 else IPV4)
            if policy == "RequireDualStack" and not self.dual_stack:
                raise _invalid(
                    svc,
                    _SPEC.child("ipFamilyPolicy"),
                    JSONValue(policy),
                    "this cluster is not configured for dual-stack services",
                )
        for i, family in enumerate(families):
            if family not in self.families:
                raise _invalid(
                    svc,
                    _SPEC.child("ipFamilies").index(i),
                    JSONValue(family),
                    "not configured on this cluster",
                )
        spec["ipFamilyPolicy"] = policy
        spec["ipFamilies"] = families

    # -- cluster IPs -----------------------------------------------------------------------

    def _allocate_ips(self, svc: Object, spec: dict[str, Any], txn: Transaction) -> None:
        ips = [str(i) for i in spec.get("clusterIPs") or []]
        families = [str(f) for f in spec.get("ipFamilies") or []]
        out: list[str] = []
        for i, family in enumerate(families):
            allocator = self._allocator_for(family)
            if allocator is None:  # pragma: no cover - refused by init_ip_family_fields
                continue
            wanted = ips[i] if i < len(ips) else ""
            if wanted:
                ip = ipaddress.ip_address(wanted)
                try:
                    owner = self._owner_of(ip)
                    if owner is None:
                        raise AllocationError(ERR_MISMATCHED_NETWORK)
                    owner.allocate(ip, svc, txn.dry_run)
                except AllocationError as exc:
                    raise _invalid(
                        svc,
                        _SPEC.child("clusterIPs"),
                        _ips_shown(spec),
                        f"failed to allocate IP {wanted}: {exc}",
                    ) from None
                text = wanted
            else:
                try:
                    text = str(allocator.allocate_next(svc, txn.dry_run))
                except AllocationError as exc:
                    raise InternalError(
                        f"Internal error occurred: failed to allocate a serviceIP: {exc}",
                    ) from None
            out.append(text)
            if not txn.dry_run:
                txn.undo.append(_release_ip(self, text, copy_meta(svc)))
        spec["clusterIPs"] = out
        spec["clusterIP"] = out[0] if out else ""

    def _owner_of(self, ip: IPAddr) -> ClusterIPAllocator | None:
        for allocator in self.ip_allocators:
            if allocator.contains(ip):
                return allocator
        return None

    def release_ip(self, ip: str, svc: Mapping[str, Any]) -> None:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return
        owner = self._owner_of(address)
        if owner is not None:
            owner.release(ip, svc)

    # -- node ports ------------------------------------------------------------------------

    def _take_port(self, svc: Object, port: int, path: Path, txn: Transaction) -> None:
        try:
            self.node_ports.allocate(port, txn.dry_run)
        except AllocationError as exc:
            raise _invalid(svc, path, port, str(exc)) from None
        if not txn.dry_run:
            txn.undo.append(_release_port(self.node_ports, port))

    def _next_port(self, txn: Transaction, what: str) -> int:
        try:
            port = self.node_ports.allocate_next(txn.dry_run)
        except AllocationError as exc:
            raise InternalError(
                f"Internal error occurred: failed to allocate {what}: {exc}"
            ) from None
        if not txn.dry_run:
            txn.undo.append(_release_port(self.node_ports, port))
        return port

    def _allocate_node_ports(
        self, svc: Object, spec: dict[str, Any], held: set[int], txn: Transaction
    ) -> None:
        """Kubernetes' initNodePorts/updateNodePorts: a port already ``held`` (by the old
        object) is kept; requested ones are taken; missing ones allocated, one per service
        port number."""
        allocate = should_allocate_node_ports(spec)
        ports = _ports(spec)
        by_port: dict[int, int] = {}
        for i, port in enumerate(ports):
            requested = int(port.get("nodePort") or 0)
            if requested == 0 and not allocate:
                continue
            number = int(port.get("port") or 0)
            given = by_port.get(number, 0)
            if given == 0:
                if requested == 0:
                    requested = next(
                        (
                            int(p.get("nodePort") or 0)
                            for p in ports[i:]
                            if int(p.get("port") or 0) == number and p.get("nodePort")
                        ),
                        0,
                    )
                if requested:
                    if requested not in held:
                        self._take_port(
                            svc, requested, _SPEC.child("ports").index(i).child("nodePort"), txn
                        )
                        held.add(requested)
                    port["nodePort"] = requested
                else:
                    port["nodePort"] = self._next_port(txn, "a nodePort")
                by_port[number] = int(port["nodePort"])
            elif requested == 0:
                port["nodePort"] = given
            elif requested != given and requested not in held:
                self._take_port(
                    svc, requested, _SPEC.child("ports").index(i).child("nodePort"), txn
                )
                held.add(requested)

    def _allocate_health_check(
        self, svc: Object, spec: dict[str, Any], held: set[int], txn: Transaction
    ) -> None:
        if not needs_health_check_node_port(spec):
            return
        requested = int(spec.get("healthCheckNodePort") or 0)
        if requested:
            if requested not in held:
                self._take_port(svc, requested, _SPEC.child("healthCheckNodePort"), txn)
        else:
            spec["healthCheckNodePort"] = self._next_port(txn, "a health check node port")

    # -- the Service's life ----------------------------------------------------------------

    def allocate_create(self, svc: Object, txn: Transaction) -> None:
        """Kubernetes' allocateCreate: families, cluster IPs, node ports, health check port."""
        spec = _spec(svc)
        self.init_ip_family_fields(svc, spec)
        if spec.get("type") != "ExternalName" and not _headless(spec):
            self._allocate_ips(svc, spec, txn)
        self._allocate_node_ports(svc, spec, set(), txn)
        self._allocate_health_check(svc, spec, set(), txn)

    def allocate_update(self, svc: Object, old: Mapping[str, Any], txn: Transaction) -> None:
        """Kubernetes' allocateUpdate: cluster IPs for a Service that had none (from
        ExternalName), the node ports and health check port the new object needs; what the
        old object held and the new one does not is released once the update is stored."""
        spec = _spec(svc)
        old_spec = old.get("spec") if isinstance(old.get("spec"), Mapping) else {}
        assert isinstance(old_spec, Mapping)
        old_external = old_spec.get("type") == "ExternalName"
        if spec.get("type") != "ExternalName" and old_external:
            self.init_ip_family_fields(svc, spec)
            if not _headless(spec):
                self._allocate_ips(svc, spec, txn)
        elif spec.get("type") != "ExternalName":
            # A write that leaves the families out keeps the stored ones.
            for key in ("ipFamilyPolicy", "ipFamilies"):
                if spec.get(key) is None and old_spec.get(key) is not None:
                    spec[key] = copy.deepcopy(old_spec[key])
            if spec.get("ipFamilyPolicy") is None or not spec.get("ipFamilies"):
                self.init_ip_family_fields(svc, spec)
        old_ips = [str(i) for i in old_spec.get("clusterIPs") or [] if i != "None"]
        new_ips = {str(i) for i in spec.get("clusterIPs") or []}
        if spec.get("type") == "ExternalName":
            new_ips = set()
        meta = copy_meta(old)
        for ip in old_ips:
            if ip not in new_ips:
                txn.release.append(_release_ip(self, ip, meta))
        held = node_ports_of(old_spec)
        self._allocate_node_ports(svc, spec, set(held), txn)
        self._allocate_health_check(svc, spec, set(held), txn)
        for port in sorted(held - node_ports_of(spec)):
            txn.release.append(_release_port(self.node_ports, port))

    def release_all(self, svc: Mapping[str, Any]) -> None:
        """Kubernetes' releaseAllocatedResources, after a delete."""
        spec = svc.get("spec") if isinstance(svc.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        if spec.get("type") != "ExternalName":
            for ip in spec.get("clusterIPs") or []:
                if ip != "None":
                    self.release_ip(str(ip), svc)
        for port in sorted(node_ports_of(spec)):
            self.node_ports.release(port)


def copy_meta(svc: Mapping[str, Any]) -> dict[str, Any]:
    meta = svc.get("metadata") or {}
    return {"metadata": {"namespace": meta.get("namespace"), "name": meta.get("name")}}


def _release_ip(alloc: ServiceAllocator, ip: str, svc: Mapping[str, Any]) -> Callable[[], None]:
    return lambda: alloc.release_ip(ip, svc)


def _release_port(ports: NodePortAllocator, port: int) -> Callable[[], None]:
    return lambda: ports.release(port)
