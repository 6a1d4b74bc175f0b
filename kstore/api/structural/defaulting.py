"""Defaulting: filling in a schema's ``default`` values, and the null handling that goes with it.

Kubernetes' ``defaulting.Default`` and ``PruneNonNullableNullsWithoutDefaults`` (v1.36):

- :func:`default`: for every object the schema describes, each declared property that is
  missing, or is ``null`` while not ``nullable``, gets a deep copy of its ``default``; then
  every key present is defaulted inside, with its property's schema or with
  ``additionalProperties`` (whose ``null`` values, when not ``nullable``, become its default
  too); every list item likewise, a non-nullable ``null`` item becoming the items' default.
  Defaults only go where the parent exists: a missing object is never created to hold a
  default of one of its fields (unless the object itself has a default);
- :func:`drop_nulls`: removes a ``null`` whose schema is neither ``nullable`` nor defaulted
  (one that is defaulted is left for :func:`default` to replace). Kubernetes runs it right
  after pruning when it decodes a request or reads from storage, then defaults.

A default of ``null`` counts as no default (Kubernetes keeps defaults as ``interface{}``, so a
``null`` default is indistinguishable from none). Defaults applied are deep copies, so two
objects never share a default's containers.
"""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.structural.model import Structural

__all__ = ["default", "drop_nulls"]


def _copy(value: Any) -> Any:
    # Scalars are immutable; only containers need copying (and deepcopy is slow on them).
    if isinstance(value, dict | list):
        return copy.deepcopy(value)
    return value


def default(obj: Any, schema: Structural | None) -> None:
    """Apply the schema's defaults to ``obj`` in place."""
    if schema is None or not schema.has_defaults:
        return  # no default at or below this node: nothing can change
    if isinstance(obj, dict):
        props = schema.properties
        for name, declared in props.items():
            if declared.default is None:
                continue
            if name not in obj or (obj[name] is None and not declared.nullable):
                obj[name] = _copy(declared.default)
        additional = schema.additional_properties_schema
        for key, value in obj.items():
            prop = props.get(key)
            if prop is not None:
                if isinstance(value, dict | list):
                    default(value, prop)
            elif schema.additional_properties is not None:
                if value is None and additional is not None and not additional.nullable:
                    value = obj[key] = _copy(additional.default)
                if isinstance(value, dict | list):
                    default(value, additional)
    elif isinstance(obj, list):
        items = schema.items
        if items is None:
            return
        for i, value in enumerate(obj):
            if value is None and not items.nullable:
                value = obj[i] = _copy(items.default)
            if isinstance(value, dict | list):
                default(value, items)


def drop_nulls(obj: Any, schema: Structural | None) -> None:
    """Remove the ``null`` fields that are neither nullable nor defaulted, in place."""
    if schema is None:
        return  # nothing below an undeclared value is declared: nothing to remove there
    if isinstance(obj, dict):
        for key in list(obj):
            value = obj[key]
            sub = _field_schema(key, schema)
            if value is None:
                if sub is not None and not sub.nullable and sub.default is None:
                    del obj[key]
            elif isinstance(value, dict | list):
                drop_nulls(value, sub)
    elif isinstance(obj, list):
        for value in obj:
            if isinstance(value, dict | list):
                drop_nulls(value, schema.items)


def _field_schema(key: str, schema: Structural | None) -> Structural | None:
    if schema is None:
        return None
    prop = schema.properties.get(key)
    if prop is not None:
        return prop
    return schema.additional_properties_schema
