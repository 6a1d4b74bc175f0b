"""The remaining core/v1 kinds with real kubectl and the Python client, on LMDB and on etcd:
PodTemplate, ReplicationController (``kubectl scale rc``), Endpoints, LimitRange and
ResourceQuota, Node."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml


def _table(text: str) -> list[dict[str, str]]:
    """kubectl's columns read by position (cells may be empty, names may hold a space)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    # Two-word column names ("POD LABELS", "CREATED AT") are one column.
    starts = [i for i in starts if not header[:i].endswith(("POD ", "CREATED "))]
    bounds = [*starts[1:], None]
    names = [header[a:b].strip() for a, b in zip(starts, bounds, strict=True)]
    return [
        {n: line[a:b].strip() for n, a, b in zip(names, starts, bounds, strict=True)}
        for line in lines[1:]
    ]


def _controller(image: str = "nginx:1.27", replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]},
            },
        },
    }


def _pod_template() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "tpl"},
        "template": {
            "metadata": {"labels": {"app": "batch", "tier": "x"}},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
        },
    }


def test_discovery_lists_the_kinds(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.ok("api-resources").splitlines()]
    assert ["podtemplates", "v1", "true", "PodTemplate"] in rows
    assert ["replicationcontrollers", "rc", "v1", "true", "ReplicationController"] in rows
    assert ["endpoints", "ep", "v1", "true", "Endpoints"] in rows
    assert ["limitranges", "limits", "v1", "true", "LimitRange"] in rows
    assert ["resourcequotas", "quota", "v1", "true", "ResourceQuota"] in rows
    assert ["nodes", "no", "v1", "false", "Node"] in rows


def test_replication_controller_apply_get_scale_delete(k: Kubectl, namespace: str) -> None:
    k.write("rc.yaml", to_yaml(_controller()))
    out = k.ok("apply", "--server-side", "-f", "rc.yaml").strip()
    assert out == "replicationcontroller/web serverside-applied"
    rows = _table(k.ok("get", "rc", "-o", "wide"))
    assert list(rows[0]) == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    row = rows[0]
    assert (row["NAME"], row["DESIRED"], row["CURRENT"], row["READY"]) == ("web", "2", "0", "0")
    assert (row["CONTAINERS"], row["IMAGES"], row["SELECTOR"]) == (
        "nginx",
        "nginx:1.27",
        "app=web",
    )
    assert [r.split()[0] for r in k.ok("get", "all").splitlines()[1:]] == [
        "replicationcontroller/web"
    ]

    scaled = k.ok("scale", "rc", "web", "--replicas=4").strip()
    assert scaled == "replicationcontroller/web scaled"
    jsonpath = "{.spec.replicas} {.metadata.generation} {.spec.selector.app}"
    assert k.ok("get", "rc", "web", "-o", f"jsonpath={jsonpath}") == "4 2 web"

    # A new image through apply is a spec change; a template its selector misses is refused.
    k.write("rc.yaml", to_yaml(_controller(image="nginx:1.28", replicas=4)))
    k.ok("apply", "--server-side", "-f", "rc.yaml")
    assert k.ok("get", "rc", "web", "-o", "jsonpath={.metadata.generation}") == "3"
    result = k.fails(
        "patch", "rc", "web", "--type=merge", "-p", '{"spec":{"selector":{"app":"other"}}}'
    )
    assert (
        'The ReplicationController "web" is invalid: spec.template.metadata.labels: '
        'Invalid value: {"app":"web"}: `selector` does not match template `labels`'
    ) in result.stderr, (result.stderr, namespace)

    assert k.ok("delete", "rc", "web").startswith('replicationcontroller "web" deleted')
    assert "No resources found" in k.run("get", "rc").stderr


def test_pod_template_create_get_delete(k: Kubectl) -> None:
    k.write("tpl.yaml", to_yaml(_pod_template()))
    assert k.ok("create", "-f", "tpl.yaml").strip() == "podtemplate/tpl created"
    rows = _table(k.ok("get", "podtemplates", "-o", "wide"))
    assert list(rows[0]) == ["NAME", "CONTAINERS", "IMAGES", "POD LABELS"]
    assert list(rows[0].values()) == ["tpl", "main", "busybox:1.36", "app=batch,tier=x"]
    out = k.ok("apply", "--server-side", "--force-conflicts", "-f", "tpl.yaml").strip()
    assert out == "podtemplate/tpl serverside-applied"
    assert k.ok("delete", "podtemplate", "tpl").startswith('podtemplate "tpl" deleted')


