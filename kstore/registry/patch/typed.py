"""Structured values: an object (a JSON dict) read through its kind's type tree, with the
operations server-side apply is made of, as structured-merge-diff defines them.

- :func:`validate` checks an applied configuration against the type (unknown fields, element
  keys, duplicate keys);
- :func:`to_field_set` lists the fields a value sets (what an applier comes to own);
- :func:`compare` tells which fields were added, modified and removed between two values;
- :func:`merge` merges a configuration into a live object (the configuration wins; lists keyed
  or sets are merged element by element, atomic lists and maps are replaced);
- :func:`remove_items` drops the fields of a set from a value;
- :func:`ensure_named_fields_are_members` completes a set with the struct fields its paths
  pass through.

Values are never mutated: results share untouched sub-trees with the inputs, so callers treat
them as read-only. :data:`MISSING` stands for "absent", distinct from JSON null (``None``).
A value that emptied out because its fields were removed is left out of its parent, where
structured-merge-diff writes a null that decoding into a Go struct then drops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from kstore.api.patch_meta import DEDUCED, ListType, NodeKind, TypeNode
from kstore.registry.patch.fieldsets import FieldSet, Path, PathElement, path_string

__all__ = [
    "MISSING",
    "Comparison",
    "SchemaError",
    "compare",
    "ensure_named_fields_are_members",
    "json_equal",
    "merge",
    "remove_items",
    "to_field_set",
    "validate",
]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()

_SCALAR, _MAP, _LIST, _LEAF = "scalar", "map", "list", "leaf"
_TYPED_CONTAINERS = frozenset((NodeKind.STRUCT, NodeKind.MAP, NodeKind.LIST))


class SchemaError(ValueError):
    """A value does not fit its type; ``str()`` reads as structured-merge-diff's error."""


