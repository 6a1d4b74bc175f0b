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

The checks and their wording are the Pod Security Standards' (:mod:`.pod_security_standards`).
"""

from __future__ import annotations

import re
from typing import Any, Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import forbidden, read_object
from kstore.registry.plugins.pod_security_standards import violations
from kstore.registry.plugins.podsecurity_config import PodSecurityConfig

__all__ = ["hooks"]

_PREFIX: Final = "pod-security.kubernetes.io/"
_LEVELS: Final = {"privileged": 0, "baseline": 1, "restricted": 2}
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
