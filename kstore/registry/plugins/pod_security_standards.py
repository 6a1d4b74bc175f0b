"""The Pod Security Standards' checks: which fields of a pod (or pod template) each level
forbids, with the Standards' wording.

baseline: host namespaces, privileged, non-default capabilities, hostPath volumes, hostPort,
AppArmor, SELinux, /proc mount, seccomp Unconfined, sysctls, Windows hostProcess; restricted
adds volume types, privilege escalation, running as non-root, runAsUser=0, seccomp, dropping
every capability. :func:`failures` lists them baseline first, then restricted, each in the
order of its identifier, as ``(reason, detail)``; levels are ranked 0 (privileged), 1
(baseline), 2 (restricted). Pure functions over the pod's JSON shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

__all__ = ["failures", "violations"]

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


def failures(level: int, meta: dict[str, Any], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """``(reason, detail)`` for each check of ``level`` the pod fails, in order."""
    replaced = _REPLACED.get(level, set())
    out = []
    for check_level, ident, check in _CHECKS:
        if check_level > level or ident in replaced:
            continue
        found = check(meta, spec)
        if found is not None:
            out.append(found)
    return out


def violations(level: int, meta: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """``<reason> (<detail>)`` for each check of ``level`` the pod fails, in order."""
    return [f"{reason} ({detail})" for reason, detail in failures(level, meta, spec)]