@dataclass(slots=True)
class Comparison:
    added: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    removed: FieldSet = field(default_factory=FieldSet)


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values that, unlike ``==``, tells ``true`` from ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and len(a) == len(b)
            and all(k in b and json_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    if isinstance(b, dict | list):
        return False
    return bool(a == b)


# ---------------------------------------------------------------------------- shapes


def _atom(node: TypeNode, value: Any) -> str:
    kind = node.kind
    if kind is NodeKind.STRUCT or kind is NodeKind.MAP:
        return _MAP
    if kind is NodeKind.LIST:
        return _LIST
    if kind is NodeKind.DEDUCED:
        # A deduced null could be any shape; structured-merge-diff tries a map first.
        return _MAP if value is None or isinstance(value, dict) else _LEAF
    if kind is NodeKind.UNTYPED:
        return _LEAF
    return _SCALAR


def _child(node: TypeNode, key: str) -> tuple[TypeNode, bool]:
    """The type of a map entry and whether it is a declared struct field. Fields a struct does
    not declare are of its ``item`` type when it has one (a custom resource whose schema
    preserves unknown fields), else deduced (only live objects can have them then:
    configurations are validated)."""
    if node.kind is NodeKind.STRUCT:
        meta = node.fields.get(key)
        if meta is not None:
            return meta.type, True
        return node.item or DEDUCED, False
    if node.kind is NodeKind.MAP:
        assert node.item is not None
        return node.item, False
    return DEDUCED, False


def _is_atomic(node: TypeNode) -> bool:
    if node.kind is NodeKind.LIST:
        return node.list_type is ListType.ATOMIC
    return node.atomic


def item_path_element(node: TypeNode, item: Any) -> PathElement:
    """The path element of an element of a set or keyed list (``node`` is the list)."""
    if node.list_type is ListType.MAP:
        if item is None:
            raise SchemaError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise SchemaError("associative list with keys may not have non-map elements")
        fields: dict[str, Any] = {}
        for key in node.list_keys:
            if key in item:
                fields[key] = item[key]
            elif key in node.key_defaults:
                fields[key] = node.key_defaults[key]
        if not fields:
            keys = " ".join(f'"{k}"' for k in node.list_keys)
            raise SchemaError(
                f"associative list with keys has an element that omits all key fields [{keys}] "
                "(and doesn't have default values for any key fields)"
            )
        return PathElement.of_key(fields)
    if isinstance(item, dict):
        raise SchemaError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise SchemaError("not supported: associative list with lists as elements")
    if item is None:
        raise SchemaError("associative list without keys has an element that's an explicit null")
    return PathElement.of_value(item)


# ---------------------------------------------------------------------------- validate


def validate(value: Any, node: TypeNode) -> list[str]:
    """Problems of an applied configuration, as ``<path>: <message>`` (empty when it fits)."""
    errors: list[str] = []
    _validate(value, node, "", errors)
    return errors


def _validate(value: Any, node: TypeNode, path: str, errors: list[str]) -> None:
    atom = _atom(node, value)
    prefix = f"{path}: " if path else ""
    if atom == _SCALAR:
        if isinstance(value, dict | list):
            kind = "map" if isinstance(value, dict) else "list"
            errors.append(f"{prefix}expected scalar, got {kind}")
        return
    if atom == _LEAF or value is None:
        return
    if atom == _MAP:
        if not isinstance(value, dict):
            errors.append(f"{prefix}expected map, got {_kind_of(value)}")
            return
        for key, child in value.items():
            child_node, declared = _child(node, key)
            child_path = f"{path}.{key}"
            if node.kind is NodeKind.STRUCT and not declared and node.item is None:
                errors.append(f"{child_path}: field not declared in schema")
                return
            _validate(child, child_node, child_path, errors)
        return
    if not isinstance(value, list):
        errors.append(f"{prefix}expected list, got {_kind_of(value)}")
        return
    assert node.item is not None
    seen: set[PathElement] = set()
    for i, item in enumerate(value):
        if node.list_type is ListType.ATOMIC:
            pe = PathElement.of_index(i)
        else:
            try:
                pe = item_path_element(node, item)
            except SchemaError as exc:
                errors.append(f"{prefix}element {i}: {exc}")
                return
            if pe in seen:
                errors.append(f"{prefix}duplicate entries for key {pe}")
            seen.add(pe)
        _validate(item, node.item, f"{path}{pe}", errors)


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


# ---------------------------------------------------------------------------- field sets


def to_field_set(value: Any, node: TypeNode) -> FieldSet:
    """The fields ``value`` sets: leaves, atomic lists and maps, list elements, struct fields
    set to null or ``{}``, and every key of a map (not of a struct)."""
    found, _ = _to_set(value, node)
    return found or FieldSet()


def _to_set(value: Any, node: TypeNode) -> tuple[FieldSet | None, bool]:
    """(the fields under ``value``, whether ``value`` itself is a member), built as a trie
    directly (no per-path tuples: this runs over whole objects on every apply)."""
    atom = _atom(node, value)
    if atom in (_SCALAR, _LEAF) or _is_atomic(node):
        return None, True
    out = FieldSet()
    if atom == _MAP:
        if not isinstance(value, dict):
            return None, False
        for key, child in value.items():
            child_node, declared = _child(node, key)
            sub, member = _to_set(child, child_node)
            pe = PathElement.of_field(key)
            if member or child is None or (isinstance(child, dict) and not child) or not declared:
                out.members.add(pe)
            if sub is not None and not sub.empty():
                out.children[pe] = sub
        return out, False
    if not isinstance(value, list):
        return None, False
    assert node.item is not None
    pes = [item_path_element(node, item) for item in value]
    seen: set[PathElement] = set()
    duplicates: set[PathElement] = set()
    for pe in pes:
        if pe in seen:
            duplicates.add(pe)
        seen.add(pe)
    for pe, item in zip(pes, value, strict=True):
        out.members.add(pe)
        if pe in duplicates:
            continue  # a repeated key is owned as a whole
        sub, _ = _to_set(item, node.item)
        if sub is not None and not sub.empty():
            out.children[pe] = sub
    return out, False


def ensure_named_fields_are_members(fields: FieldSet, node: TypeNode | None) -> FieldSet:
    """``fields`` plus every declared struct field that one of its paths goes through."""
    members = set(fields.members)
    children: dict[PathElement, FieldSet] = {}
    for pe, sub in fields.children.items():
        child_node: TypeNode | None = None
        if node is not None and pe.is_field:
            if node.kind is NodeKind.STRUCT:
                meta = node.fields.get(pe.raw)
                if meta is not None:
                    members.add(pe)
                    child_node = meta.type
            elif node.kind is NodeKind.MAP:
                child_node = node.item
            elif node.kind is NodeKind.DEDUCED:
                child_node = DEDUCED
        elif node is not None and pe.is_key and node.kind is NodeKind.LIST:
            child_node = node.item
        children[pe] = ensure_named_fields_are_members(sub, child_node)
    return FieldSet(members, children)


# ---------------------------------------------------------------------------- compare


def compare(lhs: Any, rhs: Any, node: TypeNode) -> Comparison:
    """Which fields ``rhs`` added, modified or removed relative to ``lhs``."""
    cmp = Comparison()
    _compare(lhs, rhs, node, None, cmp)
    return cmp


# A path as a chain of (parent, element) links: extending it costs O(1) at every level, where
# copying a tuple costs its length (quadratic over a 10,000-level object); it becomes a tuple
# only for the few paths that go into a result set.
_Trail = tuple[Any, PathElement] | None


def _path(trail: _Trail) -> Path:
    elements: list[PathElement] = []
    while trail is not None:
        trail, pe = trail
        elements.append(pe)
    elements.reverse()
    return tuple(elements)


def _compare(lhs: Any, rhs: Any, node: TypeNode, path: _Trail, cmp: Comparison) -> None:
    atom_l = _atom(node, lhs) if lhs is not MISSING else None
    atom_r = _atom(node, rhs) if rhs is not MISSING else None
    if atom_l is not None and atom_r is not None and atom_l != atom_r:
        cmp.modified.insert(_path(path))
        return
    atom = atom_r or atom_l
    if lhs is rhs or (node.kind in _TYPED_CONTAINERS and lhs == rhs):
        # Equal sub-trees hold no change. Python's == is exact here but for True == 1, which
        # typed fields cannot mix (deduced ones are walked instead).
        return
    if atom == _MAP and not _is_atomic(node) and not (_empty(lhs) and _empty(rhs)):
        lmap = lhs if isinstance(lhs, dict) else {}
        rmap = rhs if isinstance(rhs, dict) else {}
        for key, lv in lmap.items():
            child_node, _ = _child(node, key)
            _compare(lv, rmap.get(key, MISSING), child_node, (path, PathElement.of_field(key)), cmp)
        for key, rv in rmap.items():
            if key not in lmap:
                child_node, _ = _child(node, key)
                _compare(MISSING, rv, child_node, (path, PathElement.of_field(key)), cmp)
    elif atom == _LIST and not _is_atomic(node) and not (_empty(lhs) and _empty(rhs)):
        _compare_items(lhs, rhs, node, path, cmp)
    else:
        _compare_leaf(lhs, rhs, path, cmp)
        return
    if lhs is MISSING:
        cmp.added.insert(_path(path))
    elif rhs is MISSING:
        cmp.removed.insert(_path(path))


def _empty(value: Any) -> bool:
    return value is MISSING or value is None or (isinstance(value, dict | list) and not value)


def _compare_leaf(lhs: Any, rhs: Any, path: _Trail, cmp: Comparison) -> None:
    if lhs is MISSING:
        cmp.added.insert(_path(path))
    elif rhs is MISSING:
        cmp.removed.insert(_path(path))
    elif not json_equal(lhs, rhs):
        cmp.modified.insert(_path(path))


def _grouped(node: TypeNode, items: Any) -> tuple[list[PathElement], dict[PathElement, list[Any]]]:
    order: list[PathElement] = []
    groups: dict[PathElement, list[Any]] = {}
    for item in items if isinstance(items, list) else ():
        pe = item_path_element(node, item)
        if pe in groups:
            groups[pe].append(item)
        else:
            groups[pe] = [item]
            order.append(pe)
    return order, groups


def _compare_items(lhs: Any, rhs: Any, node: TypeNode, path: _Trail, cmp: Comparison) -> None:
    assert node.item is not None
    l_order, l_groups = _grouped(node, lhs)
    r_order, r_groups = _grouped(node, rhs)
    every = l_order + [pe for pe in r_order if pe not in l_groups]
    for pe in every:
        lvals = l_groups.get(pe, [])
        rvals = r_groups.get(pe, [])
        item_path: _Trail = (path, pe)
        if len(lvals) <= 1 and len(rvals) <= 1:
            _compare(
                lvals[0] if lvals else MISSING,
                rvals[0] if rvals else MISSING,
                node.item,
                item_path,
                cmp,
            )
        elif len(lvals) >= 2 and len(rvals) >= 2:
            if len(lvals) != len(rvals) or not all(map(json_equal, lvals, rvals)):
                cmp.modified.insert(_path(item_path))
        elif len(lvals) >= 2:
            if rvals:
                _compare(MISSING, rvals[0], node.item, item_path, cmp)
            cmp.removed.insert(_path(item_path))
        else:
            if lvals:
                _compare(lvals[0], MISSING, node.item, item_path, cmp)
            cmp.added.insert(_path(item_path))


# ---------------------------------------------------------------------------- merge


def merge(lhs: Any, rhs: Any, node: TypeNode) -> Any:
    """``rhs`` merged into ``lhs`` (``rhs`` wins); SchemaError when ``rhs`` has duplicate
    keys or elements without keys."""
    out = _merge(lhs, rhs, node, None)
    return {} if out is MISSING else out


def _merge(lhs: Any, rhs: Any, node: TypeNode, path: _Trail) -> Any:
    atom_l = _atom(node, lhs) if lhs is not MISSING else None
    atom_r = _atom(node, rhs) if rhs is not MISSING else None
    if atom_l is not None and atom_r is not None and atom_l != atom_r:
        lhs, atom_l = MISSING, None  # different shapes: the configuration replaces
    atom = atom_r or atom_l
    if atom == _MAP and not _is_atomic(node) and not (_empty(lhs) and _empty(rhs)):
        return _merge_map(lhs, rhs, node, path)
    if atom == _LIST and not _is_atomic(node) and not (_empty(lhs) and _empty(rhs)):
        return _merge_items(lhs, rhs, node, path)
    return rhs if rhs is not MISSING else lhs


def _merge_map(lhs: Any, rhs: Any, node: TypeNode, path: _Trail) -> Any:
    lmap = lhs if isinstance(lhs, dict) else {}
    rmap = rhs if isinstance(rhs, dict) else {}
    out: dict[str, Any] = {}
    for key, lv in lmap.items():
        rv = rmap.get(key, MISSING)
        child_node, _ = _child(node, key)
        merged = _merge(lv, rv, child_node, (path, PathElement.of_field(key)))
        if merged is not MISSING:
            out[key] = merged
    for key, rv in rmap.items():
        if key not in lmap:
            child_node, _ = _child(node, key)
            merged = _merge(MISSING, rv, child_node, (path, PathElement.of_field(key)))
            if merged is not MISSING:
                out[key] = merged
    return out if out else MISSING


def _merge_items(lhs: Any, rhs: Any, node: TypeNode, path: _Trail) -> Any:
    """Merge two sets or keyed lists. The order is the configuration's, with elements only the
    live object has kept in place relative to the elements both have (structured-merge-diff's
    interleaving)."""
    assert node.item is not None
    llist = lhs if isinstance(lhs, list) else []
    rlist = rhs if isinstance(rhs, list) else []
    rhs_pes: list[PathElement] = []
    observed_rhs: dict[PathElement, Any] = {}
    for item in rlist:
        pe = item_path_element(node, item)
        if pe in observed_rhs:
            raise SchemaError(f"{path_string(_path(path))}: duplicate entries for key {pe}")
        observed_rhs[pe] = item
        rhs_pes.append(pe)
    lhs_pes: list[PathElement] = []
    observed_lhs: dict[PathElement, Any] = {}
    for item in llist:
        pe = item_path_element(node, item)
        # A key the live object repeats merges as null (it cannot say which one is meant).
        observed_lhs[pe] = None if pe in observed_lhs else item
        lhs_pes.append(pe)

    shared = [pe for pe in rhs_pes if pe in observed_lhs]
    shared_at = 0
    next_shared = shared[0] if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []

    def emit(pe: PathElement, lchild: Any, rchild: Any) -> None:
        value = _merge(lchild, rchild, node.item, (path, pe))  # type: ignore[arg-type]
        if value is not MISSING:
            out.append(value)

    li = ri = 0
    while li < len(lhs_pes) or ri < len(rhs_pes):
        if li < len(lhs_pes) and ri < len(rhs_pes):
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                emit(pe, observed_lhs.get(pe, MISSING), observed_rhs[pe])
                li += 1
                ri += 1
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs_pes):
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                emit(pe, llist[li], MISSING)
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < len(rhs_pes):
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            emit(pe, observed_lhs.get(pe, MISSING), observed_rhs[pe])
            ri += 1
            if next_shared is not None and next_shared == pe:
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
    return out if out else MISSING


