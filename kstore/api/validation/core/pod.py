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
count, images and ``activeDeadlineSeconds``, tolerations only added, scheduling gates only
removed, and the mirror/AppArmor annotation rules.

Not implemented (accepted without a check): volume source contents, volume mounts and devices,
env ``valueFrom``, resources, probes and lifecycle handlers, affinity, topology spread, IPs
(DNS nameservers, host aliases), OS-specific rules, seccomp/AppArmor fields, and on update the
final "pod updates may not change fields other than ..." check (its message embeds a Go
``cmp.Diff`` that cannot be reproduced faithfully).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import (
    get_list,
    get_map,
    get_str,
    maps,
    opt_int,
)
from kstore.api.validation.core._common import (
    go_trim_space,
)
from kstore.api.validation.core.container import validate_container_ports
from kstore.api.validation.core.podspec import (
    APPARMOR_ANNOTATION_PREFIX,
    MIRROR_POD_ANNOTATION,
    pod_specific_annotations,
    valid_deletion_cost,
    validate_pod_spec,
    validate_pod_template_spec,
    validate_tolerations,
)
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    required,
)
from kstore.api.validation.names import (
    inclusive_range_error,
    name_is_dns_subdomain,
)
from kstore.api.validation.objectmeta import (
    metadata_of,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

# The pod spec and template rules live in podspec/container; they are re-exported here, where
# callers of the first versions of this module imported them from.
__all__ = [
    "validate_container_ports",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_pod_update",
    "validate_tolerations",
]

_MAX_INT32: Final = 2**31 - 1


def _pod_metadata_and_spec(pod: Mapping[str, Any], allow_bad_cost: bool) -> list[Cause]:
    meta_path, spec_path = Path("metadata"), Path("spec")
    spec = get_map(pod, "spec")
    causes = validate_object_meta(pod, True, name_is_dns_subdomain)
    causes.extend(
        pod_specific_annotations(
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
            if len(image) != len(go_trim_space(image)):
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
        if len(go_trim_space(image)) != len(image):
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
    allow_bad_cost = not valid_deletion_cost(old_annotations)
    causes = validate_object_meta_update(new, old)
    causes.extend(_pod_metadata_and_spec(new, allow_bad_cost))
    causes.extend(
        _annotation_updates(new_annotations, old_annotations, meta_path.child("annotations"))
    )
    new_spec, old_spec = get_map(new, "spec"), get_map(old, "spec")
    causes.extend(
        pod_specific_annotations(
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
    causes.extend(
        _only_added_tolerations(
            get_list(new_spec, "tolerations"),
            get_list(old_spec, "tolerations"),
            spec_path.child("tolerations"),
        )
    )
    causes.extend(
        _only_deleted_scheduling_gates(
            get_list(new_spec, "schedulingGates"),
            get_list(old_spec, "schedulingGates"),
            spec_path.child("schedulingGates"),
        )
    )
    return causes


def _toleration_key(toleration: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (
        get_str(toleration, "key"),
        get_str(toleration, "operator"),
        get_str(toleration, "value"),
        get_str(toleration, "effect"),
    )


def _only_added_tolerations(new: Sequence[Any], old: Sequence[Any], path: Path) -> list[Cause]:
    """Existing tolerations stay (only their ``tolerationSeconds`` may change); new ones may
    be added, and all of them are valid."""
    kept = {_toleration_key(t) for t in maps(new)}
    for toleration in maps(old):
        if _toleration_key(toleration) not in kept:
            return [
                forbidden(
                    path, "existing toleration can not be modified except its tolerationSeconds"
                )
            ]
    return validate_tolerations(new, path)


def _only_deleted_scheduling_gates(
    new: Sequence[Any], old: Sequence[Any], path: Path
) -> list[Cause]:
    if not new:
        return []
    added: dict[str, int] = {}
    for i, gate in enumerate(maps(new)):
        added[get_str(gate, "name")] = i
    for gate in maps(old):
        added.pop(get_str(gate, "name"), None)
    # Kubernetes walks a Go map here (in no fixed order); this reports in list order.
    return [
        forbidden(
            path.index(i).child("name"),
            f"only deletion is allowed, but found new scheduling gate '{name}'",
        )
        for name, i in sorted(added.items(), key=lambda item: item[1])
    ]
