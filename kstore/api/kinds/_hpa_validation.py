"""autoscaling HorizontalPodAutoscaler validation: Kubernetes' ``pkg/apis/autoscaling/validation``
on the hub (autoscaling/v2's shape), with its field paths and messages.

- :func:`validate_hpa_spec` is ``validateHorizontalPodAutoscalerSpec``: ``minReplicas`` at least
  the lower bound (1; 0 only for an object that already had it, as the ``HPAScaleToZero`` gate
  is off), ``maxReplicas`` positive and not below ``minReplicas``, the ``scaleTargetRef``
  (kind and name path segments, an ``apiVersion`` with a group), each metric (its type, exactly
  the one matching source, targets), scale to zero only with an Object or External metric, and
  the scaling behavior (windows, select policies, policies, tolerance);
- :func:`validate_hpa_status` is ``ValidateHorizontalPodAutoscalerStatusUpdate``'s status part:
  ``currentReplicas`` and ``desiredReplicas`` not negative.

Options follow the registry's ``validationOptionsForHorizontalPodAutoscaler``: an update that
keeps the target's ``apiVersion`` and kind skips the ``apiVersion`` check; a
``ReplicationController`` target may name the core group; described objects of Object metrics
may name the core group, and their ``apiVersion`` is not checked on an update whose stored
object already had an invalid one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.quantity import parse_quantity
from kstore.api.validation._access import get_list, get_map, get_str, maps, opt_int
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import is_dns1123_label, is_path_segment_name, is_qualified_name
from kstore.api.validation.objectmeta import validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "MAX_PERIOD_SECONDS",
    "MAX_STABILIZATION_WINDOW_SECONDS",
    "HPAOptions",
    "hpa_options",
    "validate_hpa_spec",
    "validate_hpa_status",
]

#: The largest scaling policy period and stabilization window, in seconds.
MAX_PERIOD_SECONDS: Final = 1800
MAX_STABILIZATION_WINDOW_SECONDS: Final = 3600

_METRIC_SOURCE_TYPES: Final = ("ContainerResource", "External", "Object", "Pods", "Resource")
_SOURCE_FIELDS: Final = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}
# The order validateMetricSpec looks at the sources in.
_SOURCE_ORDER: Final = ("object", "external", "pods", "resource", "containerResource")
_SELECT_POLICIES: Final = ("Disabled", "Max", "Min")
_POLICY_TYPES: Final = ("Percent", "Pods")
_TARGET_TYPES: Final = ("Utilization", "Value", "AverageValue")
_STANDARD_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_QUANTITY_FORMAT: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


@dataclass(frozen=True, slots=True)
class RefOptions:
    """``CrossVersionObjectReferenceValidationOptions``."""

    allow_invalid_api_version: bool = False
    allow_empty_api_group: bool = False


@dataclass(frozen=True, slots=True)
class HPAOptions:
    """``HorizontalPodAutoscalerSpecValidationOptions``."""

    min_replicas_lower_bound: int = 1
    scale_target_ref: RefOptions = RefOptions()
    object_metrics: RefOptions = RefOptions(allow_empty_api_group=True)


def _ref(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return get_map(spec, "scaleTargetRef")


def hpa_options(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> HPAOptions:
    """``validationOptionsForHorizontalPodAutoscaler`` (the ``HPAScaleToZero`` gate off)."""
    spec = get_map(new, "spec")
    old_spec = get_map(old, "spec") if old is not None else None
    lower = 1
    if old_spec is not None and opt_int(old_spec, "minReplicas") == 0:
        lower = 0
    target = RefOptions()
    ref = _ref(spec)
    if old_spec is not None and (
        get_str(_ref(old_spec), "apiVersion") == get_str(ref, "apiVersion")
        and get_str(_ref(old_spec), "kind") == get_str(ref, "kind")
    ):
        target = RefOptions(allow_invalid_api_version=True)
    elif get_str(ref, "kind") == "ReplicationController":
        target = RefOptions(allow_empty_api_group=True)
    objects = RefOptions(allow_empty_api_group=True)
    if old_spec is not None:
        for metric in maps(get_list(old_spec, "metrics")):
            source = metric.get("object")
            if (
                get_str(metric, "type") == "Object"
                and isinstance(source, Mapping)
                and _api_version_error(get_map(source, "describedObject"), objects) is not None
            ):
                # The stored metrics are already invalid: keep accepting them.
                objects = RefOptions(allow_invalid_api_version=True, allow_empty_api_group=True)
                break
    return HPAOptions(lower, target, objects)


# ------------------------------------------------------------------------ references


def _parse_group_version(text: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: None when the text has more than one slash."""
    if not text or text == "/":
        return ("", "")
    parts = text.split("/")
    if len(parts) == 1:
        return ("", text)
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


