"""core/v1 Node (``no``, cluster-scoped, ``status`` subresource): objects only, as a control plane
without kubelets has them (whoever registers a node writes it, status included).

One external version, ``v1``, shaped as the hub. Defaulting is ``SetDefaults_NodeStatus``: an
absent ``allocatable`` becomes a copy of ``capacity``.

Validation runs on the hub, with Kubernetes' paths and messages (``pkg/apis/core/validation``):

- :func:`validate_node` is ``ValidateNode``: ObjectMeta (cluster-scoped, a DNS-subdomain name);
  the taints (at ``metadata.taints``, as Kubernetes reports them: a qualified-name key, a
  label-value value, a required effect among NoSchedule, PreferNoSchedule and NoExecute, unique
  by key and effect); the quantities of ``status.capacity`` and ``status.allocatable``; the pod
  CIDRs (valid, at most one per IP family, no duplicates);
- :func:`validate_node_update` is ``ValidateNodeUpdate``: ObjectMeta update rules, the
  quantities, no duplicate ``status.addresses``, pod CIDRs and ``providerID`` fixed once set,
  ``externalID`` fixed, the taints again.

Not checked: the taints and preferAvoidPods annotations, and ``spec.configSource`` /
``status.config`` (a deprecated field that the strategy drops on create).

A field selector may use ``spec.unschedulable`` besides the name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._resource_names import validate_resource_quantity_value
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
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
    is_label_value,
    is_qualified_name,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "NODE",
    "default_node_v1",
    "node_fields",
    "validate_node",
    "validate_node_update",
]

_TAINTS: Final = Path("metadata", "taints")
_POD_CIDRS: Final = Path("spec", "podCIDRs")
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_FIXED_CIDR: Final = 'node updates may not change podCIDR except from "" to valid'
_FIXED_PROVIDER: Final = 'node updates may not change providerID except from "" to valid'


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


# ------------------------------------------------------------------------------ defaulting


# NodeSystemInfo's fields have no omitempty: Go always writes them, "" when unset.
_SYSTEM_INFO: Final = (
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)


def _struct(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def default_node_v1(obj: Object) -> None:
    """v1 ``SetObjectDefaults_Node``, in place: allocatable from capacity when absent.

    The status, its ``daemonEndpoints`` and ``nodeInfo`` are Go structs, whose fields without
    omitempty (the kubelet port, the system info strings) are always written: they are filled
    with their zero values, as a node read from Kubernetes shows them (clients' models require
    the system info strings)."""
    status = _struct(obj, "status")
    if status is None:
        return
    capacity = status.get("capacity")
    if status.get("allocatable") is None and isinstance(capacity, dict):
        status["allocatable"] = dict(capacity)
    endpoints = _struct(status, "daemonEndpoints")
    kubelet = _struct(endpoints, "kubeletEndpoint") if endpoints is not None else None
    if kubelet is not None:
        kubelet.setdefault("Port", 0)
    info = _struct(status, "nodeInfo")
    if info is not None:
        for key in _SYSTEM_INFO:
            if info.get(key) is None:
                info[key] = ""


# ------------------------------------------------------------------------------ validation


def _taint_value(taint: Mapping[str, Any]) -> GoStruct:
    """The ``core.Taint`` as ``json.Marshal`` prints it."""
    out = GoStruct(key=_str(taint, "key"))
    if _str(taint, "value"):
        out["value"] = _str(taint, "value")
    out["effect"] = _str(taint, "effect")
    if taint.get("timeAdded") is not None:
        out["timeAdded"] = taint["timeAdded"]
    return out


def _validate_taints(taints: list[Any]) -> list[Cause]:
    """``validateNodeTaints``."""
    causes: list[Cause] = []
    unique: set[tuple[str, str]] = set()
    for i, raw in enumerate(taints):
        taint = raw if isinstance(raw, Mapping) else {}
        path = _TAINTS.index(i)
        key, value, effect = _str(taint, "key"), _str(taint, "value"), _str(taint, "effect")
        causes.extend(invalid(path.child("key"), key, m) for m in is_qualified_name(key))
        problems = is_label_value(value)
        if problems:
            causes.append(invalid(path.child("value"), value, ";".join(problems)))
        if not effect:
            causes.append(required(path.child("effect")))
        elif effect not in _TAINT_EFFECTS:
            causes.append(not_supported(path.child("effect"), JSONValue(effect), _TAINT_EFFECTS))
        if (effect, key) in unique:
            cause = duplicate(path, JSONValue(_taint_value(taint)))
            causes.append(
                Cause(
                    cause.type,
                    f"{cause.message}: taints must be unique by key and effect pair",
                    cause.field,
                )
            )
            continue
        unique.add((effect, key))
    return causes


def _validate_resources(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateNodeResources``: each quantity at ``status.<map>.<name>``."""
    status = _map(obj, "status")
    causes: list[Cause] = []
    for key in ("capacity", "allocatable"):
        for name, value in _map(status, key).items():
            path = Path("status", key, name)
            causes.extend(validate_resource_quantity_value(name, value, path))
    return causes


