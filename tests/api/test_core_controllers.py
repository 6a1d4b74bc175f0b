"""core/v1 PodTemplate and ReplicationController: the resources, defaulting and validation."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.gvk import GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.podtemplate import validate_pod_template, validate_pod_template_update
from kstore.api.kinds.replicationcontroller import (
    replication_controller_fields,
    validate_replication_controller,
    validate_replication_controller_status_update,
    validate_replication_controller_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()


def _defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    SCHEME.default(out)
    return out


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _controller(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        }
    }
    body.update(spec)
    obj = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "3"},
        "spec": body,
    }
    return _defaulted(obj)


def test_resources_and_discovery_facts() -> None:
    rc = SCHEME.resource(GroupVersion("", "v1"), "replicationcontrollers")
    assert rc.info.short_names == ("rc",)
    assert rc.info.categories == ("all",)
    assert rc.info.subresources == ("status", "scale")
    templates = SCHEME.resource(GroupVersion("", "v1"), "podtemplates")
    assert templates.info.namespaced
    assert templates.info.short_names == ()
    assert templates.info.subresources == ()


def test_pod_template_defaults_its_template_even_when_absent() -> None:
    obj = _defaulted({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}})
    assert obj["template"]["spec"]["restartPolicy"] == "Always"
    assert obj["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_pod_template_validation() -> None:
    obj = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "t", "namespace": "default", "resourceVersion": "1"},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}},
        }
    )
    assert _rendered(validate_pod_template(obj)) == [
        "template.spec.containers: Required value",
    ]
    bad_name = copy.deepcopy(obj)
    bad_name["metadata"]["name"] = "T_1"
    assert _rendered(validate_pod_template(bad_name))[0].startswith(
        'metadata.name: Invalid value: "T_1": a lowercase RFC 1123 subdomain'
    )
    assert _rendered(validate_pod_template_update(obj, obj)) == [
        "template.spec.containers: Required value",
    ]


def test_controller_defaults_selector_labels_and_replicas_from_the_template() -> None:
    obj = _controller()
    assert obj["spec"]["selector"] == {"app": "web"}
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    # A selector or labels already set are kept; no template means no pod defaults.
    kept = _controller(selector={"app": "web", "tier": "x"}, replicas=0)
    assert kept["spec"]["selector"] == {"app": "web", "tier": "x"}
    assert kept["spec"]["replicas"] == 0
    bare = _defaulted({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {}})
    assert bare["spec"] == {"replicas": 1}
    assert validate_replication_controller(_controller()) == []


def test_controller_validation_messages() -> None:
    bare = _defaulted(
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": -1, "minReadySeconds": -2},
        }
    )
    assert _rendered(validate_replication_controller(bare)) == [
        "spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0",
        "spec.selector: Required value",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.template: Required value",
    ]
    mismatch = _controller(selector={"app": "db"})
    mismatch["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    mismatch["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 30
    assert _rendered(validate_replication_controller(mismatch)) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`",
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in ReplicationController is not Supported",
    ]


def test_controller_update_lists_a_spec_problem_twice() -> None:
    old = _controller()
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = -1
    assert _rendered(validate_replication_controller_update(new, old)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
    ]
    # The selector may change (Kubernetes has no immutability rule for it).
    moved = copy.deepcopy(old)
    moved["spec"]["selector"] = {"app": "web", "v": "2"}
    moved["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert validate_replication_controller_update(moved, old) == []


def test_controller_status_rules_and_field_selector() -> None:
    old = _controller()
    new = copy.deepcopy(old)
    new["status"] = {
        "replicas": 2,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 1,
        "availableReplicas": 2,
        "observedGeneration": -1,
    }
    assert _rendered(validate_replication_controller_status_update(new, old)) == [
        "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
        "status.fullyLabeledReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
    ]
    assert replication_controller_fields(new) == {"status.replicas": "2"}
