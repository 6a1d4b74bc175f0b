"""The rules of one CustomResourceDefinition version's schema, compiled once.

:class:`VersionSchema` is what the Scheme holds of a CRD version's ``openAPIV3Schema``
(:class:`kstore.api.scheme.SchemaRules`), and does to custom objects what apiextensions does,
in its order:

- a request body or a stored object is **pruned** (fields the schema does not declare are
  dropped, ``x-kubernetes-preserve-unknown-fields`` and embedded resources honoured, metadata
  cut to ObjectMeta; the pruned paths are the ``unknown field`` problems of
  ``fieldValidation``), then nulls that are neither nullable nor defaulted go, then the
  schema's **defaults** are applied (:meth:`VersionSchema.default`, the version's defaulter:
  on create, update and read);
- a created or updated object is **validated**: the OpenAPI schema
  (:mod:`kstore.api.openapi_validation`), the metadata of embedded resources, the uniqueness
  of ``set`` and ``map`` lists.

Field paths start at the object's root, as Kubernetes reports them for a custom resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.gvk import Object
from kstore.api.openapi_validation import compile_validator
from kstore.api.structural import (
    build_structural,
    default,
    drop_nulls,
    prune,
    validate_embedded_object_meta,
    validate_list_types,
)
from kstore.errors import Cause

__all__ = ["VersionSchema"]


class VersionSchema:
    """A CRD version's schema as pruning, defaulting and validation. Thread-safe (compiled
    state only)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._tree = build_structural(schema)
        self._openapi = compile_validator(schema)

    def prune(self, obj: Object) -> list[str]:
        """Drop what the schema does not declare from ``obj`` (in place); the paths dropped."""
        return prune(obj, self._tree)

    def default(self, obj: Object) -> None:
        """Prune, drop the nulls the schema does not allow, then apply its defaults (in place:
        the caller owns ``obj``)."""
        prune(obj, self._tree)
        drop_nulls(obj, self._tree)
        default(obj, self._tree)

    def validate(self, obj: Object) -> list[Cause]:
        causes = self._openapi.validate(obj)
        causes.extend(validate_embedded_object_meta(obj, self._tree, is_resource_root=True))
        causes.extend(validate_list_types(obj, self._tree))
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj)
