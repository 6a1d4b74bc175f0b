"""autoscaling/v1 HorizontalPodAutoscaler <-> the hub (autoscaling/v2's shape), losslessly.

autoscaling/v1 holds one metric, the CPU utilization (``spec.targetCPUUtilizationPercentage``,
``status.currentCPUUtilizationPercentage``). As Kubernetes' ``pkg/apis/autoscaling/v1``
conversion does, everything else of v2 travels in annotations, as JSON:

- ``autoscaling.alpha.kubernetes.io/metrics``: the metrics other than the CPU utilization one,
  in v1's own metric shapes (``targetAverageUtilization``, ``metricName``, ...);
- ``autoscaling.alpha.kubernetes.io/current-metrics``: every current metric (the CPU one too);
- ``autoscaling.alpha.kubernetes.io/conditions``: the conditions;
- ``autoscaling.alpha.kubernetes.io/behavior``: the scaling behavior, as Go marshals the internal
  type (its Go field names: ``ScaleUp``, ``StabilizationWindowSeconds``...; read back ignoring
  case, as ``encoding/json`` does).

Writing v1 drops those annotations from the hub object first (a user's own value under one of
those keys is not Kubernetes' to keep); reading v1 builds the hub from the fields and the
annotations, the CPU metric after the others, and drops the annotations. Kubernetes' reading
also adds an 80% CPU metric when there is none; here that is v1's defaulting
(:func:`default_hpa_v1`), which is where a v1 request meets it, so the conversion stays exact.
v1's ``status.currentReplicas`` is written even when 0 (v2 omits a 0).

One deliberate difference: a ``status.currentCPUUtilizationPercentage`` alone (the only current
metric, a CPU utilization without an average value, which is all the field can say) is not
repeated in the current-metrics annotation, so a v1 object reads back as its client wrote it.

Kubernetes' texts cannot tell every hub object apart (the CPU metric's position, a target type
v1 has no word for, a quantity v1 writes as ``"0"`` when unset, an empty list, a user's own
annotation under those keys). When Kubernetes' v1 form does not read back to the very hub
object, :func:`hpa_from_hub` adds one more annotation, :data:`ENVELOPE_ANNOTATION`: a JSON object
(sorted keys) holding the hub values Kubernetes' texts lose. :func:`hpa_to_hub` uses it only
when writing the hub object it describes gives back the very v1 object read (so an envelope a
client changed the object around is ignored, and Kubernetes' reading applies); anything else is
read as Kubernetes reads it.

Invariants: ``hpa_to_hub(hpa_from_hub(hub)) == hub``; neither function mutates its argument.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.validation._render import GoStruct, go_json
from kstore.errors import BadRequest

__all__ = [
    "BEHAVIOR_ANNOTATION",
    "CONDITIONS_ANNOTATION",
    "CURRENT_METRICS_ANNOTATION",
    "ENVELOPE_ANNOTATION",
    "METRICS_ANNOTATION",
    "default_hpa_v1",
    "hpa_from_hub",
    "hpa_to_hub",
]

METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/behavior"
#: kstore's own: the hub values Kubernetes' annotations cannot carry (see the module doc).
ENVELOPE_ANNOTATION: Final = "kstore.io/autoscaling-v2"

_ROUND_TRIP: Final = (
    METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
)
#: The hub parts the annotations carry: (container, field).
_PARTS: Final = (
    ("spec", "metrics"),
    ("spec", "behavior"),
    ("status", "currentReplicas"),
    ("status", "desiredReplicas"),
    ("status", "currentMetrics"),
    ("status", "conditions"),
)
_DEFAULT_CPU_UTILIZATION: Final = 80
_ZERO: Final = "0"


def _map(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _list(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


def _maps(items: list[Any]) -> list[Mapping[str, Any]]:
    return [item if isinstance(item, Mapping) else {} for item in items]


def _annotations(obj: Object) -> Mapping[str, Any]:
    return _map(_map(obj, "metadata"), "annotations")


# --------------------------------------------------------------------------- v2 -> v1 texts


def _ref_struct(ref: Mapping[str, Any]) -> GoStruct:
    out = GoStruct(kind=ref.get("kind", ""), name=ref.get("name", ""))
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def _selector_struct(selector: Any) -> GoStruct | None:
    if not isinstance(selector, Mapping):
        return None
    out = GoStruct()
    labels = selector.get("matchLabels")
    if labels:
        out["matchLabels"] = dict(labels)
    expressions = []
    for e in _maps(_list(selector, "matchExpressions")):
        item = GoStruct(key=e.get("key", ""), operator=e.get("operator", ""))
        if e.get("values"):
            item["values"] = list(e["values"])
        expressions.append(item)
    if expressions:
        out["matchExpressions"] = expressions
    return out


def _put(out: GoStruct, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _quantity(source: Mapping[str, Any], key: str) -> Any:
    """A Go ``resource.Quantity`` (not a pointer): ``"0"`` when unset."""
    value = source.get(key)
    return _ZERO if value is None else value


def _metric_spec_v1(metric: Mapping[str, Any]) -> GoStruct:
    """``Convert_autoscaling_MetricSpec_To_v1_MetricSpec``."""
    out = GoStruct(type=metric.get("type", ""))
    source = metric.get("object")
    if isinstance(source, Mapping):
        target, identifier = _map(source, "target"), _map(source, "metric")
        item = GoStruct(
            target=_ref_struct(_map(source, "describedObject")),
            metricName=identifier.get("name", ""),
            targetValue=_quantity(target, "value"),
        )
        _put(item, "selector", _selector_struct(identifier.get("selector")))
        _put(item, "averageValue", target.get("averageValue"))
        out["object"] = item
    source = metric.get("pods")
    if isinstance(source, Mapping):
        target, identifier = _map(source, "target"), _map(source, "metric")
        item = GoStruct(
            metricName=identifier.get("name", ""),
            targetAverageValue=_quantity(target, "averageValue"),
        )
        _put(item, "selector", _selector_struct(identifier.get("selector")))
        out["pods"] = item
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, Mapping):
            target = _map(source, "target")
            item = GoStruct(name=source.get("name", ""))
            _put(item, "targetAverageUtilization", target.get("averageUtilization"))
            _put(item, "targetAverageValue", target.get("averageValue"))
            if key == "containerResource":
                item["container"] = source.get("container", "")
            out[key] = item
    source = metric.get("external")
    if isinstance(source, Mapping):
        target, identifier = _map(source, "target"), _map(source, "metric")
        item = GoStruct(metricName=identifier.get("name", ""))
        _put(item, "metricSelector", _selector_struct(identifier.get("selector")))
        _put(item, "targetValue", target.get("value"))
        _put(item, "targetAverageValue", target.get("averageValue"))
        out["external"] = item
    return out


def _metric_status_v1(metric: Mapping[str, Any]) -> GoStruct:
    """``Convert_autoscaling_MetricStatus_To_v1_MetricStatus``."""
    out = GoStruct(type=metric.get("type", ""))
    source = metric.get("object")
    if isinstance(source, Mapping):
        current, identifier = _map(source, "current"), _map(source, "metric")
        item = GoStruct(
            target=_ref_struct(_map(source, "describedObject")),
            metricName=identifier.get("name", ""),
            currentValue=_quantity(current, "value"),
        )
        _put(item, "selector", _selector_struct(identifier.get("selector")))
        _put(item, "averageValue", current.get("averageValue"))
        out["object"] = item
    source = metric.get("pods")
    if isinstance(source, Mapping):
        current, identifier = _map(source, "current"), _map(source, "metric")
        item = GoStruct(
            metricName=identifier.get("name", ""),
            currentAverageValue=_quantity(current, "averageValue"),
        )
        _put(item, "selector", _selector_struct(identifier.get("selector")))
        out["pods"] = item
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, Mapping):
            current = _map(source, "current")
            item = GoStruct(name=source.get("name", ""))
            _put(item, "currentAverageUtilization", current.get("averageUtilization"))
            item["currentAverageValue"] = _quantity(current, "averageValue")
            if key == "containerResource":
                item["container"] = source.get("container", "")
            out[key] = item
    source = metric.get("external")
    if isinstance(source, Mapping):
        current, identifier = _map(source, "current"), _map(source, "metric")
        item = GoStruct(metricName=identifier.get("name", ""))
        _put(item, "metricSelector", _selector_struct(identifier.get("selector")))
        item["currentValue"] = _quantity(current, "value")
        _put(item, "currentAverageValue", current.get("averageValue"))
        out["external"] = item
    return out


def _condition_v1(condition: Mapping[str, Any]) -> GoStruct:
    # lastTransitionTime is a metav1.Time struct: a zero one marshals as null.
    out = GoStruct(
        type=condition.get("type", ""),
        status=condition.get("status", ""),
        lastTransitionTime=condition.get("lastTransitionTime"),
    )
    for key in ("reason", "message", "observedGeneration"):
        if condition.get(key):
            out[key] = condition[key]
    return out


def _rules_go(rules: Any) -> GoStruct | None:
    """The internal ``HPAScalingRules`` as Go marshals it: no json tags, nil as null."""
    if not isinstance(rules, Mapping):
        return None
    policies = rules.get("policies")
    return GoStruct(
        StabilizationWindowSeconds=rules.get("stabilizationWindowSeconds"),
        SelectPolicy=rules.get("selectPolicy"),
        Policies=None
        if not isinstance(policies, list)
        else [
            GoStruct(
                Type=p.get("type", ""),
                Value=p.get("value", 0),
                PeriodSeconds=p.get("periodSeconds", 0),
            )
            for p in _maps(policies)
        ],
        Tolerance=rules.get("tolerance"),
    )


def _behavior_go(behavior: Mapping[str, Any]) -> GoStruct:
    return GoStruct(
        ScaleUp=_rules_go(behavior.get("scaleUp")), ScaleDown=_rules_go(behavior.get("scaleDown"))
    )


def _cpu_resource(metric: Mapping[str, Any]) -> Mapping[str, Any] | None:
    source = metric.get("resource")
    is_cpu = isinstance(source, Mapping) and source.get("name") == "cpu"
    return source if metric.get("type") == "Resource" and is_cpu else None


def _only_the_cpu_field(current: list[Mapping[str, Any]]) -> bool:
    """Whether the current metrics are what ``status.currentCPUUtilizationPercentage`` alone
    reads as (one CPU utilization, no average value: the annotation's form always has one).

    Kubernetes writes the annotation for these too; kstore leaves it out, so that a v1 object
    with only that field reads back as it was written.
    """
    if len(current) != 1:
        return False
    cpu = _cpu_resource(current[0])
    return (
        cpu is not None
        and set(current[0]) == {"type", "resource"}
        and set(cpu) == {"name", "current"}
        and set(_map(cpu, "current")) == {"averageUtilization"}
    )


def _kubernetes_v1(hub: Object) -> Object:
    """``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler``."""
    out = dict(hub)
    spec, status = hub.get("spec"), hub.get("status")
    metrics = _maps(_list(spec, "metrics"))
    current = _maps(_list(status, "currentMetrics"))
    if isinstance(spec, Mapping):
        v1_spec = {k: v for k, v in spec.items() if k not in ("metrics", "behavior")}
        for metric in metrics:
            cpu = _cpu_resource(metric)
            if cpu is not None:
                utilization = _map(cpu, "target").get("averageUtilization")
                if utilization is not None:
                    v1_spec["targetCPUUtilizationPercentage"] = utilization
                break
        out["spec"] = v1_spec
    if isinstance(status, Mapping):
        v1_status = {k: v for k, v in status.items() if k not in ("currentMetrics", "conditions")}
        # Not omitempty in v1 (v2's currentReplicas is): zeros are written.
        for key in ("currentReplicas", "desiredReplicas"):
            if v1_status.get(key) is None:
                v1_status[key] = 0
        for metric in current:
            cpu = _cpu_resource(metric)
            utilization = _map(cpu, "current").get("averageUtilization") if cpu else None
            if utilization is not None:
                v1_status["currentCPUUtilizationPercentage"] = utilization
        out["status"] = v1_status
    texts: dict[str, str] = {}
    others = [
        _metric_spec_v1(m)
        for m in metrics
        if not (
            (cpu := _cpu_resource(m)) is not None
            and _map(cpu, "target").get("averageUtilization") is not None
        )
    ]
    if others:
        texts[METRICS_ANNOTATION] = go_json(others)
    if current and not _only_the_cpu_field(current):
        texts[CURRENT_METRICS_ANNOTATION] = go_json([_metric_status_v1(m) for m in current])
    conditions = _maps(_list(status, "conditions"))
    if conditions:
        texts[CONDITIONS_ANNOTATION] = go_json([_condition_v1(c) for c in conditions])
    behavior = spec.get("behavior") if isinstance(spec, Mapping) else None
    if isinstance(behavior, Mapping):
        texts[BEHAVIOR_ANNOTATION] = go_json(_behavior_go(behavior))
    _set_annotations(out, _ROUND_TRIP, texts)
    return out


def _set_annotations(obj: Object, dropped: tuple[str, ...], texts: Mapping[str, str]) -> None:
    """Drop ``dropped`` from the annotations (an emptied map goes), then add ``texts``."""
    meta = obj.get("metadata")
    annotations = _annotations(obj)
    if not texts and not any(key in annotations for key in dropped):
        return
    kept = {k: v for k, v in annotations.items() if k not in dropped}
    kept.update(texts)
    new_meta = dict(meta) if isinstance(meta, Mapping) else {}
    if kept:
        new_meta["annotations"] = kept
    else:
        new_meta.pop("annotations", None)
    obj["metadata"] = new_meta


# --------------------------------------------------------------------------- v1 texts -> v2


def _parse(text: Any, key: str) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError as exc:
        raise BadRequest(f"annotation {key}: {exc}") from exc


def _ci(obj: Any, name: str) -> Any:
    """A member as ``encoding/json`` finds a struct field: exactly, else ignoring case."""
    if not isinstance(obj, Mapping):
        return None
    if name in obj:
        return obj[name]
    lower = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == lower:
            return value
    return None


def _ref(ref: Any) -> dict[str, Any]:
    ref = ref if isinstance(ref, Mapping) else {}
    out = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    if ref.get("apiVersion"):
        out["apiVersion"] = ref["apiVersion"]
    return out


def _identifier(source: Mapping[str, Any], selector_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": source.get("metricName", "")}
    if source.get(selector_key) is not None:
        out["selector"] = source[selector_key]
    return out


def _opt(out: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    if value is not None:
        out[key] = value
    return out


def _metric_spec_hub(metric: Mapping[str, Any]) -> dict[str, Any]:
    """``Convert_v1_MetricSpec_To_autoscaling_MetricSpec``."""
    out: dict[str, Any] = {"type": metric.get("type", "")}
    source = metric.get("object")
    if isinstance(source, Mapping):
        average = source.get("averageValue")
        target = {"type": "Value" if average is None else "AverageValue"}
        target["value"] = _quantity(source, "targetValue")
        out["object"] = {
            "describedObject": _ref(source.get("target")),
            "target": _opt(target, "averageValue", average),
            "metric": _identifier(source, "selector"),
        }
    source = metric.get("pods")
    if isinstance(source, Mapping):
        out["pods"] = {
            "metric": _identifier(source, "selector"),
            "target": {
                "type": "AverageValue",
                "averageValue": _quantity(source, "targetAverageValue"),
            },
        }
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, Mapping):
            utilization = source.get("targetAverageUtilization")
            target = {"type": "AverageValue" if utilization is None else "Utilization"}
            _opt(target, "averageValue", source.get("targetAverageValue"))
            _opt(target, "averageUtilization", utilization)
            item: dict[str, Any] = {"name": source.get("name", ""), "target": target}
            if key == "containerResource":
                item["container"] = source.get("container", "")
            out[key] = item
    source = metric.get("external")
    if isinstance(source, Mapping):
        value = source.get("targetValue")
        target = {"type": "AverageValue" if value is None else "Value"}
        _opt(target, "value", value)
        _opt(target, "averageValue", source.get("targetAverageValue"))
        out["external"] = {"metric": _identifier(source, "metricSelector"), "target": target}
    return out


def _metric_status_hub(metric: Mapping[str, Any]) -> dict[str, Any]:
    """``Convert_v1_MetricStatus_To_autoscaling_MetricStatus``."""
    out: dict[str, Any] = {"type": metric.get("type", "")}
    source = metric.get("object")
    if isinstance(source, Mapping):
        current = _opt(
            {"value": _quantity(source, "currentValue")}, "averageValue", source.get("averageValue")
        )
        out["object"] = {
            "metric": _identifier(source, "selector"),
            "current": current,
            "describedObject": _ref(source.get("target")),
        }
    source = metric.get("pods")
    if isinstance(source, Mapping):
        out["pods"] = {
            "metric": _identifier(source, "selector"),
            "current": {"averageValue": _quantity(source, "currentAverageValue")},
        }
    for key in ("resource", "containerResource"):
        source = metric.get(key)
        if isinstance(source, Mapping):
            current = {"averageValue": _quantity(source, "currentAverageValue")}
            _opt(current, "averageUtilization", source.get("currentAverageUtilization"))
            item: dict[str, Any] = {"name": source.get("name", ""), "current": current}
            if key == "containerResource":
                item["container"] = source.get("container", "")
            out[key] = item
    source = metric.get("external")
    if isinstance(source, Mapping):
        current = _opt(
            {"value": _quantity(source, "currentValue")},
            "averageValue",
            source.get("currentAverageValue"),
        )
        out["external"] = {"metric": _identifier(source, "metricSelector"), "current": current}
    return out


def _condition_hub(condition: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in condition.items() if v is not None}


def _rules_hub(rules: Any) -> dict[str, Any] | None:
    if not isinstance(rules, Mapping):
        return None
    out: dict[str, Any] = {}
    for go, key in (
        ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
        ("SelectPolicy", "selectPolicy"),
    ):
        _opt(out, key, _ci(rules, go))
    policies = _ci(rules, "Policies")
    if isinstance(policies, list):
        out["policies"] = [
            {
                "type": _ci(p, "Type") or "",
                "value": _ci(p, "Value") or 0,
                "periodSeconds": _ci(p, "PeriodSeconds") or 0,
            }
            for p in policies
        ]
    _opt(out, "tolerance", _ci(rules, "Tolerance"))
    return out


def _behavior_hub(text: Any) -> dict[str, Any] | None:
    behavior = _parse(text, BEHAVIOR_ANNOTATION)
    out: dict[str, Any] = {}
    _opt(out, "scaleUp", _rules_hub(_ci(behavior, "ScaleUp")))
    _opt(out, "scaleDown", _rules_hub(_ci(behavior, "ScaleDown")))
    return out or None


def _parsed_list(annotations: Mapping[str, Any], key: str) -> list[Mapping[str, Any]] | None:
    if key not in annotations:
        return None
    value = _parse(annotations[key], key)
    if value is not None and not isinstance(value, list):
        raise BadRequest(f"annotation {key}: json: cannot unmarshal into a list")
    return _maps(value or [])


def _kubernetes_hub(ext: Object) -> Object:
    """``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`` (its
    default of an 80% CPU metric is v1's defaulting here: :func:`default_hpa_v1`)."""
    out = dict(ext)
    annotations = _annotations(ext)
    spec, status = ext.get("spec"), ext.get("status")
    metrics: list[dict[str, Any]] = []
    current: list[dict[str, Any]] | None = None
    hub_spec: dict[str, Any] | None = None
    hub_status: dict[str, Any] | None = None
    if isinstance(spec, Mapping):
        hub_spec = {k: v for k, v in spec.items() if k != "targetCPUUtilizationPercentage"}
        utilization = spec.get("targetCPUUtilizationPercentage")
        if utilization is not None:
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": utilization},
                    },
                }
            )
    if isinstance(status, Mapping):
        hub_status = {k: v for k, v in status.items() if k != "currentCPUUtilizationPercentage"}
        if hub_status.get("currentReplicas") == 0:
            del hub_status["currentReplicas"]  # omitempty in v2
        utilization = status.get("currentCPUUtilizationPercentage")
        if utilization is not None:
            current = [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": utilization}},
                }
            ]
    others = _parsed_list(annotations, METRICS_ANNOTATION)
    if others is not None:
        metrics = [_metric_spec_hub(m) for m in others] + metrics
    statuses = _parsed_list(annotations, CURRENT_METRICS_ANNOTATION)
    if statuses is not None:
        current = [_metric_status_hub(m) for m in statuses]
    conditions = _parsed_list(annotations, CONDITIONS_ANNOTATION)
    behavior = (
        _behavior_hub(annotations[BEHAVIOR_ANNOTATION])
        if (BEHAVIOR_ANNOTATION in annotations)
        else None
    )
    if metrics or behavior is not None:
        hub_spec = hub_spec if hub_spec is not None else {}
        if metrics:
            hub_spec["metrics"] = metrics
        if behavior is not None:
            hub_spec["behavior"] = behavior
    if current or conditions:
        hub_status = hub_status if hub_status is not None else {}
        if current:
            hub_status["currentMetrics"] = current
        if conditions:
            hub_status["conditions"] = [_condition_hub(c) for c in conditions]
    if hub_spec is not None:
        out["spec"] = hub_spec
    if hub_status is not None:
        out["status"] = hub_status
    _set_annotations(out, _ROUND_TRIP, {})
    return out


