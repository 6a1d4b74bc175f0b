"""autoscaling/v1 HorizontalPodAutoscaler: Kubernetes' annotations for what v1 cannot say,
v1's defaults, and the envelope that keeps the rest losslessly."""

from __future__ import annotations

import copy
import json
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._hpa_conversion import (
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    ENVELOPE_ANNOTATION,
    METRICS_ANNOTATION,
)

SCHEME = builtin_scheme()
REF = {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}


def _cpu(utilization: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


MEMORY = {
    "type": "Resource",
    "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
}


def _hub(**spec: Any) -> dict[str, Any]:
    """A hub autoscaler (what is stored: autoscaling/v2's shape)."""
    return SCHEME.to_hub(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5, **spec},
        }
    )


def _v1(hub: dict[str, Any]) -> dict[str, Any]:
    before = copy.deepcopy(hub)
    out = SCHEME.from_hub(hub, "v1")
    assert hub == before
    assert SCHEME.to_hub(out) == hub
    return out


def test_the_cpu_metric_is_the_target_percentage() -> None:
    v1 = _v1(_hub(metrics=[_cpu(60)]))
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {
        "scaleTargetRef": REF,
        "minReplicas": 1,
        "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 60,
    }
    assert "annotations" not in v1["metadata"]


def test_other_metrics_go_to_kubernetes_annotation() -> None:
    pods = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps", "selector": {"matchLabels": {"b": "2", "a": "1"}}},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    v1 = _v1(_hub(metrics=[MEMORY, pods, _cpu(50)]))
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert v1["metadata"]["annotations"] == {
        METRICS_ANNOTATION: '[{"type":"Resource","resource":{"name":"memory",'
        '"targetAverageValue":"1Gi"}},{"type":"Pods","pods":{"metricName":"qps",'
        '"targetAverageValue":"10","selector":{"matchLabels":{"a":"1","b":"2"}}}}]'
    }


def test_status_conditions_and_behavior_annotations() -> None:
    v2 = {**_hub(metrics=[_cpu(50)], behavior={}), "apiVersion": "autoscaling/v2"}
    SCHEME.default(v2)
    hub = SCHEME.to_hub(v2)
    hub["status"] = {
        "currentReplicas": 2,
        "desiredReplicas": 3,
        "currentMetrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageValue": "120m", "averageUtilization": 40},
                },
            }
        ],
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "reason": "ReadyForNewScale",
                "message": "recommended size matches current size",
            }
        ],
    }
    v1 = _v1(hub)
    assert v1["status"] == {
        "currentReplicas": 2,
        "desiredReplicas": 3,
        "currentCPUUtilizationPercentage": 40,
    }
    annotations = v1["metadata"]["annotations"]
    assert annotations[CURRENT_METRICS_ANNOTATION] == (
        '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,'
        '"currentAverageValue":"120m"}}]'
    )
    assert annotations[CONDITIONS_ANNOTATION] == (
        '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z",'
        '"reason":"ReadyForNewScale","message":"recommended size matches current size"}]'
    )
    # The internal type's Go field names, nil pointers as null.
    assert annotations[BEHAVIOR_ANNOTATION] == (
        '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":'
        '[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,'
        '"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":null,'
        '"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],'
        '"Tolerance":null}}'
    )
    assert ENVELOPE_ANNOTATION not in annotations


def test_a_v1_object_as_a_client_writes_it() -> None:
    v1 = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "web",
            "annotations": {
                METRICS_ANNOTATION: json.dumps(
                    [
                        {
                            "type": "Object",
                            "object": {
                                "target": {"kind": "Service", "name": "web"},
                                "metricName": "hits",
                                "targetValue": "100",
                            },
                        }
                    ]
                ),
                BEHAVIOR_ANNOTATION: '{"scaleDown": {"stabilizationWindowSeconds": 60}}',
            },
        },
        "spec": {"scaleTargetRef": REF, "maxReplicas": 4, "targetCPUUtilizationPercentage": 70},
        "status": {
            "currentReplicas": 1,
            "desiredReplicas": 1,
            "currentCPUUtilizationPercentage": 9,
        },
    }
    SCHEME.default(v1)
    assert v1["spec"]["minReplicas"] == 1
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 70
    hub = SCHEME.to_hub(v1)
    assert hub["spec"]["metrics"] == [
        {
            "type": "Object",
            "object": {
                "describedObject": {"kind": "Service", "name": "web"},
                "target": {"type": "Value", "value": "100"},
                "metric": {"name": "hits"},
            },
        },
        _cpu(70),
    ]
    # Read as encoding/json reads a struct: member names ignoring case.
    assert hub["spec"]["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 60}}
    assert hub["status"]["currentMetrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 9}}}
    ]
    assert "annotations" not in hub["metadata"]
    # The percentage alone reads back as written (no annotation for it).
    back = SCHEME.from_hub(hub, "v1")
    assert back["status"] == v1["status"]
    assert CURRENT_METRICS_ANNOTATION not in back["metadata"]["annotations"]


def test_v1_defaults_the_cpu_target_only_without_other_metrics() -> None:
    bare = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 4},
    }
    SCHEME.default(bare)
    assert bare["spec"] == {
        "scaleTargetRef": REF,
        "maxReplicas": 4,
        "minReplicas": 1,
        "targetCPUUtilizationPercentage": 80,
    }
    other = copy.deepcopy(bare)
    del other["spec"]["targetCPUUtilizationPercentage"]
    other["metadata"]["annotations"] = {
        METRICS_ANNOTATION: '[{"type":"Resource","resource":{"name":"memory",'
        '"targetAverageUtilization":70}}]'
    }
    SCHEME.default(other)
    assert "targetCPUUtilizationPercentage" not in other["spec"]


def test_what_kubernetes_loses_is_kept_in_the_envelope() -> None:
    # kubectl autoscale --cpu=50% --memory=70%: the CPU metric first, which Kubernetes' v1
    # annotations would move last.
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 70}},
    }
    hub = _hub(metrics=[_cpu(50), memory])
    hub["metadata"]["annotations"] = {METRICS_ANNOTATION: "a user's own text"}
    v1 = _v1(hub)
    annotations = v1["metadata"]["annotations"]
    assert annotations[METRICS_ANNOTATION] == (
        '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":70}}]'
    )
    assert json.loads(annotations[ENVELOPE_ANNOTATION]) == {
        "annotations": {METRICS_ANNOTATION: "a user's own text"},
        "parts": {"spec.metrics": [_cpu(50), memory]},
    }
    # A client that changes what the envelope describes gets Kubernetes' reading.
    edited = copy.deepcopy(v1)
    edited["spec"]["targetCPUUtilizationPercentage"] = 65
    hub_edited = SCHEME.to_hub(edited)
    assert hub_edited["spec"]["metrics"] == [memory, _cpu(65)]
    # Changing a field v1 has keeps the envelope's parts.
    resized = copy.deepcopy(v1)
    resized["spec"]["maxReplicas"] = 9
    hub_resized = SCHEME.to_hub(resized)
    assert hub_resized["spec"]["metrics"] == [_cpu(50), memory]
    assert hub_resized["spec"]["maxReplicas"] == 9


def test_a_list_converts_each_item() -> None:
    hub_list = SCHEME.to_hub(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscalerList",
            "metadata": {"resourceVersion": "7"},
            "items": [_hub(metrics=[_cpu(30)])],
        }
    )
    v1 = SCHEME.from_hub(hub_list, "v1")
    assert v1["items"][0]["spec"]["targetCPUUtilizationPercentage"] == 30
    assert v1["items"][0]["apiVersion"] == "autoscaling/v1"
