"""node.k8s.io/v1 RuntimeClass: one external version with the hub's shape.

Registered as Kubernetes serves it: cluster-scoped ``runtimeclasses``, no short name, no
subresource, no category. Kubernetes registers no defaults for it.

Validation is ``ValidateRuntimeClass`` (on create and on update) and
``ValidateRuntimeClassUpdate`` with Kubernetes' paths and messages: a DNS-1123 subdomain name; a
``handler`` that is a DNS-1123 label, immutable; the overhead's ``podFixed`` checked as a
container's limits are (``overhead.limits[<name>]``: a resource name containers may use, a
quantity not negative, an integer for extended resources); the scheduling node selector as
labels and its tolerations as a pod's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.quantity import parse_quantity
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str
from kstore.api.validation.core.podspec import validate_tolerations
from kstore.api.validation.field import Path, invalid
from kstore.api.validation.names import is_qualified_name, name_is_dns_label, name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "RUNTIME_CLASS",
    "validate_runtime_class",
    "validate_runtime_class_update",
]

GROUP: Final = "node.k8s.io"

_HANDLER: Final = Path("handler")
#: ``standardContainerResources`` (besides the ``hugepages-`` ones).
_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
#: The rest of ``standardResources``: valid names, but not for containers.
_OTHER_STANDARD_RESOURCES: Final = frozenset(
    {
        "storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
    }
)


def _is_native(name: str) -> bool:
    domain = name.partition("/")[0] if "/" in name else ""
    return not domain or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")


def _validate_resource_name(name: str, path: Path) -> list[Cause]:
    """``validateContainerResourceName``."""
    problems = is_qualified_name(name)
    if problems:
        return [invalid(path, name, m) for m in problems]
    if "/" not in name:
        container = name in _CONTAINER_RESOURCES or name.startswith("hugepages-")
        if not container and name not in _OTHER_STANDARD_RESOURCES:
            return [invalid(path, name, "must be a standard resource type or fully qualified")]
        if not container:
            return [invalid(path, name, "must be a standard resource for containers")]
    return []


def _validate_overhead(overhead: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateResourceRequirements`` of limits that are the overhead's ``podFixed``."""
    causes: list[Cause] = []
    limits = path.child("limits")
    for name, value in sorted(get_map(overhead, "podFixed").items()):
        where = limits.key(name)
        causes.extend(_validate_resource_name(name, where))
        amount = parse_quantity(value)
        if amount is None:
            continue
        if amount < 0:
            causes.append(invalid(where, str(value), "must be greater than or equal to 0"))
        if "/" in name and not _is_native(name) and math.ceil(amount * 1000) % 1000:
            causes.append(invalid(where, str(value), "must be an integer"))
    return causes


def validate_runtime_class(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateRuntimeClass``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    handler = get_str(obj, "handler")
    causes.extend(invalid(_HANDLER, handler, m) for m in name_is_dns_label(handler, False))
    overhead = obj.get("overhead")
    if isinstance(overhead, Mapping):
        causes.extend(_validate_overhead(overhead, Path("overhead")))
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, Mapping):
        where = Path("scheduling")
        selector = scheduling.get("nodeSelector")
        if isinstance(selector, Mapping):
            causes.extend(validate_labels(selector, where.child("nodeSelector")))
        causes.extend(
            validate_tolerations(get_list(scheduling, "tolerations"), where.child("tolerations"))
        )
    return causes


def validate_runtime_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: ``ValidateRuntimeClass`` of the new object, then
    ``ValidateRuntimeClassUpdate`` (metadata, the immutable handler)."""
    causes = validate_runtime_class(new)
    causes.extend(validate_object_meta_update(new, old))
    causes.extend(
        validate_immutable_field(get_str(new, "handler"), get_str(old, "handler"), _HANDLER)
    )
    return causes


RUNTIME_CLASS: Final = KindDefinition(
    group=GROUP,
    kind="RuntimeClass",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(plural="runtimeclasses", singular="runtimeclass", namespaced=False),
    validate=validate_runtime_class,
    validate_update=validate_runtime_class_update,
    list_kind="RuntimeClassList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (RUNTIME_CLASS, list_definition(RUNTIME_CLASS))
