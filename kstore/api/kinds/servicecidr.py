"""networking.k8s.io/v1 IPAddress and ServiceCIDR: the objects behind Service cluster IPs.

Registered as Kubernetes serves them: cluster-scoped ``ipaddresses`` (short name ``ip``, no
subresources) and ``servicecidrs`` (a ``status`` subresource); no category. Kubernetes
registers no defaults for either.

Validation is Kubernetes' ``ValidateIPAddress``/``ValidateServiceCIDR`` and their updates:

- an IPAddress is named by an IP address in canonical form, has a ``parentRef`` with a
  ``resource`` and a ``name`` (path segment names), an optional DNS-1123 ``group`` and an
  optional ``namespace``; the ``parentRef`` never changes;
- a ServiceCIDR has a DNS-1123 subdomain name and one or two ``cidrs`` in canonical CIDR form,
  two only of different IP families; they never change.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str
from kstore.api.validation.field import GoStruct, JSONValue, Path, invalid, required
from kstore.api.validation.names import (
    is_dns1123_subdomain,
    is_path_segment_name,
    name_is_dns_subdomain,
    validate_namespace_name,
)
from kstore.api.validation.objectmeta import (
    FIELD_IMMUTABLE,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "IP_ADDRESS",
    "SERVICE_CIDR",
    "canonical_cidr_problems",
    "ip_address_name_problems",
    "validate_ip_address",
    "validate_ip_address_update",
    "validate_service_cidr",
    "validate_service_cidr_status_update",
    "validate_service_cidr_update",
]

GROUP: Final = "networking.k8s.io"
_PARENT_REF: Final = Path("spec", "parentRef")
_CIDRS: Final = Path("spec", "cidrs")
_CIDR_EXAMPLE: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def ip_address_name_problems(name: str, prefix: bool = False) -> list[str]:
    """``ValidateIPAddressName``: Go's ``netip.ParseAddr`` must accept the name, and print it
    back unchanged."""
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return [f'ParseAddr("{name}"): unable to parse IP']
    if str(ip) != name:
        return ["must be a canonical format IP address"]
    return []


def canonical_cidr_problems(cidr: str) -> list[str]:
    """``IsValidCIDR``: a CIDR Go parses, written in its canonical form."""
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return [_CIDR_EXAMPLE]
    if "/" not in cidr:
        return [_CIDR_EXAMPLE]
    if str(network) != cidr:
        return [f'must be in canonical form ("{network}")']
    return []


def _validate_parent_ref(spec: Mapping[str, Any]) -> list[Cause]:
    parent = spec.get("parentRef")
    if not isinstance(parent, Mapping):
        return [required(_PARENT_REF)]
    causes: list[Cause] = []
    group = get_str(parent, "group")
    if group:
        causes.extend(
            invalid(_PARENT_REF.child("group"), group, m) for m in is_dns1123_subdomain(group)
        )
    for key in ("resource", "namespace", "name"):
        value = get_str(parent, key)
        where = _PARENT_REF.child(key)
        if key == "namespace":
            if value:
                causes.extend(
                    invalid(where, value, m) for m in validate_namespace_name(value, False)
                )
        elif not value:
            causes.append(required(where))
        else:
            causes.extend(invalid(where, value, m) for m in is_path_segment_name(value))
    return causes


def validate_ip_address(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIPAddress``."""
    causes = validate_object_meta(obj, False, ip_address_name_problems)
    causes.extend(_validate_parent_ref(get_map(obj, "spec")))
    return causes


def _parent_ref_shown(obj: Mapping[str, Any]) -> Any:
    parent = get_map(obj, "spec").get("parentRef")
    if not isinstance(parent, Mapping):
        return None
    return GoStruct(
        Group=get_str(parent, "group"),
        Resource=get_str(parent, "resource"),
        Namespace=get_str(parent, "namespace"),
        Name=get_str(parent, "name"),
    )


def validate_ip_address_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIPAddressUpdate``: metadata, then an unchanged ``parentRef``."""
    causes = validate_object_meta_update(new, old)
    new_ref, old_ref = _parent_ref_shown(new), _parent_ref_shown(old)
    if get_map(new, "spec").get("parentRef") != get_map(old, "spec").get("parentRef"):
        causes.extend(validate_immutable_field(new_ref, old_ref if old_ref else None, _PARENT_REF))
    return causes


def _family(cidr: str) -> int:
    try:
        return ipaddress.ip_network(cidr, strict=False).version
    except ValueError:
        return 0


def _spec_shown(obj: Mapping[str, Any]) -> GoStruct:
    return GoStruct(CIDRs=[str(c) for c in get_list(get_map(obj, "spec"), "cidrs")])


def validate_service_cidr(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateServiceCIDR``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    cidrs = [str(c) for c in get_list(get_map(obj, "spec"), "cidrs")]
    if not cidrs:
        causes.append(required(_CIDRS, "at least one CIDR required"))
        return causes
    if len(cidrs) > 2:
        causes.append(invalid(_CIDRS, _spec_shown(obj), "may only hold up to 2 values"))
        return causes
    for i, cidr in enumerate(cidrs):
        causes.extend(invalid(_CIDRS.index(i), cidr, m) for m in canonical_cidr_problems(cidr))
    if len(cidrs) == 2 and _family(cidrs[0]) == _family(cidrs[1]) != 0:
        causes.append(
            invalid(_CIDRS, _spec_shown(obj), "may only hold up to one CIDR for each IP family")
        )
    return causes


def validate_service_cidr_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateServiceCIDRUpdate``: metadata, the CIDRs unchanged (one may be added to a
    single-stack CIDR, of the other family), then the new object."""
    causes = validate_object_meta_update(new, old)
    new_cidrs = [str(c) for c in get_list(get_map(new, "spec"), "cidrs")]
    old_cidrs = [str(c) for c in get_list(get_map(old, "spec"), "cidrs")]
    if len(new_cidrs) == len(old_cidrs) or (len(old_cidrs) == 1 and len(new_cidrs) == 2):
        for i, cidr in enumerate(old_cidrs):
            if cidr != new_cidrs[i]:
                causes.append(invalid(_CIDRS.index(i), new_cidrs[i], FIELD_IMMUTABLE))
    else:
        causes.append(invalid(_CIDRS, JSONValue(new_cidrs), FIELD_IMMUTABLE))
    causes.extend(validate_service_cidr(new))
    return causes


def validate_service_cidr_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateServiceCIDRStatusUpdate``: the metadata only."""
    return validate_object_meta_update(new, old)


IP_ADDRESS: Final = KindDefinition(
    group=GROUP,
    kind="IPAddress",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="ipaddresses", singular="ipaddress", namespaced=False, short_names=("ip",)
    ),
    validate=validate_ip_address,
    validate_update=validate_ip_address_update,
    list_kind="IPAddressList",
)

SERVICE_CIDR: Final = KindDefinition(
    group=GROUP,
    kind="ServiceCIDR",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="servicecidrs",
        singular="servicecidr",
        namespaced=False,
        subresources=("status",),
    ),
    validate=validate_service_cidr,
    validate_update=validate_service_cidr_update,
    list_kind="ServiceCIDRList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    IP_ADDRESS,
    list_definition(IP_ADDRESS),
    SERVICE_CIDR,
    list_definition(SERVICE_CIDR),
)