@pytest.fixture(scope="module")
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def test_python_client_replication_controllers(core: client.CoreV1Api, namespace: str) -> None:
    body = client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ReplicationControllerSpec(
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "web"}),
                spec=client.V1PodSpec(
                    containers=[client.V1Container(name="nginx", image="nginx:1.27")]
                ),
            )
        ),
    )
    created = core.create_namespaced_replication_controller(namespace, body)
    assert isinstance(created, client.V1ReplicationController)
    assert created.spec.replicas == 1
    assert created.spec.selector == {"app": "web"}
    assert created.status.replicas == 0
    assert created.metadata.generation == 1

    # A Scale has no strategic merge patch (no patch metadata): a merge patch.
    scale = core.patch_namespaced_replication_controller_scale(
        "web", namespace, {"spec": {"replicas": 3}}, _content_type="application/merge-patch+json"
    )
    assert (scale.spec.replicas, scale.status.selector) == (3, "app=web")
    read = core.read_namespaced_replication_controller_scale("web", namespace)
    assert read.spec.replicas == 3

    status = core.patch_namespaced_replication_controller_status(
        "web", namespace, {"status": {"replicas": 3, "readyReplicas": 2}}
    )
    assert (status.status.replicas, status.status.ready_replicas) == (3, 2)
    with pytest.raises(ApiException) as invalid:
        core.patch_namespaced_replication_controller_status(
            "web", namespace, {"status": {"readyReplicas": 5}}
        )
    assert invalid.value.status == 422
    assert "cannot be greater than status.replicas" in json.loads(invalid.value.body)["message"]

    selected = core.list_namespaced_replication_controller(
        namespace, field_selector="status.replicas=3"
    )
    assert [c.metadata.name for c in selected.items] == ["web"]
    core.delete_namespaced_replication_controller("web", namespace, propagation_policy="Background")
    assert core.list_namespaced_replication_controller(namespace).items == []


def test_python_client_pod_templates(core: client.CoreV1Api, namespace: str) -> None:
    body = client.V1PodTemplate(
        metadata=client.V1ObjectMeta(name="tpl"),
        template=client.V1PodTemplateSpec(
            spec=client.V1PodSpec(containers=[client.V1Container(name="main", image="busybox")])
        ),
    )
    created = core.create_namespaced_pod_template(namespace, body)
    assert isinstance(created, client.V1PodTemplate)
    assert created.template.spec.containers[0].image_pull_policy == "Always"
    assert created.metadata.generation == 1
    patched = core.patch_namespaced_pod_template(
        "tpl", namespace, {"template": {"spec": {"activeDeadlineSeconds": 5}}}
    )
    assert patched.metadata.generation == 2
    assert [t.metadata.name for t in core.list_namespaced_pod_template(namespace).items] == ["tpl"]
    # Kubernetes' pod template storage answers a delete with the deleted object.
    deleted = core.delete_namespaced_pod_template("tpl", namespace)
    assert isinstance(deleted, client.V1PodTemplate)
    assert deleted.metadata.name == "tpl"
    assert core.list_namespaced_pod_template(namespace).items == []


def _endpoints() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "db"},
        "subsets": [
            {
                "addresses": [{"ip": "10.1.0.5"}, {"ip": "10.1.0.6"}],
                "ports": [{"name": "pg", "port": 5432}],
            }
        ],
    }


def test_endpoints_apply_get_delete(k: Kubectl, namespace: str) -> None:
    k.write("ep.yaml", to_yaml(_endpoints()))
    assert k.ok("apply", "--server-side", "-f", "ep.yaml").strip() == (
        "endpoints/db serverside-applied"
    )
    rows = _table(k.ok("get", "ep", "-o", "wide"))
    assert list(rows[0]) == ["NAME", "ENDPOINTS", "AGE"]
    assert (rows[0]["NAME"], rows[0]["ENDPOINTS"]) == ("db", "10.1.0.5:5432,10.1.0.6:5432")
    assert k.ok("get", "ep", "db", "-o", "jsonpath={.subsets[0].ports[0].protocol}") == "TCP"
    bad = _endpoints()
    bad["subsets"][0]["addresses"] = [{"ip": "127.0.0.1"}]
    k.write("ep.yaml", to_yaml(bad))
    result = k.fails("apply", "--server-side", "-f", "ep.yaml")
    assert (
        'Endpoints "db" is invalid: subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": '
        "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    ) in result.stderr, (result.stderr, namespace)
    assert k.ok("delete", "ep", "db").startswith('endpoints "db" deleted')


def test_python_client_endpoints(core: client.CoreV1Api, namespace: str) -> None:
    body = client.V1Endpoints(
        metadata=client.V1ObjectMeta(name="db"),
        subsets=[
            client.V1EndpointSubset(
                addresses=[client.V1EndpointAddress(ip="10.1.0.5", node_name="node-a")],
                ports=[client.CoreV1EndpointPort(port=5432, app_protocol="postgresql")],
            )
        ],
    )
    created = core.create_namespaced_endpoints(namespace, body)
    assert isinstance(created, client.V1Endpoints)
    assert created.subsets[0].ports[0].protocol == "TCP"
    assert created.subsets[0].addresses[0].node_name == "node-a"
    replaced = core.patch_namespaced_endpoints(
        "db", namespace, {"subsets": [{"notReadyAddresses": [{"ip": "10.1.0.7"}]}]}
    )
    assert replaced.subsets[0].addresses is None
    assert replaced.subsets[0].not_ready_addresses[0].ip == "10.1.0.7"
    assert [e.metadata.name for e in core.list_namespaced_endpoints(namespace).items] == ["db"]
    core.delete_namespaced_endpoints("db", namespace)
    assert core.list_namespaced_endpoints(namespace).items == []


def _limit_range() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {
            "limits": [
                {"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "100m"}},
                {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}},
            ]
        },
    }


