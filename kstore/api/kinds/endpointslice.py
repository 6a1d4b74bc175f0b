"""discovery.k8s.io/v1 EndpointSlice: one external version with the hub's shape.

Registered as Kubernetes serves it: namespaced ``endpointslices``, no short name, no
subresource, no category.

Defaults (``SetDefaults_EndpointPort``): a port without a name gets ``""``, one without a
protocol ``TCP``.

Validation is ``ValidateEndpointSliceCreate``/``ValidateEndpointSliceUpdate`` with Kubernetes'
paths and messages: a DNS-1123 subdomain name; ``addressType`` one of FQDN, IPv4 and IPv6, and
immutable; at most 1000 endpoints, each with 1 to 100 addresses of the slice's type (IPv4 and
IPv6 addresses parsed as Kubernetes' legacy fields are, and none unspecified, loopback or
link-local; FQDNs of at least two DNS labels), a node name that is a DNS subdomain, at most 16
deprecated topology labels, a DNS-label hostname, at most 8 zone hints (and 8 node hints) with
unique names; at most 20000 ports with unique DNS-label names (or ""), a protocol of TCP, UDP or
SCTP and a qualified-name ``appProtocol``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._ip import parse_ip_sloppy
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.field import (
    JSONValue,
    Path,
    duplicate,
    internal_error,
    invalid,
    not_supported,
    required,
    too_many,
)
from kstore.api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_labels,
    validate_object_meta,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "ENDPOINT_SLICE",
    "GROUP",
    "default_endpoint_slice",
    "validate_endpoint_slice",
    "validate_endpoint_slice_update",
]

GROUP: Final = "discovery.k8s.io"

#: ``supportedAddressTypes`` and ``supportedPortProtocols``, sorted as Kubernetes lists them.
_ADDRESS_TYPES: Final = ("FQDN", "IPv4", "IPv6")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_MAX_TOPOLOGY_LABELS: Final = 16
_MAX_ADDRESSES: Final = 100
_MAX_PORTS: Final = 20000
_MAX_ENDPOINTS: Final = 1000
_MAX_HINTS: Final = 8
_ZONE_LABEL: Final = "topology.kubernetes.io/zone"


def default_endpoint_slice(endpoint_slice: Object) -> None:
    """``SetDefaults_EndpointPort`` for every port, in place."""
    ports = endpoint_slice.get("ports")
    for port in ports if isinstance(ports, list) else ():
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"


# ------------------------------------------------------------------------------ addresses


def _link_local_multicast(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.IPv4Network("224.0.0.0/24")
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02


def _validate_ip(address: str, family: int, path: Path) -> list[Cause]:
    """``IsValidIPv4Address``/``IsValidIPv6Address`` then ``ValidateEndpointIP``."""
    ip = parse_ip_sloppy(address)
    causes: list[Cause] = []
    if ip is None:
        causes.append(invalid(path, address, f"must be a valid IPv{family} address"))
        causes.append(invalid(path, address, "must be a valid IP address"))
        return causes
    if ip.version != family:
        causes.append(invalid(path, address, f"must be a valid IPv{family} address"))
    if ip.is_unspecified:
        causes.append(invalid(path, address, f"may not be unspecified ({address})"))
    if ip.is_loopback:
        causes.append(
            invalid(path, address, "may not be in the loopback range (127.0.0.0/8, ::1/128)")
        )
    if ip.is_link_local:
        causes.append(
            invalid(path, address, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")
        )
    if _link_local_multicast(ip):
        causes.append(
            invalid(
                path,
                address,
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            )
        )
    return causes


def _validate_fqdn(name: str, path: Path) -> list[Cause]:
    """``IsFullyQualifiedDomainName``."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    problems = is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    labels = name.split(".")
    if len(labels) < 2:
        return [
            invalid(path, name, "should be a domain with at least two segments separated by dots")
        ]
    for label in labels:
        problems = is_dns1123_label(label)
        if problems:
            return [invalid(path, label, ",".join(problems))]
    return []


# ------------------------------------------------------------------------------ endpoints


