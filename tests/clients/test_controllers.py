"""The API-only controllers seen through a real ``kstore serve``: kubectl finds the ``default``
ServiceAccount and the ``kube-root-ca.crt`` ConfigMap in a new namespace, and two servers on
one etcd elect one leader that does the work once."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth.conftest import self_signed_cert
from tests.clients.kubectl import Kubectl
from tests.clients.servers import storage_args
from tests.server.harness import RunningServer, start_server

_FAST_ELECTION = (
    "--leader-elect-lease-duration=1s",
    "--leader-elect-renew-deadline=600ms",
    "--leader-elect-retry-period=100ms",
)


def _eventually(check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def root_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cert, _ = self_signed_cert(tmp_path_factory.mktemp("root-ca"))
    return cert


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest,
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    root_ca: Path,
) -> Iterator[RunningServer]:
    """``kstore serve`` with a ``--root-ca-file`` to publish."""
    with storage_args(request.config, backend) as args:
        data = tmp_path_factory.mktemp(f"controllers-{backend}") / "data"
        server = start_server(data, *args, f"--root-ca-file={root_ca}")
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


def test_kubectl_finds_the_default_service_account(kubectl: Kubectl, namespace: str) -> None:
    k = kubectl.in_namespace(namespace)
    _eventually(lambda: k.run("get", "sa", "default").code == 0)
    assert k.ok("get", "sa", "-o", "name").split() == ["serviceaccount/default"]
    # Deleted, it comes back (a new object).
    uid = k.ok("get", "sa", "default", "-o", "jsonpath={.metadata.uid}")
    k.ok("delete", "sa", "default")
    _eventually(
        lambda: (
            k.run("get", "sa", "default", "-o", "jsonpath={.metadata.uid}").stdout not in ("", uid)
        )
    )


def test_kubectl_finds_the_root_ca_config_map(
    kubectl: Kubectl, namespace: str, root_ca: Path
) -> None:
    k = kubectl.in_namespace(namespace)
    _eventually(lambda: k.run("get", "cm", "kube-root-ca.crt").code == 0)
    published = k.ok("get", "cm", "kube-root-ca.crt", "-o", r"jsonpath={.data.ca\.crt}")
    assert published == root_ca.read_text()
    # Edited, ca.crt is put back.
    k.ok("patch", "cm", "kube-root-ca.crt", "-p", '{"data":{"ca.crt":"tampered"}}')
    _eventually(
        lambda: (
            k.ok("get", "cm", "kube-root-ca.crt", "-o", r"jsonpath={.data.ca\.crt}")
            == root_ca.read_text()
        )
    )


def test_unknown_controllers_stop_the_server_at_startup(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="unknown controller\\(s\\) 'no-such-controller'"):
        start_server(tmp_path / "data", "--controllers=*,no-such-controller")


def test_controllers_can_be_turned_off(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--controllers=-serviceaccount")
    try:
        with server.client() as client:
            made = client.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "quiet"}},
            )
            assert made.status_code == 201
            time.sleep(1.0)
            listed = client.get("/api/v1/namespaces/quiet/serviceaccounts").json()
            assert listed["items"] == []
    finally:
        assert server.stop() == 0


def _leaders(*clients: httpx.Client) -> str:
    got = clients[0].get(
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
    )
    assert got.status_code == 200, got.text
    holder: str = got.json()["spec"].get("holderIdentity", "")
    return holder


def _leader_of(*servers: RunningServer) -> list[RunningServer]:
    return [s for s in servers if "became the controllers' leader" in s.log()]


@pytest.mark.etcd
def test_two_servers_on_one_etcd_do_the_work_once(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    with storage_args(request.config, "etcd") as args:
        one = start_server(tmp_path / "one", *args, *_FAST_ELECTION)
        two = start_server(tmp_path / "two", *args, *_FAST_ELECTION)
        try:
            with one.client() as a, two.client() as b:
                _eventually(lambda: len(_leader_of(one, two)) == 1)
                time.sleep(1.0)
                assert len(_leader_of(one, two)) == 1
                for i in range(5):
                    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"x{i}"}}
                    assert b.post("/api/v1/namespaces", json=body).status_code == 201
                for i in range(5):
                    path = f"/api/v1/namespaces/x{i}/serviceaccounts"
                    _eventually(lambda p=path: len(a.get(p).json()["items"]) == 1)
                time.sleep(1.0)
                for i in range(5):
                    items = a.get(f"/api/v1/namespaces/x{i}/serviceaccounts").json()["items"]
                    assert [s["metadata"]["name"] for s in items] == ["default"]
                (leader,) = _leader_of(one, two)
                survivor, client = (two, b) if leader is one else (one, a)
                assert leader.stop() == 0
                # The other server takes over (the lease was released on the clean stop).
                _eventually(lambda: len(_leader_of(survivor)) == 1)
                path = "/api/v1/namespaces/x0/serviceaccounts/default"
                assert client.delete(path).status_code == 200
                _eventually(lambda: client.get(path).status_code == 200)
        finally:
            for server in (one, two):
                if server.process.poll() is None:
                    assert server.stop() == 0


def _replica_set(owner_uid: str) -> str:
    return f"""
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-1
  ownerReferences:
  - {{apiVersion: apps/v1, kind: Deployment, name: web, uid: {owner_uid},
     controller: true, blockOwnerDeletion: true}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: nginx, image: "nginx:1.27"}}]}}
