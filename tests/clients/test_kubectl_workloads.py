"""kubectl and the Python client with DaemonSets and ReplicaSets against a real ``kstore serve``,
on LMDB and on etcd: discovery (short names, the ``all`` category), the table columns kubectl
prints, ``kubectl scale rs``, ``kubectl rollout restart`` and ``rollout status`` of a DaemonSet,
``kubectl explain``, and the client's typed models (whose status fields are required)."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml

GENERATION = "deprecated.daemonset.template.generation"


def _rows(table: str) -> list[list[str]]:
    return [line.split() for line in table.splitlines() if line.strip()]


def _get(k: Kubectl, *args: str) -> Any:
    return json.loads(k.ok("get", *args, "-o", "json"))


def _daemon_set(name: str) -> str:
    labels = {"app": name}
    return to_yaml(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "containers": [{"name": "agent", "image": "fluent-bit:3.2"}],
                    },
                },
            },
        }
    )


def _replica_set(name: str, replicas: int) -> str:
    labels = {"app": name}
    return to_yaml(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        }
    )


def test_api_resources_list_both_kinds(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources", "--api-group", "apps"))
    assert ["daemonsets", "ds", "apps/v1", "true", "DaemonSet"] in rows
    assert ["replicasets", "rs", "apps/v1", "true", "ReplicaSet"] in rows
    spec = _rows(kubectl.ok("explain", "daemonsets.spec", "--api-version", "apps/v1"))
    assert ["selector", "<LabelSelector>", "-required-"] in spec
    assert ["template", "<PodTemplateSpec>", "-required-"] in spec
    assert ["updateStrategy", "<DaemonSetUpdateStrategy>"] in spec


def test_replica_sets_print_scale_and_belong_to_all(k: Kubectl) -> None:
    k.write("rs.yaml", _replica_set("web", 2))
    assert k.ok("apply", "-f", "rs.yaml").strip() == "replicaset.apps/web created"
    rows = _rows(k.ok("get", "rs", "-o", "wide"))
    assert rows[0] == [
        "NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR",
    ]  # fmt: skip
    row = dict(zip(rows[0], rows[1], strict=True))
    assert (row["NAME"], row["DESIRED"], row["CURRENT"], row["READY"]) == ("web", "2", "0", "0")
    assert (row["CONTAINERS"], row["IMAGES"], row["SELECTOR"]) == ("web", "nginx:1.27", "app=web")

    assert k.ok("scale", "rs", "web", "--replicas=4").strip() == "replicaset.apps/web scaled"
    live = _get(k, "rs", "web")
    assert (live["spec"]["replicas"], live["metadata"]["generation"]) == (4, 2)
    assert live["status"] == {"replicas": 0}
    scaled = k.fails("scale", "rs", "web", "--replicas=1", "--current-replicas=3")
    assert "Expected replicas to be 3, was 4" in scaled.stderr

    everything = k.ok("get", "all", "-o", "name").split()
    assert "replicaset.apps/web" in everything


def test_daemon_sets_print_roll_out_and_belong_to_all(
    k: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    k.write("ds.yaml", _daemon_set("agent"))
    assert k.ok("apply", "-f", "ds.yaml").strip() == "daemonset.apps/agent created"
    rows = _rows(k.ok("get", "ds"))
    # "NODE SELECTOR" is one column of two words.
    assert rows[0] == [
        "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR",
        "AGE",
    ]  # fmt: skip
    assert rows[1][:7] == ["agent", "0", "0", "0", "0", "0", "kubernetes.io/os=linux"]
    wide = _rows(k.ok("get", "ds", "-o", "wide"))
    assert wide[0][-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1][-3:] == ["agent", "fluent-bit:3.2", "app=agent"]
    assert "daemonset.apps/agent" in k.ok("get", "all", "-o", "name").split()

    live = _get(k, "ds", "agent")
    assert live["metadata"]["annotations"][GENERATION] == "1"
    assert k.ok("rollout", "restart", "ds", "agent").strip() == "daemonset.apps/agent restarted"
    live = _get(k, "ds", "agent")
    assert live["metadata"]["annotations"][GENERATION] == "2"
    assert live["metadata"]["generation"] == 2

    # A controller reports the rollout through the status subresource.
    apps = client.AppsV1Api(api_client)
    apps.patch_namespaced_daemon_set_status(
        "agent",
        namespace,
        {
            "status": {
                "observedGeneration": 2,
                "desiredNumberScheduled": 2,
                "currentNumberScheduled": 2,
                "updatedNumberScheduled": 2,
                "numberAvailable": 2,
                "numberReady": 2,
            }
        },
    )
    out = k.ok("rollout", "status", "ds", "agent", "--timeout=20s")
    assert out.strip() == 'daemon set "agent" successfully rolled out'


def test_the_python_clients_typed_models_read_both_kinds(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    labels = {"app": "typed"}
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.27")]),
    )
    selector = client.V1LabelSelector(match_labels=labels)
    apps.create_namespaced_daemon_set(
        namespace,
        client.V1DaemonSet(
            metadata=client.V1ObjectMeta(name="typed"),
            spec=client.V1DaemonSetSpec(selector=selector, template=template),
        ),
    )
    apps.create_namespaced_replica_set(
        namespace,
        client.V1ReplicaSet(
            metadata=client.V1ObjectMeta(name="typed"),
            spec=client.V1ReplicaSetSpec(selector=selector, template=template),
        ),
    )
    ds = apps.read_namespaced_daemon_set("typed", namespace)
    assert ds.status.desired_number_scheduled == 0
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1
    rs = apps.list_namespaced_replica_set(namespace, field_selector="status.replicas=0").items
    assert [(r.metadata.name, r.spec.replicas, r.status.replicas) for r in rs] == [("typed", 1, 0)]