def _validate_hints(hints: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for key, check in (("forZones", is_label_value), ("forNodes", is_dns1123_subdomain)):
        where = path.child(key)
        entries = get_list(hints, key)
        if len(entries) > _MAX_HINTS:
            causes.append(too_many(where, len(entries), _MAX_HINTS))
            continue
        seen: set[str] = set()
        for i, entry in enumerate(maps(entries)):
            name_path = where.index(i).child("name")
            name = get_str(entry, "name")
            if name in seen:
                causes.append(duplicate(name_path, name))
            seen.add(name)
            causes.extend(invalid(name_path, name, m) for m in check(name))
    return causes


def _validate_endpoint(endpoint: Mapping[str, Any], address_type: str, path: Path) -> list[Cause]:
    causes: list[Cause] = []
    where = path.child("addresses")
    addresses = get_list(endpoint, "addresses")
    if not addresses:
        causes.append(required(where, "must contain at least 1 address"))
    elif len(addresses) > _MAX_ADDRESSES:
        causes.append(too_many(where, len(addresses), _MAX_ADDRESSES))
    for i, address in enumerate(addresses):
        text = address if isinstance(address, str) else ""
        if address_type == "IPv4":
            causes.extend(_validate_ip(text, 4, where.index(i)))
        elif address_type == "IPv6":
            causes.extend(_validate_ip(text, 6, where.index(i)))
        elif address_type == "FQDN":
            causes.extend(_validate_fqdn(text, where.index(i)))
    node_name = endpoint.get("nodeName")
    if isinstance(node_name, str):
        causes.extend(
            invalid(path.child("nodeName"), node_name, m)
            for m in name_is_dns_subdomain(node_name, False)
        )
    topology = get_map(endpoint, "deprecatedTopology")
    topology_path = path.child("deprecatedTopology")
    if len(topology) > _MAX_TOPOLOGY_LABELS:
        causes.append(too_many(topology_path, len(topology), _MAX_TOPOLOGY_LABELS))
    causes.extend(validate_labels(topology, topology_path))
    if _ZONE_LABEL in topology:
        causes.append(
            internal_error(
                topology_path.key(_ZONE_LABEL), "reserved key was not removed in conversion"
            )
        )
    hostname = endpoint.get("hostname")
    if isinstance(hostname, str):
        causes.extend(
            invalid(path.child("hostname"), hostname, m) for m in is_dns1123_label(hostname)
        )
    hints = endpoint.get("hints")
    if isinstance(hints, Mapping):
        causes.extend(_validate_hints(hints, path.child("hints")))
    return causes


def _validate_ports(ports: list[Any], path: Path) -> list[Cause]:
    if len(ports) > _MAX_PORTS:
        return [too_many(path, len(ports), _MAX_PORTS)]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(maps(ports)):
        where = path.index(i)
        name = get_str(port, "name")
        if name:
            causes.extend(invalid(where.child("name"), name, m) for m in is_dns1123_label(name))
        if name in names:
            causes.append(duplicate(where.child("name"), name))
        names.add(name)
        protocol = port.get("protocol")
        if not isinstance(protocol, str):
            causes.append(required(where.child("protocol")))
        elif protocol not in _PROTOCOLS:
            causes.append(not_supported(where.child("protocol"), JSONValue(protocol), _PROTOCOLS))
        app_protocol = port.get("appProtocol")
        if isinstance(app_protocol, str):
            causes.extend(
                invalid(where.child("appProtocol"), app_protocol, m)
                for m in is_qualified_name(app_protocol)
            )
    return causes


def validate_endpoint_slice(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateEndpointSlice``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    address_type = get_str(obj, "addressType")
    if not address_type:
        causes.append(required(Path("addressType")))
    elif address_type not in _ADDRESS_TYPES:
        causes.append(not_supported(Path("addressType"), JSONValue(address_type), _ADDRESS_TYPES))
    endpoints = get_list(obj, "endpoints")
    if len(endpoints) > _MAX_ENDPOINTS:
        causes.append(too_many(Path("endpoints"), len(endpoints), _MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(maps(endpoints)):
            causes.extend(_validate_endpoint(endpoint, address_type, Path("endpoints").index(i)))
    causes.extend(_validate_ports(list(get_list(obj, "ports")), Path("ports")))
    return causes


def validate_endpoint_slice_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateEndpointSliceUpdate``: the new slice, and ``addressType`` unchanged."""
    causes = validate_endpoint_slice(new)
    causes.extend(
        validate_immutable_field(
            JSONValue(get_str(new, "addressType")),
            JSONValue(get_str(old, "addressType")),
            Path("addressType"),
        )
    )
    return causes


ENDPOINT_SLICE: Final = KindDefinition(
    group=GROUP,
    kind="EndpointSlice",
    versions=(KindVersion(version="v1", default=default_endpoint_slice),),
    storage_version="v1",
    resource=ResourceInfo(plural="endpointslices", singular="endpointslice", namespaced=True),
    validate=validate_endpoint_slice,
    validate_update=validate_endpoint_slice_update,
    list_kind="EndpointSliceList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (ENDPOINT_SLICE, list_definition(ENDPOINT_SLICE))
