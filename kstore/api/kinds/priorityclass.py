"""scheduling.k8s.io/v1 PriorityClass: one external version with the hub's shape.

Registered as Kubernetes serves it: cluster-scoped ``priorityclasses``, short name ``pc``, no
subresource, no category.

Defaults (``SetDefaults_PriorityClass``): ``preemptionPolicy`` ``PreemptLowerPriority`` when
unset.

Validation is ``ValidatePriorityClass``/``ValidatePriorityClassUpdate`` with Kubernetes' paths
and messages: a DNS-1123 subdomain name; names starting with ``system-`` are reserved for the
two system classes (:data:`SYSTEM_PRIORITY_CLASSES`, with their value and ``globalDefault``
false); any other class's value at most :data:`HIGHEST_USER_DEFINABLE_PRIORITY`;
``preemptionPolicy`` ``Never`` or ``PreemptLowerPriority``; on update ``value`` and
``preemptionPolicy`` cannot change.

The system classes are created when the server starts and cannot be deleted
(:mod:`kstore.registry.priorityclasses`), as kube-apiserver's scheduling post-start hook and
its PriorityClass storage do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_bool, get_int
from kstore.api.validation.field import JSONValue, Path, forbidden, not_supported, required
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "PRIORITY_CLASS",
    "SYSTEM_PRIORITY_CLASSES",
    "SYSTEM_PRIORITY_CLASS_PREFIX",
    "default_priority_class",
    "system_priority_classes",
    "validate_priority_class",
    "validate_priority_class_update",
]

GROUP: Final = "scheduling.k8s.io"

#: ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
#: ``scheduling.SystemCriticalPriority``.
_SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"

#: The system classes: name -> (value, description), in the order kube-apiserver creates them.
SYSTEM_PRIORITY_CLASSES: Final[Mapping[str, tuple[int, str]]] = {
    "system-node-critical": (
        _SYSTEM_CRITICAL_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    "system-cluster-critical": (
        _SYSTEM_CRITICAL_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
}

_PREEMPTION_POLICIES: Final = ("Never", "PreemptLowerPriority")
_VALUE: Final = Path("value")
_PREEMPTION: Final = Path("preemptionPolicy")


def system_priority_classes() -> list[Object]:
    """The system classes as scheduling.k8s.io/v1 objects (fresh on each call)."""
    return [
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
        }
        for name, (value, description) in SYSTEM_PRIORITY_CLASSES.items()
    ]


def default_priority_class(priority_class: Object) -> None:
    """``SetDefaults_PriorityClass``, in place."""
    if priority_class.get("preemptionPolicy") is None:
        priority_class["preemptionPolicy"] = "PreemptLowerPriority"


def _system_class_problem(name: str, value: int, global_default: bool) -> str:
    """``IsKnownSystemPriorityClass``'s error, or "" for a system class as it must be."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePriorityClass``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    name = metadata_of(obj).get("name")
    value = get_int(obj, "value")
    if isinstance(name, str) and name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _system_class_problem(name, value, get_bool(obj, "globalDefault"))
        if problem:
            causes.append(
                forbidden(
                    Path("metadata", "name"),
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {problem}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        causes.append(
            forbidden(
                _VALUE,
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if isinstance(policy, str):
        if not policy:
            causes.append(required(_PREEMPTION))
        elif policy not in _PREEMPTION_POLICIES:
            causes.append(not_supported(_PREEMPTION, JSONValue(policy), _PREEMPTION_POLICIES))
    return causes


def validate_priority_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: ``ValidatePriorityClassUpdate`` (metadata, the value
    and the preemption policy unchanged)."""
    causes = validate_object_meta_update(new, old)
    if get_int(new, "value") != get_int(old, "value"):
        causes.append(forbidden(_VALUE, "may not be changed in an update."))
    new_policy, old_policy = new.get("preemptionPolicy"), old.get("preemptionPolicy")
    causes.extend(
        validate_immutable_field(
            JSONValue(new_policy) if new_policy is not None else None,
            JSONValue(old_policy) if old_policy is not None else None,
            _PREEMPTION,
        )
    )
    return causes


PRIORITY_CLASS: Final = KindDefinition(
    group=GROUP,
    kind="PriorityClass",
    versions=(KindVersion(version="v1", default=default_priority_class),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="priorityclasses",
        singular="priorityclass",
        namespaced=False,
        short_names=("pc",),
    ),
    validate=validate_priority_class,
    validate_update=validate_priority_class_update,
    list_kind="PriorityClassList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (PRIORITY_CLASS, list_definition(PRIORITY_CLASS))
