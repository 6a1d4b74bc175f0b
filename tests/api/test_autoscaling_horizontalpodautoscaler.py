"""autoscaling HorizontalPodAutoscaler: autoscaling/v2's defaults, and validation as Kubernetes'
autoscaling API does it (field paths and messages)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.horizontalpodautoscaler import (
    validate_hpa,
    validate_hpa_status_update,
    validate_hpa_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()
CPU_80 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}


def _hpa(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            **spec,
        },
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


# ------------------------------------------------------------------------ defaults


def test_min_replicas_and_the_cpu_metric_are_defaulted() -> None:
    hpa = _hpa()
    SCHEME.default(hpa)
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["metrics"] == [CPU_80]
    assert "behavior" not in hpa["spec"]


def test_given_metrics_and_min_replicas_are_kept() -> None:
    pods = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    hpa = _hpa(minReplicas=3, metrics=[pods])
    SCHEME.default(hpa)
    assert hpa["spec"]["minReplicas"] == 3
    assert hpa["spec"]["metrics"] == [pods]


def test_an_empty_behavior_gets_both_directions() -> None:
    hpa = _hpa(behavior={})
    SCHEME.default(hpa)
    assert hpa["spec"]["behavior"] == {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
        "scaleDown": {
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
    }


def test_behavior_fields_that_are_set_win_field_by_field() -> None:
    own = [{"type": "Pods", "value": 1, "periodSeconds": 60}]
    hpa = _hpa(
        behavior={
            "scaleDown": {"stabilizationWindowSeconds": 120, "policies": own},
            "scaleUp": {"selectPolicy": "Disabled", "tolerance": "50m"},
        }
    )
    SCHEME.default(hpa)
    behavior = hpa["spec"]["behavior"]
    assert behavior["scaleDown"] == {
        "stabilizationWindowSeconds": 120,
        "selectPolicy": "Max",
        "policies": own,
    }
    assert behavior["scaleUp"]["selectPolicy"] == "Disabled"
    assert behavior["scaleUp"]["stabilizationWindowSeconds"] == 0
    assert behavior["scaleUp"]["tolerance"] == "50m"
    assert len(behavior["scaleUp"]["policies"]) == 2


def test_defaulting_is_idempotent() -> None:
    hpa = _hpa(behavior={"scaleUp": {}})
    SCHEME.default(hpa)
    once = copy.deepcopy(hpa)
    SCHEME.default(hpa)
    assert hpa == once


# ------------------------------------------------------------------------ validation


def _defaulted(**spec: Any) -> dict[str, Any]:
    hpa = _hpa(**spec)
    SCHEME.default(hpa)
    return hpa


@pytest.mark.parametrize(
    "spec",
    [
        {},
        {"minReplicas": 5},
        {"behavior": {}},
        {
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
                        "target": {"type": "Value", "value": "30"},
                    },
                },
                {
                    "type": "Object",
                    "object": {
                        "describedObject": {"kind": "Service", "name": "web", "apiVersion": "v1"},
                        "metric": {"name": "hits"},
                        "target": {"type": "AverageValue", "averageValue": "500m"},
                    },
                },
                {
                    "type": "ContainerResource",
                    "containerResource": {
                        "name": "memory",
                        "container": "app",
                        "target": {"type": "AverageValue", "averageValue": "1Gi"},
                    },
                },
            ]
        },
    ],
)
def test_valid_autoscalers(spec: dict[str, Any]) -> None:
    assert validate_hpa(_defaulted(**spec)) == []


def test_replica_bounds() -> None:
    causes = validate_hpa(_defaulted(minReplicas=0, maxReplicas=0))
    assert _rendered(causes) == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas",
    ]
    causes = validate_hpa(_defaulted(minReplicas=4, maxReplicas=2))
    assert _rendered(causes) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
    ]


def test_scale_target_reference() -> None:
    hpa = _defaulted(scaleTargetRef={"kind": "", "name": "a/b", "apiVersion": "v1"})
    assert _rendered(validate_hpa(hpa)) == [
        "spec.scaleTargetRef.kind: Required value",
        "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
        'spec.scaleTargetRef.apiVersion: Invalid value: "v1": the API group cannot be empty',
    ]
    rc = _defaulted(scaleTargetRef={"kind": "ReplicationController", "name": "web"})
    assert validate_hpa(rc) == []
    odd = _defaulted(scaleTargetRef={"kind": "Deployment", "name": "w", "apiVersion": "a/b/c"})
    assert _rendered(validate_hpa(odd)) == [
        'spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": '
        "unexpected GroupVersion string: a/b/c"
    ]


def test_an_update_that_keeps_the_target_skips_its_api_version() -> None:
    old = _defaulted(scaleTargetRef={"kind": "Deployment", "name": "web"})
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 7
    assert validate_hpa_update(new, old) == []
    new["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    assert _rendered(validate_hpa_update(new, old)) == [
        'spec.scaleTargetRef.apiVersion: Invalid value: "": the API group cannot be empty'
    ]


def test_scale_to_zero_is_kept_only_by_objects_that_have_it() -> None:
    external = {
        "type": "External",
        "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}},
    }
    old = _defaulted(metrics=[external])
    old["spec"]["minReplicas"] = 0
    new = copy.deepcopy(old)
    assert validate_hpa_update(new, old) == []
    new["spec"]["metrics"] = [CPU_80]
    assert _rendered(validate_hpa_update(new, old)) == [
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas"
    ]


def test_metric_source_must_match_its_type() -> None:
    metric = {
        "type": "Pods",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    assert _rendered(validate_hpa(_defaulted(metrics=[metric]))) == [
        "spec.metrics[0].pods: Required value: must populate information for the given metric "
        "source"
    ]
    metric = {
        "type": "Nope",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "1"},
        },
    }
    supported = 'supported values: "ContainerResource", "External", "Object", "Pods", "Resource"'
    # Kubernetes reports an unknown type twice (the set check, then the switch's default).
    assert _rendered(validate_hpa(_defaulted(metrics=[metric]))) == [
        f'spec.metrics[0].type: Unsupported value: "Nope": {supported}',
        f'spec.metrics[0].type: Unsupported value: "Nope": {supported}',
    ]
    metric = {**metric, "type": "Resource", "resource": CPU_80["resource"]}
    assert _rendered(validate_hpa(_defaulted(metrics=[metric]))) == [
        "spec.metrics[0].pods: Forbidden: must populate the given metric source only"
    ]


def test_metric_targets() -> None:
    metrics = [
        {
            "type": "Resource",
            "resource": {
                "name": "",
                "target": {"type": "Percent", "averageUtilization": 0, "averageValue": "-1"},
            },
        },
        {"type": "Pods", "pods": {"metric": {"name": ""}, "target": {"type": "AverageValue"}}},
        {
            "type": "External",
            "external": {
                "metric": {"name": "q"},
                "target": {"type": "Value", "value": "1", "averageValue": "2"},
            },
        },
    ]
    assert _rendered(validate_hpa(_defaulted(metrics=metrics))) == [
        "spec.metrics[0].resource.name: Required value: must specify a resource name",
        'spec.metrics[0].resource.target.type: Invalid value: "Percent": must be either '
        "Utilization, Value, or AverageValue",
        'spec.metrics[0].resource.target.averageValue: Invalid value: "-1": must be positive',
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater "
        "than 0",
        "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw "
        "value and a target utilization",
        "spec.metrics[1].pods.metric.name: Required value: must specify a metric name",
        "spec.metrics[1].pods.target.averageValue: Required value: must specify a positive "
        "target averageValue",
        "spec.metrics[2].external.target.value: Forbidden: may not set both a target value for "
        "metric and a per-pod target",
    ]


def test_container_resource_metric() -> None:
    metric = {
        "type": "ContainerResource",
        "containerResource": {
            "name": "gpu",
            "container": "App",
            "target": {"type": "Utilization", "averageUtilization": 50},
        },
    }
    causes = _rendered(validate_hpa(_defaulted(metrics=[metric])))
    assert causes[0] == (
        'spec.metrics[0].containerResource.name: Invalid value: "gpu": must be a standard '
        "resource for containers"
    )
    assert causes[1].startswith(
        'spec.metrics[0].containerResource.container: Invalid value: "App": a lowercase RFC 1123'
    )
    assert len(causes) == 2


def test_scaling_rules() -> None:
    behavior = {
        "scaleUp": {
            "stabilizationWindowSeconds": 3601,
            "selectPolicy": "Sometimes",
            "policies": [{"type": "Nodes", "value": 0, "periodSeconds": 1801}],
        },
        "scaleDown": {"stabilizationWindowSeconds": -1, "policies": [], "tolerance": "-10m"},
    }
    hpa = _hpa(behavior=behavior)
    SCHEME.default(hpa)
    assert _rendered(validate_hpa(hpa)) == [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less "
        "than or equal to 3600",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Sometimes": supported values: '
        '"Disabled", "Max", "Min"',
        'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: '
        '"Percent", "Pods"',
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less "
        "than or equal to 1800",
        "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater "
        "than or equal to zero",
        "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
        'spec.behavior.scaleDown.tolerance: Invalid value: "-10m": must be greater than or equal '
        "to zero",
    ]


def test_status_counts_are_not_negative() -> None:
    old = _defaulted()
    new = copy.deepcopy(old)
    new["status"] = {"currentReplicas": -1, "desiredReplicas": -2}
    assert _rendered(validate_hpa_status_update(new, old)) == [
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0",
    ]


def test_object_metadata_is_validated() -> None:
    hpa = _defaulted()
    hpa["metadata"]["name"] = "Web"
    assert _rendered(validate_hpa(hpa))[0].startswith(
        'metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain'
    )