# --------------------------------------------------------------------------- the envelope

_ABSENT: Final = "absent"
_PARTS_KEY: Final = "parts"
_ANNOTATIONS_KEY: Final = "annotations"
_EMPTY_KEY: Final = "emptyAnnotations"
_MISSING: Final = object()


def _part(obj: Object, container: str, field: str) -> Any:
    holder = obj.get(container)
    return holder.get(field, _MISSING) if isinstance(holder, Mapping) else _MISSING


def _envelope(hub: Object, read_back: Object) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    absent: list[str] = []
    for container, field in _PARTS:
        mine = _part(hub, container, field)
        if mine != _part(read_back, container, field):
            if mine is _MISSING:
                absent.append(f"{container}.{field}")
            else:
                parts[f"{container}.{field}"] = mine
    state: dict[str, Any] = {}
    if parts:
        state[_PARTS_KEY] = parts
    if absent:
        state[_ABSENT] = absent
    hub_annotations = _map(hub.get("metadata"), "annotations")
    own = {
        k: hub_annotations[k] for k in (*_ROUND_TRIP, ENVELOPE_ANNOTATION) if k in hub_annotations
    }
    if own:
        state[_ANNOTATIONS_KEY] = own
    meta = hub.get("metadata")
    if isinstance(meta, Mapping) and meta.get("annotations") == {}:
        state[_EMPTY_KEY] = True
    return state


