"""apps/v1 ReplicaSet: the resource, defaulting, validation (create, update, status)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.replicaset import (
    replica_set_fields,
    validate_replica_set,
    validate_replica_set_status_update,
    validate_replica_set_update,
)
from kstore.errors import Cause, Invalid

SCHEME = builtin_scheme()


def _replica_set(**spec: Any) -> dict[str, Any]:
    """A ReplicaSet (hub) whose pod template carries the defaults Kubernetes would have filled."""
    body: dict[str, Any] = {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web", "pod-template-hash": "5d8f7"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                        "imagePullPolicy": "IfNotPresent",
                    }
                ],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
            },
        },
    }
    body.update(spec)
    return {
        "apiVersion": "apps/__internal",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-5d8f7", "namespace": "default", "resourceVersion": "7"},
        "spec": body,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


# ---------------------------------------------------------------------------- the resource


def test_replica_set_is_a_namespaced_apps_v1_resource_with_status_and_scale() -> None:
    definition = SCHEME.definition("apps", "ReplicaSet")
    assert definition.storage_group_version == GroupVersion("apps", "v1")
    assert [v.version for v in definition.versions] == ["v1"]
    assert definition.list_kind == "ReplicaSetList"
    info = SCHEME.resource(GroupVersion("apps", "v1"), "replicasets").info
    assert info.namespaced
    assert (info.singular, info.short_names, info.categories) == ("replicaset", ("rs",), ("all",))
    assert info.subresources == ("status", "scale")
    assert SCHEME.is_served(GroupVersionKind("apps", "v1", "ReplicaSet"))
    assert SCHEME.recognizes(GroupVersionKind("apps", "v1", "ReplicaSetList"))
    assert not SCHEME.recognizes(GroupVersionKind("apps", "v1beta2", "ReplicaSet"))


def test_conversion_only_rewrites_the_api_version() -> None:
    external = {**_replica_set(), "apiVersion": "apps/v1"}
    hub = SCHEME.to_hub(external)
    assert hub == {**external, "apiVersion": "apps/__internal"}
    assert SCHEME.from_hub(hub, "v1") == external


def test_status_replicas_is_a_field_selector_field() -> None:
    assert replica_set_fields({"status": {"replicas": 4}}) == {"status.replicas": "4"}
    assert replica_set_fields({}) == {"status.replicas": "0"}


# ---------------------------------------------------------------------------- defaulting


def _bare() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


def test_replicas_default_to_one_and_the_template_gets_the_pod_spec_defaults() -> None:
    obj = _bare()
    SCHEME.default(obj)
    spec = obj["spec"]
    assert spec["replicas"] == 1
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert set(spec) == {"replicas", "selector", "template"}, "no other spec defaults"
    SCHEME.validate(SCHEME.to_hub(obj))


def test_defaults_keep_zero_replicas_and_never_invent_a_selector() -> None:
    obj = _bare()
    obj["spec"]["replicas"] = 0
    del obj["spec"]["selector"]
    SCHEME.default(obj)
    assert obj["spec"]["replicas"] == 0
    assert "selector" not in obj["spec"]
    assert "labels" not in obj["metadata"]


def test_a_replica_set_without_a_spec_gets_a_defaulted_template() -> None:
    obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "x"}}
    SCHEME.default(obj)
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["restartPolicy"] == "Always"


# ---------------------------------------------------------------------------- validation


def test_a_complete_replica_set_is_valid() -> None:
    assert validate_replica_set(_replica_set()) == []


def test_missing_selector_is_required_and_matches_no_template() -> None:
    obj = _replica_set()
    del obj["spec"]["selector"]
    with pytest.raises(Invalid) as err:
        SCHEME.validate(obj)
    assert err.value.message.startswith('ReplicaSet.apps "web-5d8f7" is invalid: [')
    assert _rendered(list(err.value.causes)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web","pod-template-hash":"5d8f7"}: '
        "`selector` does not match template `labels`",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"replicas": -1},
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"minReadySeconds": -5},
            ["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
        ),
        (
            {"selector": {}},
            # Kubernetes' ReplicaSet validation shares the Deployment's words.
            ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
        ),
        (
            {"selector": {"matchLabels": {"app": "api"}}},
            [
                'spec.template.metadata.labels: Invalid value: {"app":"web",'
                '"pod-template-hash":"5d8f7"}: `selector` does not match template `labels`'
            ],
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
            [
                'spec.selector.matchExpressions[0].operator: Invalid value: "Near": '
                "not a valid selector operator",
                'spec.selector: Invalid value: {"matchExpressions":[{"key":"app",'
                '"operator":"Near"}]}: invalid label selector',
            ],
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(spec: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_replica_set(_replica_set(**spec))) == expected


def test_selector_expressions_select_the_template() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["5d8f7"]}],
    }
    assert validate_replica_set(_replica_set(selector=selector)) == []


def test_template_must_restart_always_and_have_no_deadline() -> None:
    obj = _replica_set()
    obj["spec"]["template"]["spec"].update(restartPolicy="Never", activeDeadlineSeconds=10)
    assert _rendered(validate_replica_set(obj)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in ReplicaSet is not Supported",
    ]


def test_pod_template_and_metadata_are_validated() -> None:
    obj = _replica_set()
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    obj["metadata"]["name"] = "Web"
    assert [c.field for c in validate_replica_set(obj)] == [
        "metadata.name",
        "spec.template.spec.containers[0].image",
    ]


def test_update_reports_spec_problems_twice_as_kubernetes_strategy_does() -> None:
    """ValidateReplicaSet and ValidateReplicaSetUpdate both validate the spec; the message
    says each problem once."""
    old = _replica_set()
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = -1
    expected = "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    assert _rendered(validate_replica_set_update(new, old)) == [expected, expected]
    with pytest.raises(Invalid) as err:
        SCHEME.validate_update(new, old)
    assert err.value.message == f'ReplicaSet.apps "web-5d8f7" is invalid: {expected}'


def test_selector_is_immutable_on_update() -> None:
    old = _replica_set()
    new = _replica_set(selector={"matchLabels": {"app": "web", "pod-template-hash": "5d8f7"}})
    assert _rendered(validate_replica_set_update(new, old)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web","pod-template-hash":"5d8f7"}}: '
        "field is immutable"
    ]
    assert validate_replica_set_update(new, old, selector_immutable=False) == []
    scaled = _replica_set(replicas=0)
    assert validate_replica_set_update(scaled, old) == []


def test_status_update_rules() -> None:
    old = _replica_set()
    new = copy.deepcopy(old)
    new["status"] = {
        "replicas": 2,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 1,
        "availableReplicas": 2,
        "terminatingReplicas": -1,
        "observedGeneration": -1,
    }
    assert _rendered(validate_replica_set_status_update(new, old)) == [
        "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
        "status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.fullyLabeledReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
    ]
    new["status"] = {"replicas": -1}
    # Every count (0 when absent) is then above status.replicas, as Kubernetes reports it.
    assert _rendered(validate_replica_set_status_update(new, old)) == [
        "status.replicas: Invalid value: -1: must be greater than or equal to 0",
        "status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas",
        "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
    ]
    new["status"] = {"replicas": 1}
    new["metadata"]["name"] = "other"
    assert [c.field for c in validate_replica_set_status_update(new, old)] == ["metadata.name"]
