"""core/v1 PersistentVolumeClaim: one external version, ``v1``, with the hub's shape.

Registered as Kubernetes serves it: namespaced ``persistentvolumeclaims``, short name ``pvc``,
a ``status`` subresource, no category, field selectors on ``metadata.name`` and
``metadata.namespace`` only.

Defaulting is Kubernetes' ``SetObjectDefaults_PersistentVolumeClaim``: ``status.phase``
``Pending`` and ``spec.volumeMode`` ``Filesystem`` (:func:`default_persistent_volume_claim`,
which StatefulSets apply to each of their ``volumeClaimTemplates`` too). The rounding of
resource quantities to milli-units is skipped, as for Pods.

Validation runs on the hub (:mod:`kstore.api.kinds._persistentvolumeclaim_validation`).
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._persistentvolumeclaim_validation import (
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_update,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = [
    "DEFINITIONS",
    "PERSISTENT_VOLUME_CLAIM",
    "default_persistent_volume_claim",
    "struct_at",
]

_PENDING: Final = "Pending"
_FILESYSTEM: Final = "Filesystem"


def struct_at(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The struct at ``parent[key]``, created when absent or null (a Go struct is never nil);
    None when the key holds something else (validation reports it)."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def default_persistent_volume_claim(pvc: Object) -> None:
    """``SetDefaults_PersistentVolumeClaim`` and ``SetDefaults_PersistentVolumeClaimSpec``,
    in place."""
    status = struct_at(pvc, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = _PENDING
    spec = struct_at(pvc, "spec")
    if spec is not None and spec.get("volumeMode") is None:
        spec["volumeMode"] = _FILESYSTEM


PERSISTENT_VOLUME_CLAIM: Final = KindDefinition(
    group="",
    kind="PersistentVolumeClaim",
    versions=(KindVersion(version="v1", default=default_persistent_volume_claim),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="persistentvolumeclaims",
        singular="persistentvolumeclaim",
        namespaced=True,
        short_names=("pvc",),
        subresources=("status",),
    ),
    validate=validate_persistent_volume_claim,
    validate_update=validate_persistent_volume_claim_update,
    list_kind="PersistentVolumeClaimList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    PERSISTENT_VOLUME_CLAIM,
    list_definition(PERSISTENT_VOLUME_CLAIM),
)
