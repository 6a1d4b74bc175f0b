"""coordination.k8s.io/v1 Lease: the resource, no defaults, Kubernetes' validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kstore.api.gvk import GroupVersion, GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.coordination import validate_lease, validate_lease_update
from kstore.errors import Invalid
from tests.fixtures_path import k8s_testdata

SCHEME = builtin_scheme()


def _lease(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system", "resourceVersion": "1"},
        "spec": {
            "holderIdentity": "node-1_4f2a",
            "leaseDurationSeconds": 15,
            "acquireTime": "2024-05-01T10:00:00.000000Z",
            "renewTime": "2024-05-01T10:00:10.123456Z",
            "leaseTransitions": 2,
            **spec,
        },
    }


def _messages(obj: dict[str, Any]) -> list[str]:
    return [c.render() for c in validate_lease(SCHEME.to_hub(obj))]


def test_lease_is_a_namespaced_resource_with_a_list_kind() -> None:
    info = SCHEME.resource(GroupVersion("coordination.k8s.io", "v1"), "leases").info
    assert (info.singular, info.namespaced, info.short_names, info.subresources) == (
        "lease",
        True,
        (),
        (),
    )
    definition = SCHEME.definition("coordination.k8s.io", "Lease")
    assert definition.storage_group_version == GroupVersion("coordination.k8s.io", "v1")
    assert SCHEME.recognizes(GroupVersionKind("coordination.k8s.io", "v1", "LeaseList"))


def test_defaulting_leaves_a_lease_unchanged() -> None:
    obj = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}}
    before = copy.deepcopy(obj)
    SCHEME.default(obj)
    assert obj == before


def test_fixture_round_trips_through_the_hub() -> None:
    source = json.loads(
        (k8s_testdata() / "HEAD" / "coordination.k8s.io.v1.Lease.json").read_bytes()
    )
    assert SCHEME.from_hub(SCHEME.to_hub(source), "v1") == source


def test_a_typical_lease_is_valid() -> None:
    SCHEME.validate(SCHEME.to_hub(_lease()))
    SCHEME.validate(SCHEME.to_hub(_lease(strategy="OldestEmulationVersion", preferredHolder="n")))
    SCHEME.validate(SCHEME.to_hub(_lease(strategy="example.com/mine")))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"leaseDurationSeconds": 0},
            "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        ),
        (
            {"leaseTransitions": -1},
            "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"strategy": "Newest"},
            'spec.strategy.strategy: Unsupported value: "Newest": '
            'supported values: "OldestEmulationVersion"',
        ),
        (
            {"strategy": ""},
            'spec.strategy.strategy: Unsupported value: "": '
            'supported values: "OldestEmulationVersion"',
        ),
        (
            {"strategy": "a/b/c"},
            'spec.strategy.strategy: Invalid value: "a/b/c": a valid label key must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
            "subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
        (
            {"preferredHolder": "node-2"},
            "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
        ),
    ],
)
def test_spec_rules_with_kubernetes_messages(spec: dict[str, Any], expected: str) -> None:
    assert _messages(_lease(**spec)) == [expected]


def test_an_empty_preferred_holder_needs_no_strategy() -> None:
    assert _messages(_lease(preferredHolder="")) == []


def test_every_problem_is_reported_in_kubernetes_order() -> None:
    obj = _lease(leaseDurationSeconds=-5, leaseTransitions=-1, preferredHolder="x")
    obj["metadata"]["name"] = "Bad_Name"
    with pytest.raises(Invalid) as err:
        SCHEME.validate(SCHEME.to_hub(obj))
    assert [c.field for c in err.value.causes] == [
        "metadata.name",
        "spec.leaseDurationSeconds",
        "spec.leaseTransitions",
        "spec.preferredHolder",
    ]


def test_update_checks_metadata_and_the_new_spec() -> None:
    old = SCHEME.to_hub(_lease())
    new = copy.deepcopy(old)
    new["spec"]["leaseTransitions"] = 3
    new["spec"]["holderIdentity"] = "node-2"
    assert validate_lease_update(new, old) == []
    new["metadata"]["name"] = "other"
    new["spec"]["leaseDurationSeconds"] = 0
    assert [c.field for c in validate_lease_update(new, old)] == [
        "metadata.name",
        "spec.leaseDurationSeconds",
    ]