def _api_version_error(ref: Mapping[str, Any], options: RefOptions) -> str | None:
    """``ValidateAPIVersion``'s error text, or None."""
    if options.allow_invalid_api_version:
        return None
    api_version = get_str(ref, "apiVersion")
    parsed = _parse_group_version(api_version)
    if parsed is None:
        return f"unexpected GroupVersion string: {api_version}"
    if not options.allow_empty_api_group and parsed[0] == "":
        return "the API group cannot be empty"
    return None


def validate_cross_version_object_reference(
    ref: Mapping[str, Any], path: Path, options: RefOptions
) -> list[Cause]:
    """``ValidateCrossVersionObjectReference``: kind, name, then the ``apiVersion``."""
    causes: list[Cause] = []
    for key in ("kind", "name"):
        value = get_str(ref, key)
        if not value:
            causes.append(required(path.child(key)))
        else:
            causes.extend(invalid(path.child(key), value, m) for m in is_path_segment_name(value))
    error = _api_version_error(ref, options)
    if error is not None:
        causes.append(invalid(path.child("apiVersion"), get_str(ref, "apiVersion"), error))
    return causes


# ------------------------------------------------------------------------ quantities


def _sign(value: Any) -> int | None:
    """The sign of a quantity; None when it is not one."""
    amount = parse_quantity(value) if isinstance(value, str) else None
    if amount is None:
        return None
    return (amount > 0) - (amount < 0)


def _quantity_value(value: Any) -> Any:
    """A quantity as ``field.Invalid`` shows it (its JSON form: the string)."""
    return JSONValue(value)


def _validate_quantity_format(value: Any, path: Path) -> list[Cause]:
    if value is None or _sign(value) is not None:
        return []
    return [invalid(path, value if isinstance(value, str) else JSONValue(value), _QUANTITY_FORMAT)]


# ------------------------------------------------------------------------ spec


