"""core/v1 kinds: Namespace, ConfigMap, Secret, Event, Pod, Service, ServiceAccount.

Each kind has one external version, ``v1``, whose shape is the hub's, so conversion only rewrites
``apiVersion``. Per kind this module registers:

- the resource (plural, scope, short names, subresources) as Kubernetes serves it;
- the v1 defaults Kubernetes applies when it decodes a v1 object (``SetObjectDefaults_*``);
- validation on the hub, create and update (:mod:`kstore.api.validation.core`);
- ``field_labels``: the fields a field selector may use beyond ``metadata.name`` and
  ``metadata.namespace``, with the values Kubernetes' ``GetAttrs`` gives them;
- its List kind (``PodList``...), derived from the item kind.

Defaulters mutate the object they are given (the caller owns it) and are idempotent. Defaults
Kubernetes applies that have no visible effect in JSON are skipped (ConfigMap ``data = {}``),
as are those that need Kubernetes' quantity arithmetic (rounding of resource quantities to
milli-units, pod-level resource defaults).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.core import (
    validate_config_map,
    validate_config_map_update,
    validate_event,
    validate_event_update,
    validate_namespace,
    validate_namespace_update,
    validate_pod,
    validate_pod_update,
    validate_secret,
    validate_secret_update,
    validate_service,
    validate_service_account,
    validate_service_account_update,
    validate_service_update,
)

__all__ = [
    "DEFINITIONS",
    "default_namespace",
    "default_pod",
    "default_pod_spec",
    "default_secret",
    "default_service",
    "image_pull_policy_default",
]

NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
_FILE_MODE_DEFAULT: Final = 0o644  # SecretVolumeSourceDefaultMode and friends: 420
_TOKEN_EXPIRATION_DEFAULT: Final = 3600
_TERMINATION_MESSAGE_PATH: Final = "/dev/termination-log"
_GRACE_PERIOD_DEFAULT: Final = 30
_CLIENT_IP_AFFINITY_SECONDS_DEFAULT: Final = 10800

# Every volume source of a v1 Volume; a volume with none of them becomes an emptyDir.
_VOLUME_SOURCES: Final = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret",
    "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder",
    "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO",
    "storageos", "csi", "ephemeral", "image",
)  # fmt: skip


# Decoded objects hold plain dicts only (every codec builds them), and on the defaulting path
# a dict check costs ~30 ns where an ABC check costs ~300-900 ns; a Pod makes ~70 of them.


def _child(parent: MutableMapping[str, Any], key: str) -> MutableMapping[str, Any]:
    """The map at ``parent[key]``, created when absent or null (a Go struct is never nil)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value


def _present(parent: Mapping[str, Any], key: str) -> MutableMapping[str, Any] | None:
    """The map at ``parent[key]`` when set (a Go pointer that is not nil), else None."""
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _items(parent: Mapping[str, Any], key: str) -> list[MutableMapping[str, Any]]:
    value = parent.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _set_default(obj: MutableMapping[str, Any], key: str, value: Any) -> None:
    """Set ``obj[key]`` when it holds the Go zero value of a string or number (absent, null,
    "" or 0)."""
    current = obj.get(key)
    # Most fields are set: one truth test decides for them.
    if not current and (current is None or current == "" or type(current) is int):
        obj[key] = value


def _set_if_none(obj: MutableMapping[str, Any], key: str, value: Any) -> None:
    """Set a pointer field when nil (absent or null); a set zero value is kept."""
    if obj.get(key) is None:
        obj[key] = value


# ---------------------------------------------------------------------------- images

# The docker reference grammar Kubernetes parses image names with (distribution/reference).
_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = _ALNUM + r"(?:(?:[._]|__|[-]+)" + _ALNUM + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = (
    r"(?:" + _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*"
    r"|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
)
_NAME = r"(?:" + _DOMAIN + r"/)?" + _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_TAG = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE_RE: Final = re.compile(r"(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?")
_HEX64_RE: Final = re.compile(r"[a-f0-9]{64}")
_DIGEST_HEX_LENGTHS: Final = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX: Final = 255


def _split_docker_domain(name: str) -> tuple[str, str]:
    head, slash, rest = name.partition("/")
    if not slash or (
        not any(c in head for c in ".:") and head != "localhost" and head.lower() == head
    ):
        domain, remainder = "docker.io", name
    else:
        domain, remainder = head, rest
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def _image_tag(image: str) -> str:
    """The tag Kubernetes' ParseImageName finds: "latest" when the image names neither a tag
    nor a digest, "" when it has only a digest or does not parse."""
    if _HEX64_RE.fullmatch(image):
        return ""
    domain, remainder = _split_docker_domain(image)
    remote = remainder.partition(":")[0]
    if remote.lower() != remote:
        return ""
    match = _REFERENCE_RE.fullmatch(f"{domain}/{remainder}")
    if match is None or len(match.group(1)) > _NAME_TOTAL_LENGTH_MAX:
        return ""
    tag, digest = match.group(2), match.group(3)
    if digest is not None:
        algorithm, _, hex_part = digest.partition(":")
        if _DIGEST_HEX_LENGTHS.get(algorithm) != len(hex_part):
            return ""
    if tag:
        return tag
    return "" if digest else "latest"


