"""core/v1 Pod: Kubernetes' pod strategy (``pkg/registry/core/pod/strategy.go``).

- create: ``generation`` 1; ``status`` replaced by ``{phase: Pending, qosClass}`` (the QoS
  class computed from the requests and limits, or the one the request carried, as
  ``qos.GetPodQOS`` reads the status before it is replaced); a pod with scheduling gates gets
  the ``PodScheduled=False/SchedulingGated`` condition; a warning when the name is not a DNS
  label (it becomes the hostname);
- update: ``status`` kept, ``generation`` bumped when ``spec`` changes;
- ``status`` writes: ``spec`` and ``ownerReferences`` kept, ``qosClass`` and the
  ``observedGeneration`` of the status and of its conditions back-filled when cleared;
- graceful deletion: the requested grace period, else ``spec.terminationGracePeriodSeconds``;
  0 (deleted at once, after a write that marks it) for a pod not scheduled to a node or
  already finished.

The field types are those of Kubernetes' OpenAPI (list-map keys, sets, atomic selectors); the
pod spec's are shared with the kinds that embed a pod template.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.validation.names import is_dns1123_label
from kstore.registry.fieldpath import ITEM, FieldTypes, ListType
from kstore.registry.interface import RequestContext
from kstore.registry.strategies._quantity import parse_quantity
from kstore.registry.strategies.base import (
    OBJECT_META_TYPES,
    STATUS,
    BuiltinStrategy,
    copy_value,
    keep,
    meta,
    read_meta,
)

__all__ = ["POD_SPEC_TYPES", "PodStrategy", "compute_pod_qos", "pod_template_types"]

_QOS_RESOURCES: Final = ("cpu", "memory")
_TERMINAL_PHASES: Final = ("Failed", "Succeeded")
_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"


def _container_types() -> dict[tuple[str, ...], ListType]:
    return {
        ("ports",): ListType(("containerPort", "protocol")),
        ("env",): ListType(("name",)),
        ("volumeMounts",): ListType(("mountPath",)),
        ("volumeDevices",): ListType(("devicePath",)),
        ("resources", "claims"): ListType(("name",)),
    }


def _pod_spec_types() -> FieldTypes:
    lists: dict[tuple[str, ...], ListType] = {
        ("volumes",): ListType(("name",)),
        ("imagePullSecrets",): ListType(("name",)),
        ("hostAliases",): ListType(("ip",)),
        ("topologySpreadConstraints",): ListType(("topologyKey", "whenUnsatisfiable")),
        ("schedulingGates",): ListType(("name",)),
        ("resourceClaims",): ListType(("name",)),
    }
    for key in ("containers", "initContainers", "ephemeralContainers"):
        lists[(key,)] = ListType(("name",))
        for path, list_type in _container_types().items():
            lists[(key, ITEM, *path)] = list_type
    affinity = ("affinity",)
    atomic: set[tuple[str, ...]] = {("topologySpreadConstraints", ITEM, "labelSelector")}
    for kind in ("podAffinity", "podAntiAffinity"):
        for rule in (
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ):
            term: tuple[str, ...] = (*affinity, kind, rule, ITEM)
            if rule.startswith("preferred"):
                term = (*term, "podAffinityTerm")
            atomic.add((*term, "labelSelector"))
            atomic.add((*term, "namespaceSelector"))
    atomic.add((*affinity, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
    return FieldTypes(lists=lists, atomic=frozenset(atomic))


#: A pod spec's list types, rooted at the spec.
POD_SPEC_TYPES: Final = _pod_spec_types()
_POD_STATUS_TYPES: Final = FieldTypes(
    lists={
        ("conditions",): ListType(("type",)),
        ("podIPs",): ListType(("ip",)),
        ("hostIPs",): ListType(("ip",)),
        ("resourceClaimStatuses",): ListType(("name",)),
    }
)


def pod_template_types(prefix: tuple[str, ...]) -> FieldTypes:
    """The field types of a pod template (metadata and spec) at ``prefix``."""
    template_meta = FieldTypes(
        lists={
            ("metadata", "finalizers"): ListType(),
            ("metadata", "ownerReferences"): ListType(("uid",)),
        }
    )
    return FieldTypes().mounted(prefix, template_meta).mounted((*prefix, "spec"), POD_SPEC_TYPES)


_POD_TYPES: Final = OBJECT_META_TYPES.mounted(("spec",), POD_SPEC_TYPES).mounted(
    (STATUS,), _POD_STATUS_TYPES
)


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _items(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = obj.get(key)
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _add_positive(totals: dict[str, Fraction], resources: Mapping[str, Any]) -> set[str]:
    """Add the positive cpu/memory quantities to ``totals``; return the names added."""
    found: set[str] = set()
    for name, quantity in resources.items():
        if name not in _QOS_RESOURCES:
            continue
        amount = parse_quantity(quantity)
        if amount is not None and amount > 0:
            totals[name] = totals.get(name, Fraction(0)) + amount
            found.add(name)
    return found


def _pod_level_resources_set(spec: Mapping[str, Any]) -> bool:
    resources = _map(spec, "resources")
    names = [*_map(resources, "requests"), *_map(resources, "limits")]
    return any(n in _QOS_RESOURCES or n.startswith("hugepages-") for n in names)


def compute_pod_qos(pod: Mapping[str, Any]) -> str:
    """``Guaranteed``, ``Burstable`` or ``BestEffort``, as Kubernetes' ``ComputePodQOS``
    (pod-level resources, when set, decide instead of the containers')."""
    spec = _map(pod, "spec")
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    if _pod_level_resources_set(spec):
        resources = _map(spec, "resources")
        _add_positive(requests, _map(resources, "requests"))
        if _map(resources, "limits"):
            found = _add_positive(limits, _map(resources, "limits"))
            guaranteed = found.issuperset(_QOS_RESOURCES)
    else:
        for container in (*_items(spec, "containers"), *_items(spec, "initContainers")):
            resources = _map(container, "resources")
            _add_positive(requests, _map(resources, "requests"))
            if not _add_positive(limits, _map(resources, "limits")).issuperset(_QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if (
        guaranteed
        and all(limits.get(n) == q for n, q in requests.items())
        and len(requests) == len(limits)
    ):
        return "Guaranteed"
    return "Burstable"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PodStrategy(BuiltinStrategy):
    tracks_generation = True
    supports_graceful_deletion = True

    @property
    def field_types(self) -> FieldTypes:
        return _POD_TYPES

    def zero_object(self) -> Object:
        return {"metadata": {}, "spec": {"containers": None}, STATUS: {}}

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        if subresource == STATUS:
            return frozenset(
                {
                    ("f:spec",),
                    ("f:metadata", "f:deletionTimestamp"),
                    ("f:metadata", "f:ownerReferences"),
                }
            )
        return frozenset({("f:status",)})

    def prepare_for_create(self, ctx: RequestContext, obj: Object) -> list[str]:
        meta(obj)["generation"] = 1
        status = _map(obj, STATUS)
        qos = status.get("qosClass")
        obj[STATUS] = {
            "phase": "Pending",
            "qosClass": qos if isinstance(qos, str) and qos else compute_pod_qos(obj),
        }
        if _items(_map(obj, "spec"), "schedulingGates"):
            obj[STATUS]["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": _now(),
                    "reason": "SchedulingGated",
                    "message": _GATED_MESSAGE,
                }
            ]
        warnings: list[str] = []
        name = read_meta(obj).get("name")
        if isinstance(name, str) and name:
            problems = is_dns1123_label(name)
            if problems:
                warnings.append(
                    "metadata.name: this is used in the Pod's hostname, which can result in "
                    "surprising behavior; a DNS label is recommended: "
                    f"[{' '.join(problems)}]"
                )
        return warnings

    def generation_changed(self, obj: Object, old: Object) -> bool:
        return obj.get("spec") != old.get("spec")

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource != STATUS:
            super().prepare_for_update(ctx, obj, old, subresource)
            return
        keep(obj, old, "spec")
        old_meta = read_meta(old)
        new_meta = meta(obj)
        if "ownerReferences" in old_meta:
            new_meta["ownerReferences"] = copy_value(old_meta["ownerReferences"])
        else:
            new_meta.pop("ownerReferences", None)
        status = obj.get(STATUS)
        if not isinstance(status, dict):
            status = {}
            obj[STATUS] = status
        old_status = _map(old, STATUS)
        if not status.get("qosClass") and old_status.get("qosClass"):
            status["qosClass"] = old_status["qosClass"]
        _keep_observed_generations(status, old_status)

    def graceful_delete_period(self, obj: Object, requested: int | None) -> int | None:
        spec, status = _map(obj, "spec"), _map(obj, STATUS)
        if requested is not None:
            period = requested
        else:
            grace = spec.get("terminationGracePeriodSeconds")
            period = grace if isinstance(grace, int) and not isinstance(grace, bool) else 0
        if not spec.get("nodeName") or status.get("phase") in _TERMINAL_PHASES:
            period = 0
        return 1 if period < 0 else period


def _keep_observed_generations(status: dict[str, Any], old_status: Mapping[str, Any]) -> None:
    if not status.get("observedGeneration") and old_status.get("observedGeneration"):
        status["observedGeneration"] = old_status["observedGeneration"]
    previous: dict[Any, list[Any]] = {}
    for condition in _items(old_status, "conditions"):
        previous.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return
    for condition in conditions:
        if not isinstance(condition, dict):
            continue
        olds = previous.get(condition.get("type"))
        old_generation = olds.pop(0) if olds else None
        if not condition.get("observedGeneration") and old_generation:
            condition["observedGeneration"] = old_generation
