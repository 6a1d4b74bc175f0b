"""MutatingAdmissionPolicy in process (``kstore.open``): what a policy and its bindings do to
the objects they match, as kube-apiserver's plugin does it (on LMDB, and on etcd for the
basic mutation)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kstore
from kstore.embedded import Client
from kstore.errors import Forbidden, Invalid, KStoreError
from kstore.registry.admission.mutating_policy import plugin_of
from tests.registry.objects import wait_for

GROUP_VERSION = "admissionregistration.k8s.io/v1"
CONFIGMAPS = {
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["configmaps"],
}
PODS = {**CONFIGMAPS, "resources": ["pods"]}
ADD_TEAM_LABEL = 'Object{metadata: Object.metadata{labels: {"team": "blue"}}}'
_etcd_prefixes = itertools.count()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with kstore.open(f"lmdb://{tmp_path / 'store'}", controllers=()) as c:
        # Pods need their service account (no controller makes it here).
        c.resource("v1", "serviceaccounts", namespace="default").create(
            {"metadata": {"name": "default"}}
        )
        yield c


def apply_configuration(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def json_patch(expression: str) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}


def bind(
    client: Client,
    name: str,
    mutations: list[dict[str, Any]],
    *,
    rules: list[dict[str, Any]] | None = None,
    binding: dict[str, Any] | None = None,
    **spec: Any,
) -> None:
    """Create the policy ``name`` (``spec`` adds to its spec) and a binding of it, then wait
    until both are in force."""
    full = {
        "matchConstraints": {"resourceRules": rules or [CONFIGMAPS]},
        "reinvocationPolicy": "Never",
        "mutations": mutations,
        **spec,
    }
    client.resource(GROUP_VERSION, "mutatingadmissionpolicies").create(
        {"metadata": {"name": name}, "spec": full}
    )
    client.resource(GROUP_VERSION, "mutatingadmissionpolicybindings").create(
        {"metadata": {"name": name}, "spec": {"policyName": name, **(binding or {})}}
    )
    plugin = plugin_of(client.registry)
    assert plugin is not None
    assert wait_for(lambda: (name, name) in plugin.in_force(), timeout=2.0)


def configmaps(client: Client, namespace: str = "default") -> Any:
    return client.resource("v1", "configmaps", namespace=namespace)


def cm(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta}, "data": {"k": "v"}}


def pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx", "command": ["run"]}]},
    }


def refused(call: Any, *args: Any) -> KStoreError:
    with pytest.raises(KStoreError) as info:
        call(*args)
    return info.value


def labels(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = obj["metadata"].get("labels") or {}
    return found


def test_apply_configuration_merges_into_the_object(client: Client) -> None:
    bind(client, "team", [apply_configuration(ADD_TEAM_LABEL)])
    created = configmaps(client).create(cm("a", labels={"app": "x"}))
    assert labels(created) == {"app": "x", "team": "blue"}
    assert labels(configmaps(client).get("a")) == {"app": "x", "team": "blue"}
    # Updates are mutated too; other resources are not.
    updated = configmaps(client).update(
        {**created, "metadata": {**created["metadata"], "labels": {}}}
    )
    assert labels(updated) == {"team": "blue"}
    secret = client.resource("v1", "secrets", namespace="default").create(cm("s"))
    assert labels(secret) == {}


@pytest.mark.etcd
def test_apply_configuration_on_etcd(request: pytest.FixtureRequest) -> None:
    from tests.conftest_etcd import shared_cluster

    endpoint = shared_cluster(request.config).endpoints[0]
    prefix = f"/kstore-test-map-{next(_etcd_prefixes)}-{time.time_ns()}"
    with kstore.open(f"etcd://{endpoint}{prefix}", controllers=()) as c:
        bind(c, "team", [apply_configuration(ADD_TEAM_LABEL)])
        assert labels(configmaps(c).create(cm("on-etcd"))) == {"team": "blue"}


def test_json_patch_adds_a_container_env_and_escapes_keys(client: Client) -> None:
    bind(
        client,
        "env",
        [
            json_patch(
                '[JSONPatch{op: "add", path: "/spec/containers/0/env", '
                'value: [{"name": "MODE", "value": "test"}]}]'
            ),
            json_patch(
                '[JSONPatch{op: "add", path: "/metadata/annotations", value: {}}, '
                'JSONPatch{op: "add", path: "/metadata/annotations/" + '
                'jsonpatch.escapeKey("example.com/mode"), value: "on"}]'
            ),
        ],
        rules=[PODS],
    )
    created = client.resource("v1", "pods", namespace="default").create(pod("p"))
    assert created["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "test"}]
    assert created["metadata"]["annotations"] == {"example.com/mode": "on"}


def test_a_failed_json_patch_test_leaves_the_object_alone(client: Client) -> None:
    bind(
        client,
        "guarded",
        [
            json_patch(
                '[JSONPatch{op: "test", path: "/data/k", value: "other"}, '
                'JSONPatch{op: "add", path: "/data/added", value: "yes"}]'
            )
        ],
    )
    assert configmaps(client).create(cm("a"))["data"] == {"k": "v"}


def test_params_variables_and_match_conditions(client: Client) -> None:
    configmaps(client).create({"metadata": {"name": "settings"}, "data": {"team": "green"}})
    bind(
        client,
        "from-params",
        [
            apply_configuration(
                "Object{metadata: Object.metadata{labels: {'team': variables.team}}}"
            )
        ],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        variables=[{"name": "team", "expression": "params.data.team"}],
        matchConditions=[
            {"name": "not-settings", "expression": "object.metadata.name != 'settings'"},
            {"name": "not-skipped", "expression": "!object.metadata.name.startsWith('skip')"},
        ],
        binding={"paramRef": {"name": "settings", "parameterNotFoundAction": "Deny"}},
    )
    assert labels(configmaps(client).create(cm("a"))) == {"team": "green"}
    assert labels(configmaps(client).create(cm("skip-me"))) == {}
    # A namespace without the param: Deny refuses the request.
    client.resource("v1", "namespaces").create({"metadata": {"name": "other"}})
    error = refused(configmaps(client, "other").create, cm("b"))
    assert isinstance(error, Forbidden)
    assert error.message == (
        "policy 'from-params' with binding 'from-params' denied request: failed to configure "
        "binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    )


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_failure_policy_decides_on_an_evaluation_error(client: Client, failure_policy: str) -> None:
    expression = "Object{metadata: Object.metadata{labels: {'n': string(1 / 0)}}}"
    bind(client, "broken", [apply_configuration(expression)], failurePolicy=failure_policy)
    if failure_policy == "Ignore":
        assert labels(configmaps(client).create(cm("a"))) == {}
        return
    error = refused(configmaps(client).create, cm("a"))
    assert isinstance(error, Forbidden)
    assert error.code == 403 and error.reason == "Invalid"
    text = (
        f"policy 'broken' with binding 'broken' denied request: expression '{expression}' "
        "resulted in error: division by zero"
    )
    assert error.message == text
    assert [c.message for c in error.causes] == [text]
    with pytest.raises(KStoreError):
        configmaps(client).get("a")


def test_unknown_fields_atomics_and_type_names_are_refused(client: Client) -> None:
    bind(
        client,
        "unknown",
        [apply_configuration("Object{spec: Object.spec{nodeName: 'n', bogus: 1}}")],
        rules=[PODS],
    )
    error = refused(client.resource("v1", "pods", namespace="default").create, pod("p"))
    assert error.message == (
        "policy 'unknown' with binding 'unknown' denied request: error applying patch: failed "
        "to convert patch object to typed object: .spec.bogus: field not declared in schema"
    )
    client.resource(GROUP_VERSION, "mutatingadmissionpolicybindings").delete("unknown")
    bind(
        client,
        "atomic",
        [
            apply_configuration(
                "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'app', "
                "command: ['other']}]}}"
            )
        ],
        rules=[PODS],
    )
    error = refused(client.resource("v1", "pods", namespace="default").create, pod("p"))
    assert error.message == (
        "policy 'atomic' with binding 'atomic' denied request: error applying patch: invalid "
        "ApplyConfiguration: may not mutate atomic arrays, maps or structs: "
        ".spec.containers[0].command"
    )
    client.resource(GROUP_VERSION, "mutatingadmissionpolicybindings").delete("atomic")
    bind(client, "names", [apply_configuration("Object{metadata: Object.spec{labels: {}}}")])
    error = refused(configmaps(client).create, cm("a"))
    assert error.message == (
        "policy 'names' with binding 'names' denied request: type mismatch: unexpected type "
        'name "Object.spec", expected "Object.metadata", which matches field name path from '
        "root Object type"
    )


@pytest.mark.parametrize("reinvocation", ["IfNeeded", "Never"])
def test_reinvocation_after_a_later_policy_changed_the_object(
    client: Client, reinvocation: str
) -> None:
    # Policies run in name order: "a-watcher" first, then "b-labeller", which adds the label
    # "a-watcher" reacts to.
    bind(
        client,
        "a-watcher",
        [
            apply_configuration(
                "has(object.metadata.labels) && 'b' in object.metadata.labels ? "
                "Object{metadata: Object.metadata{labels: {'saw-b': 'true'}}} : Object{}"
            )
        ],
        reinvocationPolicy=reinvocation,
    )
    bind(
        client,
        "b-labeller",
        [apply_configuration("Object{metadata: Object.metadata{labels: {'b': 'x'}}}")],
    )
    created = labels(configmaps(client).create(cm("a")))
    expected = {"b": "x", "saw-b": "true"} if reinvocation == "IfNeeded" else {"b": "x"}
    assert created == expected


def test_policy_kinds_are_never_mutated(client: Client) -> None:
    everything = {
        "apiGroups": ["*"],
        "apiVersions": ["*"],
        "operations": ["CREATE"],
        "resources": ["*"],
    }
    bind(client, "everything", [apply_configuration(ADD_TEAM_LABEL)], rules=[everything])
    binding = client.resource(GROUP_VERSION, "validatingadmissionpolicybindings").create(
        {
            "metadata": {"name": "vb"},
            "spec": {"policyName": "p", "validationActions": ["Deny"]},
        }
    )
    assert labels(binding) == {}
    assert labels(configmaps(client).create(cm("a"))) == {"team": "blue"}


def test_policies_are_validated_with_kubernetes_paths_and_messages(client: Client) -> None:
    policies = client.resource(GROUP_VERSION, "mutatingadmissionpolicies")
    error = refused(policies.create, {"metadata": {"name": "p"}, "spec": {}})
    assert isinstance(error, Invalid)
    # failurePolicy is defaulted (Fail); reinvocationPolicy is not.
    assert [(c.field, c.message) for c in error.causes] == [
        ("spec.matchConstraints", "Required value"),
        ("spec.mutations", "Required value: mutations must contain at least one item"),
        ("spec.reinvocationPolicy", "Required value"),
    ]
    spec = {
        "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": [CONFIGMAPS]},
        "mutations": [
            {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
            apply_configuration("Object{spec: 1"),
            apply_configuration("[]"),
        ],
    }
    error = refused(policies.create, {"metadata": {"name": "p"}, "spec": spec})
    causes = [(c.field, c.message) for c in error.causes]
    assert causes[0] == (
        "spec.mutations[0].jsonPatch",
        "Required value: must be specified when patchType is JSONPatch",
    )
    assert causes[1] == (
        "spec.mutations[0].applyConfiguration",
        'Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch',
    )
    assert causes[2][0] == "spec.mutations[1].applyConfiguration.expression"
    assert "compilation failed: ERROR: <input>:1:15: Syntax error" in causes[2][1]
    assert causes[3] == (
        "spec.mutations[2].applyConfiguration.expression",
        'Invalid value: "[]": must evaluate to Object but got list(dyn)',
    )
    bindings = client.resource(GROUP_VERSION, "mutatingadmissionpolicybindings")
    error = refused(
        bindings.create,
        {
            "metadata": {"name": "b"},
            "spec": {
                "policyName": "",
                "matchResources": {"resourceRules": [PODS | {"operations": ["DELETE"]}]},
            },
        },
    )
    assert [(c.field, c.message) for c in error.causes] == [
        ("spec.policyName", "Required value"),
        (
            "spec.matchResources.resourceRules.operations",
            'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"',
        ),
    ]
