"""core/v1 Service validation (Kubernetes v1.36 rules, paths and messages), on a defaulted object.

Implemented: DNS-1035 name and metadata; the topology annotations agreeing; ports required
(except headless and ExternalName services), each port's name (required when there are several,
a unique DNS label), number, protocol, target port and appProtocol; ``None`` cluster IPs refused
for NodePort and LoadBalancer; ExternalName services' ``externalName`` and forbidden IP fields;
selector labels; session affinity and its ClientIP config; ``type``; node ports forbidden for
ClusterIP, no duplicate node ports or (protocol, port) pairs; LoadBalancer-only fields; external
and internal traffic policies and the health-check node port; on update, the cluster IP and IP
family change rules and an immutable health-check node port.

Not implemented (accepted without a check): the syntax of IP addresses and CIDRs (clusterIPs,
externalIPs, source ranges) and the clusterIP/clusterIPs/ipFamilies consistency rules that need
them, ``loadBalancerClass`` and ``trafficDistribution``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import (
    get_int,
    get_list,
    get_map,
    get_str,
    maps,
    opt_int,
    opt_str,
)
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns1035_label,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = ["validate_port_num_or_name", "validate_service", "validate_service_update"]

# Sorted, as Kubernetes lists the members of a set.
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_SESSION_AFFINITIES: Final = ("ClientIP", "None")
_TYPES: Final = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_TRAFFIC_POLICIES: Final = ("Cluster", "Local")
_MAX_CLIENT_IP_AFFINITY_SECONDS: Final = 86400
_TOPOLOGY_HINTS: Final = "service.kubernetes.io/topology-aware-hints"
_TOPOLOGY_MODE: Final = "service.kubernetes.io/topology-mode"
_SOURCE_RANGES_ANNOTATION: Final = "service.beta.kubernetes.io/load-balancer-source-ranges"
_LB_ONLY: Final = "may only be used when `type` is 'LoadBalancer'"
_SPEC: Final = Path("spec")


def _strings(items: Sequence[Any]) -> list[str]:
    return [s if isinstance(s, str) else "" for s in items]


def _headless(spec: Mapping[str, Any]) -> bool:
    ips = get_list(spec, "clusterIPs")
    return len(ips) == 1 and ips[0] == "None"


def validate_port_num_or_name(port: Any, path: Path) -> list[Cause]:
    """An IntOrString port: a number in 1..65535 or an IANA service name (absent reads as 0)."""
    if isinstance(port, str):
        return [invalid(path, port, m) for m in is_valid_port_name(port)]
    number = port if isinstance(port, int) and not isinstance(port, bool) else 0
    return [invalid(path, number, m) for m in is_valid_port_num(number)]


def _service_port(
    port: Mapping[str, Any], require_name: bool, names: set[str], path: Path
) -> list[Cause]:
    causes: list[Cause] = []
    name = get_str(port, "name")
    if require_name and not name:
        causes.append(required(path.child("name")))
    elif name:
        causes.extend(invalid(path.child("name"), name, m) for m in is_dns1123_label(name))
        if name in names:
            causes.append(duplicate(path.child("name"), name))
        else:
            names.add(name)
    number = get_int(port, "port")
    causes.extend(invalid(path.child("port"), number, m) for m in is_valid_port_num(number))
    protocol = get_str(port, "protocol")
    if not protocol:
        causes.append(required(path.child("protocol")))
    elif protocol not in _PROTOCOLS:
        causes.append(not_supported(path.child("protocol"), JSONValue(protocol), _PROTOCOLS))
    causes.extend(validate_port_num_or_name(port.get("targetPort"), path.child("targetPort")))
    app_protocol = opt_str(port, "appProtocol")
    if app_protocol is not None:
        causes.extend(
            invalid(path.child("appProtocol"), app_protocol, m)
            for m in is_qualified_name(app_protocol)
        )
    return causes


def _client_ip_affinity(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    why = "when session affinity type is ClientIP"
    config = spec.get("sessionAffinityConfig")
    if not isinstance(config, Mapping):
        return [required(path, why)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, Mapping):
        return [required(path.child("clientIP"), why)]
    timeout = opt_int(client_ip, "timeoutSeconds")
    timeout_path = path.child("clientIP", "timeoutSeconds")
    if timeout is None:
        return [required(timeout_path, why)]
    if timeout <= 0 or timeout > _MAX_CLIENT_IP_AFFINITY_SECONDS:
        return [
            invalid(
                timeout_path,
                JSONValue(timeout),
                f"must be greater than 0 and less than {_MAX_CLIENT_IP_AFFINITY_SECONDS}",
            )
        ]
    return []


def _externally_accessible(spec: Mapping[str, Any]) -> bool:
    kind = get_str(spec, "type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(get_list(spec, "externalIPs"))
    )


def _needs_health_check(spec: Mapping[str, Any]) -> bool:
    return get_str(spec, "type") == "LoadBalancer" and (
        get_str(spec, "externalTrafficPolicy") == "Local"
    )


def _traffic_policies(spec: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    external = get_str(spec, "externalTrafficPolicy")
    external_path = _SPEC.child("externalTrafficPolicy")
    if not _externally_accessible(spec):
        if external:
            causes.append(
                invalid(
                    external_path,
                    JSONValue(external),
                    "may only be set for externally-accessible services",
                )
            )
    elif not external:
        causes.append(required(external_path))
    elif external not in _TRAFFIC_POLICIES:
        causes.append(not_supported(external_path, JSONValue(external), _TRAFFIC_POLICIES))
    health = get_int(spec, "healthCheckNodePort")
    health_path = _SPEC.child("healthCheckNodePort")
    if not _needs_health_check(spec):
        if health != 0:
            causes.append(
                invalid(
                    health_path,
                    health,
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` "
                    "is 'Local'",
                )
            )
    elif health == 0:
        causes.append(required(health_path))
    else:
        causes.extend(invalid(health_path, health, m) for m in is_valid_port_num(health))
    internal = opt_str(spec, "internalTrafficPolicy")
    internal_path = _SPEC.child("internalTrafficPolicy")
    if internal is None:
        # Not required of ExternalName services, for historical reasons.
        if get_str(spec, "type") in ("NodePort", "LoadBalancer", "ClusterIP"):
            causes.append(required(internal_path))
    elif internal not in _TRAFFIC_POLICIES:
        causes.append(not_supported(internal_path, JSONValue(internal), _TRAFFIC_POLICIES))
    return causes


def _port_key(port: Mapping[str, Any], number_key: str) -> tuple[str, int]:
    return get_str(port, "protocol"), get_int(port, number_key)


def validate_service(svc: Mapping[str, Any]) -> list[Cause]:
    causes = validate_object_meta(svc, True, name_is_dns1035_label)
    annotations = get_map(metadata_of(svc), "annotations")
    if (
        _TOPOLOGY_MODE in annotations
        and _TOPOLOGY_HINTS in annotations
        and annotations[_TOPOLOGY_MODE] != annotations[_TOPOLOGY_HINTS]
    ):
        causes.append(
            invalid(
                Path("metadata", "annotations").key(_TOPOLOGY_MODE),
                get_str(annotations, _TOPOLOGY_MODE),
                f"must match annotations[{_TOPOLOGY_HINTS}] when both are specified",
            )
        )
    spec = get_map(svc, "spec")
    kind = get_str(spec, "type")
    ports = maps(get_list(spec, "ports"))
    headless = _headless(spec)
    if not ports and not headless and kind != "ExternalName":
        causes.append(required(_SPEC.child("ports")))
    if kind in ("LoadBalancer", "NodePort") and headless:
        causes.append(
            invalid(
                _SPEC.child("clusterIPs").index(0),
                "None",
                f"may not be set to 'None' for {kind} services",
            )
        )
    elif kind == "ExternalName":
        for field_name in ("clusterIPs", "ipFamilies"):
            if get_list(spec, field_name):
                causes.append(
                    forbidden(_SPEC.child(field_name), "may not be set for ExternalName services")
                )
        if spec.get("ipFamilyPolicy") is not None:
            causes.append(
                forbidden(_SPEC.child("ipFamilyPolicy"), "may not be set for ExternalName services")
            )
        # A CNAME may end in a dot (fully qualified).
        cname = get_str(spec, "externalName").removesuffix(".")
        if cname:
            causes.extend(
                invalid(_SPEC.child("externalName"), cname, m) for m in is_dns1123_subdomain(cname)
            )
        else:
            causes.append(required(_SPEC.child("externalName")))
    names: set[str] = set()
    for i, port in enumerate(ports):
        causes.extend(_service_port(port, len(ports) > 1, names, _SPEC.child("ports").index(i)))
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        causes.extend(validate_labels(selector, _SPEC.child("selector")))
    affinity = get_str(spec, "sessionAffinity")
    if not affinity:
        causes.append(required(_SPEC.child("sessionAffinity")))
    elif affinity not in _SESSION_AFFINITIES:
        causes.append(
            not_supported(_SPEC.child("sessionAffinity"), JSONValue(affinity), _SESSION_AFFINITIES)
        )
    if affinity == "ClientIP":
        causes.extend(_client_ip_affinity(spec, _SPEC.child("sessionAffinityConfig")))
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        causes.append(
            forbidden(
                _SPEC.child("sessionAffinityConfig"),
                "must not be set when session affinity is None",
            )
        )
    if not kind:
        causes.append(required(_SPEC.child("type")))
    elif kind not in _TYPES:
        causes.append(not_supported(_SPEC.child("type"), JSONValue(kind), _TYPES))
    if kind == "ClusterIP":
        for i, port in enumerate(ports):
            if get_int(port, "nodePort") != 0:
                causes.append(
                    forbidden(
                        _SPEC.child("ports").index(i).child("nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    )
                )
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        key = _port_key(port, "nodePort")
        if key[1] == 0:
            continue
        if key in node_ports:
            causes.append(duplicate(_SPEC.child("ports").index(i).child("nodePort"), key[1]))
        node_ports.add(key)
    service_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        key = _port_key(port, "port")
        if key in service_ports:
            # Kubernetes prints the internal ServicePort it keyed on (Go field names, no tags).
            value = GoStruct(
                Name="", Protocol=key[0], AppProtocol=None, Port=key[1], TargetPort=0, NodePort=0
            )
            causes.append(duplicate(_SPEC.child("ports").index(i), value))
        service_ports.add(key)
    if get_list(spec, "loadBalancerSourceRanges"):
        if kind != "LoadBalancer":
            # Kubernetes capitalises this path.
            causes.append(forbidden(_SPEC.child("LoadBalancerSourceRanges"), _LB_ONLY))
    elif _SOURCE_RANGES_ANNOTATION in annotations and kind != "LoadBalancer":
        causes.append(
            forbidden(Path("metadata", "annotations").key(_SOURCE_RANGES_ANNOTATION), _LB_ONLY)
        )
    allocate = spec.get("allocateLoadBalancerNodePorts")
    if allocate is not None and kind != "LoadBalancer":
        causes.append(forbidden(_SPEC.child("allocateLoadBalancerNodePorts"), _LB_ONLY))
    if kind == "LoadBalancer" and allocate is None:
        # Kubernetes roots this path at the field itself, without "spec".
        causes.append(required(Path("allocateLoadBalancerNodePorts")))
    causes.extend(_traffic_policies(spec))
    return causes


def _shown(spec: Mapping[str, Any], key: str) -> JSONValue:
    """A []string as Go prints it: null when the field is absent (a nil slice)."""
    value = spec.get(key)
    return JSONValue(_strings(value) if isinstance(value, list) else None)


def _cluster_ip_changes(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    if "ExternalName" in (get_str(new, "type"), get_str(old, "type")):
        return []
    if _headless(old) and _headless(new):
        return []
    ips, old_ips = _strings(get_list(new, "clusterIPs")), _strings(get_list(old, "clusterIPs"))
    first = _SPEC.child("clusterIPs").index(0)
    causes: list[Cause] = []
    if len(old_ips) == len(ips):
        for i, ip in enumerate(old_ips):
            if ip != ips[i]:
                causes.append(
                    invalid(
                        _SPEC.child("clusterIPs").index(i),
                        _shown(new, "clusterIPs"),
                        "may not change once set",
                    )
                )
    elif len(old_ips) > len(ips):
        if not ips:
            causes.append(
                invalid(first, _shown(new, "clusterIPs"), "primary clusterIP can not be unset")
            )
        if old_ips and ips and ips[0] != old_ips[0]:
            causes.append(invalid(first, _shown(new, "clusterIPs"), "may not change once set"))
        if len(ips) == 1 and opt_str(new, "ipFamilyPolicy") != "SingleStack":
            causes.append(
                invalid(
                    _SPEC.child("ipFamilyPolicy"),
                    JSONValue(opt_str(new, "ipFamilyPolicy")),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                )
            )
    elif old_ips and ips[0] != old_ips[0]:
        causes.append(invalid(first, _shown(new, "clusterIPs"), "may not change once set"))
    return causes


def _ip_family_changes(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    if "ExternalName" in (get_str(new, "type"), get_str(old, "type")):
        return []
    if _headless(new) != _headless(old) or _headless(new):
        return []
    families = _strings(get_list(new, "ipFamilies"))
    old_families = _strings(get_list(old, "ipFamilies"))
    ips = _strings(get_list(new, "clusterIPs"))
    first = _SPEC.child("ipFamilies").index(0)
    causes: list[Cause] = []
    if len(old_families) == len(families):
        for i, family in enumerate(old_families):
            if family != families[i]:
                # Kubernetes reports every changed family at index 0.
                causes.append(invalid(first, _shown(new, "ipFamilies"), "may not change once set"))
    elif len(old_families) > len(families):
        if not ips:
            causes.append(
                invalid(first, _shown(new, "ipFamilies"), "primary ipFamily can not be unset")
            )
        if families and families[0] != old_families[0]:
            # Kubernetes shows the cluster IPs here, not the families.
            causes.append(invalid(first, _shown(new, "clusterIPs"), "may not change once set"))
        if len(families) == 1 and opt_str(new, "ipFamilyPolicy") != "SingleStack":
            causes.append(
                invalid(
                    _SPEC.child("ipFamilyPolicy"),
                    JSONValue(opt_str(new, "ipFamilyPolicy")),
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                )
            )
    elif old_families and families and families[0] != old_families[0]:
        causes.append(invalid(first, _shown(new, "clusterIPs"), "may not change once set"))
    return causes


def validate_service_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    causes = validate_object_meta_update(new, old)
    causes.extend(_cluster_ip_changes(spec, old_spec))
    causes.extend(_ip_family_changes(spec, old_spec))
    if (
        _needs_health_check(old_spec)
        and _needs_health_check(spec)
        and get_int(spec, "healthCheckNodePort") != get_int(old_spec, "healthCheckNodePort")
    ):
        causes.append(forbidden(_SPEC.child("healthCheckNodePort"), "field is immutable"))
    causes.extend(validate_service(new))
    return causes
