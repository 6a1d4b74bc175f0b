"""apps/v1 DaemonSet: the resource, the template generation annotation, defaulting, validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.daemonset import (
    TEMPLATE_GENERATION,
    TEMPLATE_GENERATION_ANNOTATION,
    validate_daemon_set,
    validate_daemon_set_status_update,
    validate_daemon_set_update,
)
from kstore.codec.json import JsonSerializer
from kstore.codec.versioning import VersioningCodec
from kstore.errors import Cause, Invalid
from tests.strategies import template_generation_text

SCHEME = builtin_scheme()


def _daemon_set(**spec: Any) -> dict[str, Any]:
    """A DaemonSet (hub) as a create leaves it: defaulted, templateGeneration 1."""
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {
            "metadata": {"labels": {"app": "agent"}},
            "spec": {
                "containers": [
                    {
                        "name": "agent",
                        "image": "fluent-bit:3.2",
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
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
        },
        "templateGeneration": 1,
        "revisionHistoryLimit": 10,
    }
    body.update(spec)
    return {
        "apiVersion": "apps/__internal",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system", "resourceVersion": "7"},
        "spec": body,
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


# ---------------------------------------------------------------------------- the resource


def test_daemon_set_is_a_namespaced_apps_v1_resource_with_status() -> None:
    definition = SCHEME.definition("apps", "DaemonSet")
    assert definition.storage_group_version == GroupVersion("apps", "v1")
    assert [v.version for v in definition.versions] == ["v1"]
    assert definition.list_kind == "DaemonSetList"
    info = SCHEME.resource(GroupVersion("apps", "v1"), "daemonsets").info
    assert info.namespaced
    assert (info.singular, info.short_names, info.categories) == ("daemonset", ("ds",), ("all",))
    assert info.subresources == ("status",)
    assert SCHEME.is_served(GroupVersionKind("apps", "v1", "DaemonSet"))
    assert SCHEME.recognizes(GroupVersionKind("apps", "v1", "DaemonSetList"))


# ---------------------------------------------------------------------------- conversion


def test_template_generation_is_stored_in_kubernetes_annotation() -> None:
    codec = VersioningCodec(SCHEME, JsonSerializer(), default=False)
    hub = _daemon_set(templateGeneration=4)
    stored = json.loads(codec.encode(hub))
    assert stored["apiVersion"] == "apps/v1"
    assert stored["metadata"]["annotations"] == {TEMPLATE_GENERATION_ANNOTATION: "4"}
    assert "templateGeneration" not in stored["spec"]
    assert codec.decode(json.dumps(stored).encode()) == hub


def test_a_restored_template_generation_is_placed_where_kubernetes_prints_it() -> None:
    external = {**_daemon_set(), "apiVersion": "apps/v1"}
    spec = external["spec"]
    del spec["templateGeneration"]
    # As Kubernetes prints an apps/v1 DaemonSetSpec.
    external["spec"] = {**{k: spec.pop(k) for k in list(spec)[:3]}, "minReadySeconds": 5, **spec}
    external["metadata"]["annotations"] = {TEMPLATE_GENERATION_ANNOTATION: "2"}
    back = SCHEME.to_hub(external)
    assert back["spec"]["templateGeneration"] == 2
    assert list(back["spec"]) == [
        "selector",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "templateGeneration",
        "revisionHistoryLimit",
    ]


def test_a_v1_object_without_the_annotation_has_no_template_generation() -> None:
    external = {**_daemon_set(), "apiVersion": "apps/v1"}
    del external["spec"]["templateGeneration"]
    hub = SCHEME.to_hub(external)
    assert "templateGeneration" not in hub["spec"]
    assert SCHEME.from_hub(hub, "v1") == external


@pytest.mark.parametrize("text", ["+5", "007", "", "five", "-0", "9223372036854775808"])
def test_non_canonical_annotation_text_stays_an_annotation(text: str) -> None:
    """Kubernetes would parse ``+5``/``007`` (losing their spelling) and reject the rest."""
    external = {**_daemon_set(), "apiVersion": "apps/v1"}
    del external["spec"]["templateGeneration"]
    external["metadata"]["annotations"] = {TEMPLATE_GENERATION_ANNOTATION: text}
    hub = SCHEME.to_hub(external)
    assert "templateGeneration" not in hub["spec"]
    assert hub["metadata"]["annotations"] == {TEMPLATE_GENERATION_ANNOTATION: text}
    assert SCHEME.from_hub(hub, "v1") == external


def test_a_users_own_annotation_under_the_key_travels_in_an_envelope() -> None:
    hub = _daemon_set(templateGeneration=2)
    hub["metadata"]["annotations"] = {TEMPLATE_GENERATION_ANNOTATION: "mine"}
    external = SCHEME.from_hub(hub, "v1")
    assert json.loads(external["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION]) == {
        "annotation": "mine",
        "templateGeneration": 2,
    }
    assert SCHEME.to_hub(external) == hub


@settings(max_examples=200, deadline=None)
@given(
    text=template_generation_text(),
    generation=st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.just("3")),
)
def test_the_annotation_keeps_every_hub_and_external_shape(text: str, generation: Any) -> None:
    hub = _daemon_set()
    del hub["spec"]["templateGeneration"]
    if generation is not None:
        hub["spec"]["templateGeneration"] = generation
    hub["metadata"]["annotations"] = {TEMPLATE_GENERATION_ANNOTATION: text, "team": "a"}
    before = copy.deepcopy(hub)
    external = TEMPLATE_GENERATION.stash(hub)
    assert hub == before
    assert "templateGeneration" not in external["spec"]
    assert TEMPLATE_GENERATION.restore(external) == hub


# ---------------------------------------------------------------------------- defaulting


def _bare() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "fluent-bit:3.2"}]},
            },
        },
    }


def test_v1_fills_kubernetes_defaults() -> None:
    obj = _bare()
    SCHEME.default(obj)
    spec = obj["spec"]
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert spec["revisionHistoryLimit"] == 10
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "replicas" not in spec
    SCHEME.validate(SCHEME.to_hub(obj))


def test_defaults_keep_values_that_were_set() -> None:
    obj = _bare()
    obj["spec"].update(
        revisionHistoryLimit=0,
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "10%"}},
    )
    SCHEME.default(obj)
    assert obj["spec"]["revisionHistoryLimit"] == 0
    assert obj["spec"]["updateStrategy"]["rollingUpdate"] == {
        "maxSurge": "10%",
        "maxUnavailable": 1,
    }


def test_on_delete_gets_no_rolling_update() -> None:
    obj = _bare()
    obj["spec"]["updateStrategy"] = {"type": "OnDelete"}
    SCHEME.default(obj)
    assert obj["spec"]["updateStrategy"] == {"type": "OnDelete"}


# ---------------------------------------------------------------------------- validation


def test_a_complete_daemon_set_is_valid() -> None:
    assert validate_daemon_set(_daemon_set()) == []
    assert validate_daemon_set(_daemon_set(updateStrategy={"type": "OnDelete"})) == []


def test_a_missing_selector_is_reported_at_the_template_labels() -> None:
    """Kubernetes' DaemonSet validation has no Required for the selector: nothing matches."""
    obj = _daemon_set()
    del obj["spec"]["selector"]
    with pytest.raises(Invalid) as err:
        SCHEME.validate(obj)
    assert err.value.message == (
        'DaemonSet.apps "agent" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"agent"}: `selector` does not match template `labels`'
    )


