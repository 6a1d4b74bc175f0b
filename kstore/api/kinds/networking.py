"""networking.k8s.io/v1 Ingress and IngressClass: one external version each, with the hub's
shape.

Registered as Kubernetes serves them: namespaced ``ingresses``, short name ``ing``, a ``status``
subresource; cluster-scoped ``ingressclasses`` without subresources; no category (``kubectl get
all`` leaves both out), field selectors on ``metadata.name`` (and ``metadata.namespace``) only.

Kubernetes registers no defaults for an Ingress in v1: unlike v1beta1, ``pathType`` is not
defaulted, so a path without one is refused by validation
(:mod:`kstore.api.kinds._ingress_validation`). An IngressClass's ``parameters`` get ``scope``
``Cluster`` when they have none (``SetDefaults_IngressClass``).

IngressClass validation is ``ValidateIngressClass``/``ValidateIngressClassUpdate``: a DNS-1123
subdomain name; ``controller`` required, at most 250 bytes, a domain-prefixed path, immutable;
``parameters`` with ``kind`` and ``name`` (path segment names), a DNS-1123 ``apiGroup``, a
``scope`` of ``Cluster`` (no ``namespace``) or ``Namespace`` (with a valid ``namespace``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._ingress_validation import validate_ingress, validate_ingress_update
from kstore.api.kinds._job_policies import validate_domain_prefixed_path
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_map, get_str
from kstore.api.validation.field import (
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kstore.api.validation.names import (
    byte_len,
    is_dns1123_subdomain,
    is_path_segment_name,
    name_is_dns_subdomain,
    validate_namespace_name,
)
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "INGRESS",
    "INGRESS_CLASS",
    "default_ingress_class",
    "validate_ingress_class",
    "validate_ingress_class_update",
]

GROUP: Final = "networking.k8s.io"

#: ``maxLenIngressClassController``.
_MAX_CONTROLLER_BYTES: Final = 250
#: ``supportedIngressClassParametersReferenceScopes``, sorted as Kubernetes lists them.
_SCOPES: Final = ("Cluster", "Namespace")
_CONTROLLER: Final = Path("spec", "controller")
_PARAMETERS: Final = Path("spec", "parameters")

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


def default_ingress_class(ingress_class: Object) -> None:
    """``SetDefaults_IngressClass``, in place: parameters without a scope are cluster-scoped."""
    spec = ingress_class.get("spec")
    parameters = spec.get("parameters") if isinstance(spec, dict) else None
    if isinstance(parameters, dict) and parameters.get("scope") is None:
        parameters["scope"] = "Cluster"


def _validate_parameters(params: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    api_group = params.get("apiGroup")
    if isinstance(api_group, str):
        where = _PARAMETERS.child("apiGroup")
        causes.extend(invalid(where, api_group, m) for m in is_dns1123_subdomain(api_group))
    for key in ("kind", "name"):
        value = get_str(params, key)
        if not value:
            causes.append(required(_PARAMETERS.child(key)))
        else:
            where = _PARAMETERS.child(key)
            causes.extend(invalid(where, value, m) for m in is_path_segment_name(value))
    scope = params.get("scope")
    if not isinstance(scope, str):
        causes.append(required(_PARAMETERS.child("scope")))
        return causes
    namespace = params.get("namespace")
    where = _PARAMETERS.child("namespace")
    if scope not in _SCOPES:
        causes.append(not_supported(_PARAMETERS.child("scope"), scope, _SCOPES))
    elif scope == "Namespace":
        if not isinstance(namespace, str):
            causes.append(required(where, "`parameters.scope` is set to 'Namespace'"))
        else:
            causes.extend(
                invalid(where, namespace, m) for m in validate_namespace_name(namespace, False)
            )
    elif namespace is not None:
        causes.append(forbidden(where, "`parameters.scope` is set to 'Cluster'"))
    return causes


def validate_ingress_class(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIngressClass``."""
    causes = validate_object_meta(obj, False, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    controller = get_str(spec, "controller")
    if not controller:
        causes.append(required(_CONTROLLER))
    else:
        if byte_len(controller) > _MAX_CONTROLLER_BYTES:
            causes.append(too_long(_CONTROLLER, _MAX_CONTROLLER_BYTES))
        causes.extend(validate_domain_prefixed_path(controller, _CONTROLLER))
    parameters = spec.get("parameters")
    if isinstance(parameters, Mapping):
        causes.extend(_validate_parameters(parameters))
    return causes


def validate_ingress_class_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIngressClassUpdate``: metadata, the immutable controller, then the new class."""
    causes = validate_object_meta_update(new, old)
    causes.extend(
        validate_immutable_field(
            get_str(get_map(new, "spec"), "controller"),
            get_str(get_map(old, "spec"), "controller"),
            _CONTROLLER,
        )
    )
    causes.extend(validate_ingress_class(new))
    return causes


INGRESS_CLASS: Final = KindDefinition(
    group=GROUP,
    kind="IngressClass",
    versions=(KindVersion(version="v1", default=default_ingress_class),),
    storage_version="v1",
    resource=ResourceInfo(plural="ingressclasses", singular="ingressclass", namespaced=False),
    validate=validate_ingress_class,
    validate_update=validate_ingress_class_update,
    list_kind="IngressClassList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    INGRESS,
    list_definition(INGRESS),
    INGRESS_CLASS,
    list_definition(INGRESS_CLASS),
)
