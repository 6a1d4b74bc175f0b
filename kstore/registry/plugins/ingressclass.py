"""DefaultIngressClass: an Ingress that names no class gets the default IngressClass.

On Ingress create (kube-apiserver's ``DefaultIngressClass`` plugin), an Ingress with neither
``spec.ingressClassName`` nor the annotation ``kubernetes.io/ingress.class`` gets the name of
the IngressClass annotated ``ingressclass.kubernetes.io/is-default-class: "true"``, the newest
when several are.
"""

from __future__ import annotations

from typing import Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import dict_at, is_resource, list_objects
from kstore.registry.plugins._defaults import default_class

__all__ = ["hooks"]

_GROUP: Final = "networking.k8s.io"
_LEGACY: Final = "kubernetes.io/ingress.class"
_DEFAULT: Final = "ingressclass.kubernetes.io/is-default-class"


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, _GROUP, "Ingress", Operation.CREATE):
            return
        ingress = attributes.object
        assert isinstance(ingress, dict)
        spec = dict_at(ingress, "spec")
        annotations = dict_at(ingress, "metadata").get("annotations")
        if spec.get("ingressClassName") is not None:
            return
        if isinstance(annotations, dict) and _LEGACY in annotations:
            return
        chosen = default_class(list_objects(registry, _GROUP, "ingressclasses", ""), _DEFAULT)
        if chosen is not None:
            spec["ingressClassName"] = chosen["metadata"]["name"]

    return admit, None