"""


def test_kubectl_delete_deployment_removes_its_dependents(kubectl: Kubectl, namespace: str) -> None:
    k = kubectl.in_namespace(namespace)
    k.ok("create", "deployment", "web", "--image=nginx:1.27")
    uid = k.ok("get", "deployment", "web", "-o", "jsonpath={.metadata.uid}")
    k.ok("apply", "-f", "-", stdin=_replica_set(uid))
    k.ok("delete", "deployment", "web")
    _eventually(lambda: k.ok("get", "rs", "-o", "name").strip() == "")
    # --cascade=foreground: the Deployment is gone once its ReplicaSet is.
    k.ok("create", "deployment", "web", "--image=nginx:1.27")
    uid = k.ok("get", "deployment", "web", "-o", "jsonpath={.metadata.uid}")
    k.ok("apply", "-f", "-", stdin=_replica_set(uid))
    k.ok("delete", "deployment", "web", "--cascade=foreground", "--wait=true")
    assert k.ok("get", "rs", "-o", "name").strip() == ""
    assert k.ok("get", "deploy", "-o", "name").strip() == ""
    # --cascade=orphan keeps the ReplicaSet, without the reference.
    k.ok("create", "deployment", "web", "--image=nginx:1.27")
    uid = k.ok("get", "deployment", "web", "-o", "jsonpath={.metadata.uid}")
    k.ok("apply", "-f", "-", stdin=_replica_set(uid))
    k.ok("delete", "deployment", "web", "--cascade=orphan", "--wait=true")
    assert k.ok("get", "rs", "web-1", "-o", "jsonpath={.metadata.ownerReferences}") == ""


def test_kubectl_sees_aggregated_cluster_role_rules(kubectl: Kubectl, namespace: str) -> None:
    label = f"agg-{namespace}"
    roles = f"""
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {label}-part, labels: {{{label}: "true"}}}}
rules: [{{apiGroups: [""], resources: [configmaps], verbs: [get, list]}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {label}-all}}
aggregationRule:
  clusterRoleSelectors: [{{matchLabels: {{{label}: "true"}}}}]
rules: []
"""
    kubectl.ok("apply", "-f", "-", stdin=roles)
    _eventually(
        lambda: (
            kubectl.ok(
                "get", "clusterrole", f"{label}-all", "-o", "jsonpath={.rules[0].resources[0]}"
            )
            == "configmaps"
        )
    )


def test_kubectl_sees_a_finished_job_go_after_its_ttl(kubectl: Kubectl, namespace: str) -> None:
    k = kubectl.in_namespace(namespace)
    k.ok("create", "job", "brief", "--image=busybox")
    k.ok("patch", "job", "brief", "-p", '{"spec":{"ttlSecondsAfterFinished":0}}')
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status = {
        "status": {
            "startTime": now,
            "completionTime": now,
            "succeeded": 1,
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastTransitionTime": now},
            ],
        }
    }
    k.ok("patch", "job", "brief", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    _eventually(lambda: k.ok("get", "jobs", "-o", "name").strip() == "")
