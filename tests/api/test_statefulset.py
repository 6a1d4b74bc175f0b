"""apps/v1 StatefulSet: defaulting, validation on create, update and status writes, with
Kubernetes' paths and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._statefulset_validation import (
    validate_stateful_set,
    validate_stateful_set_status_update,
    validate_stateful_set_update,
)
from kstore.errors import Cause

SCHEME = builtin_scheme()
IMMUTABLE = (
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
    "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
    "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def _claim(name: str = "data", storage: Any = "1Gi", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}},
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def _sts(**spec: Any) -> dict[str, Any]:
    """A StatefulSet as a client writes it (undefaulted, apps/v1)."""
    body: dict[str, Any] = {
        "serviceName": "web",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    }
                ]
            },
        },
        "volumeClaimTemplates": [_claim()],
    }
    body.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
        "spec": body,
    }


def _hub(obj: dict[str, Any]) -> dict[str, Any]:
    external = copy.deepcopy(obj)
    SCHEME.default(external)
    return SCHEME.to_hub(external)


def _rendered(causes: list[Cause]) -> list[str]:
    return [c.render() for c in causes]


def _errors(**spec: Any) -> list[str]:
    return _rendered(validate_stateful_set(_hub(_sts(**spec))))


def _update_errors(change: Any, old: dict[str, Any] | None = None) -> list[str]:
    old = old if old is not None else _hub(_sts())
    new = copy.deepcopy(old)
    change(new)
    return _rendered(validate_stateful_set_update(new, old))


# ---------------------------------------------------------------------------- defaults


def test_defaults_are_kubernetes_v1_statefulset_defaults() -> None:
    obj = _sts()
    SCHEME.default(obj)
    spec = obj["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    claim = spec["volumeClaimTemplates"][0]
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}


def test_defaults_keep_what_was_set() -> None:
    obj = _sts(
        replicas=0,
        revisionHistoryLimit=0,
        podManagementPolicy="Parallel",
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"},
        volumeClaimTemplates=[_claim(volumeMode="Block")],
    )
    SCHEME.default(obj)
    spec = obj["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (0, 0)
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["updateStrategy"]["rollingUpdate"] == {"partition": 2}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Delete",
        "whenScaled": "Retain",
    }
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Block"


def test_an_explicit_rolling_update_gets_no_rolling_update_block_and_on_delete_none() -> None:
    # Kubernetes creates rollingUpdate only when it defaults the type itself.
    rolling = _sts(updateStrategy={"type": "RollingUpdate"})
    SCHEME.default(rolling)
    assert rolling["spec"]["updateStrategy"] == {"type": "RollingUpdate"}
    on_delete = _sts(updateStrategy={"type": "OnDelete"})
    SCHEME.default(on_delete)
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_max_unavailable_is_kept_and_not_defaulted() -> None:
    obj = _sts(updateStrategy={"rollingUpdate": {"maxUnavailable": "50%"}})
    SCHEME.default(obj)
    assert obj["spec"]["updateStrategy"] == {
        "rollingUpdate": {"maxUnavailable": "50%", "partition": 0},
        "type": "RollingUpdate",
    }


def test_defaulting_is_idempotent() -> None:
    obj = _sts()
    SCHEME.default(obj)
    again = copy.deepcopy(obj)
    SCHEME.default(again)
    assert again == obj


# ---------------------------------------------------------------------------- create


def test_a_defaulted_statefulset_is_valid() -> None:
    assert _errors() == []


def test_service_name_may_be_empty_or_absent() -> None:
    assert _errors(serviceName="") == []
    obj = _sts()
    del obj["spec"]["serviceName"]
    assert _rendered(validate_stateful_set(_hub(obj))) == []


def test_service_name_must_be_a_dns_label() -> None:
    assert _errors(serviceName="Web.svc") == [
        'spec.serviceName: Invalid value: "Web.svc": a lowercase RFC 1123 label must consist '
        "of lower case alphanumeric characters or '-', and must start and end with an "
        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_name_must_be_a_dns_label() -> None:
    obj = _sts()
    obj["metadata"]["name"] = "web.v1"
    assert _rendered(validate_stateful_set(_hub(obj))) == [
        'metadata.name: Invalid value: "web.v1": must not contain dots'
    ]


def test_selector_must_match_the_template_labels() -> None:
    assert _errors(selector={"matchLabels": {"app": "db"}}) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`"
    ]


def test_missing_and_empty_selectors() -> None:
    obj = _sts()
    del obj["spec"]["selector"]
    assert _rendered(validate_stateful_set(_hub(obj))) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`",
    ]
    assert _errors(selector={}) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"
    ]


def test_an_unparseable_selector_is_reported_without_detail() -> None:
    bad = {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}
    assert _errors(selector=bad) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Equals": '
        "not a valid selector operator",
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Equals",'
        '"values":["web"]}]}',
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"podManagementPolicy": "Random"},
            "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or "
            "'Parallel'",
        ),
        (
            {"updateStrategy": {"type": "Recreate"}},
            'spec.updateStrategy: Invalid value: {"Type":"Recreate","RollingUpdate":null}: '
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
        (
            {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
            "spec.updateStrategy.rollingUpdate: Invalid value: "
            '{"Partition":1,"MaxUnavailable":null}: '
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        (
            {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: "
            "must be greater than or equal to 0",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "150%"}}},
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "150%": '
            "must not be greater than 100%",
        ),
        (
            {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
            'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
            'supported values: "Retain", "Delete"',
        ),
        (
            {"replicas": -1},
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"minReadySeconds": -1},
            "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"ordinals": {"start": -2}},
            "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0",
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(spec: dict[str, Any], expected: str) -> None:
    assert _errors(**spec) == [expected]


def test_a_negative_revision_history_limit_is_valid() -> None:
    # Kubernetes warns about it (see the strategy) but accepts it.
    assert _errors(revisionHistoryLimit=-1) == []


def test_template_must_restart_always_and_have_no_deadline() -> None:
    obj = _sts()
    pod_spec = obj["spec"]["template"]["spec"]
    pod_spec["restartPolicy"] = "Never"
    pod_spec["activeDeadlineSeconds"] = 10
    assert _rendered(validate_stateful_set(_hub(obj))) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in "
        "StatefulSet is not Supported",
    ]


def test_the_pod_template_is_validated_with_the_claims_as_volumes() -> None:
    obj = _sts()
    pod_spec = obj["spec"]["template"]["spec"]
    pod_spec["containers"][0]["image"] = ""
    # A template volume named like a claim is replaced by the claim (no duplicate name).
    pod_spec["volumes"] = [{"name": "data", "emptyDir": {}}, {"name": "Bad_Name", "emptyDir": {}}]
    errors = _rendered(validate_stateful_set(_hub(obj)))
    assert errors[0].startswith(
        'spec.template.spec.volumes[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123'
    )
    assert errors[1:] == ["spec.template.spec.containers[0].image: Required value"]


def test_hostname_and_subdomain_are_not_validated_the_controller_sets_them() -> None:
    obj = _sts()
    obj["spec"]["template"]["spec"].update(hostname="Not_A_Label", subdomain="Nor.This")
    assert _rendered(validate_stateful_set(_hub(obj))) == []


def test_template_metadata_errors_are_reported_twice_as_kubernetes_does() -> None:
    obj = _sts(selector={"matchLabels": {"app": "web"}})
    obj["spec"]["template"]["metadata"]["labels"]["bad key"] = "x"
    errors = _rendered(validate_stateful_set(_hub(obj)))
    assert len(errors) == 2
    assert errors[0] == errors[1]
    assert errors[0].startswith('spec.template.labels: Invalid value: "bad key"')


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (
            _claim(accessModes=[]),
            "spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access "
            "mode is required",
        ),
        (
            _claim(accessModes=["ReadWriteSometimes"]),
            "spec.volumeClaimTemplates[0].spec.accessModes: Unsupported value: "
            '"ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", '
            '"ReadWriteOnce", "ReadWriteOncePod"',
        ),
        (
            _claim(resources={}),
            "spec.volumeClaimTemplates[0].spec.resources[storage]: Required value",
        ),
        (
            _claim(storage="0"),
            'spec.volumeClaimTemplates[0].spec.resources[storage]: Invalid value: "0": '
            "must be greater than zero",
        ),
        (
            _claim(volumeMode="Raw"),
            'spec.volumeClaimTemplates[0].spec.volumeMode: Unsupported value: "Raw": '
            'supported values: "Block", "Filesystem"',
        ),
    ],
)
def test_volume_claim_templates_are_validated_as_claim_specs(
    claim: dict[str, Any], expected: str
) -> None:
    assert _errors(volumeClaimTemplates=[claim]) == [expected]


# ---------------------------------------------------------------------------- update


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["spec"].update(replicas=5),
        lambda s: s["spec"].update(minReadySeconds=10),
        lambda s: s["spec"].update(revisionHistoryLimit=3),
        lambda s: s["spec"].update(ordinals={"start": 2}),
        lambda s: s["spec"].update(updateStrategy={"type": "OnDelete"}),
        lambda s: s["spec"].update(
            persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"}
        ),
        lambda s: s["spec"]["template"]["spec"]["containers"][0].update(image="nginx:1.28"),
        lambda s: s["metadata"].update(labels={"tier": "db"}),
    ],
)
def test_mutable_fields_may_change(change: Any) -> None:
    assert _update_errors(change) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s["spec"].update(serviceName="other"),
        lambda s: s["spec"].update(podManagementPolicy="Parallel"),
        lambda s: s["spec"].update(selector={"matchLabels": {"app": "web", "v": "2"}}),
        lambda s: s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"].update(
            storage="2Gi"
        ),
        lambda s: s["spec"].update(volumeClaimTemplates=[]),
    ],
)
def test_other_spec_changes_are_forbidden(change: Any) -> None:
    errors = _update_errors(change)
    assert IMMUTABLE in errors


def test_changes_that_are_no_change_to_kubernetes_are_allowed() -> None:
    def respell(s: dict[str, Any]) -> None:
        s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "1024Mi"
        s["spec"]["serviceName"] = "web"
        s["spec"]["volumeClaimTemplates"][0]["spec"]["selector"] = None
        s["spec"]["template"]["spec"]["volumes"] = []

    assert _update_errors(respell) == []
    old = _hub(_sts(serviceName=""))
    assert _update_errors(lambda s: s["spec"].pop("serviceName"), old) == []


def test_stored_invalid_immutable_fields_are_tolerated_on_update() -> None:
    old = _hub(_sts(serviceName="Bad_Service", volumeClaimTemplates=[_claim(accessModes=[])]))
    assert _update_errors(lambda s: s["spec"].update(replicas=3), old) == []


def test_a_stored_template_that_fails_validation_is_not_validated_again() -> None:
    old = _hub(_sts())
    old["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    assert _update_errors(lambda s: s["spec"].update(replicas=3), old) == []
    fine = _hub(_sts())
    errors = _update_errors(
        lambda s: s["spec"]["template"]["spec"]["containers"][0].update(image=""), fine
    )
    assert errors == ["spec.template.spec.containers[0].image: Required value"]


# ---------------------------------------------------------------------------- status


def test_status_update_rules() -> None:
    old = _hub(_sts())
    old["status"] = {"replicas": 3, "collisionCount": 2}
    new = copy.deepcopy(old)
    new["status"] = {
        "replicas": 2,
        "readyReplicas": 3,
        "availableReplicas": 4,
        "currentReplicas": -1,
        "collisionCount": 1,
    }
    assert _rendered(validate_stateful_set_status_update(new, old)) == [
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 4: cannot be greater than status.readyReplicas",
        "status.collisionCount: Invalid value: 1: cannot be decremented",
    ]
    new["status"] = {"replicas": 3, "readyReplicas": 3, "availableReplicas": 2, "collisionCount": 2}
    assert validate_stateful_set_status_update(new, old) == []


# ---------------------------------------------------------------------------- the kind


def test_statefulset_is_a_namespaced_resource_with_status_and_scale() -> None:
    definition = SCHEME.definition("apps", "StatefulSet")
    assert definition.storage_version == "v1"
    assert [v.version for v in definition.versions] == ["v1"]
    info = definition.resource
    assert info is not None
    assert (info.plural, info.namespaced, info.short_names) == ("statefulsets", True, ("sts",))
    assert info.categories == ("all",)
    assert info.subresources == ("status", "scale")
    assert SCHEME.definition("apps", "StatefulSetList").storage_version == "v1"