def _rolling(max_unavailable: Any = None, max_surge: Any = None) -> dict[str, Any]:
    rolling = {}
    if max_unavailable is not None:
        rolling["maxUnavailable"] = max_unavailable
    if max_surge is not None:
        rolling["maxSurge"] = max_surge
    return {"type": "RollingUpdate", "rollingUpdate": rolling}


_PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
    "'93%', regex used for validation is '[0-9]+%')"
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"selector": {}},
            ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"],
        ),
        (
            {"selector": {"matchLabels": {"app": "other"}}},
            [
                'spec.template.metadata.labels: Invalid value: {"app":"agent"}: '
                "`selector` does not match template `labels`"
            ],
        ),
        (
            # An unparseable selector skips the template check, with no message of its own.
            {"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
            [
                'spec.selector.matchExpressions[0].operator: Invalid value: "Near": '
                "not a valid selector operator"
            ],
        ),
        (
            {"minReadySeconds": -1},
            ["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"templateGeneration": -1},
            ["spec.templateGeneration: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"revisionHistoryLimit": -1},
            ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"updateStrategy": {"type": "Recreate"}},
            [
                'spec.updateStrategy: Unsupported value: {"Type":"Recreate","RollingUpdate":null}: '
                'supported values: "RollingUpdate", "OnDelete"'
            ],
        ),
        (
            {"updateStrategy": {"type": "RollingUpdate"}},
            ["spec.updateStrategy.rollingUpdate: Required value"],
        ),
        (
            {"updateStrategy": _rolling(0, 0)},
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
                "cannot be 0 when maxSurge is 0"
            ],
        ),
        (
            {"updateStrategy": _rolling("0%")},
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
                "cannot be 0 when maxSurge is 0"
            ],
        ),
        (
            {"updateStrategy": _rolling(1, "20%")},
            [
                'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "20%": '
                "may not be set when maxUnavailable is non-zero"
            ],
        ),
        (
            {"updateStrategy": _rolling(0, "120%")},
            [
                'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "120%": '
                "must not be greater than 100%"
            ],
        ),
        (
            {"updateStrategy": _rolling("x", -1)},
            # "x" counts as 0 (strconv.Atoi fails), so only maxSurge is set: no third cause.
            [
                f'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "x": {_PERCENT}',
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: -1: "
                "must be greater than or equal to 0",
            ],
        ),
        (
            {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"maxSurge": "x"}}},
            [],
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(spec: dict[str, Any], expected: list[str]) -> None:
    assert _rendered(validate_daemon_set(_daemon_set(**spec))) == expected


