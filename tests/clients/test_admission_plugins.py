"""kube-apiserver's default admission plugins with real kubectl and the Python client, on LMDB
and on etcd: a pod comes back as Kubernetes v1.36 returns it (service account, its API volume
and mounts, priority, default tolerations), refusals carry Kubernetes' messages, and
``kstore serve`` refuses a plugin name it does not know."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml
from tests.server.harness import start_server

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def _expected_spec(volume: str) -> dict[str, Any]:
    """What kube-apiserver v1.36 stores for ``_pod()`` with its default plugins: the v1
    defaults, then ServiceAccount, Priority and DefaultTolerationSeconds. (kube-apiserver
    also writes each container's empty ``resources: {}``, a zero struct kstore's Pod leaves
    out; that is the kind's serialisation, not admission, and is not compared here.)"""
    return {
        "containers": [
            {
                "name": "nginx",
                "image": "nginx:1.27",
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"name": volume, "readOnly": True, "mountPath": MOUNT}],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
            for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
        ],
        "volumes": [
            {
                "name": volume,
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "namespace",
                                        "fieldRef": {
                                            "apiVersion": "v1",
                                            "fieldPath": "metadata.namespace",
                                        },
                                    }
                                ]
                            }
                        },
                    ],
                    "defaultMode": 420,
                },
            }
        ],
    }


def test_a_pod_is_stored_as_kubernetes_stores_it(k: Kubectl, namespace: str) -> None:
    k.write("pod.yaml", to_yaml(_pod()))
    assert k.ok("create", "-f", "pod.yaml").strip() == "pod/web created"
    pod = json.loads(k.ok("get", "pod", "web", "-o", "json"))
    volume = pod["spec"]["volumes"][0]["name"]
    for container in pod["spec"]["containers"]:
        assert container.pop("resources", {}) == {}
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume)
    assert pod["spec"] == _expected_spec(volume)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["metadata"]["namespace"] == namespace


def test_the_python_client_reads_the_admitted_pod(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_pod(
        namespace, _pod("py", priorityClassName="system-node-critical")
    )
    assert created.spec.priority == 2000001000
    assert created.spec.priority_class_name == "system-node-critical"
    assert created.spec.service_account_name == "default"
    [mount] = created.spec.containers[0].volume_mounts
    assert (mount.mount_path, mount.read_only) == (MOUNT, True)
    assert [t.key for t in created.spec.tolerations] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]


def test_refusals_carry_kubernetes_messages(
    k: Kubectl, core: client.CoreV1Api, namespace: str
) -> None:
    k.write("robot.yaml", to_yaml(_pod("robot", serviceAccountName="robot")))
    result = k.fails("create", "-f", "robot.yaml")
    assert result.stderr.strip() == (
        'Error from server (Forbidden): error when creating "robot.yaml": pods "robot" is '
        f"forbidden: error looking up service account {namespace}/robot: "
        'serviceaccount "robot" not found'
    )
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod(namespace, _pod("p", priorityClassName="gold"))
    assert caught.value.status == 403
    body = json.loads(caught.value.body)
    assert body["reason"] == "Forbidden"
    assert body["message"] == 'pods "p" is forbidden: no PriorityClass with name gold was found'
    assert body["details"] == {"name": "p", "kind": "pods"}


def test_a_global_default_priority_class_applies(
    core: client.CoreV1Api, api_client: client.ApiClient, namespace: str
) -> None:
    scheduling = client.SchedulingV1Api(api_client)
    name = f"{namespace}-default"[:63]
    scheduling.create_priority_class(
        client.V1PriorityClass(
            metadata=client.V1ObjectMeta(name=name),
            value=7,
            global_default=True,
            preemption_policy="Never",
        )
    )
    try:
        created = core.create_namespaced_pod(namespace, _pod("d"))
        assert created.spec.priority_class_name == name
        assert (created.spec.priority, created.spec.preemption_policy) == (7, "Never")
    finally:
        scheduling.delete_priority_class(name)


def test_limit_range_defaults_through_kubectl(k: Kubectl) -> None:
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container", "default": {"memory": "128Mi"}}]},
    }
    k.write("limits.yaml", to_yaml(limits))
    k.ok("create", "-f", "limits.yaml")
    k.write("pod.yaml", to_yaml(_pod()))
    k.ok("create", "-f", "pod.yaml")
    pod = json.loads(k.ok("get", "pod", "web", "-o", "json"))
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "128Mi"},
        "requests": {"memory": "128Mi"},
    }
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: memory request for container nginx; memory limit for "
        "container nginx"
    )


def test_quota_holds_under_concurrent_creates(core: client.CoreV1Api, namespace: str) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "secrets"},
        "spec": {"hard": {"count/secrets": "5"}},
    }
    core.create_namespaced_resource_quota(namespace, quota)
    outcomes: list[int] = []

    def make(i: int) -> None:
        try:
            core.create_namespaced_secret(namespace, {"metadata": {"name": f"s-{i}"}})
            outcomes.append(201)
        except ApiException as exc:
            outcomes.append(exc.status)
            if exc.status == 403:
                message = json.loads(exc.body)["message"]
                assert message == (
                    f'secrets "s-{i}" is forbidden: exceeded quota: secrets, requested: '
                    "count/secrets=1, used: count/secrets=5, limited: count/secrets=5"
                )

    threads = [threading.Thread(target=make, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [201] * 5 + [403] * 11
    stored = core.read_namespaced_resource_quota("secrets", namespace)
    assert stored.status.used == {"count/secrets": "5"}
    assert len(core.list_namespaced_secret(namespace).items) == 5


def test_pod_security_levels_through_kubectl(k: Kubectl, namespace: str) -> None:
    k.ok(
        "label",
        "namespace",
        namespace,
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/warn=restricted",
    )
    k.write("pod.yaml", to_yaml(_pod()))
    result = k.run("create", "-f", "pod.yaml")
    assert result.code == 0, result
    assert result.stdout.strip() == "pod/web created"
    assert result.stderr.strip() == (
        'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != '
        'false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), '
        'unrestricted capabilities (container "nginx" must set '
        'securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container '
        '"nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or '
        'container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")'
    )
    k.write("host.yaml", to_yaml(_pod("host", hostNetwork=True)))
    refused = k.fails("create", "-f", "host.yaml")
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "host.yaml": pods "host" is '
        'forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'
    )


def test_serve_refuses_an_unknown_plugin(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as caught:
        start_server(tmp_path / "data", "--enable-admission-plugins", "Priority,Bogus")
    assert 'enable-admission-plugins plugin "Bogus" is unknown' in str(caught.value)
