"""kube-apiserver's admission plugins through ``kstore.open``: which run (its default-on set,
changed by name, unknown names refused) and what each does to a pod, with its messages."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.embedded import Client, open
from kstore.errors import AlreadyExists, BadRequest, Forbidden
from kstore.registry.plugins import DEFAULT_ON_PLUGINS, ORDERED_PLUGINS, resolve_plugins
from kstore.registry.registry import RegistryConfig
from kstore.registry.strategies.base import copy_value

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _default_account(client: Client, namespace: str) -> None:
    """The namespace's ``default`` ServiceAccount, unless its controller made it already."""
    with contextlib.suppress(AlreadyExists):
        client.resource("v1", "serviceaccounts").namespace(namespace).create(
            {"metadata": {"name": "default"}}
        )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open(f"lmdb://{tmp_path / 'store'}?durable=false") as c:
        _default_account(c, "default")
        yield c


def _pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def _create(client: Client, pod: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = client.resource("v1", "pods").namespace("default").create(pod)
    return created


# -- which plugins run -------------------------------------------------------------------------


def test_defaults_are_kube_apiservers_in_its_order() -> None:
    names = resolve_plugins()
    assert set(names) == DEFAULT_ON_PLUGINS
    assert "StorageObjectInUseProtection" in names
    assert list(names) == sorted(names, key=ORDERED_PLUGINS.index)
    assert names.index("ServiceAccount") < names.index("Priority")
    assert names[-1] == "ResourceQuota"
    assert "AlwaysPullImages" not in names


def test_enable_and_disable_change_the_default_set() -> None:
    names = resolve_plugins(["AlwaysPullImages"], ["ServiceAccount", "Priority"])
    assert "AlwaysPullImages" in names and "LimitRanger" in names
    assert "ServiceAccount" not in names and "Priority" not in names
    # The flags' order does not matter: the chain's order is fixed.
    assert names.index("LimitRanger") < names.index("AlwaysPullImages")


def test_unknown_or_overlapping_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadRequest) as caught:
        resolve_plugins(["Bogus"])
    assert caught.value.message == 'enable-admission-plugins plugin "Bogus" is unknown'
    with pytest.raises(BadRequest) as caught:
        resolve_plugins((), ["Nope"])
    assert caught.value.message == 'disable-admission-plugins plugin "Nope" is unknown'
    with pytest.raises(BadRequest) as caught:
        resolve_plugins(["Priority"], ["Priority"])
    assert "overlapped" in caught.value.message
    with pytest.raises(BadRequest):
        open(f"lmdb://{tmp_path / 's'}", enable_admission_plugins=["Bogus"])
    with pytest.raises(BadRequest):
        RegistryConfig(admission_plugins=("Bogus",))


def test_disabled_plugins_leave_the_pod_alone(tmp_path: Path) -> None:
    off = ["ServiceAccount", "Priority", "DefaultTolerationSeconds"]
    with open(f"lmdb://{tmp_path / 's'}?durable=false", disable_admission_plugins=off) as c:
        spec = _create(c, _pod())["spec"]
    assert "serviceAccountName" not in spec and "priority" not in spec
    assert "tolerations" not in spec and "volumes" not in spec


# -- ServiceAccount ----------------------------------------------------------------------------


def test_service_account_defaults_and_mounts_the_api_volume(client: Client) -> None:
    pod = _pod(initContainers=[{"name": "init", "image": "busybox"}])
    spec = _create(client, pod)["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {
        "defaultMode": 420,
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
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT}
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert spec["containers"][0]["volumeMounts"] == [mount]


def test_missing_service_account_is_forbidden(client: Client) -> None:
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod(serviceAccountName="robot"))
    assert caught.value.message == (
        'pods "p" is forbidden: error looking up service account default/robot: '
        'serviceaccount "robot" not found'
    )
    with pytest.raises(Forbidden) as caught:
        _create(
            client,
            {
                "metadata": {"generateName": "web-"},
                "spec": _pod()["spec"] | {"serviceAccountName": "robot"},
            },
        )
    assert caught.value.message.startswith('pods "web-" is forbidden: ')


