"""List-type uniqueness: ``x-kubernetes-list-type: set`` and ``map`` lists hold no duplicates.

Kubernetes' ``listtype.ValidateListSetsAndMaps`` (listtype/validation.go):

- in a ``set``, the second occurrence of a value is ``Duplicate value: <value>`` at its index
  (later occurrences of the same value are not reported again);
- in a ``map``, every item must be an object or ``null`` (else ``Invalid value: <item>: must be
  an object for an array of list-type map``, reported once, at the first offender), and the
  items' keys (the ``x-kubernetes-list-map-keys`` fields that are present) must be unique; the
  duplicate is reported with its key fields only, e.g.
  ``spec.ports[1]: Duplicate value: {"name":"http"}`` (``{}`` for an item without its keys);
- lists are checked wherever the schema leads: object properties, ``additionalProperties``,
  list items, at any depth.

Values compare as Go compares the decoded JSON: numbers by their decoded type, so ``1`` and
``1.0`` differ (an integer and a float64), and ``true`` is not ``1``; objects and lists compare
by their JSON encoding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.structural.model import Structural
from kstore.api.validation._render import go_json
from kstore.api.validation.field import Path, duplicate, invalid
from kstore.errors import Cause

__all__ = ["validate_list_types"]

# Stands for an item without its key (or a null item); equal only to itself.
_UNSPECIFIED = ("unspecified",)


def validate_list_types(
    obj: Any, schema: Structural | None, path: Path | None = None
) -> list[Cause]:
    """The duplicate-entry causes for every set and map list in ``obj`` (a resource)."""
    if schema is None or not schema.has_keyed_lists or not isinstance(obj, Mapping):
        return []
    return _object(obj, schema, path)


def _child(path: Path | None, name: str) -> Path:
    return path.child(name) if path is not None else Path(name)


def _key(path: Path | None, key: str) -> Path:
    return path.key(key) if path is not None else Path("").key(key)


def _object(obj: Mapping[str, Any], s: Structural, path: Path | None) -> list[Cause]:
    out: list[Cause] = []
    additional = s.additional_properties_schema
    if additional is not None:
        for k, v in obj.items():
            if isinstance(v, Mapping | list):
                out.extend(_value(v, additional, _key(path, k)))
    if s.properties:
        for k, v in obj.items():
            prop = s.properties.get(k)
            if prop is not None and isinstance(v, Mapping | list):
                out.extend(_value(v, prop, _child(path, k)))
    return out


def _value(value: Any, s: Structural, path: Path) -> list[Cause]:
    if not s.has_keyed_lists:
        return []
    if isinstance(value, list):
        return _array(value, s, path)
    if isinstance(value, Mapping):
        return _object(value, s, path)
    return []


def _array(items: list[Any], s: Structural, path: Path) -> list[Cause]:
    out: list[Cause] = []
    if s.list_type == "set":
        out.extend(duplicate(path.index(i), items[i]) for i in _non_unique(items))
    elif s.list_type == "map":
        out.extend(_list_map(items, s, path))
    if s.items is not None:
        for i, item in enumerate(items):
            if isinstance(item, Mapping | list):
                out.extend(_value(item, s.items, path.index(i)))
    return out


def _identity(value: Any) -> Any:
    """A hashable stand-in equal exactly when Go's comparison finds the values equal."""
    if value is _UNSPECIFIED:
        return value
    if isinstance(value, Mapping | list):
        return ("json", go_json(value))
    # bool, int, float and str are distinct Go types inside an interface{}.
    return (type(value).__name__, value)


def _non_unique(values: list[Any]) -> list[int]:
    """Indexes of each value's second occurrence, in order."""
    if len(values) <= 1:
        return []
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, value in enumerate(values):
        ident = _identity(value)
        times = seen.get(ident, 0)
        if times == 1:
            out.append(i)
        seen[ident] = times + 1
    return out


def _list_map(items: list[Any], s: Structural, path: Path) -> list[Cause]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, Mapping):
            return [invalid(path.index(i), item, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    fields = s.list_map_keys
    if len(fields) == 1:
        name = fields[0]
        keys: list[Any] = [
            item[name] if item is not None and name in item else _UNSPECIFIED for item in items
        ]
        return [
            duplicate(path.index(i), {} if keys[i] is _UNSPECIFIED else {name: keys[i]})
            for i in _non_unique(keys)
        ]
    composite: list[Any] = [
        {} if item is None else {f: item[f] for f in fields if f in item} for item in items
    ]
    return [duplicate(path.index(i), composite[i]) for i in _non_unique(composite)]
