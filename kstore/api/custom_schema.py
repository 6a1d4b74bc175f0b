"""The rules of one CustomResourceDefinition version's schema, compiled once.

:class:`VersionSchema` is what the Scheme holds of a CRD version's ``openAPIV3Schema``
(:class:`kstore.api.scheme.SchemaRules`): it validates custom objects as apiextensions'
custom-resource strategy does, in its order — the OpenAPI schema
(:mod:`kstore.api.openapi_validation`) with field paths from the object's root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.gvk import Object
from kstore.api.openapi_validation import compile_validator
from kstore.errors import Cause

__all__ = ["VersionSchema"]


class VersionSchema:
    """A CRD version's schema as validation rules. Thread-safe (compiled state only)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._openapi = compile_validator(schema)

    def validate(self, obj: Object) -> list[Cause]:
        return self._openapi.validate(obj)

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        return self.validate(obj)