def test_automount_off_and_existing_mounts(client: Client) -> None:
    accounts = client.resource("v1", "serviceaccounts").namespace("default")
    accounts.create(
        {
            "metadata": {"name": "quiet"},
            "automountServiceAccountToken": False,
            "imagePullSecrets": [{"name": "registry"}],
        }
    )
    spec = _create(client, _pod("a", serviceAccountName="quiet"))["spec"]
    assert "volumes" not in spec and "volumeMounts" not in spec["containers"][0]
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    # The pod's own setting wins over the account's.
    spec = _create(
        client, _pod("b", serviceAccountName="quiet", automountServiceAccountToken=True)
    )["spec"]
    assert spec["volumes"][0]["name"].startswith("kube-api-access-")
    spec = _create(client, _pod("c", automountServiceAccountToken=False))["spec"]
    assert "volumes" not in spec
    # A container that mounts something at the path already is left alone.
    own = {"name": "own", "mountPath": MOUNT}
    pod = _pod(
        "d",
        containers=[
            {"name": "x", "image": "nginx", "volumeMounts": [own]},
            {"name": "y", "image": "nginx"},
        ],
        volumes=[{"name": "own", "emptyDir": {}}],
    )
    spec = _create(client, pod)["spec"]
    assert spec["containers"][0]["volumeMounts"] == [own]
    assert spec["containers"][1]["volumeMounts"][0]["mountPath"] == MOUNT
    assert len(spec["volumes"]) == 2


def test_mirror_pods_are_left_alone_or_refused(client: Client) -> None:
    mirror = {"kubernetes.io/config.mirror": "abc"}
    pod = _pod("m", nodeName="n1")
    pod["metadata"]["annotations"] = mirror
    spec = _create(client, pod)["spec"]
    assert "serviceAccountName" not in spec and "volumes" not in spec
    pod = _pod("m2", serviceAccountName="default", nodeName="n1")
    pod["metadata"]["annotations"] = mirror
    with pytest.raises(Forbidden) as caught:
        _create(client, pod)
    assert caught.value.message.endswith("a mirror pod may not reference service accounts")


# -- Priority ----------------------------------------------------------------------------------


def _priority_class(client: Client, name: str, value: int, **extra: Any) -> None:
    body = {"metadata": {"name": name}, "value": value, **extra}
    client.resource("scheduling.k8s.io/v1", "priorityclasses").create(body)


def test_priority_without_a_class_is_zero(client: Client) -> None:
    spec = _create(client, _pod())["spec"]
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in spec


def test_priority_from_named_system_and_global_default_classes(client: Client) -> None:
    spec = _create(client, _pod("sys", priorityClassName="system-cluster-critical"))["spec"]
    assert spec["priority"] == 2000000000
    _priority_class(client, "low", 10, preemptionPolicy="Never", globalDefault=True)
    _priority_class(client, "high", 1000)
    spec = _create(client, _pod("a"))["spec"]
    assert (spec["priorityClassName"], spec["priority"]) == ("low", 10)
    assert spec["preemptionPolicy"] == "Never"
    spec = _create(client, _pod("b", priorityClassName="high", priority=1000))["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "PreemptLowerPriority")


def test_priority_refusals(client: Client) -> None:
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod(priorityClassName="nope"))
    assert (
        caught.value.message == 'pods "p" is forbidden: no PriorityClass with name nope was found'
    )
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod(priority=5))
    assert caught.value.message == (
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 0 from the given PriorityClass name"
    )
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod(preemptionPolicy="Never"))
    assert caught.value.message == (
        'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be '
        "provided in pod spec; priority admission controller computed PreemptLowerPriority "
        "from the given PriorityClass name"
    )


