"""StatefulSets and PersistentVolumeClaims with real kubectl and the Python client: discovery,
apply, the columns ``kubectl get`` prints, ``kubectl scale``, the immutable spec, a claim bound
through its status; on LMDB and on etcd."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml


def _statefulset(service: str = "web", image: str = "nginx:1.27") -> dict[str, Any]:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "serviceName": service,
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": image,
                            "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx"}],
                        }
                    ]
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "www"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


def _claim() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "standard",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def _table(text: str) -> list[dict[str, str]]:
    """kubectl's columns read by position (cells may be empty, names may hold a space)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    # "ACCESS MODES" is one column: its second word does not start one.
    starts = [i for i in starts if not header[:i].endswith("ACCESS ")]
    bounds = [*starts[1:], None]
    names = [header[a:b].strip() for a, b in zip(starts, bounds, strict=True)]
    return [
        {n: line[a:b].strip() for n, a, b in zip(names, starts, bounds, strict=True)}
        for line in lines[1:]
    ]


def test_discovery_names_both_kinds(kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.ok("api-resources").splitlines()]
    assert ["statefulsets", "sts", "apps/v1", "true", "StatefulSet"] in rows
    assert ["persistentvolumeclaims", "pvc", "v1", "true", "PersistentVolumeClaim"] in rows
    spec = [line.split() for line in kubectl.ok("explain", "sts.spec").splitlines()]
    assert ["selector", "<LabelSelector>", "-required-"] in spec
    assert ["template", "<PodTemplateSpec>", "-required-"] in spec
    assert ["serviceName", "<string>"] in spec


def test_apply_get_scale_and_the_immutable_spec(k: Kubectl, namespace: str) -> None:
    k.write("web.yaml", to_yaml(_statefulset()))
    assert k.ok("apply", "-f", "web.yaml").strip() == "statefulset.apps/web created"
    rows = _table(k.ok("get", "sts", "-o", "wide"))
    assert list(rows[0]) == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert (rows[0]["NAME"], rows[0]["READY"]) == ("web", "0/2")
    assert (rows[0]["CONTAINERS"], rows[0]["IMAGES"]) == ("nginx", "nginx:1.27")
    assert [row.split()[0] for row in k.ok("get", "all").splitlines()[1:]] == [
        "statefulset.apps/web"
    ]

    assert k.ok("scale", "sts", "web", "--replicas=3").strip() == "statefulset.apps/web scaled"
    jsonpath = "{.spec.replicas} {.metadata.generation} {.spec.volumeClaimTemplates[0].status}"
    assert k.ok("get", "sts", "web", "-o", f"jsonpath={jsonpath}") == '3 2 {"phase":"Pending"}'

    # A new image is a template change (allowed); a new service name is not.
    k.write("web.yaml", to_yaml(_statefulset(image="nginx:1.28")))
    assert k.ok("apply", "-f", "web.yaml").strip() == "statefulset.apps/web configured"
    k.write("web.yaml", to_yaml(_statefulset(service="other")))
    result = k.fails("apply", "-f", "web.yaml")
    assert (
        'The StatefulSet "web" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
        "are forbidden"
    ) in result.stderr, (result.stderr, namespace)


def test_claim_columns_before_and_after_binding(
    k: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    k.write("data.yaml", to_yaml(_claim()))
    assert k.ok("create", "-f", "data.yaml").strip() == "persistentvolumeclaim/data created"
    rows = _table(k.ok("get", "pvc", "-o", "wide"))
    assert list(rows[0]) == [
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
        "VOLUMEMODE",
    ]
    pending = rows[0]
    assert (pending["NAME"], pending["STATUS"], pending["VOLUME"]) == ("data", "Pending", "")
    assert (pending["CAPACITY"], pending["ACCESS MODES"]) == ("", "")
    assert (pending["STORAGECLASS"], pending["VOLUMEATTRIBUTESCLASS"]) == ("standard", "<unset>")
    assert pending["VOLUMEMODE"] == "Filesystem"

    # The volume controller's two writes: the spec names the volume, the status binds it.
    core = client.CoreV1Api(api_client)
    core.patch_namespaced_persistent_volume_claim(
        "data", namespace, {"spec": {"volumeName": "pv-1"}}
    )
    status = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    core.patch_namespaced_persistent_volume_claim_status("data", namespace, {"status": status})
    bound = _table(k.ok("get", "pvc"))[0]
    assert (bound["STATUS"], bound["VOLUME"], bound["CAPACITY"]) == ("Bound", "pv-1", "1Gi")
    assert bound["ACCESS MODES"] == "RWO"

    result = k.fails("patch", "pvc", "data", "--type=merge", "-p", '{"spec":{"volumeName":"pv-2"}}')
    assert "spec is immutable after creation except resources.requests" in result.stderr