def _apply(base: Object, state: Mapping[str, Any]) -> Object:
    out = copy.deepcopy(base)
    for path, value in _map(state, _PARTS_KEY).items():
        container, _, field = str(path).partition(".")
        holder = out.get(container)
        out[container] = {**(holder if isinstance(holder, Mapping) else {}), field: value}
    for path in _list(state, _ABSENT):
        container, _, field = str(path).partition(".")
        holder = out.get(container)
        if isinstance(holder, dict):
            holder.pop(field, None)
    own = _map(state, _ANNOTATIONS_KEY)
    if own:
        meta = out.get("metadata")
        new_meta = dict(meta) if isinstance(meta, Mapping) else {}
        new_meta["annotations"] = {**_map(new_meta, "annotations"), **own}
        out["metadata"] = new_meta
    if state.get(_EMPTY_KEY) is True:
        meta = out.get("metadata")
        if isinstance(meta, dict) and "annotations" not in meta:
            meta["annotations"] = {}
    return out


def _state_text(state: Mapping[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- the converters


def hpa_from_hub(hub: Object) -> Object:
    """The autoscaling/v1 form of a hub autoscaler: Kubernetes', plus the envelope when
    Kubernetes' does not read back to ``hub``."""
    out = _kubernetes_v1(hub)
    read_back = _kubernetes_hub(out)
    if read_back == hub:
        return out
    state = _envelope(hub, read_back)
    if _apply(read_back, state) != hub:
        # Outside what the envelope keeps (it keeps every part v1 lacks): Kubernetes' form.
        return out
    _set_annotations(out, (), {ENVELOPE_ANNOTATION: _state_text(state)})
    return out


def hpa_to_hub(ext: Object) -> Object:
    """The hub form of an autoscaling/v1 autoscaler (the envelope's, when it holds)."""
    annotations = _annotations(ext)
    text = annotations.get(ENVELOPE_ANNOTATION)
    if not isinstance(text, str):
        return _kubernetes_hub(ext)
    plain = dict(ext)
    _set_annotations(plain, (ENVELOPE_ANNOTATION,), {})
    base = _kubernetes_hub(plain)
    try:
        state = json.loads(text)
    except ValueError:
        state = None
    if isinstance(state, dict):
        candidate = _apply(base, state)
        if hpa_from_hub(candidate) == ext:
            return candidate
    # Not an envelope this object came with: Kubernetes' reading, the text a user annotation.
    return _kubernetes_hub(ext)


def default_hpa_v1(obj: Object) -> None:
    """autoscaling/v1 ``SetDefaults_HorizontalPodAutoscaler`` (``minReplicas`` 1), and the
    default metric Kubernetes' conversion adds: no CPU target and no other metrics means an 80%
    CPU target."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if spec.get("targetCPUUtilizationPercentage") is not None:
        return
    annotations = _annotations(obj)
    others = _parsed_list(annotations, METRICS_ANNOTATION)
    if not others and ENVELOPE_ANNOTATION not in annotations:
        spec["targetCPUUtilizationPercentage"] = _DEFAULT_CPU_UTILIZATION
