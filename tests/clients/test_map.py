"""MutatingAdmissionPolicy with real kubectl and the Python client against ``kstore serve``, on
LMDB and on etcd: a policy adding a label through an ApplyConfiguration, one adding a
container's env through a JSONPatch, params and match conditions, failure policies Fail and
Ignore on an expression that fails, and reinvocation after a mutating webhook (called over
HTTPS on loopback) changed the object.

Each test's binding selects the test's own namespace (``kubernetes.io/metadata.name``), so the
tests sharing the module's server never mutate each other's objects."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.webhook_server import CertificateAuthority, WebhookServer, admission_response

GROUP_VERSION = "admissionregistration.k8s.io/v1"
_CA = CertificateAuthority()


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    with WebhookServer(_CA, names=("hooks.webhooks.svc",)) as server:
        yield server


@pytest.fixture
def admission(api_client: client.ApiClient) -> Iterator[Callable[..., None]]:
    """Creates policies, bindings and mutating webhook configurations (dicts) through the
    Python client; deletes them after the test."""
    api = client.AdmissionregistrationV1Api(api_client)
    made: list[tuple[str, str]] = []

    def create(obj: dict[str, Any]) -> None:
        kind = obj["kind"]
        if kind == "MutatingAdmissionPolicy":
            api.create_mutating_admission_policy(obj)
        elif kind == "MutatingAdmissionPolicyBinding":
            api.create_mutating_admission_policy_binding(obj)
        else:
            api.create_mutating_webhook_configuration(obj)
        made.append((kind, obj["metadata"]["name"]))

    yield create
    for kind, name in reversed(made):
        if kind == "MutatingAdmissionPolicy":
            api.delete_mutating_admission_policy(name)
        elif kind == "MutatingAdmissionPolicyBinding":
            api.delete_mutating_admission_policy_binding(name)
        else:
            api.delete_mutating_webhook_configuration(name)


def _rules(resource: str = "configmaps") -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": [resource],
        }
    ]


def _policy(
    name: str, mutations: list[dict[str, Any]], resource: str = "configmaps", **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {"resourceRules": _rules(resource)},
            "reinvocationPolicy": "Never",
            "mutations": mutations,
            **spec,
        },
    }


def _binding(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
            **spec,
        },
    }


def _apply_configuration(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def _until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Retry ``check`` until it stops failing (a policy takes effect through a watch)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except (AssertionError, ApiException, pytest.fail.Exception):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}}


def _labels_of_dry_run(core: client.CoreV1Api, namespace: str) -> dict[str, str]:
    created = core.create_namespaced_config_map(namespace, _cm("probe"), dry_run="All")
    return dict(created.metadata.labels or {})


def test_kubectl_apply_configuration_adds_a_label(k: Kubectl) -> None:
    name = f"{k.namespace}-team"
    policy = _policy(
        name,
        [_apply_configuration('Object{metadata: Object.metadata{labels: {"team": "blue"}}}')],
    )
    k.write("map.yaml", yaml.safe_dump_all([policy, _binding(name, k.namespace)]))
    k.ok("apply", "--server-side", "-f", "map.yaml")

    def labelled() -> dict[str, Any]:
        out = json.loads(k.ok("create", "configmap", "x", "--dry-run=server", "-o", "json"))
        assert out["metadata"].get("labels") == {"team": "blue"}
        return out

    _until(labelled)
    k.ok("create", "configmap", "real", "--from-literal=k=v")
    stored = json.loads(k.ok("get", "configmap", "real", "-o", "json"))
    assert stored["metadata"]["labels"] == {"team": "blue"}
    table = k.ok("get", "mutatingadmissionpolicies", name)
    assert table.split("\n")[0].split() == ["NAME", "MUTATIONS", "PARAMKIND", "AGE"]
    assert table.split("\n")[1].split()[:3] == [name, "1", "<unset>"]
    table = k.ok("get", "mutatingadmissionpolicybindings", name)
    assert table.split("\n")[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    resources = k.ok("api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name")
    assert "mutatingadmissionpolicies.admissionregistration.k8s.io" in resources.split()
    k.ok("delete", "-f", "map.yaml")


def test_json_patch_adds_a_container_env(
    core: client.CoreV1Api, namespace: str, admission: Callable[..., None]
) -> None:
    name = f"{namespace}-env"
    patch = (
        '[JSONPatch{op: "add", path: "/spec/containers/0/env", '
        'value: [{"name": "MODE", "value": "test"}]}]'
    )
    admission(
        _policy(
            name,
            [{"patchType": "JSONPatch", "jsonPatch": {"expression": patch}}],
            resource="pods",
        )
    )
    admission(_binding(name, namespace))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }

    def env() -> Any:
        created = core.create_namespaced_pod(namespace, pod, dry_run="All")
        assert created.spec.containers[0].env is not None
        return created

    _until(env)
    created = core.create_namespaced_pod(namespace, pod)
    assert [(e.name, e.value) for e in created.spec.containers[0].env] == [("MODE", "test")]


def test_params_and_match_conditions(
    core: client.CoreV1Api, namespace: str, admission: Callable[..., None]
) -> None:
    name = f"{namespace}-params"
    core.create_namespaced_config_map(
        namespace,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "team"},
            "data": {"team": "green"},
        },
    )
    admission(
        _policy(
            name,
            [
                _apply_configuration(
                    "Object{metadata: Object.metadata{labels: {'team': params.data.team}}}"
                )
            ],
            paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            matchConditions=[
                {"name": "not-the-param", "expression": "object.metadata.name != 'team'"},
                {"name": "not-raw", "expression": "!object.metadata.name.startsWith('raw')"},
            ],
        )
    )
    admission(
        _binding(name, namespace, paramRef={"name": "team", "parameterNotFoundAction": "Deny"})
    )

    def labelled() -> None:
        assert _labels_of_dry_run(core, namespace) == {"team": "green"}

    _until(labelled)
    raw = core.create_namespaced_config_map(namespace, _cm("raw-one"))
    assert raw.metadata.labels is None


@pytest.mark.parametrize("failure_policy", ["Fail", "Ignore"])
def test_failure_policy_on_a_failing_expression(
    core: client.CoreV1Api,
    namespace: str,
    admission: Callable[..., None],
    failure_policy: str,
) -> None:
    name = f"{namespace}-fails"
    expression = "Object{metadata: Object.metadata{labels: {'n': string(1 / 0)}}}"
    admission(_policy(name, [_apply_configuration(expression)], failurePolicy=failure_policy))
    admission(_binding(name, namespace))
    if failure_policy == "Ignore":
        # Nothing to wait for: the request passes, unchanged, whether or not the policy is
        # in force yet; give the watch its time first so the check means something.
        time.sleep(1.0)
        assert _labels_of_dry_run(core, namespace) == {}
        return

    def refused() -> ApiException:
        # A dry run: a create let through before the policy is in force leaves nothing
        # behind for the next try to trip over (AlreadyExists would end the wait early).
        with pytest.raises(ApiException) as info:
            core.create_namespaced_config_map(namespace, _cm("x"), dry_run="All")
        return info.value

    error = _until(refused)
    status = json.loads(error.body)
    assert error.status == 403
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        f"policy '{name}' with binding '{name}' denied request: expression '{expression}' "
        "resulted in error: division by zero"
    )


def test_reinvocation_after_a_webhook_changed_the_object(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    # The policy (IfNeeded) runs before the webhook; the webhook then adds the label the
    # policy reacts to, so the policy runs once more and sees it.
    name = f"{namespace}-watcher"
    path = f"/label/{namespace}"

    def label(review: Any) -> dict[str, Any]:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        if "from-webhook" in labels:
            return admission_response(review)
        op = {"op": "add", "path": "/metadata/labels/from-webhook", "value": "yes"}
        if not labels:
            op = {"op": "add", "path": "/metadata/labels", "value": {"from-webhook": "yes"}}
        return admission_response(review, patch=[op])

    hooks.route(path, label)
    admission(
        _policy(
            name,
            [
                _apply_configuration(
                    "has(object.metadata.labels) && 'from-webhook' in object.metadata.labels ? "
                    "Object{metadata: Object.metadata{labels: {'policy-saw': 'webhook'}}} : "
                    "Object{metadata: Object.metadata{labels: {'policy': 'ran'}}}"
                )
            ],
            reinvocationPolicy="IfNeeded",
        )
    )
    admission(_binding(name, namespace))
    admission(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": f"{namespace}-label"},
            "webhooks": [
                {
                    "name": "label.example.com",
                    "clientConfig": {"url": hooks.url(path), "caBundle": hooks.ca_bundle},
                    "rules": _rules(),
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": namespace}
                    },
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "timeoutSeconds": 5,
                }
            ],
        }
    )

    def all_ran() -> None:
        assert _labels_of_dry_run(core, namespace) == {
            "policy": "ran",
            "from-webhook": "yes",
            "policy-saw": "webhook",
        }

    _until(all_ran)
