"""core/v1 Pod: Kubernetes' pod strategy (``pkg/registry/core/pod/strategy.go``).

- create: ``generation`` 1; ``status`` replaced by ``{phase: Pending, qosClass}`` (the QoS
  class computed from the requests and limits, or the one the request carried, as
  ``qos.GetPodQOS`` reads the status before it is replaced); a pod with scheduling gates gets
  the ``PodScheduled=False/SchedulingGated`` condition; a warning when the name is not a DNS
  label (it becomes the hostname);
- update: ``status`` kept, ``generation`` bumped when ``spec`` changes;
- ``status`` writes: ``spec`` and ``ownerReferences`` kept, ``qosClass`` and the
  ``observedGeneration`` of the status and of its conditions back-filled when cleared;
- ``binding`` writes (the ``pods/binding`` subresource sets ``spec.nodeName``, the
  annotations and the ``PodScheduled`` condition): taken as written, without the update
  validation or a generation bump, as kube-apiserver writes them straight to storage;
- ``ephemeralcontainers`` writes: everything but ``spec.ephemeralContainers`` kept from the
  stored pod; ``resize`` writes: everything but the ``resources`` and ``resizePolicy`` of its
  containers (and of its restartable init containers) kept; both bump ``generation`` and are
  validated as Kubernetes validates those subresources;
- graceful deletion: the requested grace period, else ``spec.terminationGracePeriodSeconds``;
  0 (deleted at once, after a write that marks it) for a pod not scheduled to a node or
  already finished.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.quantity import nano_units
from kstore.api.validation.core.pod_subresources import (
    validate_pod_ephemeral_containers_update,
    validate_pod_resize,
)
from kstore.api.validation.names import is_dns1123_label
from kstore.errors import Cause
from kstore.registry.interface import RequestContext
from kstore.registry.strategies.base import (
    STATUS,
    BuiltinStrategy,
    copy_value,
    keep,
    meta,
    read_meta,
)

__all__ = ["BINDING", "EPHEMERAL_CONTAINERS", "RESIZE", "PodStrategy", "compute_pod_qos"]

_QOS_RESOURCES: Final = ("cpu", "memory")
_TERMINAL_PHASES: Final = ("Failed", "Succeeded")
_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _items(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = obj.get(key)
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _add_positive(totals: dict[str, int | Fraction], resources: Mapping[str, Any]) -> set[str]:
    """Add the positive cpu/memory quantities to ``totals`` (in billionths, exact); return
    the names added."""
    found: set[str] = set()
    for name, quantity in resources.items():
        if name not in _QOS_RESOURCES:
            continue
        amount = nano_units(quantity)
        if amount is not None and amount > 0:
            totals[name] = totals.get(name, 0) + amount
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
    requests: dict[str, int | Fraction] = {}
    limits: dict[str, int | Fraction] = {}
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


#: The ``pods/binding`` subresource's writes.
BINDING: Final = "binding"
#: The subresources that change one part of the spec.
EPHEMERAL_CONTAINERS: Final = "ephemeralcontainers"
RESIZE: Final = "resize"
_RESIZABLE: Final = ("resources", "resizePolicy")


def _kept_but(obj: Object, old: Object, spec: dict[str, Any]) -> None:
    """``obj`` becomes ``old`` with ``spec``; its identity, resourceVersion and managed fields
    as the request gave them."""
    new_meta = read_meta(obj)
    carried = {
        k: new_meta[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "managedFields")
        if k in new_meta
    }
    kept = copy_value(old)
    kept_meta = meta(kept)
    kept_meta.pop("managedFields", None)
    kept_meta.update(carried)
    kept["spec"] = spec
    obj.clear()
    obj.update(kept)


def _resized_containers(new: list[Any], old: list[Any], restartable_only: bool) -> list[Any]:
    by_name = {c.get("name"): c for c in new if isinstance(c, dict)}
    out = []
    for container in old:
        container = copy_value(container)
        wanted = by_name.get(container.get("name")) if isinstance(container, dict) else None
        eligible = not restartable_only or container.get("restartPolicy") == "Always"
        if wanted is not None and eligible:
            for key in _RESIZABLE:
                if key in wanted:
                    container[key] = copy_value(wanted[key])
                else:
                    container.pop(key, None)
        out.append(container)
    return out


class PodStrategy(BuiltinStrategy):
    tracks_generation = True
    supports_graceful_deletion = True

    def subresources(self) -> tuple[str, ...]:
        return (*super().subresources(), BINDING, EPHEMERAL_CONTAINERS, RESIZE)

    def reset_fields(self, subresource: str) -> frozenset[tuple[str, ...]]:
        if subresource == BINDING:
            return frozenset()
        if subresource in (EPHEMERAL_CONTAINERS, RESIZE):
            return frozenset({("status",), ("metadata",)})
        if subresource == STATUS:
            return frozenset(
                {
                    ("spec",),
                    ("metadata", "deletionTimestamp"),
                    ("metadata", "ownerReferences"),
                }
            )
        return frozenset({("status",)})

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

    def validate_kind_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> list[Cause]:
        if subresource == BINDING:
            return []
        if subresource == EPHEMERAL_CONTAINERS:
            return validate_pod_ephemeral_containers_update(obj, old)
        if subresource == RESIZE:
            old_qos = _map(old, STATUS).get("qosClass") or compute_pod_qos(old)
            return validate_pod_resize(obj, old, str(old_qos), compute_pod_qos(obj))
        return super().validate_kind_update(ctx, obj, old, subresource)

    def prepare_for_update(
        self, ctx: RequestContext, obj: Object, old: Object, subresource: str
    ) -> None:
        if subresource == BINDING:
            return
        if subresource in (EPHEMERAL_CONTAINERS, RESIZE):
            new_spec, old_spec = _map(obj, "spec"), _map(old, "spec")
            spec = copy_value(dict(old_spec))
            if subresource == EPHEMERAL_CONTAINERS:
                if "ephemeralContainers" in new_spec:
                    spec["ephemeralContainers"] = copy_value(new_spec["ephemeralContainers"])
                else:
                    spec.pop("ephemeralContainers", None)
            else:
                for key, restartable_only in (("containers", False), ("initContainers", True)):
                    if key in old_spec:
                        spec[key] = _resized_containers(
                            list(_items(new_spec, key)),
                            list(_items(old_spec, key)),
                            restartable_only,
                        )
            _kept_but(obj, old, spec)
            if self.generation_changed(obj, old):
                meta(obj)["generation"] = int(read_meta(old).get("generation") or 0) + 1
            return
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