def _quota() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "compute"},
        "spec": {"hard": {"pods": "10", "requests.cpu": "4", "limits.memory": "8Gi"}},
    }


def test_limit_range_and_quota_with_kubectl(
    k: Kubectl, core: client.CoreV1Api, namespace: str
) -> None:
    k.write("limits.yaml", to_yaml(_limit_range()))
    assert k.ok("apply", "--server-side", "-f", "limits.yaml").strip() == (
        "limitrange/limits serverside-applied"
    )
    rows = _table(k.ok("get", "limits", "-o", "wide"))
    assert list(rows[0]) == ["NAME", "CREATED AT"]
    assert rows[0]["NAME"] == "limits"
    assert rows[0]["CREATED AT"].endswith("Z")
    defaults = "{.spec.limits[0].default.cpu} {.spec.limits[0].defaultRequest.cpu}"
    assert k.ok("get", "limits", "limits", "-o", f"jsonpath={defaults}") == "2 2"

    bad = _limit_range()
    bad["spec"]["limits"][0]["min"] = {"cpu": "3"}
    k.write("limits.yaml", to_yaml(bad))
    result = k.fails("apply", "--server-side", "-f", "limits.yaml")
    assert (
        'spec.limits[0].min[cpu]: Invalid value: "3": min value 3 is greater than max value 2'
    ) in result.stderr, (result.stderr, namespace)

    # A pod to count (the limit range gives it a cpu limit of 2).
    pod = {
        "metadata": {"name": "counted"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}},
                }
            ]
        },
    }
    core.create_namespaced_pod(namespace, pod)
    k.write("quota.yaml", to_yaml(_quota()))
    assert k.ok("create", "-f", "quota.yaml").strip() == "resourcequota/compute created"
    # The resourcequota controller's write: status.hard from the spec, status.used counted.
    wanted = ("compute", "pods: 1/10, requests.cpu: 500m/4", "limits.memory: 1Gi/8Gi")
    deadline = time.monotonic() + 15
    while True:
        rows = _table(k.ok("get", "quota", "-o", "wide"))
        assert list(rows[0]) == ["NAME", "AGE", "REQUEST", "LIMIT"]
        if (rows[0]["NAME"], rows[0]["REQUEST"], rows[0]["LIMIT"]) == wanted:
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.1)
    result = k.fails(
        "patch", "quota", "compute", "--type=merge", "-p", '{"spec":{"hard":{"pods":"1.5"}}}'
    )
    assert 'spec.hard[pods]: Invalid value: "1500m": must be an integer' in result.stderr or (
        'spec.hard[pods]: Invalid value: "1.5": must be an integer' in result.stderr
    ), result.stderr
    assert k.ok("delete", "quota", "compute").startswith('resourcequota "compute" deleted')
    assert k.ok("delete", "limits", "limits").startswith('limitrange "limits" deleted')


