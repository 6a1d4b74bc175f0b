"""Field paths and field sets of objects, as ``managedFields`` records them (``FieldsV1``).

A field path is a tuple of encoded path elements, as structured-merge-diff writes them:
``f:<field>`` (a struct field or map key), ``k:<json>`` (an item of a list keyed by some of its
fields, the key fields sorted by name), ``v:<json>`` (an item of a set of scalars) and
``i:<n>`` (an item by index). A field set is a plain ``set`` of such paths; "the set owns
``spec.replicas``" is ``("f:spec", "f:replicas") in s``.

:func:`compare` walks two versions of an object the way structured-merge-diff's comparison
does and says which paths were added, modified and removed: scalars, atomic lists and atomic
structs are leaves; a map or list present on one side only also counts itself (which is what
puts ``.`` markers into ``FieldsV1``); lists are atomic unless the object's
:class:`FieldTypes` says they are sets or keyed lists. :func:`to_fields_v1` and
:func:`from_fields_v1` move between field sets and Kubernetes' ``FieldsV1`` JSON, ordering
elements as structured-merge-diff does (``.`` first, then fields by name, keys, values,
indexes), so equal sets always encode to equal JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

__all__ = [
    "Comparison",
    "FieldPath",
    "FieldSet",
    "FieldTypes",
    "ListType",
    "compare",
    "from_fields_v1",
    "recursive_difference",
    "to_fields_v1",
]

FieldPath = tuple[str, ...]
FieldSet = set[FieldPath]

#: How the element of a list is written in a pattern: ``("spec", "containers", ITEM, "ports")``.
ITEM: Final = "[]"
_SET: Final = "set"


class _Missing:
    """An absent field (Go's nil ``value.Value``), as opposed to a JSON null."""

    __slots__ = ()


_MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class ListType:
    """A list that is not atomic: a set of scalars (``keys`` empty) or a map keyed by
    ``keys`` (``x-kubernetes-list-type: map``)."""

    keys: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldTypes:
    """What structured-merge-diff's schema says about an object's composite fields.

    Paths are patterns of field names from the object root, :data:`ITEM` standing for "any
    list item" (``("spec", "containers", ITEM, "env")``). ``lists`` names the lists that are
    sets or keyed maps (every other list is atomic, as lists without a list type are);
    ``atomic`` names the structs and maps that are atomic (e.g. a label selector). An object
    with no schema (a custom kind) uses the default: maps granular, lists atomic.
    """

    lists: Mapping[tuple[str, ...], ListType] = field(default_factory=dict)
    atomic: frozenset[tuple[str, ...]] = frozenset()

    def mounted(self, prefix: tuple[str, ...], other: FieldTypes) -> FieldTypes:
        """These types plus ``other``'s, rooted at ``prefix`` (e.g. a pod spec inside a
        Deployment's template)."""
        lists = dict(self.lists)
        lists.update({prefix + k: v for k, v in other.lists.items()})
        return FieldTypes(
            lists=lists, atomic=self.atomic | frozenset(prefix + a for a in other.atomic)
        )


@dataclass(slots=True)
class Comparison:
    """The paths a change added, modified and removed."""

    added: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    removed: FieldSet = field(default_factory=set)


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


class _Walker:
    __slots__ = ("out", "types")

    def __init__(self, types: FieldTypes, out: Comparison) -> None:
        self.types = types
        self.out = out

    def leaf(self, path: FieldPath, lhs: Any, rhs: Any) -> None:
        if lhs is _MISSING:
            self.out.added.add(path)
        elif rhs is _MISSING:
            self.out.removed.add(path)
        elif lhs != rhs or isinstance(lhs, bool) is not isinstance(rhs, bool):
            # Python's 1 == True; JSON's 1 and true differ.
            self.out.modified.add(path)

    def node(self, path: FieldPath, pattern: tuple[str, ...], lhs: Any, rhs: Any) -> None:
        present = rhs if rhs is not _MISSING else lhs
        other = lhs if rhs is not _MISSING else rhs
        if isinstance(present, dict) and (
            other is _MISSING or other is None or isinstance(other, dict)
        ):
            if pattern in self.types.atomic:
                self.leaf(path, lhs, rhs)
                return
            self.map(path, pattern, lhs, rhs)
        elif isinstance(present, list) and (
            other is _MISSING or other is None or isinstance(other, list)
        ):
            list_type = self.types.lists.get(pattern)
            if list_type is None:
                self.leaf(path, lhs, rhs)
                return
            self.list(path, pattern, list_type, lhs, rhs)
        else:
            self.leaf(path, lhs, rhs)
            return
        if lhs is _MISSING:
            self.out.added.add(path)
        elif rhs is _MISSING:
            self.out.removed.add(path)

    def map(self, path: FieldPath, pattern: tuple[str, ...], lhs: Any, rhs: Any) -> None:
        lm: dict[str, Any] = lhs if isinstance(lhs, dict) else {}
        rm: dict[str, Any] = rhs if isinstance(rhs, dict) else {}
        if not lm and not rm:
            # Two empty (or null) maps compare as one value, as structured-merge-diff does.
            self.leaf(path, lhs, rhs)
            return
        for key in lm.keys() | rm.keys():
            self.node(
                (*path, "f:" + key),
                (*pattern, key),
                lm.get(key, _MISSING),
                rm.get(key, _MISSING),
            )

    def list(
        self, path: FieldPath, pattern: tuple[str, ...], list_type: ListType, lhs: Any, rhs: Any
    ) -> None:
        ll: list[Any] = lhs if isinstance(lhs, list) else []
        rl: list[Any] = rhs if isinstance(rhs, list) else []
        if not ll and not rl:
            self.leaf(path, lhs, rhs)
            return
        left = _group(ll, list_type)
        right = _group(rl, list_type)
        item_pattern = (*pattern, ITEM)
        for element in dict.fromkeys([*left, *right]):
            lvals = left.get(element, [])
            rvals = right.get(element, [])
            item_path = (*path, element)
            if len(lvals) <= 1 and len(rvals) <= 1:
                self.node(
                    item_path,
                    item_pattern,
                    lvals[0] if lvals else _MISSING,
                    rvals[0] if rvals else _MISSING,
                )
            elif len(lvals) >= 2 and len(rvals) >= 2:
                if lvals != rvals:
                    self.out.modified.add(item_path)
            elif len(lvals) >= 2:
                if rvals:
                    self.node(item_path, item_pattern, _MISSING, rvals[0])
                self.out.removed.add(item_path)
            else:
                if lvals:
                    self.node(item_path, item_pattern, lvals[0], _MISSING)
                self.out.added.add(item_path)


def _element(item: Any, list_type: ListType, index: int) -> str:
    if not list_type.keys:
        return "v:" + _json(item) if _is_scalar(item) else f"i:{index}"
    if not isinstance(item, dict):
        return f"i:{index}"
    key = {k: item[k] for k in list_type.keys if k in item}
    return "k:" + _json(key) if key else f"i:{index}"


def _group(items: Sequence[Any], list_type: ListType) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for i, item in enumerate(items):
        grouped.setdefault(_element(item, list_type, i), []).append(item)
    return grouped


def compare(lhs: Mapping[str, Any], rhs: Mapping[str, Any], types: FieldTypes) -> Comparison:
    """The paths that changed from ``lhs`` to ``rhs`` (two versions of one object)."""
    out = Comparison()
    _Walker(types, out).map((), (), dict(lhs), dict(rhs))
    return out


def recursive_difference(paths: Iterable[FieldPath], remove: Iterable[FieldPath]) -> FieldSet:
    """``paths`` without those in ``remove`` and without their descendants."""
    prefixes = set(remove)
    if not prefixes:
        return set(paths)
    return {p for p in paths if not any(p[:n] in prefixes for n in range(1, len(p) + 1))}


# ---------------------------------------------------------------------------- FieldsV1


def _order(element: str) -> tuple[int, str]:
    rank = {"f": 0, "k": 1, "v": 2, "i": 3}.get(element[:1], 4)
    if rank == 3:
        return rank, element[2:].rjust(20, "0")
    return rank, element[2:]


class _Node:
    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[str, _Node] = {}

    def encode(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.member and self.children:
            out["."] = {}
        for element in sorted(self.children, key=_order):
            out[element] = self.children[element].encode()
        return out


def to_fields_v1(paths: Iterable[FieldPath]) -> dict[str, Any]:
    """A field set as ``FieldsV1`` JSON (a nested dict, in structured-merge-diff's order)."""
    root = _Node()
    for path in paths:
        node = root
        for element in path:
            node = node.children.setdefault(element, _Node())
        node.member = True
    return root.encode()


def from_fields_v1(fields: Any) -> FieldSet:
    """The field set a ``FieldsV1`` value describes; ValueError when it is malformed."""
    out: FieldSet = set()

    def walk(node: Any, path: FieldPath) -> None:
        if not isinstance(node, dict):
            raise ValueError(f"expected a map at {'.'.join(path) or 'the root'}")
        for element, child in node.items():
            if element == ".":
                if path:
                    out.add(path)
                continue
            if element[:2] not in ("f:", "k:", "v:", "i:"):
                raise ValueError(f"unknown path element {element!r}")
            child_path = (*path, element)
            if isinstance(child, dict) and not child:
                out.add(child_path)
            else:
                walk(child, child_path)

    walk(fields, ())
    return out
