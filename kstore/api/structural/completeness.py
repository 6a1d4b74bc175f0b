"""Structural completeness: value validations may only speak of fields the schema declares.

Kubernetes' ``validateStructuralCompleteness`` (complete.go): every property or ``items`` that a
value-validation clause (``allOf``/``anyOf``/``oneOf``/``not`` of the root, and the clauses
nested inside those) constrains must also be declared by the structural part of the schema at
the same place; otherwise the declaration is "Required" at the structural path::

    openAPIV3Schema.properties[foo]: Required value: because it is defined in
    openAPIV3Schema.anyOf[0].properties[foo]

As in Kubernetes, only the root's clauses are walked (a property's own clauses are not), and
``additionalProperties`` inside a clause is not followed (it is forbidden by
:mod:`.invariants` instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.structural.model import Structural
from kstore.api.validation.field import Path, required
from kstore.errors import Cause

__all__ = ["validate_completeness"]


def validate_completeness(tree: Structural, path: Path) -> list[Cause]:
    """The undeclared fields that the root's value validations constrain."""
    return _clauses(tree.validations, tree, path, path)


def _clauses(v: Mapping[str, Any], s: Structural, s_path: Path, v_path: Path) -> list[Cause]:
    out: list[Cause] = []
    not_clause = v.get("not")
    if isinstance(not_clause, Mapping):
        out.extend(_nested(not_clause, s, s_path, v_path.child("not")))
    for name in ("allOf", "anyOf", "oneOf"):
        for i, clause in enumerate(v.get(name) or ()):
            if isinstance(clause, Mapping):
                out.extend(_nested(clause, s, s_path, v_path.child(name).index(i)))
    return out


def _missing(s_path: Path, v_path: Path) -> Cause:
    return required(s_path, f"because it is defined in {v_path}")


def _nested(v: Mapping[str, Any], s: Structural | None, s_path: Path, v_path: Path) -> list[Cause]:
    if s is None:
        return [_missing(s_path, v_path)]
    out = _clauses(v, s, s_path, v_path)
    items = v.get("items")
    if isinstance(items, Mapping):
        out.extend(_nested(items, s.items, s_path.child("items"), v_path.child("items")))
    props = v.get("properties")
    if isinstance(props, Mapping):
        for name, clause in props.items():
            s_prop = s_path.child("properties").key(name)
            v_prop = v_path.child("properties").key(name)
            declared = s.properties.get(name)
            if declared is None:
                out.append(_missing(s_prop, v_prop))
            elif isinstance(clause, Mapping):
                out.extend(_nested(clause, declared, s_prop, v_prop))
    return out
