"""HorizontalPodAutoscalers through real clients, on LMDB and on etcd: ``kubectl autoscale``,
server-side apply, ``kubectl get`` (its columns, also ``-o wide``), delete, and the Python
client's typed autoscaling API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl

HEADER = ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]

MANIFEST = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: api
  maxReplicas: 8
  metrics:
  - type: Resource
    resource:
      name: memory
      target:
        type: AverageValue
        averageValue: 500Mi
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 60
"""


def _get(k: Kubectl, *args: str) -> Any:
    return json.loads(k.ok("get", *args, "-o", "json"))


def _rows(text: str) -> list[list[str]]:
    """Table lines split on runs of two or more spaces (TARGETS holds single spaces)."""
    return [[cell for cell in line.split("  ") if cell.strip()] for line in text.splitlines()]


def _cells(row: list[str]) -> list[str]:
    return [cell.strip() for cell in row]


def test_kubectl_autoscale_a_deployment(k: Kubectl) -> None:
    k.ok("create", "deployment", "web", "--image=nginx")
    out = k.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu=70%")
    assert out.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    hpa = _get(k, "hpa", "web")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 5)
    assert hpa["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70},
            },
        }
    ]
    assert hpa["status"] == {"desiredReplicas": 0}
    rows = [_cells(r) for r in _rows(k.ok("get", "horizontalpodautoscalers"))]
    assert rows[0] == HEADER
    assert rows[1][:6] == ["web", "Deployment/web", "cpu: <unknown>/70%", "2", "5", "0"]
    wide = [_cells(r) for r in _rows(k.ok("get", "hpa", "-o", "wide"))]
    assert wide[0] == HEADER
    described = k.ok("describe", "hpa", "web")
    assert "Reference:" in described and "Deployment/web" in described
    assert "Min replicas:" in described and "Max replicas:" in described
    # The hpa is in "all".
    assert "horizontalpodautoscaler.autoscaling/web" in k.ok("get", "all", "-o", "name")


def test_server_side_apply_defaults_and_delete(k: Kubectl) -> None:
    k.write("hpa.yaml", MANIFEST)
    applied = k.ok("apply", "--server-side", "-f", "hpa.yaml")
    assert applied.strip() == "horizontalpodautoscaler.autoscaling/api serverside-applied"
    hpa = _get(k, "hpa", "api")
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 60,
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    }
    assert hpa["spec"]["behavior"]["scaleUp"]["selectPolicy"] == "Max"
    shown = _get(k, "hpa", "api", "--show-managed-fields")
    managers = {m["manager"] for m in shown["metadata"]["managedFields"]}
    assert managers == {"kubectl"}
    rows = [_cells(r) for r in _rows(k.ok("get", "hpa"))]
    assert rows[1][:6] == ["api", "Deployment/api", "memory: <unknown>/500Mi", "1", "8", "0"]
    # A second apply with a change moves only what changed.
    k.write("hpa.yaml", MANIFEST.replace("maxReplicas: 8", "maxReplicas: 9"))
    k.ok("apply", "--server-side", "-f", "hpa.yaml")
    assert _get(k, "hpa", "api")["spec"]["maxReplicas"] == 9
    deleted = k.ok("delete", "hpa", "api")
    assert deleted.startswith('horizontalpodautoscaler.autoscaling "api" deleted')
    assert "No resources found" in k.run("get", "hpa").stderr


def test_an_invalid_autoscaler_is_refused(k: Kubectl) -> None:
    bad = MANIFEST.replace("maxReplicas: 8", "maxReplicas: 0").replace(
        "stabilizationWindowSeconds: 60", "stabilizationWindowSeconds: 4000"
    )
    k.write("bad.yaml", bad)
    failed = k.fails("apply", "--server-side", "-f", "bad.yaml")
    assert "spec.maxReplicas: Invalid value: 0: must be greater than 0" in failed.stderr
    assert (
        "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 4000: must be less "
        "than or equal to 3600"
    ) in failed.stderr


@pytest.fixture(scope="module")
def autoscaling_v2(api_client: client.ApiClient) -> client.AutoscalingV2Api:
    return client.AutoscalingV2Api(api_client)


