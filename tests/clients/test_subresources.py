"""The subresources users call, through real clients on LMDB and on etcd: ``kubectl create
token``, the Python client's TokenRequest and TokenReview, and its pod evictions against a
PodDisruptionBudget."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return decoded


def test_kubectl_create_token(k: Kubectl, namespace: str) -> None:
    k.ok("create", "serviceaccount", "deployer")
    token = k.ok("create", "token", "deployer", "--duration=20m", "--audience=ci").strip()
    claims = _claims(token)
    assert claims["sub"] == f"system:serviceaccount:{namespace}:deployer"
    assert claims["aud"] == ["ci"]
    assert claims["exp"] - claims["iat"] == 1200
    uid = k.ok("get", "sa", "deployer", "-o", "jsonpath={.metadata.uid}")
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "deployer", "uid": uid}
    result = k.fails("create", "token", "deployer", "--duration=1m")
    assert "may not specify a duration less than 10 minutes" in result.stderr
    result = k.fails("create", "token", "nobody")
    assert 'serviceaccounts "nobody" not found' in result.stderr


def test_kubectl_create_token_bound_to_a_secret(k: Kubectl, namespace: str) -> None:
    k.ok("create", "serviceaccount", "bound")
    k.ok("create", "secret", "generic", "anchor", "--from-literal=a=b")
    token = k.ok(
        "create", "token", "bound", "--bound-object-kind=Secret", "--bound-object-name=anchor"
    ).strip()
    uid = k.ok("get", "secret", "anchor", "-o", "jsonpath={.metadata.uid}")
    assert _claims(token)["kubernetes.io"]["secret"] == {"name": "anchor", "uid": uid}


def test_python_client_token_request_and_review(
    core: client.CoreV1Api, api_client: client.ApiClient, namespace: str
) -> None:
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="robot"))
    )
    request = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=900)
    )
    answer = core.create_namespaced_service_account_token("robot", namespace, request)
    assert answer.spec.expiration_seconds == 900
    assert answer.spec.audiences == ["https://kubernetes.default.svc.cluster.local"]
    token = answer.status.token
    assert answer.status.expiration_timestamp is not None
    reviews = client.AuthenticationV1Api(api_client)
    review = reviews.create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
    )
    assert review.status.authenticated is True
    assert review.status.user.username == f"system:serviceaccount:{namespace}:robot"
    assert review.status.user.groups == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{namespace}",
        "system:authenticated",
    ]
    core.delete_namespaced_service_account("robot", namespace)
    review = reviews.create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
    )
    assert not review.status.authenticated
    assert review.status.error == '[invalid bearer token, serviceaccounts "robot" not found]'


def _running_pod(core: client.CoreV1Api, namespace: str, name: str) -> None:
    core.create_namespaced_pod(
        namespace,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name=name, labels={"app": "api"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]),
        ),
    )
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    core.patch_namespaced_pod_status(name, namespace, status)


def test_python_client_eviction_respects_the_disruption_budget(
    core: client.CoreV1Api, api_client: client.ApiClient, namespace: str
) -> None:
    policy = client.PolicyV1Api(api_client)
    _running_pod(core, namespace, "api-1")
    _running_pod(core, namespace, "api-2")
    policy.create_namespaced_pod_disruption_budget(
        namespace,
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="api"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=1, selector=client.V1LabelSelector(match_labels={"app": "api"})
            ),
        ),
    )
    budget = policy.read_namespaced_pod_disruption_budget("api", namespace)
    status = {
        "status": {
            "observedGeneration": budget.metadata.generation,
            "currentHealthy": 2,
            "desiredHealthy": 1,
            "expectedPods": 2,
            "disruptionsAllowed": 1,
        }
    }
    policy.patch_namespaced_pod_disruption_budget_status("api", namespace, status)

    def eviction(name: str) -> client.V1Eviction:
        return client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))

    core.create_namespaced_pod_eviction("api-1", namespace, eviction("api-1"))
    names = [p.metadata.name for p in core.list_namespaced_pod(namespace).items]
    assert names == ["api-2"]
    budget = policy.read_namespaced_pod_disruption_budget_status("api", namespace)
    assert budget.status.disruptions_allowed == 0
    assert list(budget.status.disrupted_pods) == ["api-1"]
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod_eviction("api-2", namespace, eviction("api-2"))
    assert refused.value.status == 429
    body = json.loads(refused.value.body)
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget api needs 1 healthy pods and has 2 currently",
        }
    ]
    assert [p.metadata.name for p in core.list_namespaced_pod(namespace).items] == ["api-2"]


def test_python_client_binds_a_pod_to_a_node(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(
        namespace,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="unscheduled"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]),
        ),
    )
    binding = client.V1Binding(
        metadata=client.V1ObjectMeta(name="unscheduled"),
        target=client.V1ObjectReference(api_version="v1", kind="Node", name="node-7"),
    )
    # The answer is a Status, which the client cannot read as the V1Binding it declares.
    response = core.create_namespaced_pod_binding(
        "unscheduled", namespace, binding, _preload_content=False
    )
    assert response.status == 201
    assert json.loads(response.data)["status"] == "Success"
    assert core.read_namespaced_pod("unscheduled", namespace).spec.node_name == "node-7"
    with pytest.raises(ApiException) as conflict:
        core.create_namespaced_pod_binding(
            "unscheduled", namespace, binding, _preload_content=False
        )
    assert conflict.value.status == 409


def test_kubectl_debug_adds_an_ephemeral_container(k: Kubectl) -> None:
    k.ok("run", "target", "--image=nginx")
    k.ok("debug", "target", "--image=busybox", "--target=target", "--container=dbg")
    pod = json.loads(k.ok("get", "pod", "target", "-o", "json"))
    (container,) = pod["spec"]["ephemeralContainers"]
    assert container["name"] == "dbg"
    assert container["image"] == "busybox"
    assert container["targetContainerName"] == "target"
    assert [c["name"] for c in pod["spec"]["containers"]] == ["target"]


def test_kubectl_patch_resize(k: Kubectl) -> None:
    k.ok(
        "run",
        "sized",
        "--image=nginx",
        "--overrides",
        json.dumps(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "sized",
                            "image": "nginx",
                            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}},
                        }
                    ]
                }
            }
        ),
    )
    patch = {"spec": {"containers": [{"name": "sized", "resources": {"limits": {"cpu": "400m"}}}]}}
    out = k.ok("patch", "pod", "sized", "--subresource=resize", "-p", json.dumps(patch))
    assert out.strip() == "pod/sized patched"
    limits = k.ok("get", "pod", "sized", "-o", "jsonpath={.spec.containers[0].resources.limits}")
    assert json.loads(limits) == {"cpu": "400m"}
    refused = k.fails(
        "patch",
        "pod",
        "sized",
        "--subresource=resize",
        "-p",
        json.dumps({"spec": {"containers": [{"name": "sized", "resources": None}]}}),
    )
    assert "Pod QOS Class may not change as a result of resizing" in refused.stderr


def test_python_client_ephemeral_containers(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(
        namespace,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="app"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]),
        ),
    )
    body = {"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}}
    pod = core.patch_namespaced_pod_ephemeralcontainers("app", namespace, body)
    assert [c.name for c in pod.spec.ephemeral_containers] == ["dbg"]
    read = core.read_namespaced_pod_ephemeralcontainers("app", namespace)
    assert read.spec.ephemeral_containers[0].image == "busybox"
