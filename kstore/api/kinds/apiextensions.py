"""apiextensions.k8s.io/v1 CustomResourceDefinition: one external version, with the hub's shape.

Registered as Kubernetes serves it: cluster-scoped ``customresourcedefinitions``, singular
``customresourcedefinition``, short names ``crd`` and ``crds``, category ``api-extensions``, a
``status`` subresource; stored as v1, in JSON or Kubernetes protobuf (the messages of
``apiextensions_v1.proto``; a schema's ``JSONSchemaProps`` has a converter of its own,
:mod:`kstore.codec._pb_json_schema`).

Defaulting is v1's ``SetDefaults_CustomResourceDefinition``, in place:

- ``spec.names.singular`` is the lowercased kind, ``spec.names.listKind`` the kind + ``List``
  (when there is a kind);
- ``spec.conversion`` is ``{strategy: None}`` when absent;
- a conversion webhook's service without a port gets port 443;
- ``status.storedVersions`` is the first storage version when empty.

(``preserveUnknownFields`` is not defaulted in v1: false and absent are the same.)

Validation: :mod:`kstore.api.kinds._crd_validation`. Serving the custom resources a CRD
describes is not this module's job.
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._crd_validation import (
    validate_custom_resource_definition,
    validate_custom_resource_definition_update,
)
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo

__all__ = [
    "CUSTOM_RESOURCE_DEFINITION",
    "DEFINITIONS",
    "GROUP",
    "default_custom_resource_definition",
]

GROUP: Final = "apiextensions.k8s.io"


def _dict(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _default_spec(spec: dict[str, Any]) -> None:
    names = _dict(spec, "names")
    if names is None:
        names = {}
        spec["names"] = names
    kind = names.get("kind")
    kind = kind if isinstance(kind, str) else ""
    if not names.get("singular"):
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = kind + "List"
    conversion = _dict(spec, "conversion")
    if conversion is None:
        conversion = {"strategy": "None"}
        spec["conversion"] = conversion
    webhook = _dict(conversion, "webhook")
    client = _dict(webhook, "clientConfig") if webhook is not None else None
    service = _dict(client, "service") if client is not None else None
    if service is not None and service.get("port") is None:
        service["port"] = 443


def default_custom_resource_definition(crd: Object) -> None:
    """``SetDefaults_CustomResourceDefinition`` (and the nested ``SetDefaults_*``), in place."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        crd["spec"] = spec
    _default_spec(spec)
    status = crd.get("status")
    stored = status.get("storedVersions") if isinstance(status, dict) else None
    if stored:
        return
    versions = spec.get("versions")
    for version in versions if isinstance(versions, list) else ():
        if isinstance(version, dict) and version.get("storage") is True:
            if not isinstance(status, dict):
                status = {}
                crd["status"] = status
            status["storedVersions"] = [version.get("name", "")]
            break


CUSTOM_RESOURCE_DEFINITION: Final = KindDefinition(
    group=GROUP,
    kind="CustomResourceDefinition",
    versions=(KindVersion(version="v1", default=default_custom_resource_definition),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="customresourcedefinitions",
        singular="customresourcedefinition",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=("status",),
    ),
    validate=validate_custom_resource_definition,
    validate_update=validate_custom_resource_definition_update,
    list_kind="CustomResourceDefinitionList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    CUSTOM_RESOURCE_DEFINITION,
    list_definition(CUSTOM_RESOURCE_DEFINITION),
)
