"""Container rules of a pod spec: names, images, ports, env, pull and message policies.

Shared by Pods and by every kind with a pod template. Kubernetes v1.36's rules, paths and
messages; the implemented subset is listed in :mod:`kstore.api.validation.core.pod`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import (
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
    is_relaxed_env_var_name,
    is_valid_group_id,
    is_valid_port_name,
    is_valid_port_num,
    is_valid_user_id,
    name_is_dns_subdomain,
)
from kstore.errors import Cause

__all__ = [
    "SUPPORTED_PORT_PROTOCOLS",
    "validate_container_ports",
    "validate_containers",
    "validate_init_containers",
]

#: sets.List order (sorted), as Kubernetes lists them in "supported values".
SUPPORTED_PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
_NOT_INIT_ONLY: Final = "may not be set for init containers without restartPolicy=Always"


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
        causes.extend(dns_label(name, path.child("name")))
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


def validate_containers(containers: Sequence[Mapping[str, Any]], path: Path) -> list[Cause]:
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


def validate_init_containers(
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