# ---------------------------------------------------------------------------- remove


def remove_items(value: Any, fields: FieldSet, node: TypeNode) -> Any:
    """``value`` without the fields in ``fields`` (a removed field takes its sub-fields)."""
    out = _remove(value, fields, node)
    return {} if out is MISSING else out


def _remove(value: Any, fields: FieldSet, node: TypeNode) -> Any:
    atom = _atom(node, value)
    if atom in (_SCALAR, _LEAF):
        return value
    if atom == _LIST:
        if not isinstance(value, list) or not value or _is_atomic(node):
            return MISSING
        assert node.item is not None
        items: list[Any] = []
        for item in value:
            pe = item_path_element(node, item)
            if pe in fields.members:
                continue
            sub = fields.children.get(pe)
            if sub is not None:
                item = _remove(item, sub, node.item)
                if item is MISSING:
                    continue
            items.append(item)
        return items if items else MISSING
    if not isinstance(value, dict) or not value or _is_atomic(node):
        return MISSING
    out: dict[str, Any] = {}
    for key, child in value.items():
        pe = PathElement.of_field(key)
        if pe in fields.members:
            continue
        sub = fields.children.get(pe)
        if sub is not None:
            child_node, _ = _child(node, key)
            child = _remove(child, sub, child_node)
            if child is MISSING:
                continue
        out[key] = child
    return out if out else MISSING
