"""A CRD version's ``openAPIV3Schema`` checked as Kubernetes v1.36 checks it, in its order.

``validateCustomResourceDefinitionValidation`` does, for a schema that must be structural (every
``apiextensions.k8s.io/v1`` CRD):

1. ``nullable`` at the root: ``Forbidden: nullable cannot be true at the root``;
2. build the structural tree; a build failure is held back and reported only when nothing else
   is wrong (its cases overlap with the per-node rules);
3. when built: the "must be structural" causes (:mod:`.invariants`) or, when there are none,
   the default checks (:mod:`.default_checks`);
4. the per-node rules of the whole schema (:mod:`.schema_rules`).

Not here: the rule that with the status subresource enabled only some root fields may be set
(it needs the version's subresources), and the CEL rules (``x-kubernetes-validations``), which
the CEL package compiles and costs; their causes join these in the CRD's error list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.structural.builder import new_structural
from kstore.api.structural.default_checks import ValueValidator, validate_defaults
from kstore.api.structural.invariants import validate_structural_tree
from kstore.api.structural.schema_rules import SchemaRuleOptions, validate_schema_rules
from kstore.api.validation.field import Path, forbidden
from kstore.errors import Cause

__all__ = ["validate_crd_schema"]


def validate_crd_schema(
    schema: Mapping[str, Any],
    path: Path,
    *,
    require_structural: bool = True,
    require_pruned_defaults: bool = True,
    rule_options: SchemaRuleOptions | None = None,
    validate_value: ValueValidator | None = None,
) -> list[Cause]:
    """The causes of one version's schema at ``path`` (its ``openAPIV3Schema``).

    The ``require_*`` flags and ``rule_options`` are all on for a create; for an update take
    them from :func:`~.ratchet.update_requirements` of the old CRD's schemas.
    """
    out: list[Cause] = []
    if schema.get("nullable") is True:
        out.append(forbidden(path.child("nullable"), "nullable cannot be true at the root"))
    tree, build_causes = new_structural(schema, path) if require_structural else (None, [])
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
    out.extend(validate_schema_rules(schema, path, rule_options))
    if not out:
        out.extend(build_causes)
    return out
