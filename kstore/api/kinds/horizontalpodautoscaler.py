"""autoscaling HorizontalPodAutoscaler: the hub has autoscaling/v2's shape; storage is
autoscaling/v2; autoscaling/v1 converts through annotations, losslessly
(:mod:`kstore.api.kinds._hpa_conversion`).

Defaulting is autoscaling/v2's ``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas`` 1; no
metrics means one Resource metric, 80% average CPU utilization; a ``behavior`` that is set gets
both directions filled field by field (scale up: no stabilization window, ``Max``, 4 pods or
100% per 15 s; scale down: ``Max``, 100% per 15 s, the window left to the controller's flag).

Validation (:mod:`kstore.api.kinds._hpa_validation`) runs on the hub with Kubernetes' paths and
messages; the ``status`` subresource checks the replica counts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._hpa_conversion import default_hpa_v1, hpa_from_hub, hpa_to_hub
from kstore.api.kinds._hpa_validation import hpa_options, validate_hpa_spec, validate_hpa_status
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_map
from kstore.api.validation.field import Path
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import validate_object_meta
from kstore.errors import Cause

__all__ = [
    "DEFAULT_CPU_UTILIZATION",
    "DEFINITIONS",
    "GROUP",
    "HORIZONTAL_POD_AUTOSCALER",
    "default_hpa_v2",
    "hpa_from_hub",
    "hpa_to_hub",
    "validate_hpa",
    "validate_hpa_status_update",
    "validate_hpa_update",
]

GROUP: Final = "autoscaling"

#: The CPU utilization (percent) an autoscaler without metrics aims at.
DEFAULT_CPU_UTILIZATION: Final = 80

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")

_SCALE_UP_RULES: Final = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
# The scale-down window stays unset: the controller's --horizontal-pod-autoscaler-downscale-
# stabilization flag supplies it.
_SCALE_DOWN_RULES: Final = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}
# HPAScalingRules' fields in declaration order.
_RULE_FIELDS: Final = ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance")


def default_cpu_metric() -> dict[str, Any]:
    """The metric an autoscaler without metrics gets."""
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION},
        },
    }


def _scaling_rules(rules: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``GenerateHPAScale{Up,Down}Rules``: the defaults, overridden by each field that is set
    (``policies`` even when empty: Go tests the slice for nil)."""
    given = rules if isinstance(rules, Mapping) else {}
    out: dict[str, Any] = {}
    for key in _RULE_FIELDS:
        value = given.get(key)
        if value is None and key in defaults:
            value = copy.deepcopy(defaults[key])
        if value is not None:
            out[key] = value
    return out


def default_hpa_v2(obj: Object) -> None:
    """autoscaling/v2 ``SetDefaults_HorizontalPodAutoscaler``, in place."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [default_cpu_metric()]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _scaling_rules(behavior.get("scaleUp"), _SCALE_UP_RULES)
        behavior["scaleDown"] = _scaling_rules(behavior.get("scaleDown"), _SCALE_DOWN_RULES)


# ------------------------------------------------------------------------ validation


def validate_hpa(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateHorizontalPodAutoscaler``: ObjectMeta (a DNS subdomain name), then the spec
    with the create options."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(validate_hpa_spec(get_map(obj, "spec"), _SPEC, hpa_options(obj, None)))
    return causes


def validate_hpa_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateHorizontalPodAutoscalerUpdate``'s spec part (the store checks ObjectMeta),
    with the options the stored object allows."""
    return validate_hpa_spec(get_map(new, "spec"), _SPEC, hpa_options(new, old))


def validate_hpa_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateHorizontalPodAutoscalerStatusUpdate``: the replica counts not negative."""
    return validate_hpa_status(get_map(new, "status"), _STATUS)


HORIZONTAL_POD_AUTOSCALER = KindDefinition(
    group=GROUP,
    kind="HorizontalPodAutoscaler",
    versions=(
        KindVersion(version="v2", default=default_hpa_v2),
        KindVersion(version="v1", to_hub=hpa_to_hub, from_hub=hpa_from_hub, default=default_hpa_v1),
    ),
    storage_version="v2",
    validate=validate_hpa,
    validate_update=validate_hpa_update,
    resource=ResourceInfo(
        plural="horizontalpodautoscalers",
        singular="horizontalpodautoscaler",
        namespaced=True,
        short_names=("hpa",),
        categories=("all",),
        subresources=("status",),
    ),
    list_kind="HorizontalPodAutoscalerList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    HORIZONTAL_POD_AUTOSCALER,
    list_definition(HORIZONTAL_POD_AUTOSCALER),
)
