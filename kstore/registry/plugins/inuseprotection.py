"""StorageObjectInUseProtection: claims and volumes are created with their protection
finalizer (``kubernetes.io/pvc-protection``, ``kubernetes.io/pv-protection``), which the
controllers that watch their use remove, so neither goes while in use."""

from __future__ import annotations

from typing import Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import dict_at, is_resource

__all__ = ["PVC_PROTECTION", "PV_PROTECTION", "hooks"]

PVC_PROTECTION: Final = "kubernetes.io/pvc-protection"
PV_PROTECTION: Final = "kubernetes.io/pv-protection"


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    del registry

    def admit(attributes: AdmissionAttributes) -> None:
        if is_resource(attributes, "", "PersistentVolumeClaim", Operation.CREATE):
            finalizer = PVC_PROTECTION
        elif is_resource(attributes, "", "PersistentVolume", Operation.CREATE):
            finalizer = PV_PROTECTION
        else:
            return
        assert isinstance(attributes.object, dict)
        meta = dict_at(attributes.object, "metadata")
        finalizers = meta.get("finalizers")
        finalizers = list(finalizers) if isinstance(finalizers, list) else []
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]

    return admit, None
