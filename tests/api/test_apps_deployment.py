"""apps Deployment: conversion between v1, v1beta2 and v1beta1, defaulting, validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.apps import (
    ROLLBACK_TO,
    ROLLBACK_TO_ANNOTATION,
    validate_deployment,
    validate_deployment_status_update,
    validate_deployment_update,
)
from kstore.codec.json import JsonSerializer
from kstore.codec.versioning import VersioningCodec
from kstore.errors import Cause, Invalid
from tests.fixtures_path import k8s_testdata
from tests.strategies import rollback_annotation_text, rollback_config

SCHEME = builtin_scheme()


def _deployment(version: str = "v1", **spec: Any) -> dict[str, Any]:
    """A Deployment whose pod template carries the defaults Kubernetes would have filled."""
    body: dict[str, Any] = {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
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
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
        },
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }
    body.update(spec)
    return {
        "apiVersion": f"apps/{version}",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
        "spec": body,
    }


def _hub(obj: dict[str, Any]) -> dict[str, Any]:
    return SCHEME.to_hub(obj)


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


# ---------------------------------------------------------------------------- conversion


def test_rollback_to_survives_an_update_through_v1_in_storage() -> None:
    """Created as v1beta1 with rollbackTo, stored as v1, updated as v1, read as v1beta1."""
    codec = VersioningCodec(SCHEME, JsonSerializer(), default=False)
    created = _deployment("v1beta1", rollbackTo={"revision": 3})
    stored = codec.encode(SCHEME.to_hub(created))

    as_stored = json.loads(stored)
    assert as_stored["apiVersion"] == "apps/v1"
    assert as_stored["metadata"]["annotations"] == {ROLLBACK_TO_ANNOTATION: "3"}
    assert "rollbackTo" not in as_stored["spec"]

    read_v1 = SCHEME.from_hub(codec.decode(stored), "v1")
    assert "rollbackTo" not in read_v1["spec"]
    updated = copy.deepcopy(read_v1)
    updated["spec"]["replicas"] = 5
    stored = codec.encode(SCHEME.to_hub(updated))

    read_v1beta1 = SCHEME.from_hub(codec.decode(stored), "v1beta1")
    assert read_v1beta1["spec"]["rollbackTo"] == {"revision": 3}
    assert read_v1beta1["spec"]["replicas"] == 5
    assert "annotations" not in read_v1beta1["metadata"]
    expected = copy.deepcopy(created)
    expected["spec"]["replicas"] = 5
    assert read_v1beta1 == expected


@pytest.mark.parametrize("version", ["v1", "v1beta2"])
def test_versions_without_rollback_to_keep_it_in_the_annotation_as_kubernetes_does(
    version: str,
) -> None:
    source = json.loads((k8s_testdata() / "HEAD" / "apps.v1beta1.Deployment.json").read_bytes())
    converted = SCHEME.convert(source, f"apps/{version}")
    assert converted["metadata"]["annotations"] == {
        "annotationsKey": "annotationsValue",
        ROLLBACK_TO_ANNOTATION: "1",
    }
    expected_spec = {k: v for k, v in source["spec"].items() if k != "rollbackTo"}
    assert converted["spec"] == expected_spec
    assert converted["status"] == source["status"]
    assert SCHEME.convert(converted, "apps/v1beta1") == source


def test_restored_rollback_to_is_placed_where_kubernetes_prints_it() -> None:
    source = json.loads((k8s_testdata() / "HEAD" / "apps.v1beta1.Deployment.json").read_bytes())
    back = SCHEME.convert(SCHEME.convert(source, "apps/v1"), "apps/v1beta1")
    assert list(back["spec"]) == list(source["spec"])
    assert json.dumps(back) == json.dumps(source)


def test_v1_fixture_converts_to_every_version_and_back() -> None:
    source = json.loads((k8s_testdata() / "HEAD" / "apps.v1.Deployment.json").read_bytes())
    for version in ("v1beta1", "v1beta2"):
        assert SCHEME.convert(SCHEME.convert(source, f"apps/{version}"), "apps/v1") == source


@pytest.mark.parametrize(
    ("rollback_to", "text"),
    [
        ({"revision": 7}, "7"),
        ({"revision": -2}, "-2"),
        ({}, "0"),
        ({"revision": 2**63 - 1}, str(2**63 - 1)),
    ],
)
def test_revision_is_written_as_kubernetes_writes_it(
    rollback_to: dict[str, Any], text: str
) -> None:
    v1 = SCHEME.convert(_deployment("v1beta1", rollbackTo=rollback_to), "apps/v1")
    assert v1["metadata"]["annotations"][ROLLBACK_TO_ANNOTATION] == text
    assert SCHEME.convert(v1, "apps/v1beta1")["spec"]["rollbackTo"] == rollback_to


def test_a_v1_client_setting_the_annotation_is_read_as_rollback_to_in_v1beta1() -> None:
    v1 = _deployment("v1")
    v1["metadata"]["annotations"] = {ROLLBACK_TO_ANNOTATION: "4", "team": "a"}
    v1beta1 = SCHEME.convert(v1, "apps/v1beta1")
    assert v1beta1["spec"]["rollbackTo"] == {"revision": 4}
    assert v1beta1["metadata"]["annotations"] == {"team": "a"}


@pytest.mark.parametrize("text", ["+5", "007", "", "five", "-0", "9223372036854775808"])
def test_non_canonical_annotation_text_stays_an_annotation(text: str) -> None:
    """Kubernetes would parse ``+5``/``007`` (losing their spelling) and reject the rest."""
    v1 = _deployment("v1")
    v1["metadata"]["annotations"] = {ROLLBACK_TO_ANNOTATION: text}
    v1beta1 = SCHEME.convert(v1, "apps/v1beta1")
    assert "rollbackTo" not in v1beta1["spec"]
    assert v1beta1["metadata"]["annotations"] == {ROLLBACK_TO_ANNOTATION: text}
    assert SCHEME.convert(v1beta1, "apps/v1") == v1


def test_values_the_annotation_text_cannot_tell_apart_travel_in_an_envelope() -> None:
    """``{"revision": 0}`` is ``{}`` to Kubernetes; kstore keeps the difference."""
    v1beta1 = _deployment("v1beta1", rollbackTo={"revision": 0})
    v1 = SCHEME.convert(v1beta1, "apps/v1")
    text = v1["metadata"]["annotations"][ROLLBACK_TO_ANNOTATION]
    assert json.loads(text) == {"rollbackTo": {"revision": 0}}
    assert SCHEME.convert(v1, "apps/v1beta1") == v1beta1


def test_a_users_own_annotation_under_the_key_survives_next_to_rollback_to() -> None:
    v1beta1 = _deployment("v1beta1", rollbackTo={"revision": 2})
    v1beta1["metadata"]["annotations"] = {ROLLBACK_TO_ANNOTATION: "9"}
    v1 = SCHEME.convert(v1beta1, "apps/v1")
    assert json.loads(v1["metadata"]["annotations"][ROLLBACK_TO_ANNOTATION]) == {
        "annotation": "9",
        "rollbackTo": {"revision": 2},
    }
    assert SCHEME.convert(v1, "apps/v1beta1") == v1beta1


@st.composite
def _odd_shapes(draw: st.DrawFn) -> dict[str, Any]:
    """Hub Deployments whose metadata is missing, null, empty, or has empty/null annotations."""
    obj: dict[str, Any] = {"apiVersion": "apps/__internal", "kind": "Deployment"}
    shape = draw(st.sampled_from(["missing", "null", "empty", "map"]))
    if shape != "missing":
        obj["metadata"] = {"null": None, "empty": {}, "map": None}[shape]
    if shape == "map":
        meta: dict[str, Any] = {"name": "web"} if draw(st.booleans()) else {}
        annotations = draw(st.sampled_from(["missing", "null", "empty", "some"]))
        if annotations != "missing":
            meta["annotations"] = {"null": None, "empty": {}, "some": {"team": "a"}}[annotations]
            if annotations == "some" and draw(st.booleans()):
                meta["annotations"][ROLLBACK_TO_ANNOTATION] = draw(rollback_annotation_text())
        obj["metadata"] = meta
    spec: dict[str, Any] = {"replicas": 1} if draw(st.booleans()) else {}
    if draw(st.booleans()):
        spec["rollbackTo"] = draw(
            st.one_of(rollback_config(), st.none(), st.just({"revision": "5"}))
        )
    obj["spec"] = spec
    return obj


@settings(max_examples=300, deadline=None)
@given(hub=_odd_shapes())
def test_the_annotation_keeps_every_hub_shape_and_every_external_shape(hub: dict[str, Any]) -> None:
    before = copy.deepcopy(hub)
    external = ROLLBACK_TO.stash(hub)
    assert hub == before
    assert "rollbackTo" not in external["spec"]
    assert ROLLBACK_TO.restore(external) == hub
    # The same shapes read as external objects (no rollbackTo field) come back too.
    as_external = {**hub, "spec": {k: v for k, v in hub["spec"].items() if k != "rollbackTo"}}
    assert ROLLBACK_TO.stash(ROLLBACK_TO.restore(as_external)) == as_external


def test_conversion_shares_untouched_subtrees_and_never_mutates_its_input() -> None:
    v1beta1 = _deployment("v1beta1", rollbackTo={"revision": 2})
    before = copy.deepcopy(v1beta1)
    v1 = SCHEME.convert(v1beta1, "apps/v1")
    assert v1beta1 == before
    assert v1["spec"]["template"] is v1beta1["spec"]["template"]


def test_deployment_list_converts_every_item() -> None:
    items = [_deployment("v1beta1", rollbackTo={"revision": n}) for n in (1, 2)]
    for item in items:
        del item["apiVersion"], item["kind"]
    lst = {"apiVersion": "apps/v1beta1", "kind": "DeploymentList", "metadata": {}, "items": items}
    v1 = SCHEME.convert(lst, "apps/v1")
    assert [i["metadata"]["annotations"][ROLLBACK_TO_ANNOTATION] for i in v1["items"]] == ["1", "2"]
    assert SCHEME.convert(v1, "apps/v1beta1") == lst


# ---------------------------------------------------------------------------- defaulting


def _bare(version: str) -> dict[str, Any]:
    return {
        "apiVersion": f"apps/{version}",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {}},
        },
    }


@pytest.mark.parametrize(("version", "history"), [("v1", 10), ("v1beta2", 10), ("v1beta1", 2)])
def test_each_version_fills_kubernetes_defaults(version: str, history: int) -> None:
    obj = _bare(version)
    SCHEME.default(obj)
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["revisionHistoryLimit"] == history
    assert spec["progressDeadlineSeconds"] == 600


def test_defaults_keep_values_that_were_set() -> None:
    obj = _bare("v1")
    obj["spec"].update(
        replicas=0,
        revisionHistoryLimit=0,
        progressDeadlineSeconds=30,
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}},
    )
    SCHEME.default(obj)
    assert obj["spec"]["replicas"] == 0
    assert obj["spec"]["revisionHistoryLimit"] == 0
    assert obj["spec"]["progressDeadlineSeconds"] == 30
    assert obj["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": "25%"}


def test_recreate_strategy_gets_no_rolling_update() -> None:
    obj = _bare("v1")
    obj["spec"]["strategy"] = {"type": "Recreate"}
    SCHEME.default(obj)
    assert obj["spec"]["strategy"] == {"type": "Recreate"}


def test_v1beta1_takes_selector_and_labels_from_the_template() -> None:
    obj = _bare("v1beta1")
    del obj["spec"]["selector"]
    SCHEME.default(obj)
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["metadata"]["labels"] == {"app": "web"}
    obj["spec"]["selector"]["matchLabels"]["extra"] = "x"
    assert obj["metadata"]["labels"] == {"app": "web"}, "defaults must not alias one map"


def test_v1beta1_keeps_its_own_selector_and_labels() -> None:
    obj = _bare("v1beta1")
    obj["spec"]["selector"] = {"matchLabels": {"tier": "a"}}
    obj["metadata"]["labels"] = {"team": "b"}
    SCHEME.default(obj)
    assert obj["spec"]["selector"] == {"matchLabels": {"tier": "a"}}
    assert obj["metadata"]["labels"] == {"team": "b"}


@pytest.mark.parametrize("version", ["v1", "v1beta2"])
def test_v1_and_v1beta2_never_invent_a_selector(version: str) -> None:
    obj = _bare(version)
    del obj["spec"]["selector"]
    SCHEME.default(obj)
    assert "selector" not in obj["spec"]
    assert "labels" not in obj["metadata"]


def test_the_pod_template_gets_the_pod_spec_defaults() -> None:
    obj = _bare("v1")
    obj["spec"]["template"]["spec"] = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    SCHEME.default(obj)
    pod_spec = obj["spec"]["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1"])
def test_a_minimal_deployment_is_valid_once_defaulted(version: str) -> None:
    obj = _bare(version)
    if version == "v1beta1":
        del obj["spec"]["selector"]
    obj["metadata"]["namespace"] = "default"
    obj["spec"]["template"]["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
    SCHEME.default(obj)
    SCHEME.validate(SCHEME.to_hub(obj))


# ---------------------------------------------------------------------------- validation


def test_a_complete_deployment_is_valid_in_every_version() -> None:
    for version in ("v1", "v1beta2", "v1beta1"):
        SCHEME.validate(_hub(_deployment(version)))


def test_missing_selector_is_reported_with_the_template_labels() -> None:
    obj = _deployment()
    del obj["spec"]["selector"]
    with pytest.raises(Invalid) as err:
        SCHEME.validate(_hub(obj))
    assert _rendered(list(err.value.causes)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`",
    ]


def test_selector_must_match_the_template_labels() -> None:
    obj = _deployment(selector={"matchLabels": {"app": "api"}})
    assert _rendered(validate_deployment(_hub(obj))) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`"
    ]


def test_selector_expressions_are_matched() -> None:
    ok = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
    assert validate_deployment(_hub(_deployment(selector=ok))) == []
    absent = {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    assert validate_deployment(_hub(_deployment(selector=absent))) == []
    wrong = {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}
    assert [c.field for c in validate_deployment(_hub(_deployment(selector=wrong)))] == [
        "spec.template.metadata.labels"
    ]


def test_empty_selector_is_invalid() -> None:
    assert _rendered(validate_deployment(_hub(_deployment(selector={})))) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    ]


def test_unparseable_selector_skips_the_template_checks() -> None:
    selector = {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["web"]}]}
    assert _rendered(validate_deployment(_hub(_deployment(selector=selector)))) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Near": '
        "not a valid selector operator",
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Near",'
        '"values":["web"]}]}: invalid label selector',
    ]


def test_selector_requirements_need_values_only_for_set_operators() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["x"]},
        ],
    }
    assert _rendered(validate_deployment(_hub(_deployment(selector=selector))))[:2] == [
        "spec.selector.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: "
        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        (
            {"revisionHistoryLimit": -1},
            "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"minReadySeconds": 600},
            "spec.progressDeadlineSeconds: Invalid value: 600: "
            "must be greater than minReadySeconds",
        ),
        (
            {"rollbackTo": {"revision": -1}},
            "spec.rollback.version: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"strategy": {"type": "BlueGreen"}},
            'spec.strategy: Unsupported value: {"Type":"BlueGreen","RollingUpdate":null}: '
            'supported values: "Recreate", "RollingUpdate"',
        ),
        (
            {"strategy": {"type": "Recreate", "rollingUpdate": {}}},
            "spec.strategy.rollingUpdate: Forbidden: "
            "may not be specified when strategy `type` is 'Recreate'",
        ),
        (
            {"strategy": {"type": "RollingUpdate"}},
            "spec.strategy.rollingUpdate: Required value: "
            "this should be defaulted and never be nil",
        ),
        (
            {
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"},
                }
            },
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: "
            "may not be 0 when `maxSurge` is 0",
        ),
        (
            {
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "120%", "maxSurge": 1},
                }
            },
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "120%": '
            "must not be greater than 100%",
        ),
        (
            {
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "x"},
                }
            },
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "x": a valid percent string must '
            "be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
            "validation is '[0-9]+%')",
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(spec: dict[str, Any], expected: str) -> None:
    assert _rendered(validate_deployment(_hub(_deployment("v1beta1", **spec)))) == [expected]


def test_template_must_restart_always_and_have_no_deadline() -> None:
    obj = _deployment()
    obj["spec"]["template"]["spec"].update(restartPolicy="OnFailure", activeDeadlineSeconds=10)
    assert _rendered(validate_deployment(_hub(obj))) == [
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in ReplicaSet is not Supported",
    ]


def test_pod_template_is_validated_by_the_pod_rules() -> None:
    obj = _deployment()
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    assert [c.field for c in validate_deployment(_hub(obj))] == [
        "spec.template.spec.containers[0].image"
    ]


def test_metadata_is_validated() -> None:
    obj = _deployment()
    obj["metadata"]["name"] = "Web"
    del obj["metadata"]["namespace"]
    assert [c.field for c in validate_deployment(_hub(obj))] == [
        "metadata.name",
        "metadata.namespace",
    ]


def test_selector_is_immutable_on_update() -> None:
    old = _hub(_deployment())
    new = _hub(
        _deployment(
            selector={"matchLabels": {"app": "web", "tier": "a"}},
            template={
                **old["spec"]["template"],
                "metadata": {"labels": {"app": "web", "tier": "a"}},
            },
        )
    )
    with pytest.raises(Invalid) as err:
        SCHEME.validate_update(new, old)
    assert _rendered(list(err.value.causes)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"a"}}: field is immutable'
    ]
    assert validate_deployment_update(new, old, selector_immutable=False) == []


def test_an_equal_selector_spelled_differently_is_not_a_change() -> None:
    old = _hub(_deployment(selector={"matchLabels": {"app": "web"}, "matchExpressions": []}))
    new = _hub(_deployment(selector={"matchLabels": {"app": "web"}}))
    assert validate_deployment_update(new, old) == []


def test_status_update_rules() -> None:
    old = _hub(_deployment())
    old["status"] = {"replicas": 3, "collisionCount": 2}
    new = copy.deepcopy(old)
    new["status"] = {
        "replicas": 1,
        "readyReplicas": 2,
        "availableReplicas": 3,
        "terminatingReplicas": -1,
        "collisionCount": 1,
    }
    assert _rendered(validate_deployment_status_update(new, old)) == [
        "status.terminatingReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
        "status.collisionCount: Invalid value: 1: cannot be decremented",
    ]


# ---------------------------------------------------------------------------- the resource


def test_deployment_is_a_namespaced_resource_stored_as_apps_v1() -> None:
    definition = SCHEME.definition("apps", "Deployment")
    assert definition.storage_group_version == GroupVersion("apps", "v1")
    assert definition.list_kind == "DeploymentList"
    info = SCHEME.resource(GroupVersion("apps", "v1"), "deployments").info
    assert info.namespaced
    assert (info.singular, info.short_names, info.categories) == (
        "deployment",
        ("deploy",),
        ("all",),
    )
    assert info.subresources == ("status", "scale")
    for version in ("v1", "v1beta2", "v1beta1"):
        assert SCHEME.is_served(GroupVersionKind("apps", version, "Deployment"))
        assert SCHEME.recognizes(GroupVersionKind("apps", version, "DeploymentList"))
