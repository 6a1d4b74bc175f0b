"""The ``resourcequota``, ``pvc-protection`` and ``pv-protection`` controllers through real
kubectl and the Python client, on LMDB and on etcd: a quota's ``status.used`` follows creates,
deletes, a pod that ends and a changed ``spec.hard``; ``kubectl delete pvc`` waits until the
pod that uses the claim is gone; a volume being deleted stays while Bound."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.server.harness import start_server


def _eventually(check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def _used(k: Kubectl, name: str) -> dict[str, str]:
    out = k.ok("get", "quota", name, "-o", "jsonpath={.status.used}")
    found: dict[str, str] = json.loads(out) if out else {}
    return found


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec},
    }


def test_quota_used_follows_creates_and_deletes(
    k: Kubectl, core: client.CoreV1Api, namespace: str
) -> None:
    k.ok("create", "configmap", "before")
    k.ok("create", "quota", "q", "--hard=pods=3,count/configmaps=5,services=2")
    # Counted from the objects there, not charged: one ConfigMap already.
    _eventually(lambda: _used(k, "q") == {"count/configmaps": "1", "pods": "0", "services": "0"})
    hard = k.ok("get", "quota", "q", "-o", "jsonpath={.status.hard}")
    assert json.loads(hard) == {"count/configmaps": "5", "pods": "3", "services": "2"}
    k.ok("create", "configmap", "a")
    k.ok("create", "service", "clusterip", "web", "--tcp=80")
    core.create_namespaced_pod(namespace, _pod("p1"))
    core.create_namespaced_pod(namespace, _pod("p2"))
    assert _used(k, "q") == {"count/configmaps": "2", "pods": "2", "services": "1"}
    # Deletes are given back by the controller's recount.
    k.ok("delete", "configmap", "before", "a")
    k.ok("delete", "service", "web")
    core.delete_namespaced_pod("p1", namespace, grace_period_seconds=0)
    _eventually(lambda: _used(k, "q") == {"count/configmaps": "0", "pods": "1", "services": "0"})
    # A pod that ends stops counting.
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    core.patch_namespaced_pod_status(
        "p2", namespace, {"status": {"phase": "Succeeded", "startTime": now}}
    )
    _eventually(lambda: _used(k, "q")["pods"] == "0")
    # A changed spec.hard is counted at once, for the new names too.
    k.ok("create", "secret", "generic", "s1", "--from-literal=a=b")
    k.ok("patch", "quota", "q", "--type=merge", "-p", '{"spec":{"hard":{"count/secrets":"4"}}}')
    _eventually(lambda: _used(k, "q").get("count/secrets") == "1")
    hard = k.ok("get", "quota", "q", "-o", "jsonpath={.status.hard}")
    assert json.loads(hard)["count/secrets"] == "4"


def test_python_client_sees_quota_room_given_back(core: client.CoreV1Api, namespace: str) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "two"},
        "spec": {"hard": {"count/secrets": "2"}},
    }
    core.create_namespaced_resource_quota(namespace, quota)
    for name in ("s1", "s2"):
        core.create_namespaced_secret(namespace, {"metadata": {"name": name}})
    refused = None
    try:
        core.create_namespaced_secret(namespace, {"metadata": {"name": "s3"}})
    except ApiException as exc:
        refused = exc.status
    assert refused == 403
    core.delete_namespaced_secret("s1", namespace)

    def room() -> bool:
        used = core.read_namespaced_resource_quota("two", namespace).status.used
        return bool(used == {"count/secrets": "1"})

    _eventually(room)
    core.create_namespaced_secret(namespace, {"metadata": {"name": "s3"}})


_CLAIM = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_kubectl_delete_pvc_waits_for_the_pod_using_it(
    k: Kubectl, core: client.CoreV1Api, namespace: str, tmp_path: Path
) -> None:
    k.ok("apply", "-f", "-", stdin=_CLAIM)
    assert k.ok("get", "pvc", "data", "-o", "jsonpath={.metadata.finalizers}") == (
        '["kubernetes.io/pvc-protection"]'
    )
    volumes = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    core.create_namespaced_pod(namespace, _pod("user", nodeName="node-1", volumes=volumes))
    # An unscheduled pod holds nothing (no kubelet would mount the claim).
    core.create_namespaced_pod(namespace, _pod("pending", volumes=volumes))
    deleting = k.start("delete", "pvc", "data", "--timeout=60s", output=tmp_path / "delete.out")
    try:
        _eventually(
            lambda: k.ok("get", "pvc", "data", "-o", "jsonpath={.metadata.deletionTimestamp}") != ""
        )
        time.sleep(1.0)
        assert deleting.poll() is None, (tmp_path / "delete.out").read_text()
        assert k.ok("get", "pvc", "data", "-o", "name").strip() == "persistentvolumeclaim/data"
        k.ok("delete", "pod", "user", "--grace-period=0", "--force")
        assert deleting.wait(30) == 0, (tmp_path / "delete.out").read_text()
    finally:
        if deleting.poll() is None:
            deleting.terminate()
            deleting.wait()
    assert (tmp_path / "delete.out").read_text().strip() == (
        f'persistentvolumeclaim "data" deleted from {namespace} namespace'
    )
    assert k.run("get", "pvc", "data").code == 1


def test_a_bound_volume_stays_until_released(core: client.CoreV1Api, namespace: str) -> None:
    name = f"pv-{namespace}"
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/srv/data"},
        },
    }
    created = core.create_persistent_volume(volume)
    assert created.metadata.finalizers == ["kubernetes.io/pv-protection"]
    core.patch_persistent_volume_status(name, {"status": {"phase": "Bound"}})
    deleted = core.delete_persistent_volume(name)
    assert deleted.metadata.deletion_timestamp is not None
    time.sleep(1.0)
    assert core.read_persistent_volume(name).metadata.finalizers == ["kubernetes.io/pv-protection"]
    core.patch_persistent_volume_status(name, {"status": {"phase": "Released"}})

    def gone() -> bool:
        return name not in {v.metadata.name for v in core.list_persistent_volume().items}

    _eventually(gone)


def test_protection_controllers_can_be_turned_off(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--controllers=*,-pvc-protection")
    try:
        with server.client() as c:
            path = "/api/v1/namespaces/default/persistentvolumeclaims"
            body = {
                "metadata": {"name": "kept"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
            assert c.post(path, json=body).status_code == 201
            assert c.delete(f"{path}/kept").status_code == 200
            time.sleep(1.0)
            kept = c.get(f"{path}/kept").json()
            assert kept["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
            assert kept["metadata"]["deletionTimestamp"]
    finally:
        assert server.stop() == 0
