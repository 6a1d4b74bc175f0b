"""The checks a CRD's ``default`` values must pass: Kubernetes' ``defaulting.ValidateDefaults``.

Run once the schema is structural (where defaults may appear at all is a per-node rule, in
:mod:`.schema_rules`). For every default, in this order, only the first failing step reported:

- it must already be pruned: ``Invalid value: {...}: must not have unknown fields``;
- an embedded resource's default must be a valid embedded resource (:mod:`.embedded`);
- a default inside an embedded resource's meta fields must make valid metadata once placed in
  a stand-in object (``apiVersion: validation/v1``, ``kind: Validation``):
  ``must result in valid metadata: <error>``;
- it must satisfy the schema's own value validations and CEL rules, which a caller supplies as
  ``validate_value`` (this package does not evaluate them).

A default of ``null`` is no default.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

from kstore.api.structural.embedded import coerce_embedded, validate_embedded_object_meta
from kstore.api.structural.model import Structural
from kstore.api.structural.pruning import prune
from kstore.api.validation.field import Path, invalid
from kstore.errors import Cause

__all__ = ["ValueValidator", "validate_defaults"]

#: Validates a default against its schema's value validations and CEL rules; returns causes.
ValueValidator = Callable[[Path, Any, Structural], list[Cause]]

_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})
_STAND_IN_TYPE: Final = {"apiVersion": "validation/v1", "kind": "Validation"}


def validate_defaults(
    tree: Structural,
    path: Path,
    *,
    require_pruned: bool = True,
    validate_value: ValueValidator | None = None,
) -> list[Cause]:
    """``ValidateDefaults`` of a structural schema rooted at ``path`` (``openAPIV3Schema``)."""
    checker = _DefaultChecker(require_pruned, validate_value)
    root = tree.with_embedded_resource()
    checker.check(path, root, root, (), False)
    return checker.causes


# A step from the enclosing resource down to a default: a property name, or None for an item.
_Step = str | None


def _surround(value: Any, steps: tuple[_Step, ...]) -> dict[str, Any]:
    """The default placed in a stand-in resource, as Kubernetes' SurroundingObjectFunc does."""
    for step in reversed(steps):
        value = [value] if step is None else {step: value}
    obj: dict[str, Any] = value  # inside meta, the first step is always a property name
    for key, type_value in _STAND_IN_TYPE.items():
        obj.setdefault(key, type_value)
    return obj


def _aggregate(causes: list[Cause]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` without repeats."""
    messages: list[str] = []
    for cause in causes:
        text = f"{cause.field}: {cause.message}" if cause.field else cause.message
        if text not in messages:
            messages.append(text)
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


class _DefaultChecker:
    __slots__ = ("causes", "require_pruned", "validate_value")

    def __init__(self, require_pruned: bool, validate_value: ValueValidator | None) -> None:
        self.require_pruned = require_pruned
        self.validate_value = validate_value
        self.causes: list[Cause] = []

    def check(
        self,
        path: Path,
        s: Structural,
        root: Structural,
        steps: tuple[_Step, ...],
        inside_meta: bool,
    ) -> None:
        if s.embedded_resource:
            inside_meta, steps, root = False, (), s
        if s.default is not None:
            if inside_meta:
                self._meta_default(path, s, root, steps)
            else:
                self._default(path, s)
        if s.items is not None:
            self.check(path.child("items"), s.items, root, (*steps, None), inside_meta)
        for name, prop in s.properties.items():
            sub_meta = inside_meta or (s.embedded_resource and name in _META_FIELDS)
            where = path.child("properties").key(name)
            self.check(where, prop, root, (*steps, name), sub_meta)

    def _meta_default(
        self, path: Path, s: Structural, root: Structural, steps: tuple[_Step, ...]
    ) -> None:
        where = path.child("default")
        obj = _surround(copy.deepcopy(s.default), steps)
        error = coerce_embedded(obj, root, None, True)
        if error is not None:
            detail = f"must result in valid metadata: {error.field}: {error.message}"
            self.causes.append(invalid(where, s.default, detail))
            return
        errors = validate_embedded_object_meta(obj, root, None, True)
        if errors:
            detail = f"must result in valid metadata: {_aggregate(errors)}"
            self.causes.append(invalid(where, s.default, detail))
            return
        if self.validate_value is not None:
            self.causes.extend(self.validate_value(where, s.default, s))

    def _default(self, path: Path, s: Structural) -> None:
        where = path.child("default")
        if self.require_pruned:
            pruned = copy.deepcopy(s.default)
            prune(pruned, s, s.embedded_resource, object_meta=False)
            if pruned != s.default:
                self.causes.append(invalid(where, s.default, "must not have unknown fields"))
        error = coerce_embedded(s.default, s, where, s.embedded_resource)
        if error is not None:
            self.causes.append(error)
            return
        errors = validate_embedded_object_meta(s.default, s, where, s.embedded_resource)
        if errors:
            self.causes.extend(errors)
            return
        if self.validate_value is not None:
            self.causes.extend(self.validate_value(where, s.default, s))
