"""core/v1 Endpoints (``ep``): the addresses and ports behind a Service, as the (deprecated)
endpoints controller would write them; stored here, written by whoever manages them.

One external version, ``v1``, shaped as the hub. Defaulting is ``SetObjectDefaults_Endpoints``:
each port's ``protocol`` defaults to ``TCP``.

Validation is ``ValidateEndpoints`` (create and update alike; an update adds the ObjectMeta
update rules), with Kubernetes' paths and messages: every subset has ``addresses`` or
``notReadyAddresses``; an address has a valid IP (parsed as Go's ``ParseIPSloppy`` does, so
IPv4 octets may have leading zeros) that is not unspecified, loopback, link-local or
link-local multicast, a DNS-label ``hostname`` and a DNS-subdomain ``nodeName``; a port has a
DNS-label name (required when the subset has several ports), a number from 1 to 65535, a
protocol among SCTP, TCP and UDP, and a qualified-name ``appProtocol``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import JSONValue, Path, invalid, not_supported, required
from kstore.api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_port_num,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "ENDPOINTS",
    "default_endpoints_v1",
    "parse_ip_sloppy",
    "validate_endpoints",
    "validate_endpoints_update",
]

_SUBSETS: Final = Path("subsets")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_IPV4_SLOPPY: Final = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")
_BAD_IP: Final = "must be a valid IP address"

IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def _items(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [v if isinstance(v, Mapping) else {} for v in value]


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


# ------------------------------------------------------------------------------ defaulting


def default_endpoints_v1(obj: Object) -> None:
    """v1 ``SetObjectDefaults_Endpoints``, in place: ports' protocol ``TCP``."""
    subsets = obj.get("subsets")
    for subset in subsets if isinstance(subsets, list) else []:
        ports = subset.get("ports") if isinstance(subset, dict) else None
        for port in ports if isinstance(ports, list) else []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


# ------------------------------------------------------------------------------ addresses


def parse_ip_sloppy(text: str) -> IP | None:
    """Go's ``netutils.ParseIPSloppy``: ``net.ParseIP``, but IPv4 octets may have leading
    zeros (read as decimal). An IPv4-mapped IPv6 address stands for its IPv4 address."""
    match = _IPV4_SLOPPY.fullmatch(text)
    if match:
        octets = [int(g) for g in match.groups()]
        return ipaddress.IPv4Address(bytes(octets)) if max(octets) <= 255 else None
    if ":" not in text or "%" in text:
        return None
    try:
        v6 = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    return v6.ipv4_mapped or v6


def _non_special_ip(text: str, path: Path) -> list[Cause]:
    """``ValidateNonSpecialIP``."""
    ip = parse_ip_sloppy(text)
    if ip is None:
        return [invalid(path, text, _BAD_IP)]
    causes: list[Cause] = []
    if ip.is_unspecified:
        causes.append(invalid(path, text, f"may not be unspecified ({text})"))
    if ip.is_loopback:
        causes.append(
            invalid(path, text, "may not be in the loopback range (127.0.0.0/8, ::1/128)")
        )
    if ip.is_link_local and not ip.is_multicast:
        causes.append(
            invalid(path, text, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")
        )
    link_local_multicast = (
        ip in ipaddress.IPv4Network("224.0.0.0/24")
        if isinstance(ip, ipaddress.IPv4Address)
        else ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02
    )
    if link_local_multicast:
        causes.append(
            invalid(
                path,
                text,
                "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            )
        )
    return causes


def _validate_address(address: Mapping[str, Any], path: Path) -> list[Cause]:
    """``validateEndpointAddress``."""
    ip = _str(address, "ip")
    ip_path = path.child("ip")
    causes: list[Cause] = []
    if parse_ip_sloppy(ip) is None:
        causes.append(
            invalid(ip_path, ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
        )
    hostname = _str(address, "hostname")
    if hostname:
        causes.extend(
            invalid(path.child("hostname"), hostname, m) for m in is_dns1123_label(hostname)
        )
    node_name = address.get("nodeName")
    if isinstance(node_name, str):
        causes.extend(
            invalid(path.child("nodeName"), node_name, m) for m in is_dns1123_subdomain(node_name)
        )
    causes.extend(_non_special_ip(ip, ip_path))
    return causes


def _validate_port(port: Mapping[str, Any], require_name: bool, path: Path) -> list[Cause]:
    """``validateEndpointPort``."""
    causes: list[Cause] = []
    name = _str(port, "name")
    if require_name and not name:
        causes.append(required(path.child("name")))
    elif name:
        causes.extend(invalid(path.child("name"), name, m) for m in is_dns1123_label(name))
    number = port.get("port")
    number = number if isinstance(number, int) and not isinstance(number, bool) else 0
    causes.extend(invalid(path.child("port"), number, m) for m in is_valid_port_num(number))
    protocol = _str(port, "protocol")
    if not protocol:
        causes.append(required(path.child("protocol")))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(path.child("protocol"), JSONValue(protocol), _PROTOCOLS))
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        causes.extend(
            invalid(path.child("appProtocol"), app_protocol, m)
            for m in is_qualified_name(app_protocol)
        )
    return causes


def _validate_subsets(subsets: list[Mapping[str, Any]]) -> list[Cause]:
    """``validateEndpointSubsets``."""
    causes: list[Cause] = []
    for i, subset in enumerate(subsets):
        path = _SUBSETS.index(i)
        addresses = _items(subset, "addresses")
        not_ready = _items(subset, "notReadyAddresses")
        if not addresses and not not_ready:
            causes.append(required(path, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in enumerate(addresses):
            causes.extend(_validate_address(address, path.child("addresses").index(j)))
        for j, address in enumerate(not_ready):
            causes.extend(_validate_address(address, path.child("notReadyAddresses").index(j)))
        ports = _items(subset, "ports")
        for j, port in enumerate(ports):
            causes.extend(_validate_port(port, len(ports) > 1, path.child("ports").index(j)))
    return causes


def validate_endpoints(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateEndpoints`` (``ValidateEndpointsCreate``)."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_subsets(_items(obj, "subsets")))
    return causes


def validate_endpoints_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateEndpointsUpdate``: the ObjectMeta update rules, then ``ValidateEndpoints``."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_endpoints(new))
    return causes


ENDPOINTS = KindDefinition(
    group="",
    kind="Endpoints",
    versions=(KindVersion(version="v1", default=default_endpoints_v1),),
    storage_version="v1",
    validate=validate_endpoints,
    validate_update=validate_endpoints_update,
    resource=ResourceInfo(
        plural="endpoints", singular="endpoints", namespaced=True, short_names=("ep",)
    ),
    list_kind="EndpointsList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (ENDPOINTS, list_definition(ENDPOINTS))