def image_pull_policy_default(image: str) -> str:
    """``Always`` for an image tagged (or implicitly) ``latest``, else ``IfNotPresent``."""
    return "Always" if _image_tag(image) == "latest" else "IfNotPresent"


# ---------------------------------------------------------------------------- Pod


_PROBES: Final = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_DEFAULTS: Final = (
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
)


def _default_probe(probe: MutableMapping[str, Any] | None) -> None:
    if probe is None:
        return
    for key, value in _PROBE_DEFAULTS:
        current = probe.get(key)
        # _set_default, inlined: probes are defaulted on every decode of a pod.
        if not current and (current is None or current == "" or type(current) is int):
            probe[key] = value
    _default_http_get(_present(probe, "httpGet"))
    grpc = _present(probe, "grpc")
    if grpc is not None:
        _set_if_none(grpc, "service", "")


def _default_http_get(action: MutableMapping[str, Any] | None) -> None:
    if action is not None:
        _set_default(action, "path", "/")
        _set_default(action, "scheme", "HTTP")


def _default_field_ref(selector: MutableMapping[str, Any] | None) -> None:
    if selector is not None:
        _set_default(selector, "apiVersion", "v1")


def _default_container(container: MutableMapping[str, Any]) -> None:
    if not container.get("imagePullPolicy"):
        image = container.get("image")
        container["imagePullPolicy"] = image_pull_policy_default(
            image if isinstance(image, str) else ""
        )
    _set_default(container, "terminationMessagePath", _TERMINATION_MESSAGE_PATH)
    _set_default(container, "terminationMessagePolicy", "File")
    ports = container.get("ports")
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict):
                _set_default(port, "protocol", "TCP")
    env = container.get("env")
    if isinstance(env, list):
        for var in env:
            if isinstance(var, dict):
                value_from = var.get("valueFrom")
                if isinstance(value_from, dict):
                    _default_field_ref(_present(value_from, "fieldRef"))
    for key in _PROBES:
        probe = container.get(key)
        if isinstance(probe, dict):
            _default_probe(probe)
    lifecycle = _present(container, "lifecycle")
    if lifecycle is not None:
        for hook in ("postStart", "preStop"):
            handler = _present(lifecycle, hook)
            if handler is not None:
                _default_http_get(_present(handler, "httpGet"))


def _default_host_path(source: MutableMapping[str, Any]) -> None:
    _set_if_none(source, "type", "")


def _default_file_mode(source: MutableMapping[str, Any]) -> None:
    _set_if_none(source, "defaultMode", _FILE_MODE_DEFAULT)


def _default_iscsi(source: MutableMapping[str, Any]) -> None:
    _set_default(source, "iscsiInterface", "default")


def _default_rbd(source: MutableMapping[str, Any]) -> None:
    _set_default(source, "pool", "rbd")
    _set_default(source, "user", "admin")
    _set_default(source, "keyring", "/etc/ceph/keyring")


def _default_downward_api(source: MutableMapping[str, Any]) -> None:
    _set_if_none(source, "defaultMode", _FILE_MODE_DEFAULT)
    for item in _items(source, "items"):
        _default_field_ref(_present(item, "fieldRef"))


def _default_projected(projected: MutableMapping[str, Any]) -> None:
    _set_if_none(projected, "defaultMode", _FILE_MODE_DEFAULT)
    for source in _items(projected, "sources"):
        projected_downward = _present(source, "downwardAPI")
        if projected_downward is not None:
            for item in _items(projected_downward, "items"):
                _default_field_ref(_present(item, "fieldRef"))
        token = _present(source, "serviceAccountToken")
        if token is not None:
            _set_if_none(token, "expirationSeconds", _TOKEN_EXPIRATION_DEFAULT)


def _default_ephemeral(ephemeral: MutableMapping[str, Any]) -> None:
    template = _present(ephemeral, "volumeClaimTemplate")
    if template is not None:
        _set_if_none(_child(template, "spec"), "volumeMode", "Filesystem")