def test_priority_is_kept_on_update(client: Client) -> None:
    pods = client.resource("v1", "pods").namespace("default")
    created = _create(client, _pod(priorityClassName="system-node-critical"))
    created["spec"].pop("priority")
    created["spec"].pop("preemptionPolicy")
    created["metadata"]["labels"] = {"x": "y"}
    updated = pods.update(created)
    assert updated["spec"]["priority"] == 2000001000
    assert updated["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


# -- DefaultTolerationSeconds ------------------------------------------------------------------


def _toleration(key: str) -> dict[str, Any]:
    return {
        "key": key,
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }


def test_default_tolerations_are_added(client: Client) -> None:
    spec = _create(client, _pod())["spec"]
    assert spec["tolerations"] == [
        _toleration("node.kubernetes.io/not-ready"),
        _toleration("node.kubernetes.io/unreachable"),
    ]


def test_existing_tolerations_cover_the_taints(client: Client) -> None:
    own = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
    spec = _create(client, _pod("a", tolerations=[own]))["spec"]
    assert spec["tolerations"] == [own, _toleration("node.kubernetes.io/not-ready")]
    everything = {"operator": "Exists"}
    spec = _create(client, _pod("b", tolerations=[everything]))["spec"]
    assert spec["tolerations"] == [everything]
    no_schedule = {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoSchedule",
    }
    spec = _create(client, _pod("c", tolerations=[no_schedule]))["spec"]
    assert len(spec["tolerations"]) == 3


# -- LimitRanger -------------------------------------------------------------------------------


def _limit_range(client: Client, name: str, *items: dict[str, Any]) -> None:
    client.resource("v1", "limitranges").namespace("default").create(
        {"metadata": {"name": name}, "spec": {"limits": list(items)}}
    )


def test_limit_range_defaults_fill_containers_and_annotate(client: Client) -> None:
    _limit_range(
        client,
        "defaults",
        {
            "type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"},
        },
    )
    pod = _pod(
        containers=[
            {"name": "a", "image": "x"},
            {"name": "b", "image": "x", "resources": {"limits": {"cpu": "1"}}},
        ],
        initContainers=[{"name": "i", "image": "x"}],
    )
    created = _create(client, pod)
    a, b = created["spec"]["containers"]
    assert a["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    # b's own limit stands, and its request defaulted to that limit before admission.
    assert b["resources"] == {
        "limits": {"cpu": "1", "memory": "256Mi"},
        "requests": {"cpu": "1", "memory": "256Mi"},
    }
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for "
        "container a; memory request for container b; memory limit for container b; "
        "cpu, memory request for init container i; cpu, memory limit for init container i"
    )


def test_limit_range_min_max_and_ratio_refusals(client: Client) -> None:
    _limit_range(
        client,
        "bounds",
        {
            "type": "Container",
            "min": {"cpu": "100m"},
            "max": {"cpu": "2", "memory": "1Gi"},
            "maxLimitRequestRatio": {"cpu": "4"},
        },
    )

    def refused(resources: dict[str, Any]) -> str:
        pod = _pod(containers=[{"name": "c", "image": "x", "resources": resources}])
        with pytest.raises(Forbidden) as caught:
            _create(client, pod)
        return caught.value.message.removeprefix('pods "p" is forbidden: ')

    # Defaulting gives each container max as its limit and, as its request, the min.
    too_small = {"requests": {"cpu": "50m"}}
    assert refused(too_small) == (
        "[minimum cpu usage per Container is 100m, but request is 50m, cpu max limit to "
        "request ratio per Container is 4, but provided ratio is 40.000000]"
    )
    too_big = {"limits": {"cpu": "3", "memory": "512Mi"}, "requests": {"cpu": "1"}}
    assert refused(too_big) == "maximum cpu usage per Container is 2, but limit is 3"
    assert refused({"limits": {"cpu": "2"}, "requests": {"cpu": "200m"}}) == (
        "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000"
    )
    ok = _create(client, _pod("ok"))["spec"]["containers"][0]["resources"]
    assert ok == {
        "limits": {"cpu": "2", "memory": "1Gi"},
        "requests": {"cpu": "2", "memory": "1Gi"},
    }


