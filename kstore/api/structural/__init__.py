"""Structural schemas: the schema-driven machinery of custom resources, as Kubernetes v1.36 has it.

A CRD's ``openAPIV3Schema`` becomes a :class:`Structural` tree (:func:`new_structural`), which
must be structural (:func:`validate_structural`) before the CRD is accepted; its defaults and
per-node rules are checked too. :func:`validate_crd_schema` runs all of those in Kubernetes'
order, relaxed on update by :func:`update_requirements` of the old schemas. Derived trees for
validators and published OpenAPI come from :func:`unfold`, :func:`strip_value_validations`,
:func:`strip_nullable` and :func:`to_openapi`. The tree then drives what happens to every
custom resource, in Kubernetes' order::

    decode a request or read from storage:  prune -> drop_nulls
    then (create, update, read):            default
    then (create, update):                  validate_list_types, validate_embedded_object_meta,
                                            (OpenAPI value validation, CEL rules: elsewhere)

All functions are pure over plain JSON-shaped values (``dict``, ``list``, ``str``, ``int``,
``float``, ``bool``, ``None``); :func:`prune`, :func:`drop_nulls` and :func:`default` change
the object in place. Causes carry Kubernetes' messages and field paths.
"""

from kstore.api.structural.builder import StructuralBuildError, build_structural, new_structural
from kstore.api.structural.crd_schema import validate_crd_schema
from kstore.api.structural.default_checks import ValueValidator, validate_defaults
from kstore.api.structural.default_pruning import (
    DefaultPruningError,
    prune_defaults,
    schema_has_unpruned_defaults,
)
from kstore.api.structural.defaulting import default, drop_nulls
from kstore.api.structural.embedded import coerce_embedded, validate_embedded_object_meta
from kstore.api.structural.invariants import validate_structural, validate_structural_tree
from kstore.api.structural.list_types import validate_list_types
from kstore.api.structural.model import Structural
from kstore.api.structural.pruning import prune
from kstore.api.structural.ratchet import (
    UpdateRequirements,
    schema_has,
    schema_is_non_structural,
    update_requirements,
)
from kstore.api.structural.schema_rules import SchemaRuleOptions, validate_schema_rules
from kstore.api.structural.skeleton import (
    strip_nullable,
    strip_value_validations,
    to_openapi,
    unfold,
)

__all__ = [
    "DefaultPruningError",
    "SchemaRuleOptions",
    "Structural",
    "StructuralBuildError",
    "UpdateRequirements",
    "ValueValidator",
    "build_structural",
    "coerce_embedded",
    "default",
    "drop_nulls",
    "new_structural",
    "prune",
    "prune_defaults",
    "schema_has",
    "schema_has_unpruned_defaults",
    "schema_is_non_structural",
    "strip_nullable",
    "strip_value_validations",
    "to_openapi",
    "unfold",
    "update_requirements",
    "validate_crd_schema",
    "validate_defaults",
    "validate_embedded_object_meta",
    "validate_list_types",
    "validate_schema_rules",
    "validate_structural",
    "validate_structural_tree",
]