def validate_hpa_spec(spec: Mapping[str, Any], path: Path, options: HPAOptions) -> list[Cause]:
    """``validateHorizontalPodAutoscalerSpec``."""
    causes: list[Cause] = []
    min_replicas = opt_int(spec, "minReplicas")
    max_replicas = opt_int(spec, "maxReplicas") or 0
    lower = options.min_replicas_lower_bound
    if min_replicas is not None and min_replicas < lower:
        causes.append(
            invalid(
                path.child("minReplicas"),
                min_replicas,
                f"must be greater than or equal to {lower}",
            )
        )
    if max_replicas < 1:
        causes.append(invalid(path.child("maxReplicas"), max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        causes.append(
            invalid(
                path.child("maxReplicas"),
                max_replicas,
                "must be greater than or equal to `minReplicas`",
            )
        )
    causes.extend(
        validate_cross_version_object_reference(
            _ref(spec), path.child("scaleTargetRef"), options.scale_target_ref
        )
    )
    causes.extend(
        _validate_metrics(get_list(spec, "metrics"), path.child("metrics"), min_replicas, options)
    )
    behavior = spec.get("behavior")
    if isinstance(behavior, Mapping):
        for key in ("scaleUp", "scaleDown"):
            rules = behavior.get(key)
            if isinstance(rules, Mapping):
                causes.extend(_validate_scaling_rules(rules, path.child("behavior", key)))
    return causes


def _validate_metrics(
    metrics: Sequence[Any], path: Path, min_replicas: int | None, options: HPAOptions
) -> list[Cause]:
    causes: list[Cause] = []
    has_object_or_external = False
    for i, metric in enumerate(maps(metrics)):
        causes.extend(_validate_metric_spec(metric, path.index(i), options))
        if get_str(metric, "type") in ("Object", "External"):
            has_object_or_external = True
    if min_replicas == 0 and not has_object_or_external:
        causes.append(
            forbidden(
                path,
                "must specify at least one Object or External metric to support scaling to "
                "zero replicas",
            )
        )
    return causes


def _validate_metric_spec(
    metric: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes: list[Cause] = []
    kind = get_str(metric, "type")
    if not kind:
        causes.append(required(path.child("type"), "must specify a metric source type"))
    if kind not in _METRIC_SOURCE_TYPES:
        causes.append(not_supported(path.child("type"), kind, _METRIC_SOURCE_TYPES))
    present: list[str] = []
    for field in _SOURCE_ORDER:
        source = metric.get(field)
        if not isinstance(source, Mapping):
            continue
        present.append(field)
        if len(present) == 1:
            causes.extend(_SOURCE_VALIDATORS[field](source, path.child(field), options))
    expected = _SOURCE_FIELDS.get(kind, "")
    if expected:
        if expected not in present:
            causes.append(
                required(
                    path.child(expected), "must populate information for the given metric source"
                )
            )
    else:
        causes.append(not_supported(path.child("type"), kind, _METRIC_SOURCE_TYPES))
    if len(present) != 1:
        for field in sorted(set(present) - {expected}):
            causes.append(
                forbidden(path.child(field), "must populate the given metric source only")
            )
    return causes


def _target(source: Mapping[str, Any]) -> Mapping[str, Any]:
    return get_map(source, "target")


def _validate_object_source(
    source: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes = validate_cross_version_object_reference(
        get_map(source, "describedObject"), path.child("describedObject"), options.object_metrics
    )
    causes.extend(_validate_metric_identifier(get_map(source, "metric"), path.child("metric")))
    target = _target(source)
    causes.extend(_validate_metric_target(target, path.child("target")))
    if target.get("value") is None and target.get("averageValue") is None:
        causes.append(
            required(
                path.child("target", "averageValue"),
                "must set either a target value or averageValue",
            )
        )
    return causes


def _validate_external_source(
    source: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes = _validate_metric_identifier(get_map(source, "metric"), path.child("metric"))
    target = _target(source)
    causes.extend(_validate_metric_target(target, path.child("target")))
    value, average = target.get("value"), target.get("averageValue")
    if value is None and average is None:
        causes.append(
            required(
                path.child("target", "averageValue"),
                "must set either a target value for metric or a per-pod target",
            )
        )
    if value is not None and average is not None:
        causes.append(
            forbidden(
                path.child("target", "value"),
                "may not set both a target value for metric and a per-pod target",
            )
        )
    return causes


def _validate_pods_source(
    source: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes = _validate_metric_identifier(get_map(source, "metric"), path.child("metric"))
    target = _target(source)
    causes.extend(_validate_metric_target(target, path.child("target")))
    if target.get("averageValue") is None:
        causes.append(
            required(
                path.child("target", "averageValue"), "must specify a positive target averageValue"
            )
        )
    return causes


def _validate_utilization_or_value(target: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    utilization, average = target.get("averageUtilization"), target.get("averageValue")
    if utilization is None and average is None:
        causes.append(
            required(
                path.child("averageUtilization"),
                "must set either a target raw value or a target utilization",
            )
        )
    if utilization is not None and average is not None:
        causes.append(
            forbidden(
                path.child("averageValue"),
                "may not set both a target raw value and a target utilization",
            )
        )
    return causes


def _validate_resource_source(
    source: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes: list[Cause] = []
    if not get_str(source, "name"):
        causes.append(required(path.child("name"), "must specify a resource name"))
    target = _target(source)
    causes.extend(_validate_metric_target(target, path.child("target")))
    causes.extend(_validate_utilization_or_value(target, path.child("target")))
    return causes


def _validate_container_resource_name(name: str, path: Path) -> list[Cause]:
    """core/v1 ``ValidateContainerResourceName``: a qualified name; without a domain, one of
    the standard container resources."""
    causes = [invalid(path, name, m) for m in is_qualified_name(name)]
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            causes.append(invalid(path, name, "must be a standard resource for containers"))
    elif "kubernetes.io/" not in name and name.startswith("requests."):
        # Not a native resource, so it must be an extended one (IsExtendedResourceName).
        causes.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return causes


def _validate_container_resource_source(
    source: Mapping[str, Any], path: Path, options: HPAOptions
) -> list[Cause]:
    causes: list[Cause] = []
    name = get_str(source, "name")
    if not name:
        causes.append(required(path.child("name"), "must specify a resource name"))
    else:
        causes.extend(_validate_container_resource_name(name, path.child("name")))
    container = get_str(source, "container")
    if not container:
        causes.append(required(path.child("container"), "must specify a container"))
    else:
        causes.extend(
            invalid(path.child("container"), container, m) for m in is_dns1123_label(container)
        )
    target = _target(source)
    causes.extend(_validate_metric_target(target, path.child("target")))
    causes.extend(_validate_utilization_or_value(target, path.child("target")))
    return causes


_SOURCE_VALIDATORS: Final = {
    "object": _validate_object_source,
    "external": _validate_external_source,
    "pods": _validate_pods_source,
    "resource": _validate_resource_source,
    "containerResource": _validate_container_resource_source,
}


def _validate_metric_target(target: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    kind = get_str(target, "type")
    if not kind:
        causes.append(required(path.child("type"), "must specify a metric target type"))
    if kind not in _TARGET_TYPES:
        causes.append(
            invalid(path.child("type"), kind, "must be either Utilization, Value, or AverageValue")
        )
    for key in ("value", "averageValue"):
        value = target.get(key)
        if value is None:
            continue
        sign = _sign(value)
        if sign is None:
            causes.extend(_validate_quantity_format(value, path.child(key)))
        elif sign != 1:
            causes.append(invalid(path.child(key), _quantity_value(value), "must be positive"))
    utilization = opt_int(target, "averageUtilization")
    if utilization is not None and utilization < 1:
        causes.append(
            invalid(path.child("averageUtilization"), utilization, "must be greater than 0")
        )
    return causes


def _validate_metric_identifier(identifier: Mapping[str, Any], path: Path) -> list[Cause]:
    name = get_str(identifier, "name")
    if not name:
        return [required(path.child("name"), "must specify a metric name")]
    return [invalid(path.child("name"), name, m) for m in is_path_segment_name(name)]


# ------------------------------------------------------------------------ behavior


def _validate_scaling_rules(rules: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    window = opt_int(rules, "stabilizationWindowSeconds")
    if window is not None and window < 0:
        causes.append(
            invalid(
                path.child("stabilizationWindowSeconds"),
                window,
                "must be greater than or equal to zero",
            )
        )
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        causes.append(
            invalid(
                path.child("stabilizationWindowSeconds"),
                window,
                f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}",
            )
        )
    select = rules.get("selectPolicy")
    if isinstance(select, str) and select not in _SELECT_POLICIES:
        causes.append(not_supported(path.child("selectPolicy"), select, _SELECT_POLICIES))
    policies_path = path.child("policies")
    policies = get_list(rules, "policies")
    if not policies:
        causes.append(required(policies_path, "must specify at least one Policy"))
    for i, policy in enumerate(maps(policies)):
        causes.extend(_validate_scaling_policy(policy, policies_path.index(i)))
    tolerance = rules.get("tolerance")
    if tolerance is not None:
        sign = _sign(tolerance)
        if sign is None:
            causes.extend(_validate_quantity_format(tolerance, path.child("tolerance")))
        elif sign < 0:
            causes.append(
                invalid(
                    path.child("tolerance"),
                    _quantity_value(tolerance),
                    "must be greater than or equal to zero",
                )
            )
    return causes


def _validate_scaling_policy(policy: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    kind = get_str(policy, "type")
    if kind not in _POLICY_TYPES:
        causes.append(not_supported(path.child("type"), kind, _POLICY_TYPES))
    value = opt_int(policy, "value") or 0
    if value <= 0:
        causes.append(invalid(path.child("value"), value, "must be greater than zero"))
    period = opt_int(policy, "periodSeconds") or 0
    if period <= 0:
        causes.append(invalid(path.child("periodSeconds"), period, "must be greater than zero"))
    if period > MAX_PERIOD_SECONDS:
        causes.append(
            invalid(
                path.child("periodSeconds"),
                period,
                f"must be less than or equal to {MAX_PERIOD_SECONDS}",
            )
        )
    return causes


# ------------------------------------------------------------------------ status


def validate_hpa_status(status: Mapping[str, Any], path: Path) -> list[Cause]:
    """The status checks of ``ValidateHorizontalPodAutoscalerStatusUpdate``."""
    causes: list[Cause] = []
    for key in ("currentReplicas", "desiredReplicas"):
        causes.extend(validate_nonnegative_field(opt_int(status, key) or 0, path.child(key)))
    return causes
