"""OpenAPI v3 schemas of kinds defined by data (CRDs): their own ``openAPIV3Schema``.

As kube-apiserver publishes a CRD version: the version's schema with ``apiVersion`` and
``kind`` strings and ``metadata`` referring to ``ObjectMeta``, named after the group reversed at
its host (``cert-manager.io`` ``v1`` ``Certificate`` is ``io.cert-manager.v1.Certificate``),
tagged with ``x-kubernetes-group-version-kind``; and the list kind beside it. The metadata
components it refers to come from the built-in kinds' schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.scheme import RegisteredResource
from kstore.server.openapi_schemas import component_schemas

__all__ = ["custom_component_schemas", "has_own_schema"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def has_own_schema(r: RegisteredResource) -> bool:
    """Whether the resource's version carries a schema of its own (a CRD version's)."""
    return r.definition.version(r.group_version.version).openapi_schema is not None


def schema_name(gvk: GroupVersionKind) -> str:
    parts = gvk.group.split(".")
    return ".".join([*reversed(parts), gvk.version, gvk.kind])


@cache
def _meta_components() -> Mapping[str, Object]:
    """ObjectMeta, ListMeta and what they contain, as the built-in kinds publish them."""
    every = component_schemas(
        [GroupVersionKind("", "v1", "ConfigMap"), GroupVersionKind("", "v1", "ConfigMapList")]
    )
    return {name: schema for name, schema in every.items() if name.startswith(_META)}


def _ref(name: str) -> Object:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}]}


def _gvk_tag(gvk: GroupVersionKind) -> list[Object]:
    return [{"group": gvk.group, "kind": gvk.kind, "version": gvk.version}]


def custom_component_schemas(resources: Iterable[RegisteredResource]) -> dict[str, Any]:
    """The components of these resources' kinds (those with a schema of their own), their
    lists, and the metadata types they refer to."""
    out: dict[str, Any] = {}
    for r in resources:
        schema = r.definition.version(r.group_version.version).openapi_schema
        if schema is None:
            continue
        gvk = r.gvk
        kind_schema: Object = dict(schema)
        kind_schema.setdefault("type", "object")
        properties = dict(kind_schema.get("properties") or {})
        properties["apiVersion"] = {"type": "string"}
        properties["kind"] = {"type": "string"}
        properties["metadata"] = _ref(_META + "ObjectMeta")
        kind_schema["properties"] = dict(sorted(properties.items()))
        kind_schema["x-kubernetes-group-version-kind"] = _gvk_tag(gvk)
        name = schema_name(gvk)
        out[name] = kind_schema
        list_kind = r.definition.list_kind or f"{gvk.kind}List"
        out[f"{name}List"] = {
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "items": {"type": "array", "items": _ref(name)},
                "kind": {"type": "string"},
                "metadata": _ref(_META + "ListMeta"),
            },
            "x-kubernetes-group-version-kind": _gvk_tag(gvk.group_version.with_kind(list_kind)),
        }
    if out:
        out.update(_meta_components())
    return dict(sorted(out.items()))
