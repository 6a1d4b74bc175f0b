"""core/v1 Pod validation, and the pod spec and template rules other kinds embed.

Entry points: :func:`validate_pod` (create), :func:`validate_pod_update`, and, for kinds that
carry a pod template (Deployments...), :func:`validate_pod_template_spec` and
:func:`validate_pod_spec`. They expect a *defaulted* object, as Kubernetes validates after
defaulting: an undefaulted pod lacks ``restartPolicy``, ``dnsPolicy``, container
``imagePullPolicy``... and is reported for it exactly as Kubernetes would report it.

Implemented (with Kubernetes v1.36's paths, order and messages): object metadata; the mirror-pod
and deletion-cost annotations; ``terminationGracePeriodSeconds`` required; volume names and the
one-source-per-volume rule; containers and init containers (non-empty, names unique DNS labels,
image required and untrimmed, termination message policy, ports, env names, envFrom, image pull
policy, security context user and group ids, restart policy, probe and lifecycle placement, host
port conflicts); ``hostNetwork`` ports; restart and DNS policies; node selector labels; pod
security context ids; DNS config for ``dnsPolicy: None``; readiness and scheduling gates; service
account, node, host, subdomain, priority and runtime class names; projected service account
tokens only with a service account; ``activeDeadlineSeconds``;
tolerations; preemption policy; ephemeral containers forbidden on create; on update, container
count, images and ``activeDeadlineSeconds``, and the mirror/AppArmor annotation rules.

Not implemented (accepted without a check): volume source contents, volume mounts and devices,
env ``valueFrom``, resources, probes and lifecycle handlers, affinity, topology spread, IPs
(DNS nameservers, host aliases), OS-specific rules, seccomp/AppArmor fields, and on update the
final "pod updates may not change fields other than ..." check (its message embeds a Go
``cmp.Diff`` that cannot be reproduced faithfully).
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
    is_dns1123_label,
    is_dns1123_subdomain,
    is_dns1123_subdomain_with_underscore,
    is_label_value,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_group_id,
    is_valid_port_name,
    is_valid_port_num,
    is_valid_user_id,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_annotations,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "MIRROR_POD_ANNOTATION",
    "SUPPORTED_PORT_PROTOCOLS",
    "validate_container_ports",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_pod_update",
    "validate_tolerations",
]

MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"
POD_DELETION_COST_ANNOTATION: Final = "controller.kubernetes.io/pod-deletion-cost"
APPARMOR_ANNOTATION_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"
#: sets.List order (sorted), as Kubernetes lists them in "supported values".
SUPPORTED_PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_MAX_INT32: Final = 2**31 - 1
_MAX_DNS_NAMESERVERS: Final = 3
_MAX_DNS_SEARCH_PATHS: Final = 32
_MAX_DNS_SEARCH_LIST_CHARS: Final = 2048
_NOT_INIT_ONLY: Final = "may not be set for init containers without restartPolicy=Always"
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

# Go's unicode.IsSpace (what strings.TrimSpace trims); Python's isspace() differs slightly.
_GO_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _go_trim_space(s: str) -> str:
    start, end = 0, len(s)
    while start < end and s[start] in _GO_SPACE:
        start += 1
    while end > start and s[end - 1] in _GO_SPACE:
        end -= 1
    return s[start:end]


# ---------------------------------------------------------------------------- small rules


def _dns_label(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def _dns_subdomain(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def _qualified_name(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]


def _pod_specific_annotations(
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
    if not allow_bad_cost and not _valid_deletion_cost(annotations):
        causes.append(
            invalid(
                path.key(POD_DELETION_COST_ANNOTATION),
                get_str(annotations, POD_DELETION_COST_ANNOTATION),
                "must be a 32bit integer",
            )
        )
    return causes


def _valid_deletion_cost(annotations: Mapping[str, Any]) -> bool:
    if POD_DELETION_COST_ANNOTATION not in annotations:
        return True
    value = get_str(annotations, POD_DELETION_COST_ANNOTATION)
    # A leading "+" or zero ("007") is refused before the integer is parsed.
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return False
    return bool(_INT32_TEXT.fullmatch(value)) and -(2**31) <= int(value) <= _MAX_INT32


# ---------------------------------------------------------------------------- containers


def validate_container_ports(ports: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(maps(ports)):
        port_path = path.index(i)
        name = get_str(port, "name")
        if name:
            msgs = is_valid_port_name(name)
            if msgs:
                causes.extend(invalid(port_path.child("name"), name, m) for m in msgs)
            elif name in names:
                causes.append(duplicate(port_path.child("name"), name))
            else:
                names.add(name)
        container_port = get_int(port, "containerPort")
        if container_port == 0:
            causes.append(required(port_path.child("containerPort")))
        else:
            causes.extend(
                invalid(port_path.child("containerPort"), container_port, m)
                for m in is_valid_port_num(container_port)
            )
        host_port = get_int(port, "hostPort")
        if host_port != 0:
            causes.extend(
                invalid(port_path.child("hostPort"), host_port, m)
                for m in is_valid_port_num(host_port)
            )
        protocol = get_str(port, "protocol")
        if not protocol:
            causes.append(required(port_path.child("protocol")))
        elif protocol not in SUPPORTED_PORT_PROTOCOLS:
            causes.append(
                not_supported(
                    port_path.child("protocol"), JSONValue(protocol), SUPPORTED_PORT_PROTOCOLS
                )
            )
    return causes


def _env(env: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for i, var in enumerate(maps(env)):
        name = get_str(var, "name")
        if not name:
            causes.append(required(path.index(i).child("name")))
        else:
            causes.extend(
                invalid(path.index(i).child("name"), name, m) for m in is_relaxed_env_var_name(name)
            )
    return causes


def _env_from(sources: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for i, source in enumerate(maps(sources)):
        item = path.index(i)
        prefix = get_str(source, "prefix")
        if prefix:
            causes.extend(
                invalid(item.child("prefix"), prefix, m) for m in is_relaxed_env_var_name(prefix)
            )
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = source.get(key)
            if isinstance(ref, Mapping):
                count += 1
                name = get_str(ref, "name")
                if not name:
                    causes.append(required(item.child(key, "name")))
                else:
                    causes.extend(
                        invalid(item.child(key, "name"), name, m)
                        for m in name_is_dns_subdomain(name, True)
                    )
        if count == 0:
            causes.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            causes.append(invalid(path, "", "may not have more than one field specified at a time"))
    return causes


def _container_security_context(sc: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for key, check in (("runAsUser", is_valid_user_id), ("runAsGroup", is_valid_group_id)):
        value = opt_int(sc, key)
        if value is not None:
            causes.extend(invalid(path.child(key), value, m) for m in check(value))
    return causes


def _container_common(container: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    name = get_str(container, "name")
    if not name:
        causes.append(required(path.child("name")))
    else:
        causes.extend(_dns_label(name, path.child("name")))
    if not get_str(container, "image"):
        causes.append(required(path.child("image")))
    policy = get_str(container, "terminationMessagePolicy")
    if not policy:
        causes.append(required(path.child("terminationMessagePolicy")))
    elif policy not in _TERMINATION_MESSAGE_POLICIES:
        causes.append(
            not_supported(
                path.child("terminationMessagePolicy"),
                JSONValue(policy),
                _TERMINATION_MESSAGE_POLICIES,
            )
        )
    causes.extend(validate_container_ports(get_list(container, "ports"), path.child("ports")))
    causes.extend(_env(get_list(container, "env"), path.child("env")))
    causes.extend(_env_from(get_list(container, "envFrom"), path.child("envFrom")))
    pull = get_str(container, "imagePullPolicy")
    if not pull:
        causes.append(required(path.child("imagePullPolicy")))
    elif pull not in _PULL_POLICIES:
        causes.append(not_supported(path.child("imagePullPolicy"), JSONValue(pull), _PULL_POLICIES))
    causes.extend(
        _container_security_context(
            get_map(container, "securityContext"), path.child("securityContext")
        )
    )
    return causes


def _host_port_conflicts(containers: Sequence[Mapping[str, Any]], path: Path) -> list[Cause]:
    seen: set[str] = set()
    causes: list[Cause] = []
    for ci, container in enumerate(containers):
        for pi, port in enumerate(maps(get_list(container, "ports"))):
            host_port = get_int(port, "hostPort")
            if host_port == 0:
                continue
            key = f"{get_str(port, 'protocol')}/{get_str(port, 'hostIP')}/{host_port}"
            if key in seen:
                causes.append(
                    duplicate(path.index(ci).child("ports").index(pi).child("hostPort"), key)
                )
            else:
                seen.add(key)
    return causes


def _containers(containers: Sequence[Mapping[str, Any]], path: Path) -> list[Cause]:
    if not containers:
        return [required(path)]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, container in enumerate(containers):
        item = path.index(i)
        causes.extend(_container_common(container, item))
        name = get_str(container, "name")
        if name in names:
            causes.append(duplicate(item.child("name"), name))
        else:
            names.add(name)
        if container.get("restartPolicy") is not None:
            causes.append(
                forbidden(item.child("restartPolicy"), "may not be set for non-init containers")
            )
    causes.extend(_host_port_conflicts(containers, path))
    return causes


def _init_containers(
    containers: Sequence[Mapping[str, Any]],
    regular: Sequence[Mapping[str, Any]],
    path: Path,
) -> list[Cause]:
    causes: list[Cause] = []
    names = {get_str(c, "name") for c in regular}
    for i, container in enumerate(containers):
        item = path.index(i)
        causes.extend(_container_common(container, item))
        restart_always = False
        policy = opt_str(container, "restartPolicy")
        if policy is not None:
            if policy != "Always":
                causes.append(
                    not_supported(item.child("restartPolicy"), JSONValue(policy), ["Always"])
                )
            restart_always = policy == "Always"
        name = get_str(container, "name")
        if name in names:
            causes.append(duplicate(item.child("name"), name))
        elif name:
            names.add(name)
        # Kubernetes checks each init container alone, so its paths always say index 0.
        causes.extend(_host_port_conflicts([container], path))
        if not restart_always:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(key) is not None:
                    causes.append(forbidden(item.child(key), _NOT_INIT_ONLY))
    return causes


# ---------------------------------------------------------------------------- pod spec


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
            errs.extend(_dns_label(name, item.child("name")))
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
            causes.extend(_qualified_name(key, item.child("key")))
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
    causes.extend(_containers(containers, path.child("containers")))
    causes.extend(_init_containers(init_containers, containers, path.child("initContainers")))
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
            _qualified_name(
                get_str(gate, "conditionType"),
                path.child("readinessGates").index(i).child("conditionType"),
            )
        )
    seen_gates: set[str] = set()
    for i, gate in enumerate(maps(get_list(spec, "schedulingGates"))):
        name = get_str(gate, "name")
        causes.extend(_qualified_name(name, path.child("schedulingGates").index(i)))
        if name in seen_gates:
            causes.append(duplicate(path.child("schedulingGates").index(i), name))
        seen_gates.add(name)
    # The internal type has only serviceAccountName; v1's deprecated serviceAccount fills it.
    account = get_str(spec, "serviceAccountName") or get_str(spec, "serviceAccount")
    if account:
        causes.extend(_dns_subdomain(account, path.child("serviceAccountName")))
    node_name = get_str(spec, "nodeName")
    if node_name:
        causes.extend(_dns_subdomain(node_name, path.child("nodeName")))
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
            causes.extend(_dns_label(value, path.child(key)))
    causes.extend(validate_tolerations(get_list(spec, "tolerations"), path.child("tolerations")))
    priority_class = get_str(spec, "priorityClassName")
    if priority_class:
        causes.extend(_dns_subdomain(priority_class, path.child("priorityClassName")))
    runtime_class = opt_str(spec, "runtimeClassName")
    if runtime_class is not None:
        causes.extend(_dns_subdomain(runtime_class, path.child("runtimeClassName")))
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
    causes.extend(_pod_specific_annotations(annotations, spec, path.child("annotations"), False))
    causes.extend(validate_pod_spec(spec, path.child("spec")))
    if get_list(spec, "ephemeralContainers"):
        causes.append(
            forbidden(
                path.child("spec", "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return causes


# ---------------------------------------------------------------------------- pod


def _pod_metadata_and_spec(pod: Mapping[str, Any], allow_bad_cost: bool) -> list[Cause]:
    meta_path, spec_path = Path("metadata"), Path("spec")
    spec = get_map(pod, "spec")
    causes = validate_object_meta(pod, True, name_is_dns_subdomain)
    causes.extend(
        _pod_specific_annotations(
            get_map(metadata_of(pod), "annotations"),
            spec,
            meta_path.child("annotations"),
            allow_bad_cost,
        )
    )
    causes.extend(validate_pod_spec(spec, spec_path, resource_is_pod=True))
    if not (get_str(spec, "serviceAccountName") or get_str(spec, "serviceAccount")):
        for vi, volume in enumerate(maps(get_list(spec, "volumes"))):
            sources = get_list(get_map(volume, "projected"), "sources")
            for si, source in enumerate(maps(sources)):
                if source.get("serviceAccountToken") is not None:
                    causes.append(
                        forbidden(
                            spec_path.child("volumes")
                            .index(vi)
                            .child("projected", "sources")
                            .index(si)
                            .child("serviceAccountToken"),
                            "must not be specified when serviceAccountName is not set",
                        )
                    )
    for key in ("containers", "initContainers"):
        for i, container in enumerate(maps(get_list(spec, key))):
            image = get_str(container, "image")
            if len(image) != len(_go_trim_space(image)):
                causes.append(
                    invalid(
                        spec_path.child(key).index(i).child("image"),
                        image,
                        "must not have leading or trailing whitespace",
                    )
                )
    return causes


def validate_pod(pod: Mapping[str, Any]) -> list[Cause]:
    """Kubernetes' ``ValidatePodCreate`` (the implemented subset)."""
    causes = _pod_metadata_and_spec(pod, allow_bad_cost=False)
    spec = get_map(pod, "spec")
    if get_list(spec, "ephemeralContainers"):
        causes.append(forbidden(Path("spec", "ephemeralContainers"), "cannot be set on create"))
    if get_str(spec, "nodeName") and get_list(spec, "schedulingGates"):
        causes.append(
            forbidden(
                Path("spec", "nodeName"),
                "cannot be set until all schedulingGates have been cleared",
            )
        )
    return causes


