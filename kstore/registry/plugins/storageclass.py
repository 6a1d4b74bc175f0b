"""DefaultStorageClass and PersistentVolumeClaimResize: claims and their storage classes.

DefaultStorageClass (on claim create): a claim that names no class (neither
``spec.storageClassName``, even empty, nor the beta annotation
``volume.beta.kubernetes.io/storage-class``) gets the default StorageClass's name: the class
annotated ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta annotation),
the newest when several are.

PersistentVolumeClaimResize (on claim update): a claim's storage request may grow only when
its class is unchanged and allows expansion (``allowVolumeExpansion: true``); otherwise 403
``only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc
must support resize``.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import (
    dict_at,
    forbidden,
    is_resource,
    list_objects,
    read_object,
)
from kstore.registry.plugins._defaults import default_class
from kstore.registry.plugins._quantities import value

__all__ = ["default_hooks", "resize_hooks"]

_GROUP: Final = "storage.k8s.io"
_BETA_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
_DEFAULT: Final = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def _annotations(obj: Any) -> dict[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    found = meta.get("annotations") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _class_of(claim: Any) -> str:
    beta = _annotations(claim).get(_BETA_CLASS)
    if beta is not None:
        return str(beta)
    spec = claim.get("spec") if isinstance(claim, dict) else None
    name = spec.get("storageClassName") if isinstance(spec, dict) else None
    return str(name or "")


def _storage(claim: Any) -> Any:
    spec = claim.get("spec") if isinstance(claim, dict) else None
    resources = spec.get("resources") if isinstance(spec, dict) else None
    requests = resources.get("requests") if isinstance(resources, dict) else None
    return requests.get("storage") if isinstance(requests, dict) else None


def default_hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "PersistentVolumeClaim", Operation.CREATE):
            return
        claim = attributes.object
        assert isinstance(claim, dict)
        spec = dict_at(claim, "spec")
        if spec.get("storageClassName") is not None or _BETA_CLASS in _annotations(claim):
            return
        chosen = default_class(list_objects(registry, _GROUP, "storageclasses", ""), *_DEFAULT)
        if chosen is not None:
            spec["storageClassName"] = chosen["metadata"]["name"]

    return admit, None


def resize_hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def validate(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "PersistentVolumeClaim", Operation.UPDATE):
            return
        claim, old = attributes.object, attributes.old_object
        if not isinstance(old, dict):
            return
        new_size, old_size = _storage(claim), _storage(old)
        if new_size is None or old_size is None or value(new_size) <= value(old_size):
            return
        name = _class_of(claim)
        allowed = False
        if name and name == _class_of(old):
            found = read_object(registry, _GROUP, "storageclasses", "", name)
            allowed = found is not None and found.get("allowVolumeExpansion") is True
        if not allowed:
            raise forbidden(
                attributes,
                "only dynamically provisioned pvc can be resized and the storageclass that "
                "provisions the pvc must support resize",
            )

    return None, validate