_VOLUME_SOURCE_SET: Final = frozenset(_VOLUME_SOURCES)
# The volume sources that have defaults of their own, each with its defaulter: a volume is
# defaulted by looking at the few keys it has, not at every source it could have.
_VOLUME_DEFAULTERS: Final[dict[str, Callable[[MutableMapping[str, Any]], None]]] = {
    "hostPath": _default_host_path,
    "secret": _default_file_mode,
    "configMap": _default_file_mode,
    "iscsi": _default_iscsi,
    "rbd": _default_rbd,
    "downwardAPI": _default_downward_api,
    "projected": _default_projected,
    "ephemeral": _default_ephemeral,
}


def _default_volume(volume: MutableMapping[str, Any]) -> None:
    for key, source in volume.items():
        if source is not None and key in _VOLUME_SOURCE_SET:
            break
    else:
        volume["emptyDir"] = {}
        return
    for key, source in volume.items():
        if isinstance(source, dict):
            defaulter = _VOLUME_DEFAULTERS.get(key)
            if defaulter is not None:
                defaulter(source)


def default_pod_spec(spec: MutableMapping[str, Any]) -> None:
    """Kubernetes' ``SetDefaults_PodSpec`` and the nested defaults every pod spec gets (also the
    defaults of a pod template's spec)."""
    _set_default(spec, "dnsPolicy", "ClusterFirst")
    _set_default(spec, "restartPolicy", "Always")
    _set_if_none(spec, "securityContext", {})
    _set_if_none(spec, "terminationGracePeriodSeconds", _GRACE_PERIOD_DEFAULT)
    _set_default(spec, "schedulerName", "default-scheduler")
    for volume in _items(spec, "volumes"):
        _default_volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _items(spec, key):
            _default_container(container)


def _requests_from_limits(container: MutableMapping[str, Any]) -> None:
    resources = _present(container, "resources")
    limits = _present(resources, "limits") if resources is not None else None
    if resources is None or limits is None:
        return
    requests = _child(resources, "requests")
    for name, quantity in limits.items():
        requests.setdefault(name, quantity)


