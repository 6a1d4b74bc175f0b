"""PodSecurity: the Pod Security Standards a namespace's labels ask for.

A namespace's labels ``pod-security.kubernetes.io/enforce``, ``.../warn`` and ``.../audit``
name a level (``privileged``, ``baseline``, ``restricted``), each with an optional
``...-version`` label (``latest`` when absent; kstore checks every version with the latest
rules; a namespace without a label takes the configured default,
:mod:`.podsecurity_config`, ``privileged`` / ``latest`` unless configured). On pod create and
on updates that change more than metadata and the few mutable pod fields (kube-apiserver's
``PodSecurity`` plugin):

- ``enforce``: a violating pod is refused: 403 ``violates PodSecurity "<level>:<version>":
  <check> (<detail>), ...``;
- ``warn``: the same list comes back as a Warning header ``would violate PodSecurity ...``,
  also for the pod templates of workload resources (Deployments, Jobs, ...), which are never
  refused;
- ``audit``: the same list becomes the audit annotation
  ``pod-security.kubernetes.io/audit-violations`` (``would violate PodSecurity ...``) of the
  request's audit event (``--audit-log-path``), for pods and templates, also when the pod is
  refused; a pod's event also records ``pod-security.kubernetes.io/enforce-policy``
  (``<level>:<version>``);
- a label whose value Kubernetes cannot parse is read as it reads it (an enforce level as
  ``restricted``, an audit or warn level as ``privileged``, a version as ``latest``) and
  recorded as ``pod-security.kubernetes.io/error`` (``Failed to parse policy: ...``);
- exemptions (configured usernames, namespaces, runtime classes) skip every check, and the
  audit event records ``pod-security.kubernetes.io/exempt`` (``user``, ``namespace``,
  ``runtimeClass``).

The checks and their wording are the Pod Security Standards' (baseline: host namespaces,
privileged, non-default capabilities, hostPath volumes, hostPort, AppArmor, SELinux, /proc
mount, seccomp Unconfined, sysctls, Windows hostProcess; restricted adds volume types,
privilege escalation, running as non-root, runAsUser=0, seccomp, dropping every
capability), listed baseline first, then restricted, each in the order of its identifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import forbidden, read_object
from kstore.registry.plugins.podsecurity_config import PodSecurityConfig

__all__ = ["hooks"]

_PREFIX: Final = "pod-security.kubernetes.io/"
_LEVELS: Final = {"privileged": 0, "baseline": 1, "restricted": 2}
_BASELINE_CAPS: Final = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_SYSCTLS: Final = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
_SELINUX_TYPES: Final = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
_VOLUME_TYPES: Final = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
        "image",
    }
)
#: Workload kinds whose pod template is checked for warnings: (group, kind) -> template path.
_TEMPLATES: Final = {
    ("", "ReplicationController"): ("spec", "template"),
    ("", "PodTemplate"): ("template",),
    ("apps", "Deployment"): ("spec", "template"),
    ("apps", "ReplicaSet"): ("spec", "template"),
    ("apps", "StatefulSet"): ("spec", "template"),
    ("apps", "DaemonSet"): ("spec", "template"),
    ("batch", "Job"): ("spec", "template"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
}


def _d(obj: Any, *path: str) -> dict[str, Any]:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) else {}


def _containers(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        found = spec.get(field)
        if isinstance(found, list):
            yield from (c for c in found if isinstance(c, dict))


def _names(kind: str, names: list[str]) -> str:
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"{kind}s {quoted}" if len(names) > 1 else f"{kind} {quoted}"


def _quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


Check = Callable[[dict[str, Any], dict[str, Any]], tuple[str, str] | None]


def _host_namespaces(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    found = [f"{f}=true" for f in ("hostNetwork", "hostPID", "hostIPC") if spec.get(f) is True]
    return ("host namespaces", ", ".join(found)) if found else None


def _privileged(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("privileged") is True
    ]
    if not bad:
        return None
    return "privileged", f"{_names('container', bad)} must not set securityContext.privileged=true"


def _capabilities_baseline(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    details = []
    for c in _containers(spec):
        added = _d(c, "securityContext", "capabilities").get("add") or []
        bad = sorted({str(a) for a in added if str(a) not in _BASELINE_CAPS})
        if bad:
            details.append(
                f'container "{c.get("name")}" must not include {_quoted(bad)} in '
                "securityContext.capabilities.add"
            )
    return ("non-default capabilities", "; ".join(details)) if details else None


def _host_path(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = [
        str(v.get("name"))
        for v in spec.get("volumes") or ()
        if isinstance(v, dict) and "hostPath" in v
    ]
    return ("hostPath volumes", f"{_names('volume', bad)}") if bad else None


def _host_ports(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    details = []
    for c in _containers(spec):
        ports = [
            str(p.get("hostPort"))
            for p in c.get("ports") or ()
            if isinstance(p, dict) and p.get("hostPort")
        ]
        if ports:
            word = "hostPorts" if len(ports) > 1 else "hostPort"
            details.append(f'container "{c.get("name")}" uses {word} {", ".join(ports)}')
    return ("hostPort", "; ".join(details)) if details else None


def _app_armor(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = []
    if _d(spec, "securityContext", "appArmorProfile").get("type") == "Unconfined":
        bad.append('pod must not set securityContext.appArmorProfile.type to "Unconfined"')
    for c in _containers(spec):
        if _d(c, "securityContext", "appArmorProfile").get("type") == "Unconfined":
            bad.append(
                f'container "{c.get("name")}" must not set '
                'securityContext.appArmorProfile.type to "Unconfined"'
            )
    for key, value in sorted(_d(meta, "annotations").items()):
        allowed = value == "runtime/default" or str(value).startswith("localhost/")
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not allowed:
            bad.append(f'{key}="{value}"')
    return (
        ("forbidden AppArmor profile" + ("s" if len(bad) > 1 else ""), ", ".join(bad))
        if bad
        else None
    )


def _se_linux(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    def bad(options: dict[str, Any]) -> bool:
        return (
            str(options.get("type") or "") not in _SELINUX_TYPES
            or bool(options.get("user"))
            or bool(options.get("role"))
        )

    found = []
    if bad(_d(spec, "securityContext", "seLinuxOptions")):
        found.append("pod")
    names = [
        str(c.get("name"))
        for c in _containers(spec)
        if bad(_d(c, "securityContext", "seLinuxOptions"))
    ]
    if names:
        found.append(_names("container", names))
    if not found:
        return None
    return "seLinuxOptions", f"{' and '.join(found)} set forbidden securityContext.seLinuxOptions"


def _proc_mount(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("procMount") not in (None, "Default")
    ]
    if not bad:
        return None
    return (
        "procMount",
        f'{_names("container", bad)} must not set securityContext.procMount to "Unmasked"',
    )


def _seccomp_baseline(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = []
    if _d(spec, "securityContext", "seccompProfile").get("type") == "Unconfined":
        bad.append('pod must not set securityContext.seccompProfile.type to "Unconfined"')
    names = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext", "seccompProfile").get("type") == "Unconfined"
    ]
    if names:
        bad.append(
            f"{_names('container', names)} must not set securityContext.seccompProfile.type "
            'to "Unconfined"'
        )
    return ("seccompProfile", "; ".join(bad)) if bad else None


def _sysctls(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    sysctls = _d(spec, "securityContext").get("sysctls") or []
    bad = [
        str(s.get("name")) for s in sysctls if isinstance(s, dict) and s.get("name") not in _SYSCTLS
    ]
    return ("forbidden sysctls", ", ".join(bad)) if bad else None


def _host_process(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    pod = _d(spec, "securityContext", "windowsOptions").get("hostProcess") is True
    names = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext", "windowsOptions").get("hostProcess") is True
    ]
    if not pod and not names:
        return None
    parts = (["pod"] if pod else []) + ([_names("container", names)] if names else [])
    return (
        "hostProcess",
        f"{' and '.join(parts)} must not set securityContext.windowsOptions.hostProcess=true",
    )


def _volume_types(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    details = []
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        kinds = [k for k in volume if k != "name" and k not in _VOLUME_TYPES]
        for kind in kinds:
            details.append(f'volume "{volume.get("name")}" uses restricted volume type "{kind}"')
    if not details:
        return None
    return "restricted volume types", ", ".join(details)


def _privilege_escalation(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    bad = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("allowPrivilegeEscalation") is not False
    ]
    if not bad:
        return None
    return (
        "allowPrivilegeEscalation != false",
        f"{_names('container', bad)} must set securityContext.allowPrivilegeEscalation=false",
    )


def _capabilities_restricted(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    no_drop = []
    adds = []
    for c in _containers(spec):
        capabilities = _d(c, "securityContext", "capabilities")
        if "ALL" not in (capabilities.get("drop") or ()):
            no_drop.append(str(c.get("name")))
        bad = sorted({str(a) for a in capabilities.get("add") or () if a != "NET_BIND_SERVICE"})
        if bad:
            adds.append(
                f'container "{c.get("name")}" must not include {_quoted(bad)} in '
                "securityContext.capabilities.add"
            )
    details = []
    if no_drop:
        details.append(
            f'{_names("container", no_drop)} must set securityContext.capabilities.drop=["ALL"]'
        )
    details += adds
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _run_as_non_root(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    pod = _d(spec, "securityContext").get("runAsNonRoot")
    if pod is False:
        return "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false"
    explicit_false = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("runAsNonRoot") is False
    ]
    if explicit_false:
        return (
            "runAsNonRoot != true",
            f"{_names('container', explicit_false)} must not set "
            "securityContext.runAsNonRoot=false",
        )
    if pod is True:
        return None
    unset = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("runAsNonRoot") is not True
    ]
    if not unset:
        return None
    names = _names("container", unset)
    return "runAsNonRoot != true", f"pod or {names} must set securityContext.runAsNonRoot=true"


def _run_as_user(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    found = []
    if _d(spec, "securityContext").get("runAsUser") == 0:
        found.append("pod")
    names = [
        str(c.get("name"))
        for c in _containers(spec)
        if _d(c, "securityContext").get("runAsUser") == 0
    ]
    if names:
        found.append(_names("container", names))
    if not found:
        return None
    return "runAsUser=0", f"{' and '.join(found)} must not set runAsUser=0"


def _seccomp_restricted(meta: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str] | None:
    good = ("RuntimeDefault", "Localhost")
    pod = _d(spec, "securityContext", "seccompProfile").get("type")
    if pod is not None and pod not in good:
        return "seccompProfile", f'pod must not set securityContext.seccompProfile.type to "{pod}"'
    bad_set = []
    unset = []
    for c in _containers(spec):
        kind = _d(c, "securityContext", "seccompProfile").get("type")
        if kind is None:
            if pod is None:
                unset.append(str(c.get("name")))
        elif kind not in good:
            bad_set.append((str(c.get("name")), str(kind)))
    if bad_set:
        name, kind = bad_set[0]
        return (
            "seccompProfile",
            f'container "{name}" must not set securityContext.seccompProfile.type to "{kind}"',
        )
    if unset:
        return (
            "seccompProfile",
            f"pod or {_names('container', unset)} must set securityContext.seccompProfile.type "
            'to "RuntimeDefault" or "Localhost"',
        )
    return None


#: (level, identifier, check); restricted replaces the baseline checks it names.
_CHECKS: Final[tuple[tuple[int, str, Check], ...]] = (
    (1, "appArmorProfile", _app_armor),
    (1, "capabilities_baseline", _capabilities_baseline),
    (1, "hostNamespaces", _host_namespaces),
    (1, "hostPathVolumes", _host_path),
    (1, "hostPorts", _host_ports),
    (1, "hostProcess", _host_process),
    (1, "privileged", _privileged),
    (1, "procMount", _proc_mount),
    (1, "seLinuxOptions", _se_linux),
    (1, "seccompProfile_baseline", _seccomp_baseline),
    (1, "sysctls", _sysctls),
    (2, "allowPrivilegeEscalation", _privilege_escalation),
    (2, "capabilities_restricted", _capabilities_restricted),
    (2, "restrictedVolumes", _volume_types),
    (2, "runAsNonRoot", _run_as_non_root),
    (2, "runAsUser", _run_as_user),
    (2, "seccompProfile_restricted", _seccomp_restricted),
)
_REPLACED: Final = {2: {"capabilities_baseline", "seccompProfile_baseline"}}


def violations(level: int, meta: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """``<check> (<detail>)`` for each check of ``level`` the pod fails, in order."""
    replaced = _REPLACED.get(level, set())
    out = []
    for check_level, ident, check in _CHECKS:
        if check_level > level or ident in replaced:
            continue
        found = check(meta, spec)
        if found is not None:
            out.append(f"{found[0]} ({found[1]})")
    return out


_VERSION: Final = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")


def _policy(
    labels: dict[str, Any], mode: str, config: PodSecurityConfig, errors: list[str]
) -> tuple[int, str]:
    """The mode's level (its rank) and ``level:version``: the namespace's labels, else the
    configured defaults. A label Kubernetes cannot parse is added to ``errors`` and read as
    Kubernetes reads it: an unknown enforce level as ``restricted`` (fail closed), an unknown
    audit or warn level as ``privileged`` (fail open), an unknown version as ``latest``."""
    level, version = config.defaults[mode]
    label = _PREFIX + mode
    if label in labels:
        level = str(labels[label])
        if level not in _LEVELS:
            errors.append(
                f'metadata.labels[{label}]: Invalid value: "{level}": must be one of '
                "privileged, baseline, restricted"
            )
            level = "restricted" if mode == "enforce" else "privileged"
    label = f"{_PREFIX}{mode}-version"
    if label in labels:
        version = str(labels[label])
        if version != "latest" and not _VERSION.match(version):
            errors.append(
                f'metadata.labels[{label}]: Invalid value: "{version}": must be "latest" or "v1.x"'
            )
            version = "latest"
    return _LEVELS[level], f"{level}:{version}"


def hooks(
    registry: Registry, configuration: PodSecurityConfig | None = None
) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    config = configuration or PodSecurityConfig.kubernetes_default()

    def annotate(attributes: AdmissionAttributes, key: str, value: str) -> None:
        attributes.audit_annotations[_PREFIX + key] = value

    def validate(attributes: AdmissionAttributes) -> None:
        if attributes.subresource or attributes.operation not in (
            Operation.CREATE,
            Operation.UPDATE,
        ):
            return
        obj = attributes.object
        if not isinstance(obj, dict) or not attributes.namespace:
            return
        key = (attributes.definition.group, attributes.definition.kind)
        is_pod = key == ("", "Pod")
        if is_pod:
            template = obj
        elif key in _TEMPLATES:
            template = _d(obj, *_TEMPLATES[key])
        else:
            return
        if attributes.namespace in config.exempt_namespaces:
            annotate(attributes, "exempt", "namespace")
            return
        user = attributes.user.name if attributes.user is not None else ""
        if user and user in config.exempt_usernames:
            annotate(attributes, "exempt", "user")
            return
        namespace = read_object(registry, "", "namespaces", "", attributes.namespace)
        labels = _d(namespace, "metadata", "labels")
        errors: list[str] = []
        enforce = _policy(labels, "enforce", config, errors)
        audit = _policy(labels, "audit", config, errors)
        warn = _policy(labels, "warn", config, errors)
        everywhere_privileged = audit[0] == 0 and warn[0] == 0 and (enforce[0] == 0 or not is_pod)
        if everywhere_privileged and not errors:
            if is_pod:
                annotate(attributes, "enforce-policy", "privileged:latest")
            return
        if attributes.operation is Operation.UPDATE and is_pod:
            old = attributes.old_object
            if isinstance(old, dict) and _d(old, "spec") == _d(obj, "spec"):
                return
        meta, spec = _d(template, "metadata"), _d(template, "spec")
        runtime_class = spec.get("runtimeClassName")
        if runtime_class and runtime_class in config.exempt_runtime_classes:
            annotate(attributes, "exempt", "runtimeClass")
            return
        if errors:
            listed = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
            annotate(attributes, "error", f"Failed to parse policy: {listed}")
        refusal = None
        if is_pod:
            annotate(attributes, "enforce-policy", enforce[1])
            found = violations(enforce[0], meta, spec)
            if found:
                refusal = f'violates PodSecurity "{enforce[1]}": {", ".join(found)}'
        found = violations(audit[0], meta, spec)
        if found:
            annotate(
                attributes,
                "audit-violations",
                f'would violate PodSecurity "{audit[1]}": {", ".join(found)}',
            )
        if refusal is not None:
            raise forbidden(attributes, refusal)
        found = violations(warn[0], meta, spec)
        if found:
            attributes.warnings.append(f'would violate PodSecurity "{warn[1]}": {", ".join(found)}')

    return None, validate