def _cidr(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """``ParseCIDRSloppy``: an address (IPv4 octets may have leading zeros) and a prefix."""
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isdigit() or len(prefix) > 3:
        return None
    if "." in address and ":" not in address:
        parts = address.split(".")
        if len(parts) != 4 or not all(p.isdigit() and len(p) <= 3 for p in parts):
            return None
        address = ".".join(str(int(p)) for p in parts)
    try:
        return ipaddress.ip_network(f"{address}/{int(prefix)}", strict=False)
    except ValueError:
        return None


def _validate_pod_cidrs(spec: Mapping[str, Any]) -> list[Cause]:
    cidrs = [c if isinstance(c, str) else "" for c in _list(spec, "podCIDRs")]
    causes: list[Cause] = []
    parsed = []
    for i, text in enumerate(cidrs):
        network = _cidr(text)
        parsed.append(network)
        if network is None:
            causes.append(
                invalid(
                    _POD_CIDRS.index(i),
                    text,
                    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                )
            )
    if len(cidrs) > 1:
        families = {n.version for n in parsed if n is not None}
        dual = None not in parsed and families == {4, 6}
        if not dual or len(cidrs) > 2:
            causes.append(
                invalid(
                    _POD_CIDRS,
                    JSONValue(cidrs),
                    "may specify no more than one CIDR for each IP family",
                )
            )
        seen: set[str] = set()
        for i, text in enumerate(cidrs):
            if text in seen:
                causes.append(duplicate(_POD_CIDRS.index(i), text))
            seen.add(text)
    return causes


def validate_node(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateNode``: a node (hub) on create, and first on every update."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = _map(obj, "spec")
    causes.extend(_validate_taints(_list(spec, "taints")))
    causes.extend(_validate_resources(obj))
    causes.extend(_validate_pod_cidrs(spec))
    return causes


def validate_node_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateNodeUpdate`` (the status subresource's whole validation)."""
    causes = validate_object_meta_update(new, old)
    causes.extend(_validate_resources(new))
    seen: list[tuple[str, str]] = []
    for i, raw in enumerate(_list(_map(new, "status"), "addresses")):
        address = raw if isinstance(raw, Mapping) else {}
        pair = (_str(address, "type"), _str(address, "address"))
        if pair in seen:
            value = GoStruct(type=pair[0], address=pair[1])
            causes.append(duplicate(Path("status", "addresses").index(i), JSONValue(value)))
        seen.append(pair)
    new_spec, old_spec = _map(new, "spec"), _map(old, "spec")
    old_cidrs, new_cidrs = _list(old_spec, "podCIDRs"), _list(new_spec, "podCIDRs")
    if old_cidrs:
        if len(old_cidrs) != len(new_cidrs):
            causes.append(forbidden(_POD_CIDRS, _FIXED_CIDR))
        else:
            causes.extend(
                forbidden(_POD_CIDRS, _FIXED_CIDR)
                for before, after in zip(old_cidrs, new_cidrs, strict=True)
                if before != after
            )
    old_provider = _str(old_spec, "providerID")
    if old_provider and old_provider != _str(new_spec, "providerID"):
        causes.append(forbidden(Path("spec", "providerID"), _FIXED_PROVIDER))
    causes.extend(_validate_taints(_list(new_spec, "taints")))
    if _str(new_spec, "externalID") != _str(old_spec, "externalID"):
        causes.append(forbidden(Path("spec", "externalID"), "may not be updated"))
    return causes


def validate_node_and_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: ``ValidateNode``, then ``ValidateNodeUpdate``."""
    causes = validate_node(new)
    causes.extend(validate_node_update(new, old))
    return causes


# ------------------------------------------------------------------------------ the kind


def node_fields(obj: Object) -> Mapping[str, str]:
    """``NodeToSelectableFields``: ``spec.unschedulable`` as Go prints a bool."""
    return {"spec.unschedulable": "true" if _map(obj, "spec").get("unschedulable") else "false"}


NODE = KindDefinition(
    group="",
    kind="Node",
    versions=(KindVersion(version="v1", default=default_node_v1),),
    storage_version="v1",
    validate=validate_node,
    validate_update=validate_node_and_update,
    resource=ResourceInfo(
        plural="nodes",
        singular="node",
        namespaced=False,
        short_names=("no",),
        subresources=("status",),
    ),
    field_labels=node_fields,
    list_kind="NodeList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (NODE, list_definition(NODE))
