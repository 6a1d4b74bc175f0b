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
  of ``set`` and ``map`` lists, then the ``x-kubernetes-validations`` CEL rules
  (:mod:`kstore.api.cel`, with ``oldSelf`` on update, within Kubernetes' cost budget) unless an
  error before them blocks them (a wrong type, a missing required field, a value too long or
  not supported), which Kubernetes reports with one more cause saying so;
- an update is **ratcheted** (:meth:`VersionSchema.validate_update`): OpenAPI errors of values
  equal to their correlated old values are dropped, list-type errors count only when the old
  object had none, CEL failures of unchanged values (rules without ``oldSelf``) are warnings.
  A create, and an update without OpenAPI errors, walk the object once as before.

Field paths start at the object's root, as Kubernetes reports them for a custom resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any

from kstore.api.cel import CompiledRules, compile_schema_rules
from kstore.api.gvk import GroupVersionKind, Object
from kstore.api.openapi_validation import OpenAPIValidator, compile_validator
from kstore.api.patch_meta import (
    DEDUCED,
    SCALAR,
    FieldMeta,
    ListType,
    NodeKind,
    TypeNode,
    type_for_gvk,
)
from kstore.api.structural import (
    Structural,
    build_structural,
    prune,
    validate_embedded_object_meta,
    validate_list_types,
)
from kstore.api.structural.decoding import normalize
from kstore.api.validation.field import (
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    TYPE_INVALID,
    Path,
    invalid,
)
from kstore.errors import BadRequest, Cause

#: Kubernetes' ``hasBlockingErr``: schema errors that keep the CEL rules from running.
_BLOCKING = frozenset({NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, TYPE_INVALID})
_UNCHECKED = invalid(
    Path("<nil>"),
    None,
    "some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation",
)

__all__ = ["MAX_CUSTOM_DEPTH", "VersionSchema"]

#: The deepest nesting a custom object may have: Go's JSON decoder limit, the only one
#: kube-apiserver has (a request body deeper than this is refused before it gets here; a patch
#: result is checked).
MAX_CUSTOM_DEPTH = 10_000


def _within(node: dict[str, Any] | list[Any], levels: int) -> bool:
    """Whether the object or array ``node`` nests at most ``levels`` levels (itself one)."""
    if levels <= 0:
        return False
    for v in node.values() if type(node) is dict else node:
        if (type(v) is dict or type(v) is list) and not _within(v, levels - 1):
            return False
    return True


def _too_deep(obj: Any, limit: int) -> bool:
    """Whether a resource nests more than ``limit`` levels, its root ``metadata`` aside: the
    ``managedFields`` there nest twice as deep as the object they describe, and the rest of
    ObjectMeta is shallow."""
    if type(obj) is not dict:
        return False
    return any(
        (type(v) is dict or type(v) is list) and not _within(v, limit - 1)
        for k, v in obj.items()
        if k != "metadata"
    )


@cache
def _object_meta_type() -> TypeNode:
    """ObjectMeta's type tree, as the built-in kinds have it."""
    config_map = type_for_gvk(GroupVersionKind("", "v1", "ConfigMap"))
    assert config_map is not None
    meta = config_map.field("metadata")
    assert meta is not None
    return meta.type


def _type_node(s: Structural | None, resource: bool = False) -> TypeNode:
    """The schema as server-side apply's type: structs by their properties, ``set`` and
    ``map`` lists with their keys, atomic maps and structs where ``x-kubernetes-map-type``
    says so; what the schema leaves open (no schema, preserve-unknown-fields) is deduced."""
    if s is None or (s.preserve_unknown_fields and not resource):
        return DEDUCED
    if s.int_or_string:
        return SCALAR
    if s.type == "array":
        list_type = {"set": ListType.SET, "map": ListType.MAP}.get(s.list_type or "")
        return TypeNode(
            NodeKind.LIST,
            item=_type_node(s.items),
            list_type=list_type or ListType.ATOMIC,
            list_keys=s.list_map_keys,
        )
    if s.type == "object" or resource:
        atomic = s.map_type == "atomic"
        additional = s.additional_properties_schema
        if additional is not None and not s.properties:
            return TypeNode(NodeKind.MAP, item=_type_node(additional), atomic=atomic)
        if not s.properties and not (resource or s.embedded_resource):
            return DEDUCED
        fields = {name: FieldMeta(_type_node(p)) for name, p in s.properties.items()}
        if resource or s.embedded_resource:
            fields.setdefault("apiVersion", FieldMeta(SCALAR))
            fields.setdefault("kind", FieldMeta(SCALAR))
            fields["metadata"] = FieldMeta(_object_meta_type())
        # A root that preserves unknown fields declares only the ones above: the rest are
        # deduced from their values, as structured-merge-diff gives such a map an element type.
        item = DEDUCED if resource and s.preserve_unknown_fields else None
        return TypeNode(NodeKind.STRUCT, fields=fields, item=item, atomic=atomic)
    return SCALAR


def _check_depth(obj: Any) -> None:
    if _too_deep(obj, MAX_CUSTOM_DEPTH):
        raise BadRequest(f"the object is nested deeper than the limit of {MAX_CUSTOM_DEPTH} levels")


class VersionSchema:
    """A CRD version's schema as pruning, defaulting and validation. Thread-safe: compiled
    state only, each part built on first use (two threads racing to build one build the same
    value twice, harmlessly)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        # Compiled on first use, as kube-apiserver builds a CRD's serving state on the first
        # request for it: a server with hundreds of CRDs starts without compiling them all.
        self._schema = schema

    @cached_property
    def _tree(self) -> Structural:
        return build_structural(self._schema)

    @cached_property
    def _openapi(self) -> OpenAPIValidator:
        return compile_validator(self._schema)

    @cached_property
    def type_node(self) -> TypeNode:
        """The object's type for server-side apply and managedFields (list types, map keys)."""
        return _type_node(self._tree, resource=True)

    @cached_property
    def _cel(self) -> CompiledRules | None:
        rules = compile_schema_rules(self._schema)
        return None if rules.empty else rules

    def prune(self, obj: Object) -> list[str]:
        """Drop what the schema does not declare from ``obj`` (in place); the paths dropped.
        Every request body and patch result comes this way: one nested deeper than
        :data:`MAX_CUSTOM_DEPTH` is a BadRequest. (Objects read from storage are not checked:
        what was written is read back whatever its depth.)"""
        _check_depth(obj)
        return prune(obj, self._tree)

    def default(self, obj: Object) -> None:
        """Prune, drop the nulls the schema does not allow, then apply its defaults (in place:
        the caller owns ``obj``), as every decode does."""
        normalize(obj, self._tree)

    def validate(self, obj: Object) -> list[Cause]:
        return self._validate(obj, None)

    def validate_update(
        self, obj: Object, old: Object, warnings: list[str] | None = None
    ) -> list[Cause]:
        """As :meth:`validate`, ratcheted as Kubernetes ratchets an update: OpenAPI errors of
        values equal to their correlated old values are dropped, list-type errors count only
        when the old object had none, and CEL failures of unchanged values (rules without
        ``oldSelf``) become ``warnings``."""
        return self._validate(obj, old, warnings)

    def _validate(
        self, obj: Object, old: Object | None, warnings: list[str] | None = None
    ) -> list[Cause]:
        causes = self._openapi.validate(obj)
        if causes and old is not None:
            # Ratcheting walks old and new together, only for an update that needs it.
            causes = self._openapi.validate_update(obj, old)
        # The root metadata is validated as any object's (ObjectMeta rules); embedded ones here.
        causes.extend(validate_embedded_object_meta(obj, self._tree))
        list_causes = validate_list_types(obj, self._tree)
        if list_causes and (old is None or not validate_list_types(old, self._tree)):
            causes.extend(list_causes)
        if self._cel is not None:
            if any(c.type in _BLOCKING for c in causes):
                causes.append(_UNCHECKED)
            else:
                causes.extend(self._cel.validate(obj, old, warnings=warnings))
        return causes