def test_python_client_v2_crud(autoscaling_v2: client.AutoscalingV2Api, namespace: str) -> None:
    body = client.V2HorizontalPodAutoscaler(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V2HorizontalPodAutoscalerSpec(
            scale_target_ref=client.V2CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="web"
            ),
            max_replicas=4,
            behavior=client.V2HorizontalPodAutoscalerBehavior(
                scale_up=client.V2HPAScalingRules(select_policy="Min")
            ),
        ),
    )
    created = autoscaling_v2.create_namespaced_horizontal_pod_autoscaler(namespace, body)
    assert isinstance(created, client.V2HorizontalPodAutoscaler)
    assert created.spec.min_replicas == 1
    assert created.spec.metrics[0].resource.target.average_utilization == 80
    assert created.spec.behavior.scale_up.select_policy == "Min"
    assert [p.type for p in created.spec.behavior.scale_up.policies] == ["Pods", "Percent"]
    assert created.status.desired_replicas == 0
    status = autoscaling_v2.patch_namespaced_horizontal_pod_autoscaler_status(
        "web",
        namespace,
        {
            "status": {
                "currentReplicas": 2,
                "desiredReplicas": 3,
                "conditions": [{"type": "AbleToScale", "status": "True"}],
            }
        },
    )
    assert (status.status.current_replicas, status.status.desired_replicas) == (2, 3)
    assert status.status.conditions[0].type == "AbleToScale"
    patched = autoscaling_v2.patch_namespaced_horizontal_pod_autoscaler(
        "web", namespace, {"spec": {"maxReplicas": 6}}
    )
    assert patched.spec.max_replicas == 6
    assert patched.status.desired_replicas == 3
    with pytest.raises(ApiException) as invalid:
        autoscaling_v2.patch_namespaced_horizontal_pod_autoscaler(
            "web", namespace, {"spec": {"minReplicas": 7}}
        )
    assert invalid.value.status == 422
    message = json.loads(invalid.value.body)["message"]
    assert "spec.maxReplicas: Invalid value: 6: must be greater than or equal to `minReplicas`" in (
        message
    )
    listed = autoscaling_v2.list_namespaced_horizontal_pod_autoscaler(namespace).items
    assert [h.metadata.name for h in listed] == ["web"]
    autoscaling_v2.delete_namespaced_horizontal_pod_autoscaler("web", namespace)
    assert autoscaling_v2.list_namespaced_horizontal_pod_autoscaler(namespace).items == []


V1_MANIFEST = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: old
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: old
  maxReplicas: 3
  targetCPUUtilizationPercentage: 55
"""


def test_autoscaling_v1_through_kubectl(k: Kubectl) -> None:
    k.write("v1.yaml", V1_MANIFEST)
    applied = k.ok("apply", "--server-side", "-f", "v1.yaml")
    assert applied.strip() == "horizontalpodautoscaler.autoscaling/old serverside-applied"
    hub = _get(k, "hpa", "old")
    assert hub["apiVersion"] == "autoscaling/v2"
    assert hub["spec"]["minReplicas"] == 1
    assert hub["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 55},
            },
        }
    ]
    v1 = _get(k, "horizontalpodautoscalers.v1.autoscaling", "old")
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 55
    assert "annotations" not in v1["metadata"]
    # A v2-only field shows in v1 as Kubernetes' annotation and survives a v1 replace.
    k.ok("patch", "hpa", "old", "--type=merge", "-p", '{"spec":{"behavior":{"scaleUp":{}}}}')
    v1 = _get(k, "horizontalpodautoscalers.v1.autoscaling", "old")
    behavior = json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"])
    assert behavior["ScaleUp"]["SelectPolicy"] == "Max"
    v1["spec"]["maxReplicas"] = 6
    k.write("replace.json", json.dumps(v1))
    k.ok("replace", "-f", "replace.json")
    hub = _get(k, "hpa", "old")
    assert hub["spec"]["maxReplicas"] == 6
    assert hub["spec"]["behavior"]["scaleUp"]["policies"][0] == {
        "type": "Pods",
        "value": 4,
        "periodSeconds": 15,
    }
    assert "annotations" not in hub["metadata"]


@pytest.fixture(scope="module")
def autoscaling_v1(api_client: client.ApiClient) -> client.AutoscalingV1Api:
    return client.AutoscalingV1Api(api_client)


def test_python_client_v1_crud(
    autoscaling_v1: client.AutoscalingV1Api,
    autoscaling_v2: client.AutoscalingV2Api,
    namespace: str,
) -> None:
    body = client.V1HorizontalPodAutoscaler(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1HorizontalPodAutoscalerSpec(
            scale_target_ref=client.V1CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="web"
            ),
            max_replicas=4,
        ),
    )
    created = autoscaling_v1.create_namespaced_horizontal_pod_autoscaler(namespace, body)
    assert isinstance(created, client.V1HorizontalPodAutoscaler)
    assert created.spec.min_replicas == 1
    # autoscaling/v1's implicit default: 80% CPU.
    assert created.spec.target_cpu_utilization_percentage == 80
    assert created.status.current_replicas == 0 or created.status.current_replicas is None
    v2 = autoscaling_v2.read_namespaced_horizontal_pod_autoscaler("web", namespace)
    assert v2.spec.metrics[0].resource.target.average_utilization == 80
    status = autoscaling_v1.patch_namespaced_horizontal_pod_autoscaler_status(
        "web",
        namespace,
        {
            "status": {
                "currentReplicas": 2,
                "desiredReplicas": 2,
                "currentCPUUtilizationPercentage": 33,
            }
        },
    )
    assert status.status.current_cpu_utilization_percentage == 33
    v2 = autoscaling_v2.read_namespaced_horizontal_pod_autoscaler("web", namespace)
    assert v2.status.current_metrics[0].resource.current.average_utilization == 33
    patched = autoscaling_v1.patch_namespaced_horizontal_pod_autoscaler(
        "web", namespace, {"spec": {"targetCPUUtilizationPercentage": 60}}
    )
    assert patched.spec.target_cpu_utilization_percentage == 60
    with pytest.raises(ApiException) as invalid:
        autoscaling_v1.patch_namespaced_horizontal_pod_autoscaler(
            "web", namespace, {"spec": {"targetCPUUtilizationPercentage": 0}}
        )
    assert invalid.value.status == 422
    assert (
        "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater "
        "than 0"
    ) in json.loads(invalid.value.body)["message"]
    listed = autoscaling_v1.list_namespaced_horizontal_pod_autoscaler(namespace).items
    assert [h.spec.target_cpu_utilization_percentage for h in listed] == [60]
    autoscaling_v1.delete_namespaced_horizontal_pod_autoscaler("web", namespace)
    assert autoscaling_v1.list_namespaced_horizontal_pod_autoscaler(namespace).items == []


# ------------------------------------------------------------------ apps/v1 ControllerRevision

REVISION_MANIFEST = """\
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: web-5d8c
  ownerReferences:
  - apiVersion: apps/v1
    kind: StatefulSet
    name: web
    uid: 9f0c2a8e-0000-4000-8000-000000000001
    controller: true
