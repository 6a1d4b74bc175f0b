"""networking.k8s.io/v1 Ingress: one external version with the hub's shape.

Registered as Kubernetes serves it: namespaced ``ingresses``, short name ``ing``, a ``status``
subresource, no category (``kubectl get all`` leaves Ingresses out), field selectors on
``metadata.name`` and ``metadata.namespace`` only.

Kubernetes registers no defaults for an Ingress in v1: unlike v1beta1, ``pathType`` is not
defaulted, so a path without one is refused by validation
(:mod:`kstore.api.kinds._ingress_validation`).
"""

from __future__ import annotations

from typing import Final

from kstore.api.kinds._ingress_validation import validate_ingress, validate_ingress_update
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = ["DEFINITIONS", "GROUP", "INGRESS"]

GROUP: Final = "networking.k8s.io"

INGRESS: Final = KindDefinition(
    group=GROUP,
    kind="Ingress",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="ingresses",
        singular="ingress",
        namespaced=True,
        short_names=("ing",),
        subresources=("status",),
    ),
    validate=validate_ingress,
    validate_update=validate_ingress_update,
    list_kind="IngressList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (INGRESS, list_definition(INGRESS))
