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
- a namespace whose labels Kubernetes cannot parse is refused (422; on update only when the
  errors changed), and raising a namespace's enforce level warns of its existing pods that
  break the new one (``existing pods in namespace ... violate the new PodSecurity enforce
  level ...``, then one line per distinct list of reasons, naming the first pod that has it);
- exemptions (configured usernames, namespaces, runtime classes) skip every check, and the
  audit event records ``pod-security.kubernetes.io/exempt`` (``user``, ``namespace``,
  ``runtimeClass``).

The checks and their wording are the Pod Security Standards' (:mod:`.pod_security_standards`).
"""

from __future__ import annotations

import re
from typing import Any, Final

from kstore.api.validation.field import Path, invalid
from kstore.errors import Cause, Invalid
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import forbidden, list_objects, read_object
from kstore.registry.plugins.pod_security_standards import failures, violations
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
_LABELS: Final = Path("metadata", "labels")
#: kube-apiserver's bounds on the pods checked when a namespace's enforce level tightens.
_MAX_PODS_CHECKED: Final = 3000


def _policy(
    labels: dict[str, Any], mode: str, config: PodSecurityConfig, errors: list[Cause]
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
            detail = "must be one of privileged, baseline, restricted"
            errors.append(invalid(_LABELS.key(label), level, detail))
            level = "restricted" if mode == "enforce" else "privileged"
    label = f"{_PREFIX}{mode}-version"
    if label in labels:
        version = str(labels[label])
        if version != "latest" and not _VERSION.match(version):
            errors.append(invalid(_LABELS.key(label), version, 'must be "latest" or "v1.x"'))
            version = "latest"
    return _LEVELS[level], f"{level}:{version}"


def _policies(
    labels: dict[str, Any], config: PodSecurityConfig
) -> tuple[tuple[tuple[int, str], ...], list[Cause]]:
    """(enforce, audit, warn) and the labels' parse errors."""
    errors: list[Cause] = []
    found = tuple(_policy(labels, mode, config, errors) for mode in ("enforce", "audit", "warn"))
    return found, errors


def _aggregate(errors: list[Cause]) -> str:
    rendered = [e.render() for e in errors]
    return rendered[0] if len(rendered) == 1 else f"[{', '.join(rendered)}]"


def hooks(
    registry: Registry, configuration: PodSecurityConfig | None = None
) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    config = configuration or PodSecurityConfig.kubernetes_default()

    def _exempt_class(spec: dict[str, Any]) -> bool:
        runtime_class = spec.get("runtimeClassName")
        return bool(runtime_class) and runtime_class in config.exempt_runtime_classes

    def annotate(attributes: AdmissionAttributes, key: str, value: str) -> None:
        attributes.audit_annotations[_PREFIX + key] = value

    def validate_namespace(attributes: AdmissionAttributes, namespace: dict[str, Any]) -> None:
        """Labels Kubernetes cannot parse are refused (on update only when they changed);
        tightening the enforce level warns of the existing pods that break it."""
        name = str(_d(namespace, "metadata").get("name") or attributes.name)
        (enforce, _, _), errors = _policies(_d(namespace, "metadata", "labels"), config)
        if attributes.operation is Operation.CREATE:
            if errors:
                raise Invalid.for_object("Namespace", name, errors)
            return
        labels = _d(attributes.old_object, "metadata", "labels")
        (old_enforce, _, _), old_errors = _policies(labels, config)
        if errors and (not old_errors or _aggregate(errors) != _aggregate(old_errors)):
            raise Invalid.for_object("Namespace", name, errors)
        if enforce == old_enforce or enforce[0] == 0:
            return
        same_version = enforce[1].partition(":")[2] == old_enforce[1].partition(":")[2]
        if same_version and enforce[0] <= old_enforce[0]:
            return
        if name in config.exempt_namespaces:
            return
        attributes.warnings.extend(existing_pod_warnings(name, enforce))

    def existing_pod_warnings(namespace: str, enforce: tuple[int, str]) -> list[str]:
        """kube-apiserver's warnings about the namespace's pods that break ``enforce``: one
        line per distinct list of reasons, naming the first pod (by name) that has it."""
        pods = [
            pod
            for pod in list_objects(registry, "", "pods", namespace)
            if not _exempt_class(_d(pod, "spec"))
        ]
        checked = pods[:_MAX_PODS_CHECKED]
        seen: dict[str, tuple[str, int]] = {}
        for pod in checked:
            found = failures(enforce[0], _d(pod, "metadata"), _d(pod, "spec"))
            if not found:
                continue
            reason = ", ".join(r for r, _ in found)
            pod_name = str(_d(pod, "metadata").get("name") or "")
            first, count = seen.get(reason, (pod_name, 0))
            seen[reason] = (min(first, pod_name), count + 1)
        warnings = []
        if len(checked) < len(pods):
            warnings.append(
                "new PodSecurity enforce level only checked against the first "
                f"{len(checked)} of {len(pods)} existing pods"
            )
        if seen:
            warnings.append(
                f'existing pods in namespace "{namespace}" violate the new PodSecurity '
                f'enforce level "{enforce[1]}"'
            )
        decorated = []
        for reason, (first, count) in seen.items():
            if count == 1:
                decorated.append(f"{first}: {reason}")
            elif count == 2:
                decorated.append(f"{first} (and 1 other pod): {reason}")
            else:
                decorated.append(f"{first} (and {count - 1} other pods): {reason}")
        return warnings + sorted(decorated)

    def validate(attributes: AdmissionAttributes) -> None:
        if attributes.subresource or attributes.operation not in (
            Operation.CREATE,
            Operation.UPDATE,
        ):
            return
        obj = attributes.object
        key = (attributes.definition.group, attributes.definition.kind)
        if key == ("", "Namespace") and isinstance(obj, dict):
            validate_namespace(attributes, obj)
            return
        if not isinstance(obj, dict) or not attributes.namespace:
            return
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
        (enforce, audit, warn), errors = _policies(labels, config)
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
        if _exempt_class(spec):
            annotate(attributes, "exempt", "runtimeClass")
            return
        if errors:
            annotate(attributes, "error", f"Failed to parse policy: {_aggregate(errors)}")
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
