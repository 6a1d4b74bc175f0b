"""The structural schema: the typed tree every schema-driven algorithm walks.

A :class:`Structural` is what Kubernetes' ``schema.Structural`` is to a CRD's
``openAPIV3Schema``: the part of the schema that says what fields *exist* (``type``,
``properties``, ``items``, ``additionalProperties``), the ``x-kubernetes-*`` extensions that
change how values are kept (preserve unknown fields, embedded resources, int-or-string, list and
map types), ``default`` and ``nullable``. Value validations (``minimum``, ``pattern``, ``enum``,
``allOf``...) do not shape the tree; they are kept as the raw schema mapping in
:attr:`Structural.validations` for the OpenAPI-validation and CEL engines.

Invariants:

- a tree is immutable once built (frozen dataclasses, read-only mappings), so one tree is
  shared by every request that uses the schema;
- ``default is None`` means "no default": Kubernetes treats ``default: null`` exactly like an
  absent default in every algorithm (pruning, defaulting, default validation);
- ``additional_properties`` is ``None`` when absent, a :class:`Structural` when it is a
  schema, and ``True``/``False`` when it is a bare boolean. Pruning keeps unknown keys
  whenever it is present, even ``False``, as Kubernetes' pruning does;
- ``has_embedded_resources`` and ``has_keyed_lists`` are true exactly when the node or one
  below it is an embedded resource, or a set or map list: walks that only concern those skip
  the other subtrees.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

__all__ = ["EMPTY", "VALUE_VALIDATION_KEYS", "Structural"]

# The JSONSchemaProps keys Kubernetes gathers into ValueValidation (convert.go); they constrain
# values but do not shape the tree.
VALUE_VALIDATION_KEYS: Final = frozenset(
    {
        "format",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
    }
)

_NO_PROPERTIES: Final[Mapping[str, Structural]] = MappingProxyType({})
_NO_VALIDATIONS: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, weakref_slot=True)
class Structural:
    """One node of a structural schema.

    Identity equality: trees are shared and compared by what they hold only in tests, which
    compare attributes.
    """

    type: str = ""
    properties: Mapping[str, Structural] = field(default_factory=lambda: _NO_PROPERTIES)
    items: Structural | None = None
    additional_properties: Structural | bool | None = None
    # Generic
    default: Any = None
    nullable: bool = False
    description: str = ""
    title: str = ""
    # Extensions
    preserve_unknown_fields: bool = False
    embedded_resource: bool = False
    int_or_string: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    x_validations: tuple[Mapping[str, Any], ...] = ()
    # Whether this node or one below it was built with x-kubernetes-embedded-resource, so
    # walks that only concern embedded resources can skip the rest.
    has_embedded_resources: bool = False
    # Likewise for lists with x-kubernetes-list-type set or map (uniqueness checks).
    has_keyed_lists: bool = False
    # Likewise for ``default``: defaulting walks only the parts of an object that can change.
    has_defaults: bool = False
    # Value validations, raw (the keys of VALUE_VALIDATION_KEYS present in the schema).
    validations: Mapping[str, Any] = field(default_factory=lambda: _NO_VALIDATIONS)
    # The JSONSchemaProps mapping this node was built from.
    raw: Mapping[str, Any] = field(default_factory=lambda: _NO_VALIDATIONS)

    @property
    def format(self) -> str:
        value = self.validations.get("format", "")
        return value if isinstance(value, str) else ""

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def additional_properties_schema(self) -> Structural | None:
        """The schema of additional properties, or ``None`` (absent or a bare boolean)."""
        ap = self.additional_properties
        return ap if isinstance(ap, Structural) else None

    def with_embedded_resource(self) -> Structural:
        """This node with ``x-kubernetes-embedded-resource`` set (how a resource root is seen).

        Made once per tree and remembered: every request prunes and validates at the root.
        """
        if self.embedded_resource:
            return self
        root = _AS_RESOURCE_ROOT.get(self)
        if root is None:
            root = _AS_RESOURCE_ROOT[self] = replace(self, embedded_resource=True)
        return root


# Trees are shared and immutable, so their resource-root views can be too; weak keys let a
# tree (and its view) go when its CRD version does.
_AS_RESOURCE_ROOT: weakref.WeakKeyDictionary[Structural, Structural] = weakref.WeakKeyDictionary()


EMPTY: Final = Structural()