def test_template_must_restart_always_and_have_no_deadline() -> None:
    obj = _daemon_set()
    obj["spec"]["template"]["spec"].update(restartPolicy="OnFailure", activeDeadlineSeconds=10)
    assert _rendered(validate_daemon_set(obj)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in DaemonSet is not Supported",
    ]


def test_pod_template_and_metadata_are_validated() -> None:
    obj = _daemon_set()
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    del obj["metadata"]["namespace"]
    assert [c.field for c in validate_daemon_set(obj)] == [
        "metadata.namespace",
        "spec.template.spec.containers[0].image",
    ]


def _template_changed(obj: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "fluent-bit:3.3"
    return new


def test_template_generation_moves_with_the_template_and_only_up() -> None:
    old = _daemon_set(templateGeneration=3)
    path = "spec.templateGeneration: Invalid value"
    assert validate_daemon_set_update(_daemon_set(templateGeneration=3), old) == []
    assert (
        validate_daemon_set_update(_template_changed(_daemon_set(templateGeneration=4)), old) == []
    )
    assert _rendered(validate_daemon_set_update(_template_changed(old), old)) == [
        f"{path}: 3: must be incremented upon template update"
    ]
    assert _rendered(validate_daemon_set_update(_daemon_set(templateGeneration=4), old)) == [
        f"{path}: 4: must not be incremented without template update"
    ]
    assert _rendered(validate_daemon_set_update(_daemon_set(templateGeneration=2), old)) == [
        f"{path}: 2: must not be decremented"
    ]


def test_update_reports_spec_problems_twice_as_kubernetes_strategy_does() -> None:
    old = _daemon_set()
    new = _daemon_set(minReadySeconds=-1)
    expected = "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"
    assert _rendered(validate_daemon_set_update(new, old)) == [expected, expected]
    with pytest.raises(Invalid) as err:
        SCHEME.validate_update(new, old)
    assert err.value.message == f'DaemonSet.apps "agent" is invalid: {expected}'


def test_selector_is_immutable_on_update() -> None:
    old = _daemon_set()
    selector = {"matchLabels": {"app": "agent"}, "matchExpressions": [
        {"key": "tier", "operator": "DoesNotExist"}
    ]}  # fmt: skip
    new = _daemon_set(selector=selector)
    assert _rendered(validate_daemon_set_update(new, old)) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"agent"},"matchExpressions":'
        '[{"key":"tier","operator":"DoesNotExist"}]}: field is immutable'
    ]
    assert validate_daemon_set_update(new, old, selector_immutable=False) == []


def test_status_update_rules() -> None:
    old = _daemon_set()
    old["status"] = {"collisionCount": 2}
    new = copy.deepcopy(old)
    new["status"] = {
        "currentNumberScheduled": -1,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 3,
        "numberReady": 5,
        "numberUnavailable": -2,
        "collisionCount": 1,
    }
    # Unlike a Deployment's or a ReplicaSet's, no count is compared with another.
    assert _rendered(validate_daemon_set_status_update(new, old)) == [
        "status.currentNumberScheduled: Invalid value: -1: must be greater than or equal to 0",
        "status.numberUnavailable: Invalid value: -2: must be greater than or equal to 0",
        "status.collisionCount: Invalid value: 1: cannot be decremented",
    ]
    new["status"] = {"collisionCount": -1}
    del old["status"]
    assert _rendered(validate_daemon_set_status_update(new, old)) == [
        "status.collisionCount: Invalid value: -1: must be greater than or equal to 0"
    ]