def test_limit_range_pod_totals_and_claims(client: Client) -> None:
    _limit_range(
        client,
        "totals",
        {"type": "Pod", "max": {"memory": "1Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}},
    )
    big = {"limits": {"memory": "768Mi"}}
    pod = _pod(
        containers=[
            {"name": "a", "image": "x", "resources": big},
            {"name": "b", "image": "x", "resources": big},
        ]
    )
    with pytest.raises(Forbidden) as caught:
        _create(client, pod)
    assert caught.value.message == (
        'pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi'
    )
    claims = client.resource("v1", "persistentvolumeclaims").namespace("default")

    def claim(name: str, size: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
            },
        }

    with pytest.raises(Forbidden) as caught:
        claims.create(claim("small", "500Mi"))
    assert caught.value.message == (
        'persistentvolumeclaims "small" is forbidden: minimum storage usage per '
        "PersistentVolumeClaim is 1Gi, but request is 500Mi"
    )
    with pytest.raises(Forbidden) as caught:
        claims.create(claim("big", "20Gi"))
    assert caught.value.message.endswith(
        "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    )
    assert claims.create(claim("fits", "5Gi"))["spec"]["resources"]["requests"] == {
        "storage": "5Gi"
    }


# -- DefaultStorageClass, PersistentVolumeClaimResize, StorageObjectInUseProtection ------------


def _claim(name: str, size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    return {"metadata": {"name": name}, "spec": {**body, **spec}}


def _storage_class(client: Client, name: str, default: bool = False, **extra: Any) -> None:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    client.resource("storage.k8s.io/v1", "storageclasses").create(
        {"metadata": meta, "provisioner": "example.com/disk", **extra}
    )


def test_default_storage_class(client: Client) -> None:
    claims = client.resource("v1", "persistentvolumeclaims").namespace("default")
    created = claims.create(_claim("none"))
    assert "storageClassName" not in created["spec"]
    # StorageObjectInUseProtection, on by default, is the only one to add a finalizer.
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    _storage_class(client, "plain")
    _storage_class(client, "fast", default=True)
    assert claims.create(_claim("a"))["spec"]["storageClassName"] == "fast"
    # An explicit class, even the empty one, is kept.
    assert claims.create(_claim("b", storageClassName=""))["spec"]["storageClassName"] == ""
    assert claims.create(_claim("c", storageClassName="plain"))["spec"]["storageClassName"] == (
        "plain"
    )


def test_protection_finalizers_by_default(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 's'}?durable=false"
    with open(url, controllers=()) as c:
        claim = c.resource("v1", "persistentvolumeclaims").namespace("default").create(_claim("a"))
        assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
        volume = c.resource("v1", "persistentvolumes").create(
            {
                "metadata": {"name": "pv1", "finalizers": ["example.com/keep"]},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "hostPath": {"path": "/tmp/pv1"},
                },
            }
        )
        assert volume["metadata"]["finalizers"] == [
            "example.com/keep",
            "kubernetes.io/pv-protection",
        ]


def test_claims_grow_only_with_an_expandable_class(client: Client) -> None:
    _storage_class(client, "fixed")
    _storage_class(client, "elastic", allowVolumeExpansion=True)
    claims = client.resource("v1", "persistentvolumeclaims").namespace("default")
    for name in ("fixed", "elastic"):
        claims.create(_claim(name, storageClassName=name, volumeName=f"pv-{name}"))

    def grow(name: str) -> dict[str, Any]:
        claim = claims.get(name)
        claim["status"] = {"phase": "Bound"}
        claim = claims.update_status(claim)
        claim["spec"]["resources"]["requests"]["storage"] = "2Gi"
        updated: dict[str, Any] = claims.update(claim)
        return updated

    with pytest.raises(Forbidden) as caught:
        grow("fixed")
    assert caught.value.message == (
        'persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be '
        "resized and the storageclass that provisions the pvc must support resize"
    )
    assert grow("elastic")["spec"]["resources"]["requests"]["storage"] == "2Gi"


# -- DefaultIngressClass -----------------------------------------------------------------------


def test_default_ingress_class(client: Client) -> None:
    classes = client.resource("networking.k8s.io/v1", "ingressclasses")
    ingresses = client.resource("networking.k8s.io/v1", "ingresses").namespace("default")
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    body = {"defaultBackend": backend}
    assert (
        "ingressClassName"
        not in ingresses.create({"metadata": {"name": "a"}, "spec": body})["spec"]
    )
    annotated = {"ingressclass.kubernetes.io/is-default-class": "true"}
    controller = {"controller": "example.com/ingress"}
    classes.create({"metadata": {"name": "nginx", "annotations": annotated}, "spec": controller})
    classes.create({"metadata": {"name": "other"}, "spec": controller})
    created = ingresses.create({"metadata": {"name": "b"}, "spec": body})
    assert created["spec"]["ingressClassName"] == "nginx"
    legacy = {"name": "c", "annotations": {"kubernetes.io/ingress.class": "traefik"}}
    assert "ingressClassName" not in ingresses.create({"metadata": legacy, "spec": body})["spec"]
    named = {"ingressClassName": "other", **body}
    assert ingresses.create({"metadata": {"name": "d"}, "spec": named})["spec"][
        "ingressClassName"
    ] == ("other")


# -- RuntimeClass ------------------------------------------------------------------------------


def test_runtime_class_overhead_and_scheduling(client: Client) -> None:
    client.resource("node.k8s.io/v1", "runtimeclasses").create(
        {
            "metadata": {"name": "kata"},
            "handler": "kata",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {
                "nodeSelector": {"runtime": "kata"},
                "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}],
            },
        }
    )
    spec = _create(client, _pod("a", runtimeClassName="kata", nodeSelector={"zone": "z1"}))["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert spec["nodeSelector"] == {"zone": "z1", "runtime": "kata"}
    assert {"key": "kata", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]

    def refused(pod: dict[str, Any]) -> str:
        with pytest.raises(Forbidden) as caught:
            _create(client, pod)
        return caught.value.message.split(" is forbidden: ", 1)[1]

    assert refused(_pod("b", runtimeClassName="gvisor")) == (
        'pod rejected: RuntimeClass "gvisor" not found'
    )
    assert refused(_pod("c", runtimeClassName="kata", nodeSelector={"runtime": "runc"})) == (
        "conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; "
        "pod.spec.nodeSelector[runtime] = runc"
    )
    assert refused(_pod("d", runtimeClassName="kata", overhead={"cpu": "1"})) == (
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
    )
    assert refused(_pod("e", overhead={"cpu": "1"})) == (
        "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
    )


def test_the_plugins_validating_hooks_leave_the_object_as_it_is(client: Client) -> None:
    """They are given the object being stored, uncopied (``reads_only``): each must leave it
    (and the old object of an update) exactly as it found it."""
    checked: list[str] = []
    chain = client.registry._admission

    def unchanged(hook: Any) -> Any:
        def run(attributes: Any) -> None:
            before = copy_value([attributes.object, attributes.old_object])
            try:
                hook(attributes)
            finally:
                assert [attributes.object, attributes.old_object] == before, hook
                checked.append(getattr(hook, "__qualname__", repr(hook)))

        return run

    assert all(reads_only for _, reads_only in chain._validating)
    chain._validating = tuple((unchanged(hook), True) for hook, _ in chain._validating)
    ns = {
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/audit": "baseline",
    }
    namespaces = client.resource("v1", "namespaces")
    namespaces.create({"metadata": {"name": "watched", "labels": ns}})
    _default_account(client, "watched")
    client.resource("v1", "limitranges").namespace("watched").create(
        {
            "metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]},
        }
    )
    client.resource("v1", "resourcequotas").namespace("watched").create(
        {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "5", "limits.cpu": "4"}}}
    )
    client.resource("node.k8s.io/v1", "runtimeclasses").create(
        {"metadata": {"name": "kata"}, "handler": "kata", "overhead": {"podFixed": {"cpu": "1"}}}
    )
    pods = client.resource("v1", "pods").namespace("watched")
    created = pods.create(
        _pod(runtimeClassName="kata", priorityClassName="system-cluster-critical")
    )
    created["metadata"]["labels"] = {"changed": "yes"}
    pods.update(created)
    assert len(checked) >= 2 * 4, checked  # PodSecurity, LimitRanger, RuntimeClass, quota...


# -- ResourceQuota -----------------------------------------------------------------------------


def _quota(client: Client, name: str, hard: dict[str, str], **spec: Any) -> None:
    client.resource("v1", "resourcequotas").namespace("default").create(
        {"metadata": {"name": name}, "spec": {"hard": hard, **spec}}
    )


def test_quota_counts_and_refuses_past_hard(client: Client) -> None:
    _quota(client, "counts", {"pods": "2", "count/configmaps": "1"})
    _create(client, _pod("a"))
    _create(client, _pod("b"))
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod("c"))
    assert caught.value.message == (
        'pods "c" is forbidden: exceeded quota: counts, requested: pods=1, used: pods=2, '
        "limited: pods=2"
    )
    quota = client.resource("v1", "resourcequotas").namespace("default").get("counts")
    assert quota["status"]["hard"] == {"pods": "2", "count/configmaps": "1"}
    assert quota["status"]["used"] == {"pods": "2"}
    cms = client.resource("v1", "configmaps").namespace("default")
    cms.create({"metadata": {"name": "one"}})
    with pytest.raises(Forbidden) as caught:
        cms.create({"metadata": {"name": "two"}})
    assert caught.value.message.endswith(
        "exceeded quota: counts, requested: count/configmaps=1, used: count/configmaps=1, "
        "limited: count/configmaps=1"
    )
    # A dry run is checked and not charged.
    with pytest.raises(Forbidden):
        client.resource("v1", "pods").namespace("default").create(_pod("d"), dry_run=True)