def default_pod(pod: Object) -> None:
    """v1 Pod defaults (``SetObjectDefaults_Pod``)."""
    spec = _child(pod, "spec")
    containers, init_containers = _items(spec, "containers"), _items(spec, "initContainers")
    for container in (*containers, *init_containers):
        _requests_from_limits(container)
    _set_if_none(spec, "enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for container in (*containers, *init_containers):
            for port in _items(container, "ports"):
                # A zero containerPort would set a zero (invisible, omitempty) hostPort.
                if not port.get("hostPort") and port.get("containerPort"):
                    port["hostPort"] = port["containerPort"]
    default_pod_spec(spec)


# ---------------------------------------------------------------------------- others


def default_namespace(ns: Object) -> None:
    """Every named namespace carries the ``kubernetes.io/metadata.name`` label; phase Active."""
    meta = _child(ns, "metadata")
    name = meta.get("name")
    if isinstance(name, str) and name:
        _child(meta, "labels")[NAMESPACE_NAME_LABEL] = name
    _set_default(_child(ns, "status"), "phase", "Active")


def default_secret(secret: Object) -> None:
    _set_default(secret, "type", "Opaque")


def default_service(svc: Object) -> None:
    """v1 Service defaults (``SetDefaults_Service``)."""
    spec = _child(svc, "spec")
    _set_default(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = _present(spec, "sessionAffinityConfig")
        client_ip = _present(config, "clientIP") if config is not None else None
        if client_ip is None or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {
                "clientIP": {"timeoutSeconds": _CLIENT_IP_AFFINITY_SECONDS_DEFAULT}
            }
    _set_default(spec, "type", "ClusterIP")
    for port in _items(spec, "ports"):
        _set_default(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)
    kind = spec["type"]
    accessible = kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if accessible:
        _set_default(spec, "externalTrafficPolicy", "Cluster")
    if kind in ("NodePort", "LoadBalancer", "ClusterIP"):
        _set_if_none(spec, "internalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        _set_if_none(spec, "allocateLoadBalancerNodePorts", True)
        status = _present(svc, "status")
        load_balancer = _present(status, "loadBalancer") if status is not None else None
        for ingress in _items(load_balancer or {}, "ingress"):
            if ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


# ---------------------------------------------------------------------------- field selectors


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _m(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def pod_fields(pod: Object) -> Mapping[str, str]:
    spec, status = _m(pod, "spec"), _m(pod, "status")
    pod_ips = status.get("podIPs")
    # The internal status only has podIPs; v1's podIP fills it when podIPs is empty.
    if isinstance(pod_ips, list) and pod_ips and isinstance(pod_ips[0], Mapping):
        pod_ip = _s(pod_ips[0].get("ip"))
    else:
        pod_ip = _s(status.get("podIP"))
    return {
        "spec.nodeName": _s(spec.get("nodeName")),
        "spec.restartPolicy": _s(spec.get("restartPolicy")),
        "spec.schedulerName": _s(spec.get("schedulerName")),
        "spec.serviceAccountName": _s(spec.get("serviceAccountName"))
        or _s(spec.get("serviceAccount")),
        "spec.hostNetwork": "true" if spec.get("hostNetwork") is True else "false",
        "status.phase": _s(status.get("phase")),
        "status.podIP": pod_ip,
        "status.nominatedNodeName": _s(status.get("nominatedNodeName")),
    }


def namespace_fields(ns: Object) -> Mapping[str, str]:
    # "name" is a historical bug Kubernetes keeps for compatibility.
    return {
        "status.phase": _s(_m(ns, "status").get("phase")),
        "name": _s(_m(ns, "metadata").get("name")),
    }


def secret_fields(secret: Object) -> Mapping[str, str]:
    return {"type": _s(secret.get("type"))}


def event_fields(event: Object) -> Mapping[str, str]:
    involved = _m(event, "involvedObject")
    source = _s(_m(event, "source").get("component")) or _s(event.get("reportingComponent"))
    fields = {
        f"involvedObject.{key}": _s(involved.get(key))
        for key in (
            "kind",
            "namespace",
            "name",
            "uid",
            "apiVersion",
            "resourceVersion",
            "fieldPath",
        )
    }
    fields.update(
        reason=_s(event.get("reason")),
        reportingComponent=_s(event.get("reportingComponent")),
        source=source,
        type=_s(event.get("type")),
    )
    return fields


def service_fields(svc: Object) -> Mapping[str, str]:
    spec = _m(svc, "spec")
    return {"spec.clusterIP": _s(spec.get("clusterIP")), "spec.type": _s(spec.get("type"))}


# ---------------------------------------------------------------------------- registrations

_KINDS: Final[tuple[KindDefinition, ...]] = (
    KindDefinition(
        group="",
        kind="Namespace",
        versions=(KindVersion(version="v1", default=default_namespace),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="namespaces",
            singular="namespace",
            namespaced=False,
            short_names=("ns",),
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
            subresources=("status", "finalize"),
        ),
        validate=validate_namespace,
        validate_update=validate_namespace_update,
        field_labels=namespace_fields,
        list_kind="NamespaceList",
    ),
    KindDefinition(
        group="",
        kind="ConfigMap",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="configmaps", singular="configmap", namespaced=True, short_names=("cm",)
        ),
        validate=validate_config_map,
        validate_update=validate_config_map_update,
        list_kind="ConfigMapList",
    ),
    KindDefinition(
        group="",
        kind="Secret",
        versions=(KindVersion(version="v1", default=default_secret),),
        storage_version="v1",
        resource=ResourceInfo(plural="secrets", singular="secret", namespaced=True),
        validate=validate_secret,
        validate_update=validate_secret_update,
        field_labels=secret_fields,
        list_kind="SecretList",
    ),
    KindDefinition(
        group="",
        kind="Event",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="events", singular="event", namespaced=True, short_names=("ev",)
        ),
        validate=validate_event,
        validate_update=validate_event_update,
        field_labels=event_fields,
        list_kind="EventList",
    ),
    KindDefinition(
        group="",
        kind="Pod",
        versions=(KindVersion(version="v1", default=default_pod),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="pods",
            singular="pod",
            namespaced=True,
            short_names=("po",),
            categories=("all",),
            subresources=("binding", "ephemeralcontainers", "eviction", "resize", "status"),
        ),
        validate=validate_pod,
        validate_update=validate_pod_update,
        field_labels=pod_fields,
        list_kind="PodList",
    ),
    KindDefinition(
        group="",
        kind="Service",
        versions=(KindVersion(version="v1", default=default_service),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="services",
            singular="service",
            namespaced=True,
            short_names=("svc",),
            categories=("all",),
            subresources=("status",),
        ),
        validate=validate_service,
        validate_update=validate_service_update,
        field_labels=service_fields,
        list_kind="ServiceList",
    ),
    KindDefinition(
        group="",
        kind="ServiceAccount",
        versions=(KindVersion(version="v1"),),
        storage_version="v1",
        resource=ResourceInfo(
            plural="serviceaccounts",
            singular="serviceaccount",
            namespaced=True,
            short_names=("sa",),
            subresources=("token",),
        ),
        validate=validate_service_account,
        validate_update=validate_service_account_update,
        list_kind="ServiceAccountList",
    ),
)

#: The kinds, then their List kinds (``PodList``...), which convert and default item by item.
DEFINITIONS: tuple[KindDefinition, ...] = (*_KINDS, *(list_definition(k) for k in _KINDS))
