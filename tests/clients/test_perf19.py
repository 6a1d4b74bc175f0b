"""What the admission plugins read, through the Python client on LMDB and on etcd: they answer
from the watch cache where it is provably current, and an object written just before a pod
(a LimitRange, the ServiceAccount, a PriorityClass, a RuntimeClass, a ResourceQuota) still
applies to it while other writes keep the store busy."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


@pytest.fixture
def busy(core: client.CoreV1Api, namespace: str) -> Iterator[None]:
    """ConfigMap creates in the namespace from two threads while the test runs: the store's
    revision keeps moving, the caches of other resources lag behind it."""
    stop = threading.Event()

    def write(worker: int) -> None:
        i = 0
        while not stop.is_set():
            core.create_namespaced_config_map(namespace, {"metadata": {"name": f"n{worker}-{i}"}})
            i += 1

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(2)]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)


@pytest.mark.usefixtures("busy")
def test_what_was_written_just_before_a_pod_applies_to_it(
    api_client: client.ApiClient, core: client.CoreV1Api, namespace: str
) -> None:
    scheduling = client.SchedulingV1Api(api_client)
    node = client.NodeV1Api(api_client)
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]},
    }
    core.create_namespaced_limit_range(namespace, limits)
    classes: list[str] = []
    try:
        for i in range(12):
            cpu = f"{101 + i}m"
            core.patch_namespaced_limit_range(
                "defaults",
                namespace,
                {"spec": {"limits": [{"type": "Container", "default": {"cpu": cpu}}]}},
            )
            core.patch_namespaced_service_account(
                "default", namespace, {"imagePullSecrets": [{"name": f"pull-{i}"}]}
            )
            name = f"{namespace}-{i}"
            classes.append(name)
            scheduling.create_priority_class(
                {"metadata": {"name": name}, "value": 1000 + i, "preemptionPolicy": "Never"}
            )
            node.create_runtime_class(
                {
                    "metadata": {"name": name},
                    "handler": "runc",
                    "overhead": {"podFixed": {"cpu": f"{i + 1}m"}},
                }
            )
            pod = core.create_namespaced_pod(
                namespace, _pod(f"p{i}", priorityClassName=name, runtimeClassName=name)
            )
            spec = pod.spec
            assert spec.containers[0].resources.limits == {"cpu": cpu}
            assert (spec.priority, spec.preemption_policy) == (1000 + i, "Never")
            assert spec.overhead == {"cpu": f"{i + 1}m"}
            assert [s.name for s in spec.image_pull_secrets] == [f"pull-{i}"]
    finally:
        for name in classes:
            scheduling.delete_priority_class(name)
            node.delete_runtime_class(name)


@pytest.mark.usefixtures("busy")
def test_a_quota_created_just_before_is_charged_exactly(
    core: client.CoreV1Api, namespace: str
) -> None:
    core.create_namespaced_resource_quota(
        namespace,
        {"metadata": {"name": "pods"}, "spec": {"hard": {"pods": "3"}}},
    )
    created = []
    for i in range(5):
        try:
            core.create_namespaced_pod(namespace, _pod(f"q{i}"))
            created.append(i)
        except client.ApiException as exc:
            assert exc.status == 403, exc.body
    assert created == [0, 1, 2]
    quota = core.read_namespaced_resource_quota("pods", namespace)
    assert quota.status.used == {"pods": "3"}
