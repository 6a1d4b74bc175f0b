"""Validation of the pod subresources that change the spec: ``ephemeralcontainers`` and
``resize`` (Kubernetes' ``ValidatePodEphemeralContainersUpdate`` and ``ValidatePodResize``).

Implemented, with v1.36's paths and messages: object metadata update rules; ephemeral
containers named (unique DNS labels across every container of the pod), with an image, none of
the fields an ephemeral container may not have (ports, probes, lifecycle, resources, resize
policy, restart policy), a ``targetContainerName`` that names a container of the pod; existing
ephemeral containers neither removed nor changed; a resize that does not change the pod's QoS
class. Not implemented: the Go diff Kubernetes appends to "may not be changed", container
resource quantities (requests within limits) and the node-dependent resize rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.core._common import dns_label
from kstore.api.validation.field import Path, duplicate, forbidden, invalid, not_found, required
from kstore.api.validation.objectmeta import validate_object_meta_update
from kstore.errors import Cause

__all__ = ["validate_pod_ephemeral_containers_update", "validate_pod_resize"]

#: Container fields an ephemeral container may not set, in Kubernetes' order of checks.
_FORBIDDEN_FIELDS: Final = (
    "lifecycle",
    "livenessProbe",
    "ports",
    "readinessProbe",
    "resources",
    "resizePolicy",
    "startupProbe",
)


def _ephemeral_container(
    container: Mapping[str, Any], path: Path, names: set[str], targets: set[str]
) -> list[Cause]:
    causes: list[Cause] = []
    name = get_str(container, "name")
    if not name:
        causes.append(required(path.child("name")))
    else:
        causes.extend(dns_label(name, path.child("name")))
        if name in names:
            causes.append(duplicate(path.child("name"), name))
        names.add(name)
    if not get_str(container, "image"):
        causes.append(required(path.child("image")))
    for key in _FORBIDDEN_FIELDS:
        value = container.get(key)
        if value not in (None, {}, []):
            causes.append(forbidden(path.child(key), "cannot be set for an Ephemeral Container"))
    if container.get("restartPolicy") is not None:
        causes.append(
            forbidden(path.child("restartPolicy"), "cannot be set for an Ephemeral Container")
        )
    target = get_str(container, "targetContainerName")
    if target and target not in targets:
        causes.append(not_found(path.child("targetContainerName"), target))
    return causes


def validate_pod_ephemeral_containers_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """A write of ``pods/ephemeralcontainers`` (``new`` already holds ``old`` but for its
    ephemeral containers)."""
    causes = validate_object_meta_update(new, old)
    annotations = get_map(get_map(old, "metadata"), "annotations")
    if "kubernetes.io/config.mirror" in annotations:
        return [forbidden(Path(""), "static pods do not support ephemeral containers")]
    spec = get_map(new, "spec")
    regular = {
        get_str(c, "name")
        for key in ("containers", "initContainers")
        for c in maps(get_list(spec, key))
    }
    names = set(regular)
    path = Path("spec", "ephemeralContainers")
    containers = maps(get_list(spec, "ephemeralContainers"))
    for i, container in enumerate(containers):
        causes.extend(_ephemeral_container(container, path.index(i), names, regular))
    by_name = {get_str(c, "name"): c for c in containers}
    for previous in maps(get_list(get_map(old, "spec"), "ephemeralContainers")):
        name = get_str(previous, "name")
        current = by_name.get(name)
        if current is None:
            causes.append(
                forbidden(path, f'existing ephemeral containers "{name}" may not be removed\n')
            )
        elif current != previous:
            causes.append(
                forbidden(path, f'existing ephemeral containers "{name}" may not be changed\n')
            )
    return causes


def validate_pod_resize(
    new: Mapping[str, Any], old: Mapping[str, Any], old_qos: str, new_qos: str
) -> list[Cause]:
    """A write of ``pods/resize`` (``new`` already holds ``old`` but for its containers'
    resources and resize policies); ``old_qos`` is the stored class, ``new_qos`` the one the
    new resources compute."""
    causes = validate_object_meta_update(new, old)
    if old_qos != new_qos:
        causes.append(
            invalid(Path("spec"), old_qos, "Pod QOS Class may not change as a result of resizing")
        )
    return causes