def test_quota_on_compute_resources(client: Client) -> None:
    _quota(client, "compute", {"requests.cpu": "1", "limits.memory": "1Gi"})
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod("bare"))
    assert caught.value.message == (
        'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; '
        "requests.cpu for: c"
    )
    sized = {"requests": {"cpu": "600m"}, "limits": {"memory": "512Mi"}}
    _create(client, _pod("a", containers=[{"name": "c", "image": "x", "resources": sized}]))
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod("b", containers=[{"name": "c", "image": "x", "resources": sized}]))
    assert caught.value.message == (
        'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, '
        "used: requests.cpu=600m, limited: requests.cpu=1"
    )
    used = client.resource("v1", "resourcequotas").namespace("default").get("compute")
    assert used["status"]["used"] == {"requests.cpu": "600m", "limits.memory": "512Mi"}


def test_quota_scopes_select_pods(client: Client) -> None:
    _quota(client, "best-effort", {"pods": "1"}, scopes=["BestEffort"])
    _create(client, _pod("a"))
    with pytest.raises(Forbidden):
        _create(client, _pod("b"))
    sized = {"requests": {"cpu": "100m"}}
    _create(client, _pod("c", containers=[{"name": "c", "image": "x", "resources": sized}]))


def test_quota_holds_under_concurrent_creates(client: Client) -> None:
    import threading

    _quota(client, "ten", {"count/configmaps": "10"})
    cms = client.resource("v1", "configmaps").namespace("default")
    outcomes: list[str] = []

    def make(i: int) -> None:
        try:
            cms.create({"metadata": {"name": f"cm-{i}"}})
            outcomes.append("ok")
        except Forbidden:
            outcomes.append("refused")

    threads = [threading.Thread(target=make, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 10 and outcomes.count("refused") == 20
    quota = client.resource("v1", "resourcequotas").namespace("default").get("ten")
    assert quota["status"]["used"] == {"count/configmaps": "10"}
    assert len(cms.list()["items"]) == 10


# -- PodSecurity -------------------------------------------------------------------------------


def _label_namespace(client: Client, labels: dict[str, str]) -> None:
    namespaces = client.resource("v1", "namespaces")
    ns = namespaces.get("default")
    ns["metadata"]["labels"] = {**ns["metadata"].get("labels", {}), **labels}
    namespaces.update(ns)


def test_pod_security_enforce_restricted(client: Client) -> None:
    _label_namespace(client, {"pod-security.kubernetes.io/enforce": "restricted"})
    with pytest.raises(Forbidden) as caught:
        _create(client, _pod())
    assert caught.value.message == (
        'pods "p" is forbidden: violates PodSecurity "restricted:latest": '
        'allowPrivilegeEscalation != false (container "c" must set '
        "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
        '(container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != '
        'true (pod or container "c" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to '
        '"RuntimeDefault" or "Localhost")'
    )
    secure = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    pod = _pod(
        securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        containers=[{"name": "c", "image": "x", "securityContext": secure}],
    )
    # The service account's projected volume is an allowed type.
    assert _create(client, pod)["spec"]["volumes"][0]["projected"]


def test_pod_security_baseline_and_warnings(client: Client) -> None:
    _label_namespace(
        client,
        {
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": "v1.36",
        },
    )
    pod = _pod(
        "bad",
        hostNetwork=True,
        containers=[
            {"name": "c", "image": "x", "securityContext": {"privileged": True}},
        ],
        volumes=[{"name": "host", "hostPath": {"path": "/"}}],
    )
    with pytest.raises(Forbidden) as caught:
        _create(client, pod)
    assert caught.value.message == (
        'pods "bad" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
        '(hostNetwork=true), hostPath volumes (volume "host"), privileged (container "c" must '
        "not set securityContext.privileged=true)"
    )


def test_pod_security_warns_without_refusing(tmp_path: Path) -> None:
    warnings: list[str] = []
    url = f"lmdb://{tmp_path / 's'}?durable=false"
    with open(url, on_warning=warnings.append) as c:
        c.resource("v1", "namespaces").create(
            {
                "metadata": {
                    "name": "team",
                    "labels": {"pod-security.kubernetes.io/warn": "baseline"},
                }
            }
        )
        _default_account(c, "team")
        pod = _pod(hostPID=True)
        c.resource("v1", "pods").namespace("team").create(pod)
        deployment = {
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod["spec"]},
            },
        }
        c.resource("apps/v1", "deployments").namespace("team").create(deployment)
    expected = 'would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)'
    assert warnings == [expected, expected]
