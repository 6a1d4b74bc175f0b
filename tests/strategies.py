"""Hypothesis strategies for realistic objects of every built-in kind, in a given version.

``object_of(group, kind, version)`` is the entry point: a full object (``apiVersion``, ``kind``,
``metadata``, spec/status or the kind's own fields) in that version's shape, the way clients and
Kubernetes itself write them. Values stay plausible (DNS names, label keys, RFC 3339 times,
quantities) but are not forced to pass validation: round trips must hold for anything a client
can send. Collections stay small to keep examples cheap on a 2-core CI machine.

Deployments get the cases that make their conversion hard: ``spec.rollbackTo`` (only where the
version has it), and annotations under ``deprecated.deployment.rollback.to`` whose text is
Kubernetes' canonical revision, a non-canonical number, free text or a JSON envelope.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from kstore.api.gvk import GroupVersion

__all__ = ["StrategyFor", "has_strategy", "object_meta", "object_of", "pod_template_spec"]

Obj = dict[str, Any]
StrategyFor = Callable[[str], st.SearchStrategy[Obj]]

ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"

# ------------------------------------------------------------------------------- primitives

_LOWER_ALNUM = string.ascii_lowercase + string.digits
_ALNUM = string.ascii_letters + string.digits


@st.composite
def dns_label(draw: st.DrawFn, max_size: int = 12) -> str:
    first = draw(st.sampled_from(_LOWER_ALNUM))
    middle = draw(st.text(alphabet=_LOWER_ALNUM + "-", max_size=max_size))
    last = draw(st.sampled_from(_LOWER_ALNUM))
    return (first + middle + last) if draw(st.booleans()) else first


def dns_subdomain() -> st.SearchStrategy[str]:
    return st.lists(dns_label(), min_size=1, max_size=3).map(".".join)


@st.composite
def qualified_name(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(_ALNUM)) + draw(st.text(alphabet=_ALNUM + "-_.", max_size=10))
    if len(name) > 1:
        name += draw(st.sampled_from(_ALNUM))
    if draw(st.booleans()):
        name = draw(st.sampled_from(["app.kubernetes.io", "example.com", "k8s.io"])) + "/" + name
    return name


def label_value() -> st.SearchStrategy[str]:
    return st.one_of(st.just(""), qualified_name().filter(lambda s: "/" not in s))


def labels() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(qualified_name(), label_value(), max_size=3)


def annotations() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(qualified_name(), st.text(max_size=20), max_size=3)


def timestamp() -> st.SearchStrategy[str]:
    return st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2099, 12, 31),
    ).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))


def micro_timestamp() -> st.SearchStrategy[str]:
    return st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2099, 12, 31),
    ).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


def uid() -> st.SearchStrategy[str]:
    return st.uuids().map(str)


def resource_version() -> st.SearchStrategy[str]:
    return st.integers(1, 10**12).map(str)


def int32(lo: int = -(2**31), hi: int = 2**31 - 1) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


def small_nonneg() -> st.SearchStrategy[int]:
    return st.integers(0, 1000)


def quantity() -> st.SearchStrategy[str]:
    return st.sampled_from(["100m", "250m", "1", "2", "0.5", "64Mi", "1Gi", "512M", "1e3"])


def int_or_string() -> st.SearchStrategy[int | str]:
    return st.one_of(st.integers(0, 100), st.integers(0, 100).map(lambda n: f"{n}%"))


def _fields(
    required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries(required, optional=optional)


# ------------------------------------------------------------------------------- metadata


def owner_reference() -> st.SearchStrategy[Obj]:
    return _fields(
        {
            "apiVersion": st.sampled_from(["apps/v1", "v1"]),
            "kind": st.sampled_from(["ReplicaSet", "Deployment"]),
            "name": dns_subdomain(),
            "uid": uid(),
        },
        {"controller": st.booleans(), "blockOwnerDeletion": st.booleans()},
    )


def managed_fields_entry() -> st.SearchStrategy[Obj]:
    return _fields(
        {
            "manager": st.sampled_from(["kubectl-client-side-apply", "kube-controller-manager"]),
            "operation": st.sampled_from(["Update", "Apply"]),
            "apiVersion": st.sampled_from(["apps/v1", "v1"]),
            "time": timestamp(),
            "fieldsType": st.just("FieldsV1"),
            "fieldsV1": st.just({"f:metadata": {"f:labels": {".": {}}}}),
        },
        {"subresource": st.just("status")},
    )


def object_meta(
    namespaced: bool, annotation_values: st.SearchStrategy[dict[str, str]] | None = None
) -> st.SearchStrategy[Obj]:
    required: dict[str, st.SearchStrategy[Any]] = {"name": dns_subdomain()}
    if namespaced:
        required["namespace"] = dns_label()
    return _fields(
        required,
        {
            "generateName": dns_label().map(lambda s: s + "-"),
            "uid": uid(),
            "resourceVersion": resource_version(),
            "generation": st.integers(1, 100),
            "creationTimestamp": timestamp(),
            "deletionTimestamp": timestamp(),
            "deletionGracePeriodSeconds": st.integers(0, 60),
            "labels": labels(),
            "annotations": annotation_values if annotation_values is not None else annotations(),
            "ownerReferences": st.lists(owner_reference(), max_size=1),
            "finalizers": st.lists(
                st.sampled_from(["kubernetes", "example.com/cleanup"]), max_size=2
            ),
            "managedFields": st.lists(managed_fields_entry(), max_size=1),
        },
    )


def list_meta() -> st.SearchStrategy[Obj]:
    return _fields(
        {},
        {
            "resourceVersion": resource_version(),
            "continue": st.text(alphabet=_ALNUM, max_size=12),
            "remainingItemCount": st.integers(0, 100),
        },
    )


def label_selector() -> st.SearchStrategy[Obj]:
    requirement = st.one_of(
        st.fixed_dictionaries(
            {
                "key": qualified_name(),
                "operator": st.sampled_from(["In", "NotIn"]),
                "values": st.lists(label_value(), min_size=1, max_size=2),
            }
        ),
        st.fixed_dictionaries(
            {"key": qualified_name(), "operator": st.sampled_from(["Exists", "DoesNotExist"])}
        ),
    )
    return _fields(
        {},
        {"matchLabels": labels(), "matchExpressions": st.lists(requirement, max_size=2)},
    )


# ------------------------------------------------------------------------------- pods


def container() -> st.SearchStrategy[Obj]:
    port = _fields(
        {"containerPort": st.integers(1, 65535)},
        {
            "name": dns_label(max_size=8),
            "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
            "hostPort": st.integers(1, 65535),
        },
    )
    env = st.one_of(
        st.fixed_dictionaries({"name": qualified_name(), "value": st.text(max_size=10)}),
        st.fixed_dictionaries(
            {
                "name": qualified_name(),
                "valueFrom": st.just(
                    {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}
                ),
            }
        ),
    )
    resources = _fields(
        {},
        {
            "limits": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantity(), max_size=2),
            "requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantity(), max_size=2),
        },
    )
    probe = _fields(
        {"httpGet": st.fixed_dictionaries({"path": st.just("/healthz"), "port": int_or_string()})},
        {"initialDelaySeconds": small_nonneg(), "periodSeconds": st.integers(1, 60)},
    )
    return _fields(
        {
            "name": dns_label(),
            "image": st.sampled_from(["nginx", "nginx:1.27", "busybox@sha256:abc"]),
        },
        {
            "command": st.lists(st.text(max_size=8), max_size=2),
            "args": st.lists(st.text(max_size=8), max_size=2),
            "workingDir": st.just("/work"),
            "ports": st.lists(port, max_size=2),
            "env": st.lists(env, max_size=2),
            "resources": resources,
            "volumeMounts": st.lists(
                _fields(
                    {"name": dns_label(), "mountPath": st.just("/data")},
                    {"readOnly": st.booleans()},
                ),
                max_size=1,
            ),
            "livenessProbe": probe,
            "terminationMessagePath": st.just("/dev/termination-log"),
            "terminationMessagePolicy": st.sampled_from(["File", "FallbackToLogsOnError"]),
            "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
            "securityContext": _fields(
                {}, {"runAsNonRoot": st.booleans(), "runAsUser": st.integers(0, 65535)}
            ),
        },
    )


def volume() -> st.SearchStrategy[Obj]:
    source = st.one_of(
        st.just({"emptyDir": {}}),
        dns_label().map(lambda n: {"configMap": {"name": n}}),
        dns_label().map(lambda n: {"secret": {"secretName": n, "defaultMode": 420}}),
    )
    return st.tuples(dns_label(), source).map(lambda t: {"name": t[0], **t[1]})


def pod_spec() -> st.SearchStrategy[Obj]:
    return _fields(
        {"containers": st.lists(container(), min_size=1, max_size=2)},
        {
            "initContainers": st.lists(container(), max_size=1),
            "volumes": st.lists(volume(), max_size=2),
            "restartPolicy": st.sampled_from(["Always", "OnFailure", "Never"]),
            "terminationGracePeriodSeconds": st.integers(0, 300),
            "activeDeadlineSeconds": st.integers(1, 1000),
            "dnsPolicy": st.sampled_from(["ClusterFirst", "Default", "None"]),
            "nodeSelector": labels(),
            "serviceAccountName": dns_label(),
            "nodeName": dns_subdomain(),
            "hostNetwork": st.booleans(),
            "schedulerName": st.just("default-scheduler"),
            "priority": int32(),
            "securityContext": _fields({}, {"fsGroup": st.integers(0, 65535)}),
            "imagePullSecrets": st.lists(st.fixed_dictionaries({"name": dns_label()}), max_size=1),
            "tolerations": st.lists(
                _fields(
                    {"key": qualified_name(), "operator": st.sampled_from(["Exists", "Equal"])},
                    {
                        "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
                        "value": label_value(),
                    },
                ),
                max_size=1,
            ),
        },
    )


def pod_template_spec() -> st.SearchStrategy[Obj]:
    template_meta = _fields(
        {}, {"labels": labels(), "annotations": annotations(), "name": dns_label()}
    )
    return _fields({"spec": pod_spec()}, {"metadata": template_meta})


def pod_status() -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.sampled_from(["Ready", "PodScheduled"]),
            "status": st.sampled_from(["True", "False"]),
        },
        {"lastTransitionTime": timestamp(), "reason": st.just("Started")},
    )
    return _fields(
        {},
        {
            "phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
            "conditions": st.lists(condition, max_size=2),
            "hostIP": st.just("10.0.0.1"),
            "podIP": st.just("10.244.0.5"),
            "podIPs": st.just([{"ip": "10.244.0.5"}]),
            "startTime": timestamp(),
            "qosClass": st.sampled_from(["BestEffort", "Burstable", "Guaranteed"]),
        },
    )


# ------------------------------------------------------------------------------- objects


def _object(
    group: str, kind: str, version: str, body: st.SearchStrategy[Obj]
) -> st.SearchStrategy[Obj]:
    api_version = GroupVersion(group, version).api_version
    return body.map(lambda b: {"apiVersion": api_version, "kind": kind, **b})


def _namespace(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {"metadata": object_meta(namespaced=False)},
        {
            "spec": st.just({"finalizers": ["kubernetes"]}),
            "status": _fields({}, {"phase": st.sampled_from(["Active", "Terminating"])}),
        },
    )


def _config_map(version: str) -> st.SearchStrategy[Obj]:
    keys = st.text(alphabet=_ALNUM + "-_.", min_size=1, max_size=10)
    return _fields(
        {"metadata": object_meta(namespaced=True)},
        {
            "data": st.dictionaries(keys, st.text(max_size=30), max_size=3),
            "binaryData": st.dictionaries(keys, st.sampled_from(["AAEC", "aGVsbG8="]), max_size=1),
            "immutable": st.booleans(),
        },
    )


def _secret(version: str) -> st.SearchStrategy[Obj]:
    keys = st.text(alphabet=_ALNUM + "-_.", min_size=1, max_size=10)
    return _fields(
        {"metadata": object_meta(namespaced=True)},
        {
            "data": st.dictionaries(
                keys, st.sampled_from(["cGFzcw==", "dXNlcg==", ""]), max_size=3
            ),
            "type": st.sampled_from(
                ["Opaque", "kubernetes.io/tls", "kubernetes.io/dockerconfigjson"]
            ),
            "immutable": st.booleans(),
        },
    )


def _event(version: str) -> st.SearchStrategy[Obj]:
    involved = _fields(
        {"kind": st.sampled_from(["Pod", "Deployment"]), "name": dns_subdomain()},
        {
            "namespace": dns_label(),
            "uid": uid(),
            "apiVersion": st.sampled_from(["v1", "apps/v1"]),
            "resourceVersion": resource_version(),
            "fieldPath": st.just("spec.containers{app}"),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "involvedObject": involved},
        {
            "reason": st.sampled_from(["Scheduled", "Pulled", "BackOff"]),
            "message": st.text(max_size=30),
            "source": _fields({}, {"component": st.just("kubelet"), "host": dns_label()}),
            "firstTimestamp": timestamp(),
            "lastTimestamp": timestamp(),
            "count": st.integers(1, 100),
            "type": st.sampled_from(["Normal", "Warning"]),
            "eventTime": micro_timestamp(),
            "reportingComponent": st.just("kubelet"),
            "reportingInstance": dns_label(),
            "action": st.sampled_from(["Binding", "Pulling"]),
        },
    )


def persistent_volume_claim_spec() -> st.SearchStrategy[Obj]:
    source = _fields(
        {"kind": st.sampled_from(["PersistentVolumeClaim", "VolumeSnapshot"]), "name": dns_label()},
        {"apiGroup": st.sampled_from(["", "snapshot.storage.k8s.io"])},
    )
    source_ref = _fields(
        {"kind": st.sampled_from(["PersistentVolumeClaim", "Populator"]), "name": dns_label()},
        {"apiGroup": st.sampled_from(["", "example.com"]), "namespace": dns_label()},
    )
    storage = st.dictionaries(st.just("storage"), quantity(), max_size=1)
    return _fields(
        {},
        {
            "accessModes": st.lists(
                st.sampled_from(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteOncePod"]),
                max_size=2,
            ),
            "selector": label_selector(),
            "resources": _fields({}, {"requests": storage, "limits": storage}),
            "volumeName": dns_subdomain(),
            "storageClassName": st.one_of(st.just(""), dns_subdomain()),
            "volumeMode": st.sampled_from(["Filesystem", "Block"]),
            "dataSource": source,
            "dataSourceRef": source_ref,
            "volumeAttributesClassName": dns_subdomain(),
        },
    )


def persistent_volume_claim_status() -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.sampled_from(["Resizing", "FileSystemResizePending"]),
            "status": st.sampled_from(["True", "False"]),
        },
        {
            "lastProbeTime": timestamp(),
            "lastTransitionTime": timestamp(),
            "reason": st.just("Resizing"),
            "message": st.text(max_size=20),
        },
    )
    health = _fields(
        {"status": st.just("Abnormal"), "reason": st.just("VolumeNotFound")},
        {"message": st.text(max_size=20)},
    )
    storage = st.dictionaries(st.just("storage"), quantity(), max_size=1)
    return _fields(
        {},
        {
            "phase": st.sampled_from(["Pending", "Bound", "Lost"]),
            "accessModes": st.lists(st.just("ReadWriteOnce"), max_size=1),
            "capacity": storage,
            "conditions": st.lists(condition, max_size=2),
            "allocatedResources": storage,
            "allocatedResourceStatuses": st.dictionaries(
                st.just("storage"), st.just("ControllerResizeInProgress"), max_size=1
            ),
            "currentVolumeAttributesClassName": dns_subdomain(),
            "modifyVolumeStatus": _fields(
                {"status": st.sampled_from(["Pending", "InProgress", "Infeasible"])},
                {"targetVolumeAttributesClassName": dns_subdomain()},
            ),
            "healthStatus": _fields(
                {},
                {
                    "healthConditions": st.lists(health, max_size=1),
                    "lastTransitionTime": timestamp(),
                },
            ),
        },
    )


def _persistent_volume_claim(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {"metadata": object_meta(namespaced=True)},
        {"spec": persistent_volume_claim_spec(), "status": persistent_volume_claim_status()},
    )


def _pod_template(version: str) -> st.SearchStrategy[Obj]:
    return _fields({"metadata": object_meta(namespaced=True)}, {"template": pod_template_spec()})


def _replication_controller(version: str) -> st.SearchStrategy[Obj]:
    condition = _fields(
        {"type": st.just("ReplicaFailure"), "status": st.sampled_from(["True", "False"])},
        {
            "lastTransitionTime": timestamp(),
            "reason": st.just("FailedCreate"),
            "message": st.text(max_size=20),
        },
    )
    status = _fields(
        {"replicas": small_nonneg()},
        {
            "fullyLabeledReplicas": small_nonneg(),
            "readyReplicas": small_nonneg(),
            "availableReplicas": small_nonneg(),
            "observedGeneration": st.integers(0, 100),
            "conditions": st.lists(condition, max_size=2),
        },
    )
    spec = _fields(
        {},
        {
            "replicas": small_nonneg(),
            "minReadySeconds": small_nonneg(),
            "selector": labels(),
            "template": pod_template_spec(),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True), "spec": spec}, {"status": status})


def _endpoints(version: str) -> st.SearchStrategy[Obj]:
    address = _fields(
        {"ip": st.sampled_from(["10.0.0.1", "192.168.1.20", "2001:db8::7"])},
        {
            "hostname": dns_label(),
            "nodeName": dns_subdomain(),
            "targetRef": _fields(
                {"kind": st.just("Pod"), "name": dns_subdomain()},
                {"namespace": dns_label(), "uid": uid(), "resourceVersion": resource_version()},
            ),
        },
    )
    port = _fields(
        {"port": st.integers(1, 65535), "protocol": st.sampled_from(["TCP", "UDP", "SCTP"])},
        {"name": dns_label(), "appProtocol": st.sampled_from(["http", "kubernetes.io/h2c"])},
    )
    subset = _fields(
        {},
        {
            "addresses": st.lists(address, max_size=2),
            "notReadyAddresses": st.lists(address, max_size=2),
            "ports": st.lists(port, max_size=2),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True)}, {"subsets": st.lists(subset, max_size=2)}
    )


def _resource_list(names: list[str]) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.sampled_from(names), quantity(), max_size=3)


def _limit_range(version: str) -> st.SearchStrategy[Obj]:
    names = ["cpu", "memory", "storage", "example.com/gpu"]
    item = _fields(
        {"type": st.sampled_from(["Pod", "Container", "PersistentVolumeClaim", "example.com/x"])},
        {
            field: _resource_list(names)
            for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "spec": _fields({"limits": st.lists(item)}, {})},
        {},
    )


def _resource_quota(version: str) -> st.SearchStrategy[Obj]:
    names = ["pods", "requests.cpu", "limits.memory", "services", "count/deployments.apps"]
    expression = _fields(
        {
            "scopeName": st.sampled_from(["PriorityClass", "BestEffort", "Terminating"]),
            "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
        },
        {"values": st.lists(dns_label(), max_size=2)},
    )
    spec = _fields(
        {},
        {
            "hard": _resource_list(names),
            "scopes": st.lists(st.sampled_from(["BestEffort", "NotTerminating"]), max_size=2),
            "scopeSelector": _fields({}, {"matchExpressions": st.lists(expression, max_size=2)}),
        },
    )
    status = _fields({}, {"hard": _resource_list(names), "used": _resource_list(names)})
    return _fields({"metadata": object_meta(namespaced=True)}, {"spec": spec, "status": status})


def _node(version: str) -> st.SearchStrategy[Obj]:
    taint = _fields(
        {"key": qualified_name(), "effect": st.sampled_from(["NoSchedule", "NoExecute"])},
        {"value": label_value(), "timeAdded": timestamp()},
    )
    spec = _fields(
        {},
        {
            "podCIDR": st.just("10.244.1.0/24"),
            "podCIDRs": st.just(["10.244.1.0/24", "fd00:10:244:1::/64"]),
            "providerID": st.just("kind://docker/kind/worker"),
            "unschedulable": st.booleans(),
            "taints": st.lists(taint, max_size=2),
        },
    )
    condition = _fields(
        {"type": st.sampled_from(["Ready", "MemoryPressure"]), "status": st.just("True")},
        {
            "lastHeartbeatTime": timestamp(),
            "lastTransitionTime": timestamp(),
            "reason": st.just("KubeletReady"),
            "message": st.text(max_size=20),
        },
    )
    address = _fields(
        {"type": st.sampled_from(["InternalIP", "Hostname"]), "address": dns_label()}, {}
    )
    info = _fields(
        {
            key: st.text(max_size=8)
            for key in (
                "machineID",
                "systemUUID",
                "bootID",
                "kernelVersion",
                "osImage",
                "containerRuntimeVersion",
                "kubeletVersion",
                "kubeProxyVersion",
                "operatingSystem",
                "architecture",
            )
        },
        {"swap": _fields({}, {"capacity": st.integers(0, 2**40)})},
    )
    status = _fields(
        {},
        {
            "capacity": st.dictionaries(st.sampled_from(["cpu", "memory", "pods"]), quantity()),
            "allocatable": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantity()),
            "phase": st.just("Running"),
            "conditions": st.lists(condition, max_size=2),
            "addresses": st.lists(address, max_size=2),
            "daemonEndpoints": st.just({"kubeletEndpoint": {"Port": 10250}}),
            "nodeInfo": info,
            "images": st.lists(
                _fields(
                    {"names": st.lists(st.just("nginx:1.27"), max_size=1)},
                    {"sizeBytes": st.integers(0, 10**9)},
                ),
                max_size=2,
            ),
            "volumesInUse": st.lists(st.just("kubernetes.io/csi/x"), max_size=1),
            "volumesAttached": st.lists(
                _fields({"name": st.just("kubernetes.io/csi/x"), "devicePath": st.just("")}, {}),
                max_size=1,
            ),
            "runtimeHandlers": st.lists(
                _fields(
                    {"name": st.just("runc")},
                    {"features": _fields({}, {"recursiveReadOnlyMounts": st.booleans()})},
                ),
                max_size=1,
            ),
            "features": _fields({}, {"supplementalGroupsPolicy": st.booleans()}),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec, "status": status})


def _pod(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {"metadata": object_meta(namespaced=True), "spec": pod_spec()},
        {"status": pod_status()},
    )


def _service(version: str) -> st.SearchStrategy[Obj]:
    port = _fields(
        {"port": st.integers(1, 65535)},
        {
            "name": dns_label(max_size=8),
            "protocol": st.sampled_from(["TCP", "UDP"]),
            "targetPort": int_or_string(),
            "nodePort": st.integers(30000, 32767),
        },
    )
    spec = _fields(
        {},
        {
            "ports": st.lists(port, max_size=2),
            "selector": labels(),
            "clusterIP": st.sampled_from(["10.96.0.10", "None"]),
            "clusterIPs": st.just(["10.96.0.10"]),
            "type": st.sampled_from(["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]),
            "sessionAffinity": st.sampled_from(["None", "ClientIP"]),
            "ipFamilies": st.just(["IPv4"]),
            "ipFamilyPolicy": st.sampled_from(["SingleStack", "PreferDualStack"]),
            "externalName": dns_subdomain(),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "spec": spec},
        {"status": st.just({"loadBalancer": {}})},
    )


def rollback_annotation_text() -> st.SearchStrategy[str]:
    """Texts a ``deprecated.deployment.rollback.to`` annotation may hold."""
    return st.one_of(
        st.integers(-(2**63), 2**63 - 1).map(str),
        st.sampled_from(["0", "+5", "007", "-0", "", "abc", "9223372036854775808"]),
        st.sampled_from(
            [
                "{}",
                '{"rollbackTo":{}}',
                '{"rollbackTo":{"revision":0}}',
                '{"annotation":"5"}',
                '{"annotation":"5","rollbackTo":{"revision":7}}',
                '{"rollbackTo":{"revision":3}, "annotation":"x"}',
            ]
        ),
        st.text(max_size=6),
    )


def _deployment_annotations() -> st.SearchStrategy[dict[str, str]]:
    colliding = st.tuples(annotations(), rollback_annotation_text()).map(
        lambda t: {**t[0], ROLLBACK_TO_ANNOTATION: t[1]}
    )
    return st.one_of(annotations(), colliding, st.just({}))


def rollback_config() -> st.SearchStrategy[Obj]:
    return st.one_of(
        st.just({}),
        st.just({"revision": 0}),
        st.integers(-(2**63), 2**63 - 1).map(lambda n: {"revision": n}),
    )


def deployment_status() -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.sampled_from(["Available", "Progressing", "ReplicaFailure"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
        },
        {
            "lastUpdateTime": timestamp(),
            "lastTransitionTime": timestamp(),
            "reason": st.just("NewReplicaSetAvailable"),
            "message": st.text(max_size=20),
        },
    )
    return _fields(
        {},
        {
            "observedGeneration": st.integers(0, 100),
            "replicas": small_nonneg(),
            "updatedReplicas": small_nonneg(),
            "readyReplicas": small_nonneg(),
            "availableReplicas": small_nonneg(),
            "unavailableReplicas": small_nonneg(),
            "terminatingReplicas": small_nonneg(),
            "conditions": st.lists(condition, max_size=2),
            "collisionCount": small_nonneg(),
        },
    )


TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def template_generation_text() -> st.SearchStrategy[str]:
    """Texts a ``deprecated.daemonset.template.generation`` annotation may hold: Kubernetes'
    canonical number, others it would parse or reject, JSON envelopes and look-alikes."""
    return st.one_of(
        st.integers(-(2**63), 2**63 - 1).map(str),
        st.sampled_from(["0", "+5", "007", "-0", "", "abc", "9223372036854775808"]),
        st.sampled_from(
            [
                "{}",
                '{"templateGeneration":3}',
                '{"annotation":"5"}',
                '{"annotation":"5","templateGeneration":7}',
                '{"templateGeneration":"3"}',
            ]
        ),
        st.text(max_size=6),
    )


def _daemon_set(version: str) -> st.SearchStrategy[Obj]:
    """DaemonSets whose annotations may hold the template generation, in any text."""
    colliding = st.tuples(annotations(), template_generation_text()).map(
        lambda t: {**t[0], TEMPLATE_GENERATION_ANNOTATION: t[1]}
    )
    strategy = st.one_of(
        st.just({"type": "OnDelete"}),
        _fields(
            {"type": st.just("RollingUpdate")},
            {
                "rollingUpdate": _fields(
                    {}, {"maxUnavailable": int_or_string(), "maxSurge": int_or_string()}
                )
            },
        ),
    )
    condition = _fields(
        {"type": st.just("Healthy"), "status": st.sampled_from(["True", "False", "Unknown"])},
        {"lastTransitionTime": timestamp(), "reason": dns_label(), "message": st.text(max_size=20)},
    )
    status = _fields(
        {
            "currentNumberScheduled": small_nonneg(),
            "numberMisscheduled": small_nonneg(),
            "desiredNumberScheduled": small_nonneg(),
            "numberReady": small_nonneg(),
        },
        {
            "observedGeneration": st.integers(0, 100),
            "updatedNumberScheduled": small_nonneg(),
            "numberAvailable": small_nonneg(),
            "numberUnavailable": small_nonneg(),
            "collisionCount": small_nonneg(),
            "conditions": st.lists(condition, max_size=2),
        },
    )
    spec = _fields(
        {"selector": label_selector(), "template": pod_template_spec()},
        {
            "updateStrategy": strategy,
            "minReadySeconds": small_nonneg(),
            "revisionHistoryLimit": small_nonneg(),
        },
    )
    meta = object_meta(
        namespaced=True, annotation_values=st.one_of(annotations(), colliding, st.just({}))
    )
    return _fields({"metadata": meta, "spec": spec}, {"status": status})


def _deployment(version: str) -> st.SearchStrategy[Obj]:
    strategy = st.one_of(
        st.just({"type": "Recreate"}),
        _fields(
            {"type": st.just("RollingUpdate")},
            {
                "rollingUpdate": _fields(
                    {}, {"maxUnavailable": int_or_string(), "maxSurge": int_or_string()}
                )
            },
        ),
    )
    optional: dict[str, st.SearchStrategy[Any]] = {
        "replicas": small_nonneg(),
        "strategy": strategy,
        "minReadySeconds": small_nonneg(),
        "revisionHistoryLimit": small_nonneg(),
        "paused": st.booleans(),
        "progressDeadlineSeconds": st.integers(1, 1000),
    }
    required: dict[str, st.SearchStrategy[Any]] = {"template": pod_template_spec()}
    if version == "v1beta1":
        optional["selector"] = label_selector()
        optional["rollbackTo"] = rollback_config()
    else:
        required["selector"] = label_selector()
    return _fields(
        {
            "metadata": object_meta(namespaced=True, annotation_values=_deployment_annotations()),
            "spec": _fields(required, optional),
        },
        {"status": deployment_status()},
    )


def _lease(version: str) -> st.SearchStrategy[Obj]:
    spec = _fields(
        {},
        {
            "holderIdentity": dns_subdomain(),
            "leaseDurationSeconds": int32(),
            "acquireTime": micro_timestamp(),
            "renewTime": micro_timestamp(),
            "leaseTransitions": int32(),
            "strategy": st.sampled_from(["OldestEmulationVersion", "example.com/custom"]),
            "preferredHolder": dns_subdomain(),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True)}, {"spec": spec})


def stateful_set_status() -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.sampled_from(["Available", "Progressing"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
        },
        {
            "lastTransitionTime": timestamp(),
            "reason": st.just("Ready"),
            "message": st.text(max_size=20),
        },
    )
    return _fields(
        {"replicas": small_nonneg()},
        {
            "observedGeneration": st.integers(0, 100),
            "readyReplicas": small_nonneg(),
            "currentReplicas": small_nonneg(),
            "updatedReplicas": small_nonneg(),
            "currentRevision": dns_label(),
            "updateRevision": dns_label(),
            "collisionCount": small_nonneg(),
            "conditions": st.lists(condition, max_size=2),
            "availableReplicas": small_nonneg(),
        },
    )


def _stateful_set(version: str) -> st.SearchStrategy[Obj]:
    claim = _fields(
        {"metadata": _fields({"name": dns_label()}, {"labels": labels()})},
        {"spec": persistent_volume_claim_spec(), "status": persistent_volume_claim_status()},
    )
    update_strategy = st.one_of(
        st.just({"type": "OnDelete"}),
        _fields(
            {"type": st.just("RollingUpdate")},
            {
                "rollingUpdate": _fields(
                    {}, {"partition": small_nonneg(), "maxUnavailable": int_or_string()}
                )
            },
        ),
    )
    retention = st.sampled_from(["Retain", "Delete"])
    spec = _fields(
        {"selector": label_selector(), "template": pod_template_spec()},
        {
            "replicas": small_nonneg(),
            "volumeClaimTemplates": st.lists(claim, max_size=2),
            "serviceName": st.one_of(st.just(""), dns_label()),
            "podManagementPolicy": st.sampled_from(["OrderedReady", "Parallel"]),
            "updateStrategy": update_strategy,
            "revisionHistoryLimit": small_nonneg(),
            "minReadySeconds": small_nonneg(),
            "persistentVolumeClaimRetentionPolicy": _fields(
                {}, {"whenDeleted": retention, "whenScaled": retention}
            ),
            "ordinals": _fields({}, {"start": small_nonneg()}),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "spec": spec},
        {"status": stateful_set_status()},
    )


def _policy_rule() -> st.SearchStrategy[Obj]:
    verbs = st.lists(
        st.sampled_from(["get", "list", "watch", "create", "*"]), min_size=1, max_size=3
    )
    resource_rule = _fields(
        {
            "verbs": verbs,
            "apiGroups": st.lists(st.sampled_from(["", "apps", "*"]), min_size=1, max_size=2),
            "resources": st.lists(
                st.sampled_from(["pods", "pods/status", "configmaps", "*"]), min_size=1, max_size=2
            ),
        },
        {"resourceNames": st.lists(dns_subdomain(), max_size=2)},
    )
    url_rule = _fields(
        {
            "verbs": verbs,
            "nonResourceURLs": st.lists(st.sampled_from(["/healthz", "/api/*"]), min_size=1),
        },
        {},
    )
    return st.one_of(resource_rule, url_rule)


def _rbac_role(namespaced: bool) -> StrategyFor:
    def strategy(version: str) -> st.SearchStrategy[Obj]:
        return _fields(
            {"metadata": object_meta(namespaced=namespaced)},
            {"rules": st.lists(_policy_rule(), max_size=2)},
        )

    return strategy


def _rbac_subject() -> st.SearchStrategy[Obj]:
    return st.one_of(
        _fields(
            {
                "kind": st.sampled_from(["User", "Group"]),
                "apiGroup": st.just("rbac.authorization.k8s.io"),
                "name": dns_subdomain(),
            },
            {},
        ),
        _fields(
            {"kind": st.just("ServiceAccount"), "name": dns_subdomain(), "namespace": dns_label()},
            {},
        ),
    )


def _rbac_binding(namespaced: bool) -> StrategyFor:
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]

    def strategy(version: str) -> st.SearchStrategy[Obj]:
        role_ref = _fields(
            {
                "apiGroup": st.just("rbac.authorization.k8s.io"),
                "kind": st.sampled_from(kinds),
                "name": dns_subdomain(),
            },
            {},
        )
        return _fields(
            {"metadata": object_meta(namespaced=namespaced), "roleRef": role_ref},
            {"subjects": st.lists(_rbac_subject(), max_size=2)},
        )

    return strategy


# ------------------------------------------------------------------------------- meta kinds


def _status(version: str) -> st.SearchStrategy[Obj]:
    cause = _fields(
        {},
        {
            "reason": st.sampled_from(["FieldValueInvalid", "FieldValueRequired"]),
            "message": st.text(max_size=20),
            "field": st.just("metadata.name"),
        },
    )
    details = _fields(
        {},
        {
            "name": dns_subdomain(),
            "group": st.sampled_from(["", "apps"]),
            "kind": st.sampled_from(["pods", "Deployment"]),
            "uid": uid(),
            "causes": st.lists(cause, max_size=2),
            "retryAfterSeconds": st.integers(1, 10),
        },
    )
    return _fields(
        {"metadata": _fields({}, {"resourceVersion": resource_version()})},
        {
            "status": st.sampled_from(["Success", "Failure"]),
            "message": st.text(max_size=30),
            "reason": st.sampled_from(["NotFound", "Invalid", "Conflict"]),
            "details": details,
            "code": st.sampled_from([200, 404, 409, 422]),
        },
    )


def _watch_event(version: str) -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries(
        {
            "type": st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]),
            "object": _object("", "ConfigMap", "v1", _config_map("v1")),
        }
    )


_DRY_RUN = st.lists(st.just("All"), max_size=1)
_FIELD_VALIDATION = st.sampled_from(["Strict", "Warn", "Ignore"])


def _list_options(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {},
        {
            "labelSelector": st.sampled_from(["app=web", "tier in (a,b)", "!canary"]),
            "fieldSelector": st.sampled_from(["metadata.name=x", "spec.nodeName!=n"]),
            "watch": st.booleans(),
            "allowWatchBookmarks": st.booleans(),
            "resourceVersion": resource_version(),
            "resourceVersionMatch": st.sampled_from(["NotOlderThan", "Exact"]),
            "timeoutSeconds": st.integers(1, 3600),
            "limit": st.integers(1, 500),
            "continue": st.text(alphabet=_ALNUM, max_size=10),
            "sendInitialEvents": st.booleans(),
        },
    )


def _get_options(version: str) -> st.SearchStrategy[Obj]:
    return _fields({}, {"resourceVersion": resource_version()})


def _delete_options(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {},
        {
            "gracePeriodSeconds": st.integers(0, 60),
            "preconditions": _fields({}, {"uid": uid(), "resourceVersion": resource_version()}),
            "orphanDependents": st.booleans(),
            "propagationPolicy": st.sampled_from(["Orphan", "Background", "Foreground"]),
            "dryRun": _DRY_RUN,
        },
    )


def _write_options(force: bool) -> StrategyFor:
    def strategy(version: str) -> st.SearchStrategy[Obj]:
        optional: dict[str, st.SearchStrategy[Any]] = {
            "dryRun": _DRY_RUN,
            "fieldManager": st.sampled_from(["kubectl", "helm"]),
            "fieldValidation": _FIELD_VALIDATION,
        }
        if force:
            optional["force"] = st.booleans()
        return _fields({}, optional)

    return strategy


def _group_version_for_discovery() -> st.SearchStrategy[Obj]:
    return st.sampled_from(
        [
            {"groupVersion": "apps/v1", "version": "v1"},
            {"groupVersion": "apps/v1beta1", "version": "v1beta1"},
        ]
    )


def _api_group_body() -> st.SearchStrategy[Obj]:
    return _fields(
        {"name": dns_subdomain(), "versions": st.lists(_group_version_for_discovery(), max_size=2)},
        {
            "preferredVersion": _group_version_for_discovery(),
            "serverAddressByClientCIDRs": st.just(
                [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]
            ),
        },
    )


def _api_group(version: str) -> st.SearchStrategy[Obj]:
    return _api_group_body()


def _api_group_list(version: str) -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries({"groups": st.lists(_api_group_body(), max_size=2)})


def _api_versions(version: str) -> st.SearchStrategy[Obj]:
    return st.fixed_dictionaries(
        {
            "versions": st.just(["v1"]),
            "serverAddressByClientCIDRs": st.just(
                [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]
            ),
        }
    )


def _api_resource_list(version: str) -> st.SearchStrategy[Obj]:
    resource = _fields(
        {
            "name": dns_label(),
            "singularName": dns_label(),
            "namespaced": st.booleans(),
            "kind": st.sampled_from(["Pod", "Deployment"]),
            "verbs": st.just(["create", "get", "list"]),
        },
        {
            "shortNames": st.lists(dns_label(), max_size=1),
            "categories": st.just(["all"]),
            "storageVersionHash": st.text(alphabet=_ALNUM, min_size=11, max_size=11),
        },
    )
    return st.fixed_dictionaries(
        {
            "groupVersion": st.sampled_from(["v1", "apps/v1"]),
            "resources": st.lists(resource, max_size=2),
        }
    )


def _table(version: str) -> st.SearchStrategy[Obj]:
    column = st.fixed_dictionaries(
        {
            "name": st.sampled_from(["Name", "Age"]),
            "type": st.sampled_from(["string", "date"]),
            "format": st.sampled_from(["", "name"]),
            "description": st.text(max_size=10),
            "priority": st.integers(0, 1),
        }
    )
    row = _fields(
        {"cells": st.lists(st.one_of(st.text(max_size=8), st.integers(0, 99)), max_size=2)},
        {
            "object": _partial_object_metadata(version).map(
                lambda b: {"kind": "PartialObjectMetadata", **b}
            )
        },
    )
    return _fields(
        {"columnDefinitions": st.lists(column, max_size=2), "rows": st.lists(row, max_size=2)},
        {"metadata": list_meta()},
    )


def _table_options(version: str) -> st.SearchStrategy[Obj]:
    return _fields({}, {"includeObject": st.sampled_from(["None", "Metadata", "Object"])})


def _partial_object_metadata(version: str) -> st.SearchStrategy[Obj]:
    return _fields({}, {"metadata": object_meta(namespaced=True)})


def _partial_object_metadata_list(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {"items": st.lists(_partial_object_metadata(version), max_size=2)},
        {"metadata": list_meta()},
    )


def _replica_set(version: str) -> st.SearchStrategy[Obj]:
    condition = _fields(
        {"type": st.just("ReplicaFailure"), "status": st.sampled_from(["True", "False"])},
        {
            "lastTransitionTime": timestamp(),
            "reason": st.just("FailedCreate"),
            "message": st.text(max_size=20),
        },
    )
    status = _fields(
        {"replicas": small_nonneg()},
        {
            "fullyLabeledReplicas": small_nonneg(),
            "readyReplicas": small_nonneg(),
            "availableReplicas": small_nonneg(),
            "terminatingReplicas": small_nonneg(),
            "observedGeneration": st.integers(0, 100),
            "conditions": st.lists(condition, max_size=2),
        },
    )
    spec = _fields(
        {"selector": label_selector()},
        {
            "replicas": small_nonneg(),
            "minReadySeconds": small_nonneg(),
            "template": pod_template_spec(),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True), "spec": spec}, {"status": status})


def _service_account(version: str) -> st.SearchStrategy[Obj]:
    named = _fields({"name": dns_subdomain()}, {})
    return _fields(
        {"metadata": object_meta(namespaced=True)},
        {
            "secrets": st.lists(named, max_size=2),
            "imagePullSecrets": st.lists(named, max_size=2),
            "automountServiceAccountToken": st.booleans(),
        },
    )


def _job_spec() -> st.SearchStrategy[Obj]:
    exit_codes = _fields(
        {
            "operator": st.sampled_from(["In", "NotIn"]),
            "values": st.lists(int32(1, 255), max_size=3),
        },
        {"containerName": dns_label()},
    )
    pattern = _fields({"type": qualified_name(), "status": st.sampled_from(["True", "False"])}, {})
    rule = _fields(
        {"action": st.sampled_from(["FailJob", "Ignore", "Count", "FailIndex"])},
        {"onExitCodes": exit_codes, "onPodConditions": st.lists(pattern, max_size=2)},
    )
    success_rule = _fields(
        {}, {"succeededIndexes": st.sampled_from(["0", "1-3,5"]), "succeededCount": int32(1, 9)}
    )
    return _fields(
        {"template": pod_template_spec()},
        {
            "parallelism": small_nonneg(),
            "completions": small_nonneg(),
            "activeDeadlineSeconds": st.integers(0, 2**40),
            "podFailurePolicy": _fields({"rules": st.lists(rule, max_size=2)}, {}),
            "successPolicy": _fields({"rules": st.lists(success_rule, max_size=2)}, {}),
            "backoffLimit": small_nonneg(),
            "backoffLimitPerIndex": small_nonneg(),
            "maxFailedIndexes": small_nonneg(),
            "selector": label_selector(),
            "manualSelector": st.booleans(),
            "ttlSecondsAfterFinished": small_nonneg(),
            "completionMode": st.sampled_from(["NonIndexed", "Indexed"]),
            "suspend": st.booleans(),
            "podReplacementPolicy": st.sampled_from(["Failed", "TerminatingOrFailed"]),
            "managedBy": st.just("example.com/controller"),
        },
    )


def _job(version: str) -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.sampled_from(["Complete", "Failed", "Suspended"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
        },
        {"lastProbeTime": timestamp(), "lastTransitionTime": timestamp(), "reason": st.just("R")},
    )
    uids = st.lists(uid(), max_size=2)
    status = _fields(
        {},
        {
            "conditions": st.lists(condition, max_size=2),
            "startTime": timestamp(),
            "completionTime": timestamp(),
            "active": small_nonneg(),
            "succeeded": small_nonneg(),
            "failed": small_nonneg(),
            "terminating": small_nonneg(),
            "completedIndexes": st.just("1,3-5"),
            "failedIndexes": st.just("2"),
            "uncountedTerminatedPods": _fields({}, {"succeeded": uids, "failed": uids}),
            "ready": small_nonneg(),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "spec": _job_spec()}, {"status": status}
    )


def _cron_job(version: str) -> st.SearchStrategy[Obj]:
    job_template = _fields({}, {"metadata": object_meta(namespaced=True), "spec": _job_spec()})
    reference = _fields({"kind": st.just("Job"), "name": dns_label()}, {"uid": uid()})
    spec = _fields(
        {
            "schedule": st.sampled_from(["*/5 * * * *", "@hourly", "0 3 * * mon-fri"]),
            "jobTemplate": job_template,
        },
        {
            "timeZone": st.sampled_from(["Etc/UTC", "Europe/Paris"]),
            "startingDeadlineSeconds": st.integers(0, 2**40),
            "concurrencyPolicy": st.sampled_from(["Allow", "Forbid", "Replace"]),
            "suspend": st.booleans(),
            "successfulJobsHistoryLimit": small_nonneg(),
            "failedJobsHistoryLimit": small_nonneg(),
        },
    )
    status = _fields(
        {},
        {
            "active": st.lists(reference, max_size=2),
            "lastScheduleTime": timestamp(),
            "lastSuccessfulTime": timestamp(),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True), "spec": spec}, {"status": status})


def _pod_disruption_budget(version: str) -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.just("DisruptionAllowed"),
            "status": st.sampled_from(["True", "False"]),
            "lastTransitionTime": timestamp(),
            "reason": st.sampled_from(["SufficientPods", "InsufficientPods"]),
            "message": st.text(max_size=20),
        },
        {"observedGeneration": st.integers(0, 100)},
    )
    spec = _fields(
        {},
        {
            "minAvailable": int_or_string(),
            "maxUnavailable": int_or_string(),
            "selector": label_selector(),
            "unhealthyPodEvictionPolicy": st.sampled_from(["IfHealthyBudget", "AlwaysAllow"]),
        },
    )
    status = _fields(
        {
            "disruptionsAllowed": small_nonneg(),
            "currentHealthy": small_nonneg(),
            "desiredHealthy": small_nonneg(),
            "expectedPods": small_nonneg(),
        },
        {
            "observedGeneration": st.integers(0, 100),
            "disruptedPods": st.dictionaries(dns_label(), timestamp(), max_size=2),
            "conditions": st.lists(condition, max_size=2),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True), "spec": spec}, {"status": status})


def _controller_revision(version: str) -> st.SearchStrategy[Obj]:
    data = st.fixed_dictionaries(
        {
            "spec": st.fixed_dictionaries(
                {"template": st.fixed_dictionaries({"metadata": object_meta(namespaced=False)})}
            )
        },
        optional={"apiVersion": st.just("apps/v1"), "kind": st.just("StatefulSet")},
    )
    return _fields(
        {"metadata": object_meta(namespaced=True), "revision": st.integers(0, 2**40)},
        {"data": data},
    )


def _hpa_cross_version_reference() -> st.SearchStrategy[Obj]:
    return _fields(
        {"kind": st.sampled_from(["Deployment", "StatefulSet", "Ingress"]), "name": dns_label()},
        {"apiVersion": st.sampled_from(["apps/v1", "networking.k8s.io/v1", "v1"])},
    )


def _hpa_metric_identifier() -> st.SearchStrategy[Obj]:
    return _fields(
        {"name": st.sampled_from(["requests-per-second", "queue_length", "packets"])},
        {"selector": label_selector()},
    )


def _hpa_metric_target() -> st.SearchStrategy[Obj]:
    return _fields(
        {"type": st.sampled_from(["Utilization", "Value", "AverageValue"])},
        {
            "value": quantity(),
            "averageValue": quantity(),
            "averageUtilization": st.integers(1, 200),
        },
    )


def _hpa_metric_value() -> st.SearchStrategy[Obj]:
    return _fields(
        {},
        {
            "value": quantity(),
            "averageValue": quantity(),
            "averageUtilization": st.integers(0, 200),
        },
    )


def _hpa_metric(target: st.SearchStrategy[Obj], key: str) -> st.SearchStrategy[Obj]:
    """A MetricSpec (``key`` "target") or MetricStatus (``key`` "current") of any source type."""
    resource = st.sampled_from(["cpu", "memory"])
    sources: dict[str, st.SearchStrategy[Obj]] = {
        "Object": _fields(
            {
                "describedObject": _hpa_cross_version_reference(),
                key: target,
                "metric": _hpa_metric_identifier(),
            },
            {},
        ),
        "Pods": _fields({"metric": _hpa_metric_identifier(), key: target}, {}),
        "Resource": _fields({"name": resource, key: target}, {}),
        "ContainerResource": _fields({"name": resource, key: target, "container": dns_label()}, {}),
        "External": _fields({"metric": _hpa_metric_identifier(), key: target}, {}),
    }
    field = {
        "Object": "object",
        "Pods": "pods",
        "Resource": "resource",
        "ContainerResource": "containerResource",
        "External": "external",
    }
    return st.one_of(
        *(
            source.map(lambda body, t=t: {"type": t, field[t]: body})
            for t, source in sources.items()
        )
    )


def _hpa_scaling_rules() -> st.SearchStrategy[Obj]:
    policy = st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Pods", "Percent"]),
            "value": st.integers(1, 100),
            "periodSeconds": st.integers(1, 1800),
        }
    )
    return _fields(
        {},
        {
            "stabilizationWindowSeconds": st.integers(0, 3600),
            "selectPolicy": st.sampled_from(["Max", "Min", "Disabled"]),
            "policies": st.lists(policy, min_size=1, max_size=2),
            "tolerance": st.sampled_from(["0", "50m", "0.1"]),
        },
    )


def _hpa_condition() -> st.SearchStrategy[Obj]:
    return _fields(
        {
            "type": st.sampled_from(["AbleToScale", "ScalingActive", "ScalingLimited"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
        },
        {
            "lastTransitionTime": timestamp(),
            "reason": st.sampled_from(["SucceededGetScale", "ValidMetricFound"]),
            "message": st.text(max_size=20),
            "observedGeneration": st.integers(1, 100),
        },
    )


def _horizontal_pod_autoscaler_v2() -> st.SearchStrategy[Obj]:
    spec = _fields(
        {"scaleTargetRef": _hpa_cross_version_reference(), "maxReplicas": st.integers(1, 100)},
        {
            "minReplicas": st.integers(0, 10),
            "metrics": st.lists(_hpa_metric(_hpa_metric_target(), "target"), max_size=3),
            "behavior": _fields(
                {}, {"scaleUp": _hpa_scaling_rules(), "scaleDown": _hpa_scaling_rules()}
            ),
        },
    )
    status = _fields(
        {"desiredReplicas": small_nonneg()},
        {
            "observedGeneration": st.integers(0, 100),
            "lastScaleTime": timestamp(),
            "currentReplicas": st.integers(1, 100),
            "currentMetrics": st.lists(_hpa_metric(_hpa_metric_value(), "current"), max_size=3),
            "conditions": st.lists(_hpa_condition(), max_size=2),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True), "spec": spec}, {"status": status})


def _hpa_v1_of(body: Obj) -> Obj:
    """The autoscaling/v1 form of a defaulted hub autoscaler body (as Kubernetes writes v1,
    the rest in annotations)."""
    from kstore.api.kinds._hpa_conversion import hpa_from_hub
    from kstore.api.kinds.horizontalpodautoscaler import default_hpa_v2

    hub = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", **body}
    default_hpa_v2(hub)
    out = hpa_from_hub(hub)
    del out["apiVersion"], out["kind"]
    return out


def _horizontal_pod_autoscaler(version: str) -> st.SearchStrategy[Obj]:
    if version == "v1":
        return _horizontal_pod_autoscaler_v2().map(_hpa_v1_of)
    return _horizontal_pod_autoscaler_v2()


def _ingress_backend() -> st.SearchStrategy[Obj]:
    port = st.one_of(
        st.fixed_dictionaries({"number": st.integers(1, 65535)}),
        st.fixed_dictionaries({"name": st.sampled_from(["http", "https", "web"])}),
    )
    service = st.fixed_dictionaries({"name": dns_label(), "port": port})
    resource = _fields(
        {"kind": st.sampled_from(["StorageBucket", "Bucket"]), "name": dns_label()},
        {"apiGroup": st.sampled_from(["k8s.example.com", "example.io"])},
    )
    return st.one_of(
        st.fixed_dictionaries({"service": service}), st.fixed_dictionaries({"resource": resource})
    )


def _ingress(version: str) -> st.SearchStrategy[Obj]:
    http_path = _fields(
        {
            "pathType": st.sampled_from(["Exact", "Prefix", "ImplementationSpecific"]),
            "backend": _ingress_backend(),
        },
        {"path": st.sampled_from(["/", "/api", "/v1/users"])},
    )
    rule = _fields(
        {},
        {
            "host": st.one_of(dns_subdomain(), dns_label().map(lambda s: f"*.{s}.example.com")),
            "http": st.fixed_dictionaries({"paths": st.lists(http_path, min_size=1, max_size=2)}),
        },
    )
    tls = _fields({}, {"hosts": st.lists(dns_subdomain(), max_size=2), "secretName": dns_label()})
    spec = _fields(
        {},
        {
            "ingressClassName": dns_label(),
            "defaultBackend": _ingress_backend(),
            "tls": st.lists(tls, max_size=2),
            "rules": st.lists(rule, max_size=2),
        },
    )
    port_status = _fields(
        {"port": st.integers(1, 65535), "protocol": st.sampled_from(["TCP", "UDP", "SCTP"])},
        {"error": st.sampled_from(["Pending", "example.com/Failed"])},
    )
    point = _fields(
        {},
        {
            "ip": st.sampled_from(["10.0.0.1", "2001:db8::1"]),
            "hostname": dns_subdomain(),
            "ports": st.lists(port_status, max_size=2),
        },
    )
    status = _fields({}, {"loadBalancer": _fields({}, {"ingress": st.lists(point, max_size=2)})})
    return _fields({"metadata": object_meta(namespaced=True)}, {"spec": spec, "status": status})


def _ingress_class(version: str) -> st.SearchStrategy[Obj]:
    parameters = _fields(
        {"kind": st.sampled_from(["IngressParameters", "ConfigMap"]), "name": dns_label()},
        {
            "apiGroup": st.sampled_from(["k8s.example.com", "example.io"]),
            "scope": st.just("Cluster"),
        },
    )
    spec = _fields(
        {},
        {
            "controller": st.sampled_from(["example.com/ingress", "k8s.io/ingress-nginx"]),
            "parameters": parameters,
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec})


def _ip_address(version: str) -> st.SearchStrategy[Obj]:
    parent = _fields(
        {"resource": st.just("services"), "name": dns_label()},
        {"group": st.just(""), "namespace": dns_label()},
    )
    return _fields(
        {"metadata": object_meta(namespaced=False)}, {"spec": _fields({}, {"parentRef": parent})}
    )


def _service_cidr(version: str) -> st.SearchStrategy[Obj]:
    condition = _fields(
        {
            "type": st.just("Ready"),
            "status": st.sampled_from(["True", "False"]),
            "lastTransitionTime": timestamp(),
            "reason": st.sampled_from(["", "Terminating"]),
            "message": st.text(max_size=20),
        },
        {"observedGeneration": st.integers(0, 100)},
    )
    spec = _fields(
        {}, {"cidrs": st.sampled_from([["10.0.0.0/24"], ["10.96.0.0/16", "fd00::/108"]])}
    )
    status = _fields({}, {"conditions": st.lists(condition, max_size=2)})
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec, "status": status})


def _topology_term() -> st.SearchStrategy[Obj]:
    requirement = _fields(
        {
            "key": st.sampled_from(["topology.kubernetes.io/zone", "example.com/rack"]),
            "values": st.lists(dns_label(), min_size=1, max_size=2),
        },
        {},
    )
    return _fields({}, {"matchLabelExpressions": st.lists(requirement, max_size=2)})


def _storage_class(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {
            "metadata": object_meta(namespaced=False),
            "provisioner": st.sampled_from(["ebs.csi.aws.com", "kubernetes.io/no-provisioner"]),
        },
        {
            "parameters": st.dictionaries(dns_label(), st.text(max_size=8), max_size=2),
            "reclaimPolicy": st.sampled_from(["Delete", "Retain"]),
            "mountOptions": st.lists(st.sampled_from(["ro", "soft", "nfsvers=4.1"]), max_size=2),
            "allowVolumeExpansion": st.booleans(),
            "volumeBindingMode": st.sampled_from(["Immediate", "WaitForFirstConsumer"]),
            "allowedTopologies": st.lists(_topology_term(), max_size=2),
        },
    )


def _csi_driver(version: str) -> st.SearchStrategy[Obj]:
    token_request = _fields(
        {"audience": st.sampled_from(["", "vault", "sts.example.com"])},
        {"expirationSeconds": st.integers(600, 2**32)},
    )
    spec = _fields(
        {},
        {
            "attachRequired": st.booleans(),
            "podInfoOnMount": st.booleans(),
            "volumeLifecycleModes": st.lists(
                st.sampled_from(["Persistent", "Ephemeral"]), max_size=2, unique=True
            ),
            "storageCapacity": st.booleans(),
            "fsGroupPolicy": st.sampled_from(["ReadWriteOnceWithFSType", "File", "None"]),
            "tokenRequests": st.lists(token_request, max_size=2),
            "requiresRepublish": st.booleans(),
            "seLinuxMount": st.booleans(),
            "nodeAllocatableUpdatePeriodSeconds": st.integers(10, 3600),
            "serviceAccountTokenInSecrets": st.booleans(),
            "preventPodSchedulingIfMissing": st.booleans(),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False), "spec": spec}, {})


def _csi_node(version: str) -> st.SearchStrategy[Obj]:
    driver = _fields(
        {
            "name": st.sampled_from(["ebs.csi.aws.com", "hostpath.csi.k8s.io"]),
            "nodeID": dns_label(),
            "topologyKeys": st.lists(st.just("topology.kubernetes.io/zone"), max_size=1),
        },
        {"allocatable": _fields({}, {"count": small_nonneg()})},
    )
    condition = _fields(
        {
            "status": st.sampled_from(["StorageUnreachable", "StorageDegraded"]),
            "reason": st.sampled_from(["BackendDown", "Degraded"]),
        },
        {
            "message": st.text(max_size=20),
            "accessMode": st.sampled_from(["ReadWriteOnce", "ReadOnlyMany"]),
            "volumeMode": st.sampled_from(["Filesystem", "Block"]),
            "lastTransitionTime": timestamp(),
        },
    )
    health = _fields(
        {"name": st.just("ebs.csi.aws.com")},
        {"healthConditions": st.lists(condition, max_size=2)},
    )
    return _fields(
        {
            "metadata": object_meta(namespaced=False),
            "spec": _fields({"drivers": st.lists(driver, max_size=2)}, {}),
        },
        {"status": _fields({}, {"storageHealth": st.lists(health, max_size=1)})},
    )


def _secret_reference() -> st.SearchStrategy[Obj]:
    return _fields({}, {"name": dns_label(), "namespace": dns_label()})


def _persistent_volume_source() -> st.SearchStrategy[Obj]:
    csi = _fields(
        {"driver": st.just("ebs.csi.aws.com"), "volumeHandle": dns_label()},
        {
            "readOnly": st.booleans(),
            "fsType": st.sampled_from(["ext4", "xfs"]),
            "volumeAttributes": st.dictionaries(dns_label(), dns_label(), max_size=2),
            "nodeStageSecretRef": _secret_reference(),
            "controllerExpandSecretRef": _secret_reference(),
        },
    )
    return st.one_of(
        _fields(
            {"path": st.just("/srv/data")},
            {"type": st.sampled_from(["", "Directory", "DirectoryOrCreate"])},
        ).map(lambda s: {"hostPath": s}),
        _fields(
            {"server": st.just("nfs.example.com"), "path": st.just("/exports")},
            {"readOnly": st.booleans()},
        ).map(lambda s: {"nfs": s}),
        _fields({"path": st.just("/mnt/disks/ssd1")}, {"fsType": st.just("ext4")}).map(
            lambda s: {"local": s}
        ),
        csi.map(lambda s: {"csi": s}),
        _fields(
            {"monitors": st.lists(st.just("10.0.0.1:6789"), max_size=1), "image": dns_label()},
            {"pool": st.just("rbd"), "secretRef": _secret_reference()},
        ).map(lambda s: {"rbd": s}),
    )


def _persistent_volume_spec() -> st.SearchStrategy[Obj]:
    node_selector = _fields(
        {
            "nodeSelectorTerms": st.lists(
                _fields(
                    {},
                    {
                        "matchExpressions": st.lists(
                            _fields(
                                {
                                    "key": st.just("kubernetes.io/hostname"),
                                    "operator": st.sampled_from(["In", "NotIn"]),
                                },
                                {"values": st.lists(dns_label(), max_size=2)},
                            ),
                            max_size=2,
                        )
                    },
                ),
                max_size=2,
            )
        },
        {},
    )
    claim_ref = _fields(
        {},
        {"kind": st.just("PersistentVolumeClaim"), "namespace": dns_label(), "name": dns_label()},
    )
    rest = _fields(
        {},
        {
            "capacity": st.dictionaries(st.just("storage"), quantity(), max_size=1),
            "accessModes": st.lists(
                st.sampled_from(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]), max_size=2
            ),
            "claimRef": claim_ref,
            "persistentVolumeReclaimPolicy": st.sampled_from(["Retain", "Delete", "Recycle"]),
            "storageClassName": dns_subdomain(),
            "mountOptions": st.lists(st.sampled_from(["hard", "nfsvers=4.1"]), max_size=2),
            "volumeMode": st.sampled_from(["Filesystem", "Block"]),
            "nodeAffinity": _fields({}, {"required": node_selector}),
            "volumeAttributesClassName": dns_subdomain(),
        },
    )
    return st.tuples(rest, _persistent_volume_source()).map(lambda p: {**p[0], **p[1]})


def _persistent_volume(version: str) -> st.SearchStrategy[Obj]:
    status = _fields(
        {},
        {
            "phase": st.sampled_from(["Pending", "Available", "Bound", "Released", "Failed"]),
            "message": st.text(max_size=20),
            "reason": st.sampled_from(["Recycled", "VolumeFailedDelete"]),
            "lastPhaseTransitionTime": timestamp(),
        },
    )
    return _fields(
        {"metadata": object_meta(namespaced=False)},
        {"spec": _persistent_volume_spec(), "status": status},
    )


def _volume_attachment(version: str) -> st.SearchStrategy[Obj]:
    source = st.one_of(
        dns_subdomain().map(lambda n: {"persistentVolumeName": n}),
        _persistent_volume_spec().map(lambda s: {"inlineVolumeSpec": s}),
    )
    spec = _fields(
        {
            "attacher": st.just("ebs.csi.aws.com"),
            "source": source,
            "nodeName": dns_subdomain(),
        },
        {},
    )
    error = _fields(
        {},
        {"time": timestamp(), "message": st.text(max_size=20), "errorCode": st.integers(0, 16)},
    )
    status = _fields(
        {"attached": st.booleans()},
        {
            "attachmentMetadata": st.dictionaries(dns_label(), dns_label(), max_size=2),
            "attachError": error,
            "detachError": error,
        },
    )
    return _fields({"metadata": object_meta(namespaced=False), "spec": spec}, {"status": status})


def _json_schema() -> st.SearchStrategy[Obj]:
    """JSONSchemaProps as a CRD holds them: typed leaves, nested properties and items, the
    x-kubernetes-* extensions and raw-JSON default/enum values."""
    leaf = _fields(
        {"type": st.sampled_from(["string", "integer", "boolean", "number"])},
        {
            "description": st.text(max_size=10),
            "format": st.sampled_from(["int32", "date-time"]),
            "default": st.one_of(st.integers(0, 9), st.text(max_size=4), st.booleans()),
            "enum": st.lists(st.text(max_size=4), max_size=2),
            "maximum": st.integers(0, 100),
            "x-kubernetes-int-or-string": st.just(True),
        },
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            _fields(
                {"type": st.just("object")},
                {
                    "properties": st.dictionaries(dns_label(), inner, max_size=2),
                    "required": st.lists(dns_label(), max_size=2),
                    "x-kubernetes-preserve-unknown-fields": st.booleans(),
                    "additionalProperties": st.one_of(st.booleans(), inner),
                },
            ),
            _fields(
                {"type": st.just("array"), "items": inner},
                {"x-kubernetes-list-type": st.sampled_from(["atomic", "set"])},
            ),
        ),
        max_leaves=4,
    )


def _crd_version() -> st.SearchStrategy[Obj]:
    column = _fields(
        {"name": dns_label(), "type": st.just("string"), "jsonPath": st.just(".spec.x")},
        {"priority": st.integers(0, 2), "format": st.just("date")},
    )
    scale = _fields(
        {"specReplicasPath": st.just(".spec.replicas"), "statusReplicasPath": st.just(".status.r")},
        {"labelSelectorPath": st.just(".status.selector")},
    )
    return _fields(
        {
            "name": st.sampled_from(["v1", "v1beta1", "v2alpha1"]),
            "served": st.booleans(),
            "storage": st.booleans(),
        },
        {
            "deprecated": st.booleans(),
            "schema": _fields({"openAPIV3Schema": _json_schema()}, {}),
            "subresources": _fields({}, {"status": st.just({}), "scale": scale}),
            "additionalPrinterColumns": st.lists(column, max_size=2),
            "selectableFields": st.lists(_fields({"jsonPath": st.just(".spec.x")}, {}), max_size=1),
        },
    )


def _custom_resource_definition(version: str) -> st.SearchStrategy[Obj]:
    names = _fields(
        {"plural": dns_label(), "kind": st.sampled_from(["Widget", "Gadget"])},
        {
            "singular": dns_label(),
            "listKind": st.sampled_from(["WidgetList", "Gadgets"]),
            "shortNames": st.lists(dns_label(), max_size=2),
            "categories": st.lists(dns_label(), max_size=1),
        },
    )
    webhook = _fields(
        {"conversionReviewVersions": st.just(["v1"])},
        {
            "clientConfig": _fields(
                {},
                {
                    "url": st.just("https://conv.example.com/convert"),
                    "caBundle": st.just("Y2E="),
                },
            )
        },
    )
    conversion = st.one_of(
        st.just({"strategy": "None"}),
        _fields({"strategy": st.just("Webhook"), "webhook": webhook}, {}),
    )
    spec = _fields(
        {
            "group": dns_subdomain(),
            "scope": st.sampled_from(["Cluster", "Namespaced"]),
            "names": names,
            "versions": st.lists(_crd_version(), min_size=1, max_size=2),
        },
        {"conversion": conversion, "preserveUnknownFields": st.booleans()},
    )
    condition = _fields(
        {"type": st.sampled_from(["Established", "NamesAccepted"]), "status": st.just("True")},
        {"reason": st.just("InitialNamesAccepted"), "lastTransitionTime": timestamp()},
    )
    status = _fields(
        {},
        {
            "conditions": st.lists(condition, max_size=2),
            "acceptedNames": names,
            "storedVersions": st.lists(st.sampled_from(["v1", "v1beta1"]), min_size=1, max_size=2),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec, "status": status})


def _admission_rule(named: bool) -> st.SearchStrategy[Obj]:
    fields: dict[str, st.SearchStrategy[Any]] = {
        "operations": st.lists(st.sampled_from(["CREATE", "UPDATE", "DELETE", "*"]), max_size=2),
        "apiGroups": st.lists(st.sampled_from(["", "apps", "*"]), max_size=2),
        "apiVersions": st.lists(st.sampled_from(["v1", "*"]), max_size=2),
        "resources": st.lists(st.sampled_from(["pods", "deployments/scale", "*/*"]), max_size=2),
        "scope": st.sampled_from(["*", "Cluster", "Namespaced"]),
    }
    if named:
        fields["resourceNames"] = st.lists(dns_label(), max_size=2)
    return _fields({}, fields)


def _match_condition() -> st.SearchStrategy[Obj]:
    return _fields(
        {"name": dns_label(), "expression": st.sampled_from(["true", "object != null"])}, {}
    )


def _webhook(mutating: bool) -> st.SearchStrategy[Obj]:
    service = _fields(
        {"namespace": dns_label(), "name": dns_label()},
        {"path": st.sampled_from(["/validate", "/"]), "port": int32(1, 65535)},
    )
    client_config = _fields(
        {},
        {
            "url": st.sampled_from(["https://hooks.example.com/v", "https://10.0.0.1:8443"]),
            "service": service,
            "caBundle": st.sampled_from(["", "Ag==", "LS0tLS1CRUdJTg=="]),
        },
    )
    optional: dict[str, st.SearchStrategy[Any]] = {
        "rules": st.lists(_admission_rule(named=False), max_size=2),
        "failurePolicy": st.sampled_from(["Fail", "Ignore"]),
        "matchPolicy": st.sampled_from(["Exact", "Equivalent"]),
        "namespaceSelector": label_selector(),
        "objectSelector": label_selector(),
        "sideEffects": st.sampled_from(["None", "NoneOnDryRun"]),
        "timeoutSeconds": int32(1, 30),
        "matchConditions": st.lists(_match_condition(), max_size=2),
    }
    if mutating:
        optional["reinvocationPolicy"] = st.sampled_from(["Never", "IfNeeded"])
    return _fields(
        {
            "name": st.sampled_from(["a.example.com", "hook.k8s.io"]),
            "clientConfig": client_config,
            "admissionReviewVersions": st.lists(st.sampled_from(["v1", "v1beta1"]), max_size=2),
        },
        optional,
    )


def _webhook_configuration(mutating: bool) -> StrategyFor:
    def strategy(version: str) -> st.SearchStrategy[Obj]:
        return _fields(
            {"metadata": object_meta(namespaced=False)},
            {"webhooks": st.lists(_webhook(mutating), max_size=2)},
        )

    return strategy


def _match_resources() -> st.SearchStrategy[Obj]:
    return _fields(
        {},
        {
            "namespaceSelector": label_selector(),
            "objectSelector": label_selector(),
            "resourceRules": st.lists(_admission_rule(named=True), max_size=2),
            "excludeResourceRules": st.lists(_admission_rule(named=True), max_size=1),
            "matchPolicy": st.sampled_from(["Exact", "Equivalent"]),
        },
    )


def _validating_admission_policy(version: str) -> st.SearchStrategy[Obj]:
    validation = _fields(
        {"expression": st.sampled_from(["object.spec.replicas < 5", "true"])},
        {
            "message": st.sampled_from(["too many", ""]),
            "reason": st.sampled_from(["Invalid", "Forbidden"]),
            "messageExpression": st.sampled_from(["'bad: ' + object.metadata.name"]),
        },
    )
    spec = _fields(
        {},
        {
            "paramKind": _fields({}, {"apiVersion": st.just("v1"), "kind": st.just("ConfigMap")}),
            "matchConstraints": _match_resources(),
            "validations": st.lists(validation, max_size=2),
            "failurePolicy": st.sampled_from(["Fail", "Ignore"]),
            "auditAnnotations": st.lists(
                _fields({"key": dns_label(), "valueExpression": st.just("'x'")}, {}), max_size=1
            ),
            "matchConditions": st.lists(_match_condition(), max_size=1),
            "variables": st.lists(
                _fields({"name": st.sampled_from(["a", "b"]), "expression": st.just("1")}, {}),
                max_size=2,
            ),
        },
    )
    warning = _fields(
        {"fieldRef": st.just("spec.validations[0].expression"), "warning": st.just("w")}, {}
    )
    condition = _fields(
        {"type": st.just("Ready"), "status": st.sampled_from(["True", "False"])},
        {"reason": st.just("Done"), "lastTransitionTime": timestamp(), "message": st.just("m")},
    )
    status = _fields(
        {},
        {
            "observedGeneration": small_nonneg(),
            "typeChecking": _fields({}, {"expressionWarnings": st.lists(warning, max_size=1)}),
            "conditions": st.lists(condition, max_size=1),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec, "status": status})


def _validating_admission_policy_binding(version: str) -> st.SearchStrategy[Obj]:
    param_ref = _fields(
        {},
        {
            "name": dns_label(),
            "namespace": dns_label(),
            "selector": label_selector(),
            "parameterNotFoundAction": st.sampled_from(["Deny", "Allow"]),
        },
    )
    spec = _fields(
        {},
        {
            "policyName": dns_label(),
            "paramRef": param_ref,
            "matchResources": _match_resources(),
            "validationActions": st.lists(
                st.sampled_from(["Deny", "Audit", "Warn"]), max_size=2, unique=True
            ),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec})


def _mutating_admission_policy(version: str) -> st.SearchStrategy[Obj]:
    mutation = st.sampled_from(
        [
            {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}},
        ]
    )
    spec = _fields(
        {},
        {
            "paramKind": _fields({}, {"apiVersion": st.just("v1"), "kind": st.just("ConfigMap")}),
            "matchConstraints": _match_resources(),
            "mutations": st.lists(mutation, max_size=2),
            "failurePolicy": st.sampled_from(["Fail", "Ignore"]),
            "reinvocationPolicy": st.sampled_from(["Never", "IfNeeded"]),
            "matchConditions": st.lists(_match_condition(), max_size=1),
            "variables": st.lists(
                _fields({"name": st.sampled_from(["a", "b"]), "expression": st.just("1")}, {}),
                max_size=2,
            ),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec})


def _mutating_admission_policy_binding(version: str) -> st.SearchStrategy[Obj]:
    param_ref = _fields(
        {},
        {"name": dns_label(), "parameterNotFoundAction": st.sampled_from(["Deny", "Allow"])},
    )
    spec = _fields(
        {},
        {"policyName": dns_label(), "paramRef": param_ref, "matchResources": _match_resources()},
    )
    return _fields({"metadata": object_meta(namespaced=False)}, {"spec": spec})


def _certificate_signing_request(version: str) -> st.SearchStrategy[Obj]:
    spec = _fields(
        {
            "request": st.sampled_from(
                ["AQ==", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K"]
            ),
            "signerName": st.sampled_from(["example.com/signer", "kubernetes.io/kubelet-serving"]),
        },
        {
            "expirationSeconds": int32(600, 86400),
            "usages": st.lists(
                st.sampled_from(["client auth", "digital signature", "key encipherment"]),
                max_size=2,
            ),
            "username": dns_label(),
            "uid": uid(),
            "groups": st.lists(st.sampled_from(["system:authenticated", "dev"]), max_size=2),
            "extra": st.dictionaries(
                dns_label(), st.lists(dns_label(), min_size=1, max_size=2), max_size=2
            ),
        },
    )
    condition = _fields(
        {
            "type": st.sampled_from(["Approved", "Denied", "Failed", "Custom"]),
            "status": st.sampled_from(["True", "False"]),
        },
        {
            "reason": st.just("KubectlApprove"),
            "message": st.just("ok"),
            "lastUpdateTime": timestamp(),
            "lastTransitionTime": timestamp(),
        },
    )
    status = _fields(
        {},
        {
            "conditions": st.lists(condition, max_size=2),
            "certificate": st.sampled_from(["Ag==", "LS0tLS0K"]),
        },
    )
    return _fields({"metadata": object_meta(namespaced=False), "spec": spec}, {"status": status})


def _endpoint_slice(version: str) -> st.SearchStrategy[Obj]:
    name_ref = st.fixed_dictionaries({"name": dns_label()})
    endpoint = _fields(
        {
            "addresses": st.lists(
                st.sampled_from(["10.1.2.3", "10.1.2.4", "192.0.2.7"]), min_size=1, max_size=2
            ),
            "conditions": _fields(
                {}, {"ready": st.booleans(), "serving": st.booleans(), "terminating": st.booleans()}
            ),
        },
        {
            "hostname": dns_label(),
            "targetRef": _fields(
                {"kind": st.just("Pod"), "name": dns_label()},
                {"namespace": dns_label(), "uid": uid()},
            ),
            "deprecatedTopology": labels(),
            "nodeName": dns_subdomain(),
            "zone": st.sampled_from(["zone-a", "zone-b"]),
            "hints": _fields(
                {},
                {
                    "forZones": st.lists(name_ref, max_size=2),
                    "forNodes": st.lists(name_ref, max_size=2),
                },
            ),
        },
    )
    port = _fields(
        {},
        {
            "name": st.one_of(st.just(""), dns_label()),
            "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
            "port": st.integers(1, 65535),
            "appProtocol": st.sampled_from(["http", "kubernetes.io/h2c"]),
        },
    )
    return _fields(
        {
            "metadata": object_meta(namespaced=True),
            "addressType": st.sampled_from(["IPv4", "IPv6", "FQDN"]),
            "endpoints": st.lists(endpoint, max_size=2),
        },
        {"ports": st.lists(port, max_size=2)},
    )


def _network_policy(version: str) -> st.SearchStrategy[Obj]:
    port = _fields(
        {},
        {
            "protocol": st.sampled_from(["TCP", "UDP", "SCTP"]),
            "port": st.one_of(st.integers(1, 65535), st.just("http")),
            "endPort": st.integers(1, 65535),
        },
    )
    peer = st.one_of(
        _fields({}, {"podSelector": label_selector(), "namespaceSelector": label_selector()}),
        st.fixed_dictionaries(
            {
                "ipBlock": _fields(
                    {"cidr": st.sampled_from(["10.0.0.0/8", "2001:db8::/64"])},
                    {"except": st.lists(st.just("10.1.0.0/16"), max_size=1)},
                )
            }
        ),
    )
    ports = st.lists(port, max_size=2)
    spec = _fields(
        {"podSelector": label_selector()},
        {
            "ingress": st.lists(
                _fields({}, {"ports": ports, "from": st.lists(peer, max_size=2)}), max_size=2
            ),
            "egress": st.lists(
                _fields({}, {"ports": ports, "to": st.lists(peer, max_size=2)}), max_size=2
            ),
            "policyTypes": st.lists(st.sampled_from(["Ingress", "Egress"]), max_size=2),
        },
    )
    return _fields({"metadata": object_meta(namespaced=True)}, {"spec": spec})


def _priority_class(version: str) -> st.SearchStrategy[Obj]:
    return _fields(
        {"metadata": object_meta(namespaced=False), "value": int32()},
        {
            "globalDefault": st.booleans(),
            "description": st.text(max_size=20),
            "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority"]),
        },
    )


def _runtime_class(version: str) -> st.SearchStrategy[Obj]:
    toleration = _fields(
        {"key": qualified_name(), "operator": st.sampled_from(["Exists", "Equal"])},
        {
            "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
            "value": label_value(),
            "tolerationSeconds": st.integers(0, 3600),
        },
    )
    scheduling = _fields(
        {}, {"nodeSelector": labels(), "tolerations": st.lists(toleration, max_size=2)}
    )
    overhead = _fields(
        {},
        {"podFixed": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantity(), max_size=2)},
    )
    return _fields(
        {"metadata": object_meta(namespaced=False), "handler": dns_label()},
        {"overhead": overhead, "scheduling": scheduling},
    )


def _api_service(version: str) -> st.SearchStrategy[Obj]:
    # The round trip does not validate, so the name need not be <version>.<group>.
    service = _fields(
        {"namespace": dns_label(), "name": dns_label()}, {"port": st.integers(1, 65535)}
    )
    spec = _fields(
        {
            "service": st.one_of(st.none(), service),
            "groupPriorityMinimum": st.integers(0, 20000),
            "versionPriority": st.integers(0, 1000),
        },
        {
            "group": dns_subdomain(),
            "version": dns_label(),
            "insecureSkipTLSVerify": st.just(True),
            "caBundle": st.just("Y2E="),
        },
    )
    condition = _fields(
        {"type": st.just("Available"), "status": st.sampled_from(["True", "False", "Unknown"])},
        {
            "lastTransitionTime": timestamp(),
            "reason": st.sampled_from(["Local", "ServiceNotFound"]),
            "message": st.text(max_size=20),
        },
    )
    status = _fields({}, {"conditions": st.lists(condition, min_size=1, max_size=2)})
    return _fields({"metadata": object_meta(namespaced=False), "spec": spec, "status": status}, {})


# ------------------------------------------------------------------------------- dispatch

_BY_KIND: dict[tuple[str, str], StrategyFor] = {
    ("", "Namespace"): _namespace,
    ("", "ConfigMap"): _config_map,
    ("", "Secret"): _secret,
    ("", "Event"): _event,
    ("", "PersistentVolumeClaim"): _persistent_volume_claim,
    ("", "PersistentVolume"): _persistent_volume,
    ("", "Endpoints"): _endpoints,
    ("", "LimitRange"): _limit_range,
    ("", "Node"): _node,
    ("", "Pod"): _pod,
    ("", "PodTemplate"): _pod_template,
    ("", "ReplicationController"): _replication_controller,
    ("", "ResourceQuota"): _resource_quota,
    ("", "Service"): _service,
    ("", "ServiceAccount"): _service_account,
    ("apps", "ControllerRevision"): _controller_revision,
    ("apps", "DaemonSet"): _daemon_set,
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replica_set,
    ("apps", "StatefulSet"): _stateful_set,
    ("autoscaling", "HorizontalPodAutoscaler"): _horizontal_pod_autoscaler,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cron_job,
    ("coordination.k8s.io", "Lease"): _lease,
    ("policy", "PodDisruptionBudget"): _pod_disruption_budget,
    ("networking.k8s.io", "Ingress"): _ingress,
    ("networking.k8s.io", "IngressClass"): _ingress_class,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _webhook_configuration(
        mutating=False
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _webhook_configuration(
        mutating=True
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _validating_admission_policy,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): (
        _validating_admission_policy_binding
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): _mutating_admission_policy,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): (
        _mutating_admission_policy_binding
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): _certificate_signing_request,
    ("networking.k8s.io", "IPAddress"): _ip_address,
    ("networking.k8s.io", "ServiceCIDR"): _service_cidr,
    ("storage.k8s.io", "StorageClass"): _storage_class,
    ("storage.k8s.io", "CSIDriver"): _csi_driver,
    ("storage.k8s.io", "CSINode"): _csi_node,
    ("storage.k8s.io", "VolumeAttachment"): _volume_attachment,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    ("node.k8s.io", "RuntimeClass"): _runtime_class,
    ("scheduling.k8s.io", "PriorityClass"): _priority_class,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _custom_resource_definition,
    ("apiregistration.k8s.io", "APIService"): _api_service,
    ("rbac.authorization.k8s.io", "Role"): _rbac_role(namespaced=True),
    ("rbac.authorization.k8s.io", "ClusterRole"): _rbac_role(namespaced=False),
    ("rbac.authorization.k8s.io", "RoleBinding"): _rbac_binding(namespaced=True),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _rbac_binding(namespaced=False),
}

#: Meta kinds, the same shape in whichever group they are registered.
_META: dict[str, StrategyFor] = {
    "Status": _status,
    "WatchEvent": _watch_event,
    "ListOptions": _list_options,
    "GetOptions": _get_options,
    "DeleteOptions": _delete_options,
    "CreateOptions": _write_options(force=False),
    "UpdateOptions": _write_options(force=False),
    "PatchOptions": _write_options(force=True),
    "APIVersions": _api_versions,
    "APIGroupList": _api_group_list,
    "APIGroup": _api_group,
    "APIResourceList": _api_resource_list,
    "Table": _table,
    "TableOptions": _table_options,
    "PartialObjectMetadata": _partial_object_metadata,
    "PartialObjectMetadataList": _partial_object_metadata_list,
}


def _body_for(group: str, kind: str) -> StrategyFor | None:
    if (group, kind) in _BY_KIND:
        return _BY_KIND[(group, kind)]
    if kind in _META:
        return _META[kind]
    if kind.endswith("List") and (group, kind[: -len("List")]) in _BY_KIND:
        return _list_of(group, kind[: -len("List")])
    return None


def _list_of(group: str, item_kind: str) -> StrategyFor:
    """Typed lists: items without apiVersion/kind (as Kubernetes writes them), or with both."""

    def strategy(version: str) -> st.SearchStrategy[Obj]:
        api_version = GroupVersion(group, version).api_version
        body = _BY_KIND[(group, item_kind)](version)
        typed = body.map(lambda b: {"apiVersion": api_version, "kind": item_kind, **b})
        return _fields(
            {"items": st.lists(st.one_of(body, typed), max_size=2)},
            {"metadata": list_meta()},
        )

    return strategy


def has_strategy(group: str, kind: str) -> bool:
    return _body_for(group, kind) is not None


def object_of(group: str, kind: str, version: str) -> st.SearchStrategy[Obj]:
    """Objects of ``group``/``version`` ``kind``; LookupError for a kind with no strategy yet."""
    body = _body_for(group, kind)
    if body is None:
        raise LookupError(f"no strategy for kind {kind!r} of group {group!r}: add one")
    return _object(group, kind, version, body(version))