def test_python_client_limit_ranges_and_quotas(core: client.CoreV1Api, namespace: str) -> None:
    limits = client.V1LimitRange(
        metadata=client.V1ObjectMeta(name="limits"),
        spec=client.V1LimitRangeSpec(
            limits=[client.V1LimitRangeItem(type="Container", default={"memory": "256Mi"})]
        ),
    )
    created = core.create_namespaced_limit_range(namespace, limits)
    assert isinstance(created, client.V1LimitRange)
    assert created.spec.limits[0].default_request == {"memory": "256Mi"}
    assert [r.metadata.name for r in core.list_namespaced_limit_range(namespace).items] == [
        "limits"
    ]
    core.delete_namespaced_limit_range("limits", namespace)

    quota = client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name="objects"),
        spec=client.V1ResourceQuotaSpec(
            hard={"pods": "5"},
            scope_selector=client.V1ScopeSelector(
                match_expressions=[
                    client.V1ScopedResourceSelectorRequirement(
                        scope_name="PriorityClass", operator="In", values=["high"]
                    )
                ]
            ),
        ),
    )
    made = core.create_namespaced_resource_quota(namespace, quota)
    assert isinstance(made, client.V1ResourceQuota)
    assert made.status.hard is None
    # The resourcequota controller counts it (no pod of class "high")...
    deadline = time.monotonic() + 15
    while (counted := core.read_namespaced_resource_quota("objects", namespace)).status.used != {
        "pods": "0"
    }:
        assert time.monotonic() < deadline, counted.status
        time.sleep(0.05)
    assert counted.status.hard == {"pods": "5"}
    # ... and the status subresource takes another writer's report.
    reported = core.replace_namespaced_resource_quota_status(
        "objects",
        namespace,
        client.V1ResourceQuota(
            metadata=client.V1ObjectMeta(
                name="objects", resource_version=counted.metadata.resource_version
            ),
            spec=made.spec,
            status=client.V1ResourceQuotaStatus(hard={"pods": "5"}, used={"pods": "1"}),
        ),
    )
    assert reported.status.used == {"pods": "1"}
    with pytest.raises(ApiException) as invalid:
        core.patch_namespaced_resource_quota(
            "objects", namespace, {"spec": {"scopes": ["BestEffort"]}}
        )
    assert invalid.value.status == 422
    assert "spec.scopes" in json.loads(invalid.value.body)["message"]
    # So does its resource quota storage.
    deleted = core.delete_namespaced_resource_quota("objects", namespace)
    assert isinstance(deleted, client.V1ResourceQuota)
    assert deleted.status.used == {"pods": "1"}
    assert core.list_namespaced_resource_quota(namespace).items == []


def _node_manifest() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "worker-1",
            "labels": {"node-role.kubernetes.io/worker": ""},
        },
        "spec": {"podCIDRs": ["10.244.1.0/24"], "providerID": "kind://docker/kind/worker-1"},
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "addresses": [
                {"type": "InternalIP", "address": "172.18.0.3"},
                {"type": "Hostname", "address": "worker-1"},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.36.0",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "kernelVersion": "6.1.0",
                "containerRuntimeVersion": "containerd://2.1.0",
            },
        },
    }


def test_nodes_with_kubectl(k: Kubectl, core: client.CoreV1Api) -> None:
    k.write("node.yaml", to_yaml(_node_manifest()))
    assert k.ok("create", "-f", "node.yaml").strip() == "node/worker-1 created"
    try:
        rows = _table(k.ok("get", "nodes", "-o", "wide"))
        assert list(rows[0]) == [
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME",
        ]
        row = rows[0]
        assert (row["NAME"], row["STATUS"], row["ROLES"], row["VERSION"]) == (
            "worker-1",
            "Ready",
            "worker",
            "v1.36.0",
        )
        assert (row["INTERNAL-IP"], row["EXTERNAL-IP"]) == ("172.18.0.3", "<none>")
        assert row["OS-IMAGE"] == "Debian GNU/Linux 12 (bookworm)"
        assert row["CONTAINER-RUNTIME"] == "containerd://2.1.0"

        assert k.ok("cordon", "worker-1").strip() == "node/worker-1 cordoned"
        assert _table(k.ok("get", "no"))[0]["STATUS"] == "Ready,SchedulingDisabled"
        assert k.ok("taint", "nodes", "worker-1", "dedicated=gpu:NoSchedule").strip() == (
            "node/worker-1 tainted"
        )
        result = k.fails("taint", "nodes", "worker-1", "other=x:Never")
        assert "Never" in result.stderr, result.stderr

        # The node's heartbeat: a status write through the Python client.
        status = {"conditions": [{"type": "Ready", "status": "False", "reason": "Down"}]}
        core.patch_node_status("worker-1", {"status": status})
        assert _table(k.ok("get", "no"))[0]["STATUS"] == "NotReady,SchedulingDisabled"
        read = core.read_node("worker-1")
        assert isinstance(read, client.V1Node)
        assert read.spec.taints[0].key == "dedicated"
        assert read.status.allocatable == {"cpu": "4", "memory": "8Gi", "pods": "110"}
        selected = core.list_node(field_selector="spec.unschedulable=true").items
        assert [n.metadata.name for n in selected] == ["worker-1"]
        with pytest.raises(ApiException) as invalid:
            core.patch_node("worker-1", {"spec": {"providerID": "kind://other"}})
        assert invalid.value.status == 422
    finally:
        assert k.ok("delete", "node", "worker-1").startswith('node "worker-1" deleted')
