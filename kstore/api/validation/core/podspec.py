"""Pod spec and pod template rules: Kubernetes' ``ValidatePodSpec``, ``ValidatePodTemplateSpec``.

Pods use them, and so does every kind that embeds a pod template (Deployments...). They expect a
defaulted spec. The implemented subset is listed in :mod:`kstore.api.validation.core.pod`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import (
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    maps,
    opt_int,
    opt_str,
)
from kstore.api.validation.core._common import (
    dns_label,
    dns_subdomain,
    qualified_name,
)
from kstore.api.validation.core.container import validate_containers, validate_init_containers
from kstore.api.validation.field import (
    JSONValue,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import (
    inclusive_range_error,
    is_dns1123_subdomain_with_underscore,
    is_label_value,
    is_valid_group_id,
    is_valid_user_id,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_annotations,
    validate_labels,
)
from kstore.errors import Cause

__all__ = [
    "APPARMOR_ANNOTATION_PREFIX",
    "MIRROR_POD_ANNOTATION",
    "POD_DELETION_COST_ANNOTATION",
    "pod_specific_annotations",
    "valid_deletion_cost",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_tolerations",
]

MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"
POD_DELETION_COST_ANNOTATION: Final = "controller.kubernetes.io/pod-deletion-cost"
APPARMOR_ANNOTATION_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"
_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_MAX_INT32: Final = 2**31 - 1
_MAX_DNS_NAMESERVERS: Final = 3
_MAX_DNS_SEARCH_PATHS: Final = 32
_MAX_DNS_SEARCH_LIST_CHARS: Final = 2048
_INT32_TEXT: Final = re.compile(r"[+-]?[0-9]+")

# Volume sources in the order Kubernetes checks them, with the path it names in the
# "more than 1 volume type" error (two of them are misspelt there, as in Kubernetes).
_VOLUME_SOURCES: Final = (
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)


def pod_specific_annotations(
    annotations: Mapping[str, Any], spec: Mapping[str, Any], path: Path, allow_bad_cost: bool
) -> list[Cause]:
    causes: list[Cause] = []
    if MIRROR_POD_ANNOTATION in annotations and not get_str(spec, "nodeName"):
        causes.append(
            invalid(
                path.key(MIRROR_POD_ANNOTATION),
                get_str(annotations, MIRROR_POD_ANNOTATION),
                "must set spec.nodeName if mirror pod annotation is set",
            )
        )
    if not allow_bad_cost and not valid_deletion_cost(annotations):
        causes.append(
            invalid(
                path.key(POD_DELETION_COST_ANNOTATION),
                get_str(annotations, POD_DELETION_COST_ANNOTATION),
                "must be a 32bit integer",
            )
        )
    return causes


def valid_deletion_cost(annotations: Mapping[str, Any]) -> bool:
    if POD_DELETION_COST_ANNOTATION not in annotations:
        return True
    value = get_str(annotations, POD_DELETION_COST_ANNOTATION)
    # A leading "+" or zero ("007") is refused before the integer is parsed.
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return False
    return bool(_INT32_TEXT.fullmatch(value)) and -(2**31) <= int(value) <= _MAX_INT32


def _volumes(volumes: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, volume in enumerate(maps(volumes)):
        item = path.index(i)
        errs: list[Cause] = []
        count = 1 if volume.get("emptyDir") is not None else 0
        for key, error_name in _VOLUME_SOURCES:
            if volume.get(key) is None:
                continue
            if count > 0:
                errs.append(
                    forbidden(item.child(error_name), "may not specify more than 1 volume type")
                )
            else:
                count += 1
        if count == 0:
            errs.append(required(item, "must specify a volume type"))
        name = get_str(volume, "name")
        if not name:
            errs.append(required(item.child("name")))
        else:
            errs.extend(dns_label(name, item.child("name")))
        if name in names:
            errs.append(duplicate(item.child("name"), name))
        if errs:
            causes.extend(errs)
        else:
            names.add(name)
    return causes


def _pod_security_context(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    sc = get_map(spec, "securityContext")
    causes: list[Cause] = []
    for key, check in (
        ("fsGroup", is_valid_group_id),
        ("runAsUser", is_valid_user_id),
        ("runAsGroup", is_valid_group_id),
    ):
        value = opt_int(sc, key)
        if value is not None:
            causes.extend(invalid(path.child(key), value, m) for m in check(value))
    for g, gid in enumerate(get_list(sc, "supplementalGroups")):
        if isinstance(gid, int):
            causes.extend(
                invalid(path.child("supplementalGroups").index(g), gid, m)
                for m in is_valid_group_id(gid)
            )
    # Kubernetes keeps these two pod fields inside its internal security context.
    if spec.get("shareProcessNamespace") is True and get_bool(spec, "hostPID"):
        causes.append(
            invalid(
                path.child("shareProcessNamespace"),
                True,
                "ShareProcessNamespace and HostPID cannot both be enabled",
            )
        )
    return causes


def _dns_config(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    config = spec.get("dnsConfig")
    if get_str(spec, "dnsPolicy") == "None":
        if not isinstance(config, Mapping):
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not get_list(config, "nameservers"):
            return [
                required(
                    path.child("nameservers"),
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )
            ]
    if not isinstance(config, Mapping):
        return []
    causes: list[Cause] = []
    nameservers = get_list(config, "nameservers")
    if len(nameservers) > _MAX_DNS_NAMESERVERS:
        causes.append(
            invalid(
                path.child("nameservers"),
                list(nameservers),
                f"must not have more than {_MAX_DNS_NAMESERVERS} nameservers",
            )
        )
    searches = [s if isinstance(s, str) else "" for s in get_list(config, "searches")]
    if len(searches) > _MAX_DNS_SEARCH_PATHS:
        causes.append(
            invalid(
                path.child("searches"),
                searches,
                f"must not have more than {_MAX_DNS_SEARCH_PATHS} search paths",
            )
        )
    if len(" ".join(searches).encode()) > _MAX_DNS_SEARCH_LIST_CHARS:
        causes.append(
            invalid(
                path.child("searches"),
                searches,
                f"must not have more than {_MAX_DNS_SEARCH_LIST_CHARS} characters "
                "(including spaces) in the search list",
            )
        )
    for i, search in enumerate(searches):
        # Relaxed DNS search validation (on by default since v1.34): "." alone is allowed.
        if search != ".":
            trimmed = search.removesuffix(".")
            causes.extend(
                invalid(path.child("searches").index(i), trimmed, m)
                for m in is_dns1123_subdomain_with_underscore(trimmed)
            )
    for i, option in enumerate(maps(get_list(config, "options"))):
        if not get_str(option, "name"):
            causes.append(required(path.child("options").index(i), "must not be empty"))
    return causes


def validate_tolerations(tolerations: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for i, toleration in enumerate(maps(tolerations)):
        item = path.index(i)
        key = get_str(toleration, "key")
        operator = get_str(toleration, "operator")
        effect = get_str(toleration, "effect")
        value = get_str(toleration, "value")
        if key:
            causes.extend(qualified_name(key, item.child("key")))
        if not key and operator != "Exists":
            causes.append(
                invalid(
                    item.child("operator"),
                    JSONValue(operator),
                    'operator must be Exists when `key` is empty, which means "match all '
                    'values and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(
                invalid(
                    item.child("effect"),
                    JSONValue(effect),
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            msgs = is_label_value(value)
            if msgs:
                causes.append(invalid(item.child("operator"), value, ";".join(msgs)))
        elif operator == "Exists":
            if value:
                causes.append(
                    invalid(
                        item.child("operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            causes.append(
                not_supported(item.child("operator"), JSONValue(operator), ["Equal", "Exists"])
            )
        if effect and effect not in _TAINT_EFFECTS:
            causes.append(not_supported(item.child("effect"), JSONValue(effect), _TAINT_EFFECTS))
    return causes


def validate_pod_spec(
    spec: Mapping[str, Any], path: Path, *, resource_is_pod: bool = False
) -> list[Cause]:
    """Kubernetes' ``ValidatePodSpec`` (the implemented subset; see the module docstring).

    ``resource_is_pod`` is False for a pod template (it relaxes the ``hostNetwork`` port rule).
    """
    causes: list[Cause] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        causes.append(required(path.child("terminationGracePeriodSeconds")))
    causes.extend(_volumes(get_list(spec, "volumes"), path.child("volumes")))
    containers = maps(get_list(spec, "containers"))
    init_containers = maps(get_list(spec, "initContainers"))
    causes.extend(validate_containers(containers, path.child("containers")))
    causes.extend(
        validate_init_containers(init_containers, containers, path.child("initContainers"))
    )
    if get_bool(spec, "hostNetwork"):
        for i, container in enumerate(containers):
            for j, port in enumerate(maps(get_list(container, "ports"))):
                host_port, container_port = (
                    get_int(port, "hostPort"),
                    get_int(port, "containerPort"),
                )
                if (resource_is_pod or host_port != 0) and host_port != container_port:
                    causes.append(
                        invalid(
                            path.child("containers")
                            .index(i)
                            .child("ports")
                            .index(j)
                            .child("hostPort"),
                            host_port,
                            "must match `containerPort` when `hostNetwork` is true",
                        )
                    )
    restart = get_str(spec, "restartPolicy")
    if not restart:
        causes.append(required(path.child("restartPolicy")))
    elif restart not in _RESTART_POLICIES:
        causes.append(
            not_supported(path.child("restartPolicy"), JSONValue(restart), _RESTART_POLICIES)
        )
    dns = get_str(spec, "dnsPolicy")
    if not dns:
        causes.append(required(path.child("dnsPolicy")))
    elif dns not in _DNS_POLICIES:
        causes.append(not_supported(path.child("dnsPolicy"), JSONValue(dns), _DNS_POLICIES))
    causes.extend(validate_labels(get_map(spec, "nodeSelector"), path.child("nodeSelector")))
    causes.extend(_pod_security_context(spec, path.child("securityContext")))
    causes.extend(_dns_config(spec, path.child("dnsConfig")))
    for i, gate in enumerate(maps(get_list(spec, "readinessGates"))):
        causes.extend(
            qualified_name(
                get_str(gate, "conditionType"),
                path.child("readinessGates").index(i).child("conditionType"),
            )
        )
    seen_gates: set[str] = set()
    for i, gate in enumerate(maps(get_list(spec, "schedulingGates"))):
        name = get_str(gate, "name")
        causes.extend(qualified_name(name, path.child("schedulingGates").index(i)))
        if name in seen_gates:
            causes.append(duplicate(path.child("schedulingGates").index(i), name))
        seen_gates.add(name)
    # The internal type has only serviceAccountName; v1's deprecated serviceAccount fills it.
    account = get_str(spec, "serviceAccountName") or get_str(spec, "serviceAccount")
    if account:
        causes.extend(dns_subdomain(account, path.child("serviceAccountName")))
    node_name = get_str(spec, "nodeName")
    if node_name:
        causes.extend(dns_subdomain(node_name, path.child("nodeName")))
    deadline = opt_int(spec, "activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        causes.append(
            invalid(
                path.child("activeDeadlineSeconds"), deadline, inclusive_range_error(1, _MAX_INT32)
            )
        )
    for key in ("hostname", "subdomain"):
        value = get_str(spec, key)
        if value:
            causes.extend(dns_label(value, path.child(key)))
    causes.extend(validate_tolerations(get_list(spec, "tolerations"), path.child("tolerations")))
    priority_class = get_str(spec, "priorityClassName")
    if priority_class:
        causes.extend(dns_subdomain(priority_class, path.child("priorityClassName")))
    runtime_class = opt_str(spec, "runtimeClassName")
    if runtime_class is not None:
        causes.extend(dns_subdomain(runtime_class, path.child("runtimeClassName")))
    preemption = opt_str(spec, "preemptionPolicy")
    if preemption is not None:
        if not preemption:
            causes.append(required(path.child("preemptionPolicy")))
        elif preemption not in _PREEMPTION_POLICIES:
            causes.append(
                not_supported(
                    path.child("preemptionPolicy"), JSONValue(preemption), _PREEMPTION_POLICIES
                )
            )
    return causes


def validate_pod_template_spec(template: Mapping[str, Any], path: Path) -> list[Cause]:
    """Kubernetes' ``ValidatePodTemplateSpec``: template labels and annotations, then the spec.

    Label and annotation problems point at ``<path>.labels`` / ``<path>.annotations`` (the
    template embeds its metadata in Go, so Kubernetes' paths skip ``metadata``).
    """
    meta = metadata_of(template)
    spec = get_map(template, "spec")
    annotations = get_map(meta, "annotations")
    causes = validate_labels(get_map(meta, "labels"), path.child("labels"))
    causes.extend(validate_annotations(annotations, path.child("annotations")))
    causes.extend(pod_specific_annotations(annotations, spec, path.child("annotations"), False))
    causes.extend(validate_pod_spec(spec, path.child("spec")))
    if get_list(spec, "ephemeralContainers"):
        causes.append(
            forbidden(
                path.child("spec", "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return causes
