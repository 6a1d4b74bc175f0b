"""core/v1 LimitRange and ResourceQuota: the resources, defaulting, validation, columns."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.limitrange import validate_limit_range, validate_limit_range_update
from kstore.api.kinds.resourcequota import (
    validate_resource_quota,
    validate_resource_quota_status_update,
    validate_resource_quota_update,
)
from kstore.errors import Cause
from kstore.server.printers import printer_for

SCHEME = builtin_scheme()


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _limit_range(*limits: dict[str, Any]) -> dict[str, Any]:
    obj = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits", "namespace": "default", "resourceVersion": "2"},
        "spec": {"limits": list(limits)},
    }
    SCHEME.default(obj)
    return obj


def _quota(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "quota", "namespace": "default", "resourceVersion": "2"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    SCHEME.default(obj)
    return obj


def test_resources() -> None:
    core = GroupVersion("", "v1")
    limits = SCHEME.resource(core, "limitranges").info
    assert (limits.short_names, limits.subresources) == (("limits",), ())
    quota = SCHEME.resource(core, "resourcequotas").info
    assert (quota.short_names, quota.subresources) == (("quota",), ("status",))


def test_container_items_default_limits_and_requests() -> None:
    obj = _limit_range(
        {
            "type": "Container",
            "max": {"cpu": "2", "memory": "1Gi"},
            "min": {"cpu": "100m", "ephemeral-storage": "1Gi"},
            "default": {"memory": "512Mi"},
        },
        {"type": "Pod", "max": {"cpu": "4"}},
    )
    container, pod = obj["spec"]["limits"]
    assert container["default"] == {"memory": "512Mi", "cpu": "2"}
    assert container["defaultRequest"] == {
        "memory": "512Mi",
        "cpu": "2",
        "ephemeral-storage": "1Gi",
    }
    assert pod == {"type": "Pod", "max": {"cpu": "4"}}
    assert validate_limit_range(obj) == []


def test_limit_range_validation_messages() -> None:
    obj = _limit_range(
        {"type": "Pod", "max": {"cpu": "1"}, "default": {"cpu": "1"}},
        {"type": "Pod"},
        {"type": "Widget"},
        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
        {
            "type": "Container",
            "min": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "2Mi"},
            "max": {"cpu": "1", "memory": "2Gi", "bogus": "1"},
            "default": {"hugepages-2Mi": "4Mi"},
            "defaultRequest": {"hugepages-2Mi": "2Mi"},
            "maxLimitRequestRatio": {"memory": "4", "cpu": "500m"},
        },
    )
    assert _rendered(validate_limit_range(obj)) == [
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
        'spec.limits[1].type: Duplicate value: "Pod"',
        'spec.limits[2].type: Invalid value: "Widget": '
        "must be a standard limit type or fully qualified",
        "spec.limits[3].limits: Required value: either minimum or maximum storage value is "
        "required, but neither was provided",
        'spec.limits[4].max[bogus]: Invalid value: "bogus": '
        "must be a standard resource type or fully qualified",
        'spec.limits[4].max[bogus]: Invalid value: "bogus": '
        "must be a standard resource for containers",
        'spec.limits[4].default[bogus]: Invalid value: "bogus": '
        "must be a standard resource type or fully qualified",
        'spec.limits[4].default[bogus]: Invalid value: "bogus": '
        "must be a standard resource for containers",
        'spec.limits[4].defaultRequest[bogus]: Invalid value: "bogus": '
        "must be a standard resource type or fully qualified",
        'spec.limits[4].defaultRequest[bogus]: Invalid value: "bogus": '
        "must be a standard resource for containers",
        'spec.limits[4].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
        'spec.limits[4].defaultRequest[cpu]: Invalid value: "1": '
        "min value 2 is greater than default request value 1",
        'spec.limits[4].default[cpu]: Invalid value: "2": '
        "min value 2 is greater than default value 1",
        'spec.limits[4].maxLimitRequestRatio[cpu]: Invalid value: "500m": '
        "ratio 500m is less than 1",
        'spec.limits[4].defaultRequest[hugepages-2Mi]: Invalid value: "2Mi": '
        "default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi",
        'spec.limits[4].maxLimitRequestRatio[memory]: Invalid value: "4": '
        "ratio 4 is greater than max/min = 2.000000",
    ]
    assert _rendered(validate_limit_range_update(obj, obj))[0] == (
        "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"
    )


APPLIED = (
    'spec.scopeSelector.matchExpressions: Invalid value: {"matchExpressions":[{"scopeName":'
    '"Terminating","operator":"In","values":["x"]},{"scopeName":"PriorityClass","operator":'
    '"In"},{"scopeName":"PriorityClass","operator":"Exists","values":["a"]},{"scopeName":'
    '"PriorityClass","operator":"Near"}]}: unsupported scope applied to resource'
)


def test_quota_validation_messages() -> None:
    obj = _quota(
        {
            "hard": {"pods": "1500m", "requests.cpu": "-1", "widgets": "1", "services": "2"},
            "scopes": ["BestEffort", "NotBestEffort", "Sometimes"],
            "scopeSelector": {
                "matchExpressions": [
                    {"scopeName": "Terminating", "operator": "In", "values": ["x"]},
                    {"scopeName": "PriorityClass", "operator": "In"},
                    {"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]},
                    {"scopeName": "PriorityClass", "operator": "Near"},
                ]
            },
        },
        {"used": {"pods": "-1"}},
    )
    assert _rendered(validate_resource_quota(obj)) == [
        'spec.hard[pods]: Invalid value: "1500m": must be an integer',
        'spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.hard[widgets]: Invalid value: "widgets": '
        "must be a standard resource type or fully qualified",
        'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
        *[
            'spec.scopes: Invalid value: ["BestEffort","NotBestEffort","Sometimes"]: '
            "unsupported scope applied to resource"
        ]
        * 3,
        'spec.scopes: Invalid value: ["BestEffort","NotBestEffort","Sometimes"]: unsupported scope',
        'spec.scopes: Invalid value: ["BestEffort","NotBestEffort","Sometimes"]: '
        "conflicting scopes",
        # Every expression's scope is judged against services, a resource no pod scope fits.
        APPLIED,
        "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exists' "
        "when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
        "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity",
        APPLIED,
        "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value "
        "when `operator` is 'In' or 'NotIn' for scope selector",
        APPLIED,
        'spec.scopeSelector.matchExpressions.values: Invalid value: ["a"]: must be no value '
        "when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
        APPLIED,
        'spec.scopeSelector.matchExpressions.operator: Invalid value: "Near": '
        "not a valid selector operator",
        'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0',
    ]


def test_quota_update_rules() -> None:
    old = _quota({"hard": {"pods": "10"}, "scopes": ["NotTerminating", "NotBestEffort"]})
    same = copy.deepcopy(old)
    same["spec"]["scopes"] = ["NotBestEffort", "NotTerminating"]
    same["spec"]["hard"]["pods"] = "20"
    assert validate_resource_quota_update(same, old) == []
    moved = copy.deepcopy(old)
    moved["spec"]["scopes"] = ["NotTerminating"]
    assert _rendered(validate_resource_quota_update(moved, old)) == [
        'spec.scopes: Invalid value: ["NotTerminating"]: field is immutable'
    ]
    status = copy.deepcopy(old)
    status["status"] = {"hard": {"pods": "10"}, "used": {"pods": "0.5"}}
    del status["metadata"]["resourceVersion"]
    assert _rendered(validate_resource_quota_status_update(status, old)) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "resourceVersion: Required value",
        'status.used[pods]: Invalid value: "0.5": must be an integer',
    ]


def test_columns() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    created = "2029-12-31T23:00:00Z"
    limits = _limit_range()
    limits["metadata"]["creationTimestamp"] = created
    printer = printer_for("", "LimitRange")
    assert printer is not None
    assert [c.name for c in printer.columns] == ["Name", "Created At"]
    assert printer.cells(limits, now) == ["limits", created]
    quota = _quota(
        {},
        {
            "hard": {"pods": "10", "limits.memory": "2Gi", "requests.cpu": "1", "limits.cpu": "2"},
            "used": {"pods": "3", "limits.cpu": "500m"},
        },
    )
    quota["metadata"]["creationTimestamp"] = created
    printer = printer_for("", "ResourceQuota")
    assert printer is not None
    assert [c.name for c in printer.columns] == ["Name", "Age", "Request", "Limit"]
    assert printer.cells(quota, now) == [
        "quota",
        "60m",
        "pods: 3/10, requests.cpu: 0/1",
        "limits.cpu: 500m/2, limits.memory: 0/2Gi",
    ]
