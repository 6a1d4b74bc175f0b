"""A CRD version's ``openAPIV3Schema`` checked as far as structural schemas go.

``ValidateCustomResourceDefinitionValidation`` (v1.36) does, for a schema that must be
structural (every ``apiextensions.k8s.io/v1`` CRD):

1. build the structural tree; a build failure is held back and reported only when nothing
   else below is wrong (its cases overlap with the OpenAPI checks);
2. when built: the "must be structural" causes (:mod:`.invariants`), or, when there are none,
   the default checks (:func:`~.default_checks.validate_defaults`);
3. ``nullable`` at the root: ``Forbidden: nullable cannot be true at the root``;
4. the standard walk's rules on where defaults and embedded resources may appear
   (:func:`~.default_checks.validate_default_placement`).

The other rules of that walk (types, formats, list-type declarations, CEL rule compilation and
cost) belong to the OpenAPI-validation and CEL engines; their causes join these in the CRD's
error list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.structural.builder import new_structural
from kstore.api.structural.default_checks import (
    ValueValidator,
    validate_default_placement,
    validate_defaults,
)
from kstore.api.structural.invariants import validate_structural_tree
from kstore.api.validation.field import Path, forbidden
from kstore.errors import Cause

__all__ = ["validate_crd_schema"]


def validate_crd_schema(
    schema: Mapping[str, Any],
    path: Path,
    *,
    require_pruned_defaults: bool = True,
    validate_value: ValueValidator | None = None,
) -> list[Cause]:
    """The structural and default causes of one version's schema at ``path``."""
    out: list[Cause] = []
    tree, build_causes = new_structural(schema, path)
    if tree is not None:
        structural = validate_structural_tree(tree, path)
        if structural:
            out.extend(structural)
        else:
            out.extend(
                validate_defaults(
                    tree,
                    path,
                    require_pruned=require_pruned_defaults,
                    validate_value=validate_value,
                )
            )
    if schema.get("nullable") is True:
        out.append(forbidden(path.child("nullable"), "nullable cannot be true at the root"))
    out.extend(validate_default_placement(schema, path))
    if not out:
        out.extend(build_causes)
    return out