def _annotation_updates(new: Mapping[str, Any], old: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    for key, old_value in old.items():
        if key in new and new[key] == old_value:
            continue
        if key.startswith(APPARMOR_ANNOTATION_PREFIX):
            causes.append(forbidden(path.key(key), "may not remove or update AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            causes.append(
                forbidden(path.key(key), "may not remove or update mirror pod annotation")
            )
    for key in new:
        if key in old:
            continue
        if key.startswith(APPARMOR_ANNOTATION_PREFIX):
            causes.append(forbidden(path.key(key), "may not add AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            causes.append(forbidden(path.key(key), "may not add mirror pod annotation"))
    return causes


def _container_updates(
    new: Sequence[Mapping[str, Any]], old: Sequence[Mapping[str, Any]], path: Path
) -> tuple[list[Cause], bool]:
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    causes: list[Cause] = []
    for i, container in enumerate(new):
        image = get_str(container, "image")
        if not image:
            causes.append(required(path.index(i).child("image")))
        if len(_go_trim_space(image)) != len(image):
            causes.append(
                invalid(
                    path.index(i).child("image"),
                    image,
                    "must not have leading or trailing whitespace",
                )
            )
    return causes, False


def validate_pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """Kubernetes' ``ValidatePodUpdate`` (the implemented subset; see the module docstring)."""
    meta_path, spec_path = Path("metadata"), Path("spec")
    new_annotations = get_map(metadata_of(new), "annotations")
    old_annotations = get_map(metadata_of(old), "annotations")
    # An invalid deletion cost already stored is tolerated, as Kubernetes does.
    allow_bad_cost = not _valid_deletion_cost(old_annotations)
    causes = validate_object_meta_update(new, old)
    causes.extend(_pod_metadata_and_spec(new, allow_bad_cost))
    causes.extend(
        _annotation_updates(new_annotations, old_annotations, meta_path.child("annotations"))
    )
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    causes.extend(
        _pod_specific_annotations(
            new_annotations, new_spec, meta_path.child("annotations"), allow_bad_cost
        )
    )
    for key in ("containers", "initContainers"):
        errs, stop = _container_updates(
            maps(get_list(new_spec, key)), maps(get_list(old_spec, key)), spec_path.child(key)
        )
        causes.extend(errs)
        if stop:
            return causes
    deadline, old_deadline = (
        opt_int(new_spec, "activeDeadlineSeconds"),
        opt_int(old_spec, "activeDeadlineSeconds"),
    )
    deadline_path = spec_path.child("activeDeadlineSeconds")
    if deadline is not None:
        if not 0 <= deadline <= _MAX_INT32:
            causes.append(invalid(deadline_path, deadline, inclusive_range_error(0, _MAX_INT32)))
            return causes
        if old_deadline is not None and old_deadline < deadline:
            causes.append(
                invalid(deadline_path, deadline, "must be less than or equal to previous value")
            )
            return causes
    elif old_deadline is not None:
        causes.append(
            invalid(
                deadline_path,
                JSONValue(None),
                "must not update from a positive integer to nil value",
            )
        )
    return causes
