"""networking.k8s.io/v1 NetworkPolicy: one external version with the hub's shape.

Registered as Kubernetes serves it: namespaced ``networkpolicies``, short name ``netpol``, no
subresource (v1 dropped the status it once had), no category.

Defaults (``SetDefaults_NetworkPolicyPort``, ``SetDefaults_NetworkPolicy``): a port without a
protocol gets ``TCP``; a policy without ``policyTypes`` gets ``["Ingress"]``, plus ``"Egress"``
when it has egress rules.

Validation is ``ValidateNetworkPolicy``/``ValidateNetworkPolicyUpdate`` with Kubernetes' paths
and messages: a DNS-1123 subdomain name; the pod selector and every peer's selectors (strict,
but tolerant of invalid label values in expressions on an update whose stored pod selector
already had them); ports with a protocol of TCP, UDP or SCTP, a numeric port in range or a
port name, ``endPort`` only after a numeric port and not below it; each peer with exactly one
of the selectors or an ``ipBlock`` (or both selectors); an ``ipBlock`` with a CIDR and
exceptions strictly inside it (CIDRs parsed as Kubernetes' legacy fields are, leading zeros
allowed; on update a CIDR the stored policy already had is not checked again); at most two
``policyTypes``, each ``Ingress`` or ``Egress``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._ip import parse_cidr_sloppy
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._selector import validate_label_selector
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import (
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "NETWORK_POLICY",
    "default_network_policy",
    "validate_network_policy",
    "validate_network_policy_update",
]

GROUP: Final = "networking.k8s.io"

_PROTOCOLS: Final = ("TCP", "UDP", "SCTP")
_POLICY_TYPES: Final = ("Ingress", "Egress")
_SPEC: Final = Path("spec")
_CIDR_FORMAT: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"

# ------------------------------------------------------------------------------- defaults


def default_network_policy(policy: Object) -> None:
    """``SetDefaults_NetworkPolicyPort`` for every rule's ports, then
    ``SetDefaults_NetworkPolicy``, in place."""
    spec = policy.get("spec")
    if not isinstance(spec, dict):
        return
    for direction in ("ingress", "egress"):
        rules = spec.get(direction)
        for rule in rules if isinstance(rules, list) else ():
            ports = rule.get("ports") if isinstance(rule, dict) else None
            for port in ports if isinstance(ports, list) else ():
                if isinstance(port, dict) and port.get("protocol") is None:
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types


# ---------------------------------------------------------------------------------- CIDRs


def _check_cidr(value: str, path: Path, known: frozenset[str]) -> list[Cause]:
    # IsValidCIDRForLegacyField without StrictIPCIDRValidation (alpha, off).
    if value in known or parse_cidr_sloppy(value) is not None:
        return []
    return [invalid(path, value, _CIDR_FORMAT)]


def _validate_ip_block(block: Mapping[str, Any], path: Path, known: frozenset[str]) -> list[Cause]:
    cidr = get_str(block, "cidr")
    if not cidr:
        return [required(path.child("cidr"))]
    causes = _check_cidr(cidr, path.child("cidr"), known)
    network = parse_cidr_sloppy(cidr)
    if network is None:
        return causes
    for i, except_cidr in enumerate(get_list(block, "except")):
        text = except_cidr if isinstance(except_cidr, str) else ""
        where = path.child("except").index(i)
        causes.extend(_check_cidr(text, where, known))
        excluded = parse_cidr_sloppy(text)
        if excluded is None:
            continue
        inside = (
            excluded.version == network.version
            and excluded.network_address in network
            and network.prefixlen < excluded.prefixlen
        )
        if not inside:
            causes.append(invalid(where, text, "must be a strict subset of `cidr`"))
    return causes


# ------------------------------------------------------------------------------- validation


def _validate_port(port: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    protocol = port.get("protocol")
    if isinstance(protocol, str) and protocol not in _PROTOCOLS:
        causes.append(not_supported(path.child("protocol"), JSONValue(protocol), _PROTOCOLS))
    number = port.get("port")
    end = port.get("endPort")
    if isinstance(number, int) and not isinstance(number, bool):
        causes.extend(invalid(path.child("port"), number, m) for m in is_valid_port_num(number))
        if isinstance(end, int):
            if end < number:
                causes.append(
                    invalid(path.child("endPort"), end, "must be greater than or equal to `port`")
                )
            causes.extend(invalid(path.child("endPort"), end, m) for m in is_valid_port_num(end))
    elif isinstance(number, str):
        if isinstance(end, int):
            message = "may not be specified when `port` is non-numeric"
            causes.append(invalid(path.child("endPort"), end, message))
        causes.extend(invalid(path.child("port"), number, m) for m in is_valid_port_name(number))
    elif isinstance(end, int):
        causes.append(
            invalid(path.child("endPort"), end, "may not be specified when `port` is not specified")
        )
    return causes


def _validate_peer(
    peer: Mapping[str, Any], path: Path, lenient: bool, known: frozenset[str]
) -> list[Cause]:
    causes: list[Cause] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        selector = peer.get(key)
        if isinstance(selector, Mapping):
            count += 1
            causes.extend(
                validate_label_selector(
                    selector, path.child(key), allow_invalid_label_values=lenient
                )
            )
    block = peer.get("ipBlock")
    if isinstance(block, Mapping):
        count += 1
        causes.extend(_validate_ip_block(block, path.child("ipBlock"), known))
    if count == 0:
        causes.append(required(path, "must specify a peer"))
    elif count > 1 and isinstance(block, Mapping):
        causes.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return causes


def _validate_spec(
    spec: Mapping[str, Any], lenient: bool, known: frozenset[str] = frozenset()
) -> list[Cause]:
    """``ValidateNetworkPolicySpec``."""
    causes = validate_label_selector(
        get_map(spec, "podSelector"), _SPEC.child("podSelector"), allow_invalid_label_values=lenient
    )
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(maps(get_list(spec, direction))):
            where = _SPEC.child(direction).index(i)
            for j, port in enumerate(maps(get_list(rule, "ports"))):
                causes.extend(_validate_port(port, where.child("ports").index(j)))
            for j, peer in enumerate(maps(get_list(rule, peers))):
                causes.extend(_validate_peer(peer, where.child(peers).index(j), lenient, known))
    types = get_list(spec, "policyTypes")
    if len(types) > len(_POLICY_TYPES):
        causes.append(
            invalid(
                _SPEC.child("policyTypes"),
                JSONValue(list(types)),
                "may not specify more than two policyTypes",
            )
        )
        return causes
    for i, kind in enumerate(types):
        if kind not in _POLICY_TYPES:
            causes.append(
                not_supported(_SPEC.child("policyTypes").index(i), JSONValue(kind), _POLICY_TYPES)
            )
    return causes


def validate_network_policy(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateNetworkPolicy`` with the options of a create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(get_map(obj, "spec"), False))
    return causes


def _stored_cidrs(spec: Mapping[str, Any]) -> frozenset[str]:
    found: list[str] = []
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for rule in maps(get_list(spec, direction)):
            for peer in maps(get_list(rule, peers)):
                block = peer.get("ipBlock")
                if isinstance(block, Mapping):
                    found.append(get_str(block, "cidr"))
                    found.extend(e for e in get_list(block, "except") if isinstance(e, str))
    return frozenset(found)


def validate_network_policy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: ``ValidateNetworkPolicy`` then
    ``ValidateNetworkPolicyUpdate``, both with the options the stored policy allows."""
    old_spec = get_map(old, "spec")
    lenient = bool(validate_label_selector(get_map(old_spec, "podSelector"), _SPEC))
    spec = get_map(new, "spec")
    causes = validate_object_meta(new, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(spec, lenient))
    causes.extend(validate_object_meta_update(new, old))
    causes.extend(_validate_spec(spec, lenient, _stored_cidrs(old_spec)))
    return causes


NETWORK_POLICY: Final = KindDefinition(
    group=GROUP,
    kind="NetworkPolicy",
    versions=(KindVersion(version="v1", default=default_network_policy),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="networkpolicies",
        singular="networkpolicy",
        namespaced=True,
        short_names=("netpol",),
    ),
    validate=validate_network_policy,
    validate_update=validate_network_policy_update,
    list_kind="NetworkPolicyList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (NETWORK_POLICY, list_definition(NETWORK_POLICY))