data:
  spec:
    template:
      metadata:
        labels:
          app: web
revision: 3
"""


OWNER_MANIFEST = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
"""


def test_controller_revisions_through_kubectl(k: Kubectl) -> None:
    # The owner exists: the garbage collector deletes a revision whose owner does not.
    k.write("owner.yaml", OWNER_MANIFEST)
    k.ok("apply", "-f", "owner.yaml")
    uid = k.ok("get", "statefulset", "web", "-o", "jsonpath={.metadata.uid}")
    manifest = REVISION_MANIFEST.replace("9f0c2a8e-0000-4000-8000-000000000001", uid)
    k.write("revision.yaml", manifest)
    applied = k.ok("apply", "--server-side", "-f", "revision.yaml")
    assert applied.strip() == "controllerrevision.apps/web-5d8c serverside-applied"
    revision = _get(k, "controllerrevision", "web-5d8c")
    assert revision["revision"] == 3
    assert revision["data"] == {"spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    rows = [line.split() for line in k.ok("get", "controllerrevisions").splitlines()]
    assert rows[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert rows[1][:3] == ["web-5d8c", "statefulset.apps/web", "3"]
    wide = [line.split() for line in k.ok("get", "controllerrevisions", "-o", "wide").splitlines()]
    assert wide[0] == rows[0]
    changed = manifest.replace("app: web", "app: api")
    k.write("changed.yaml", changed)
    failed = k.fails("apply", "--server-side", "-f", "changed.yaml")
    assert "data: Invalid value" in failed.stderr and "field is immutable" in failed.stderr
    # The client's model requires data; kubectl does not, the server does.
    k.write("bare.yaml", "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: bare\n")
    failed = k.fails("create", "-f", "bare.yaml")
    assert "data: Required value: data is mandatory" in failed.stderr
    deleted = k.ok("delete", "controllerrevision", "web-5d8c")
    assert deleted.startswith('controllerrevision.apps "web-5d8c" deleted')


def test_python_client_controller_revision_crud(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    body = client.V1ControllerRevision(
        metadata=client.V1ObjectMeta(name="agent-1"),
        data={"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}},
        revision=1,
    )
    created = apps.create_namespaced_controller_revision(namespace, body)
    assert isinstance(created, client.V1ControllerRevision)
    assert created.revision == 1
    assert created.data["spec"]["template"]["spec"]["containers"][0]["image"] == "x"
    patched = apps.patch_namespaced_controller_revision("agent-1", namespace, {"revision": 2})
    assert patched.revision == 2
    with pytest.raises(ApiException) as invalid:
        apps.create_namespaced_controller_revision(
            namespace,
            client.V1ControllerRevision(
                metadata=client.V1ObjectMeta(name="bad"), data={"spec": {}}, revision=-1
            ),
        )
    assert invalid.value.status == 422
    message = json.loads(invalid.value.body)["message"]
    assert "revision: Invalid value: -1: must be greater than or equal to 0" in message
    listed = apps.list_namespaced_controller_revision(namespace).items
    assert [r.metadata.name for r in listed] == ["agent-1"]
    apps.delete_namespaced_controller_revision("agent-1", namespace)
    assert apps.list_namespaced_controller_revision(namespace).items == []


def test_api_resources_and_explain(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.ok("api-resources").splitlines()]
    assert [
        "horizontalpodautoscalers",
        "hpa",
        "autoscaling/v2",
        "true",
        "HorizontalPodAutoscaler",
    ] in (rows)
    assert ["controllerrevisions", "apps/v1", "true", "ControllerRevision"] in rows
    spec = [line.split() for line in kubectl.ok("explain", "hpa.spec").splitlines()]
    assert ["scaleTargetRef", "<CrossVersionObjectReference>", "-required-"] in spec
    assert ["maxReplicas", "<integer>", "-required-"] in spec
    assert ["behavior", "<HorizontalPodAutoscalerBehavior>"] in spec
    v1 = kubectl.ok("explain", "hpa.spec", "--api-version", "autoscaling/v1")
    assert "targetCPUUtilizationPercentage" in v1
