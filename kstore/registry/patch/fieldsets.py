"""Field sets: which fields of an object a manager owns, and their ``FieldsV1`` encoding.

A field path is a tuple of :class:`PathElement`: a field name (``.spec``), the key fields of an
element of a list keyed by them (``[name="nginx"]``), the value of an element of a set
(``[="a"]``) or an index (``[0]``). A :class:`FieldSet` is a trie of paths: ``members`` are the
paths that end at this node, ``children`` lead further down. As in structured-merge-diff, a
set holds only non-empty children, path elements order fields before keys before values before
indexes (each group by its own order), and the ``FieldsV1`` form lists entries in that order,
``"."`` first when a node is both a member and a parent::

    {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
        "k:{\\"name\\":\\"nginx\\"}": {".": {}, "f:image": {}}}}}}}

Invariants: sets are never mutated after they are handed to another module (every operation
here returns a new set, except :meth:`FieldSet.insert`, used while building one); a path
element's hash and order ignore how its JSON value was spelled (``80`` and ``80.0`` agree).

Because sets and elements never change, they are shared: field elements per name and key or
value elements per exact spelling are interned, an element hashes once, and
:meth:`FieldSet.from_fields_v1` returns one set per distinct ``fieldsV1`` content (a bounded
memo), which keeps its own encoding, so a manager a write does not touch costs one JSON decode.
"""

from __future__ import annotations

import json
import operator
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from kstore.codec.json import dumps as json_dumps
from kstore.codec.json import loads as json_loads
from kstore.errors import BadRequest
from kstore.registry.patch._gofmt import go_json, smd_string

__all__ = [
    "FieldSet",
    "Path",
    "PathElement",
    "path_element_order",
    "path_string",
]

_FIELD, _KEY, _VALUE, _INDEX = 0, 1, 2, 3


def _canon(value: Any) -> tuple[Any, ...]:
    """A hashable, totally ordered stand-in for a JSON value, in structured-merge-diff's order:
    numbers, strings, booleans, lists, maps, null."""
    if value is None:
        return (5,)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_canon(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple(sorted((k, _canon(v)) for k, v in value.items())))
    raise TypeError(f"not a JSON value: {value!r}")


@dataclass(frozen=True, slots=True, order=True)
class PathElement:
    """One step of a field path. Compare and hash on ``(kind, sort)``; ``raw`` is the JSON
    spelling (the field name, the key fields as ``(name, value)`` pairs, the value, the index).

    The hash is computed once: elements are dict keys and set members of every trie, and a
    key element's ``sort`` is a nested tuple that would otherwise be re-hashed on each lookup.
    """

    kind: int
    sort: Any
    raw: Any = field(compare=False, hash=False)
    _hash: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.kind, self.sort)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not PathElement:
            return NotImplemented
        assert isinstance(other, PathElement)
        return self._hash == other._hash and self.kind == other.kind and self.sort == other.sort

    @staticmethod
    def of_field(name: str) -> PathElement:
        # Field names repeat across every object of a kind: one shared element per name.
        found = _FIELD_ELEMENTS.get(name)
        if found is None:
            found = PathElement(_FIELD, name, name)
            if len(_FIELD_ELEMENTS) < _CACHE_SIZE:
                _FIELD_ELEMENTS[name] = found
        return found

    @staticmethod
    def of_key(fields: dict[str, Any]) -> PathElement:
        if len(fields) == 1:
            # Most keyed lists have one key (a name, a path): its memo, without the sort.
            ((name, value),) = fields.items()
            if value.__class__ in _MEMO_TYPES:
                found = _KEY_ELEMENTS.get(((name, value.__class__, value),))
                if found is not None:
                    return found
        pairs = tuple(sorted(fields.items()))
        # List keys (container names, ports) repeat across objects: share one element per
        # spelling. Only exact scalar types are memoised (the type is part of the memo key:
        # ``1``, ``1.0`` and ``true`` compare equal in Python but are spelled apart).
        memo: tuple[Any, ...] | None = None
        if all(v.__class__ in _MEMO_TYPES for _, v in pairs):
            memo = tuple((k, v.__class__, v) for k, v in pairs)
            found = _KEY_ELEMENTS.get(memo)
            if found is not None:
                return found
        found = PathElement(_KEY, tuple((k, _canon(v)) for k, v in pairs), pairs)
        if memo is not None and len(_KEY_ELEMENTS) < _CACHE_SIZE:
            _KEY_ELEMENTS[memo] = found
        return found

    @staticmethod
    def of_value(value: Any) -> PathElement:
        if value.__class__ in _MEMO_TYPES:
            memo = (value.__class__, value)
            found = _VALUE_ELEMENTS.get(memo)
            if found is None:
                found = PathElement(_VALUE, _canon(value), value)
                if len(_VALUE_ELEMENTS) < _CACHE_SIZE:
                    _VALUE_ELEMENTS[memo] = found
            return found
        return PathElement(_VALUE, _canon(value), value)

    @staticmethod
    def of_index(index: int) -> PathElement:
        return PathElement(_INDEX, index, index)

    @property
    def is_field(self) -> bool:
        return self.kind == _FIELD

    @property
    def is_key(self) -> bool:
        return self.kind == _KEY

    def __str__(self) -> str:
        if self.kind == _FIELD:
            return "." + str(self.raw)
        if self.kind == _KEY:
            return "[" + ",".join(f"{k}={smd_string(v)}" for k, v in self.raw) + "]"
        if self.kind == _VALUE:
            return f"[={smd_string(self.raw)}]"
        return f"[{self.raw}]"

    def serialize(self) -> str:
        """The element's key in ``FieldsV1``."""
        text = _SERIALIZED.get(self)
        if text is None:
            text = self._serialize()
            if len(_SERIALIZED) < _CACHE_SIZE:
                _SERIALIZED[self] = text
        return text

    def _serialize(self) -> str:
        if self.kind == _FIELD:
            return "f:" + str(self.raw)
        if self.kind == _KEY:
            return "k:{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in self.raw) + "}"
        if self.kind == _VALUE:
            return "v:" + go_json(self.raw)
        return f"i:{self.raw}"

    @staticmethod
    def deserialize(text: str) -> PathElement | None:
        """Parse a ``FieldsV1`` key; None for an unknown element type (skipped, as Kubernetes
        does); BadRequest when a known type is malformed."""
        found = _DESERIALIZED.get(text)
        if found is None:
            found = PathElement._deserialize(text)
            if found is not None and len(_DESERIALIZED) < _CACHE_SIZE:
                _DESERIALIZED[text] = found
        return found

    @staticmethod
    def _deserialize(text: str) -> PathElement | None:
        if len(text) < 2 or text[1] != ":":
            raise BadRequest(f"invalid managedFields path element: {text!r}")
        body = text[2:]
        try:
            if text[0] == "f":
                return PathElement.of_field(body)
            if text[0] == "k":
                fields = json.loads(body)
                if not isinstance(fields, dict):
                    raise ValueError("not an object")
                return PathElement.of_key(fields)
            if text[0] == "v":
                return PathElement.of_value(json.loads(body))
            if text[0] == "i":
                return PathElement.of_index(int(body))
        except ValueError as exc:
            raise BadRequest(f"invalid managedFields path element {text!r}: {exc}") from None
        return None


Path = tuple[PathElement, ...]

# Field names and keys repeat across objects of a kind: memoise both directions of the FieldsV1
# spelling (bounded; a full cache only stops growing). Path elements are immutable.
_CACHE_SIZE = 65536
_SERIALIZED: dict[PathElement, str] = {}
_DESERIALIZED: dict[str, PathElement] = {}
_FIELD_ELEMENTS: dict[str, PathElement] = {}
_KEY_ELEMENTS: dict[tuple[Any, ...], PathElement] = {}
_VALUE_ELEMENTS: dict[tuple[type, Any], PathElement] = {}
# Values memoised by (type, value): floats are left out (0.0 and -0.0 are equal but spelled
# apart).
_MEMO_TYPES: frozenset[type] = frozenset({str, int, bool, type(None)})
# Parsed fieldsV1 objects by their JSON text; bounded (a pod's set is ~10 KiB of trie).
_PARSED_SIZE = 1024
_PARSED: dict[bytes, FieldSet] = {}
_PARSED_LOCK = threading.Lock()


#: The sort key of a path element: its order, without the generated ``__lt__``.
path_element_order = _order = operator.attrgetter("kind", "sort")


def path_string(path: Path) -> str:
    """``.spec.template.spec.containers[name="nginx"].image``, as Kubernetes prints a path."""
    return "".join(str(pe) for pe in path)


class FieldSet:
    """A set of field paths (a trie). Build with :meth:`insert`; combine with the operators,
    which return new sets."""

    __slots__ = ("_v1", "children", "members")

    def __init__(
        self,
        members: set[PathElement] | None = None,
        children: dict[PathElement, FieldSet] | None = None,
    ) -> None:
        self.members: set[PathElement] = members if members is not None else set()
        self.children: dict[PathElement, FieldSet] = children if children is not None else {}
        # The FieldsV1 encoding of a set decoded from FieldsV1 (sets do not change once
        # handed out; insert, the one building step that could follow, drops it).
        self._v1: bytes | None = None

    # ------------------------------------------------------------------ building

    def insert(self, path: Path) -> None:
        if not path:
            return
        self._v1 = None
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
        node.members.add(path[-1])

    @staticmethod
    def of(*paths: Path) -> FieldSet:
        out = FieldSet()
        for p in paths:
            out.insert(p)
        return out

    # ------------------------------------------------------------------ queries

    def empty(self) -> bool:
        # Children are kept non-empty by every operation, so this is a shallow check.
        return not self.members and not self.children

    def has(self, path: Path) -> bool:
        if not path:
            return False
        node: FieldSet | None = self
        for pe in path[:-1]:
            assert node is not None
            node = node.children.get(pe)
            if node is None:
                return False
        assert node is not None
        return path[-1] in node.members

    def with_prefix(self, pe: PathElement) -> FieldSet:
        """The paths under ``pe``, without it."""
        return self.children.get(pe) or FieldSet()

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every path, members of a node before its children, each group in path order."""
        for pe in sorted(self.members, key=_order):
            yield (*prefix, pe)
        for pe in sorted(self.children, key=_order):
            yield from self.children[pe].paths((*prefix, pe))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(p) for p in self.paths()) + ")"

    # ------------------------------------------------------------------ algebra

    def union(self, other: FieldSet) -> FieldSet:
        if other.empty():
            return self
        if self.empty():
            return other
        children = dict(self.children)
        for pe, sub in other.children.items():
            mine = children.get(pe)
            children[pe] = sub if mine is None else mine.union(sub)
        return FieldSet(self.members | other.members, children)

    def intersection(self, other: FieldSet) -> FieldSet:
        children: dict[PathElement, FieldSet] = {}
        for pe, sub in self.children.items():
            theirs = other.children.get(pe)
            if theirs is not None:
                both = sub.intersection(theirs)
                if not both.empty():
                    children[pe] = both
        return FieldSet(self.members & other.members, children)

    def difference(self, other: FieldSet) -> FieldSet:
        """Leaf-wise difference: removing a parent path keeps its children."""
        if other.empty():
            return self
        children: dict[PathElement, FieldSet] = {}
        for pe, sub in self.children.items():
            theirs = other.children.get(pe)
            rest = sub if theirs is None else sub.difference(theirs)
            if not rest.empty():
                children[pe] = rest
        return FieldSet(self.members - other.members, children)

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Difference that also drops everything under a path ``other`` holds."""
        if other.empty():
            return self
        children: dict[PathElement, FieldSet] = {}
        for pe, sub in self.children.items():
            if pe in other.members:
                continue
            theirs = other.children.get(pe)
            rest = sub if theirs is None else sub.recursive_difference(theirs)
            if not rest.empty():
                children[pe] = rest
        return FieldSet(self.members - other.members, children)

    # ------------------------------------------------------------------ FieldsV1

    def to_fields_v1(self) -> dict[str, Any]:
        """The ``fieldsV1`` object, entries in Kubernetes' order (a new object every call)."""
        if self._v1 is not None:
            # A manager whose fields a write did not touch keeps its decoded set: decoding
            # the kept JSON is ~10x cheaper than walking the trie again.
            out: dict[str, Any] = json_loads(self._v1, max_depth=None)
            return out
        return self._emit(include_self=False)

    def _emit(self, *, include_self: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if include_self:
            out["."] = {}
        children = self.children
        members = self.members
        for pe in sorted(members | children.keys(), key=_order):
            sub = children.get(pe)
            if sub is None:
                out[pe.serialize()] = {}
            else:
                out[pe.serialize()] = sub._emit(include_self=pe in members)
        return out

    @staticmethod
    def from_fields_v1(fields: Any) -> FieldSet:
        """Parse a ``fieldsV1`` object; BadRequest when it is not one. Equal objects give
        the same (shared, never to be changed) set: every write decodes the managedFields it
        carries or finds, and they repeat from write to write."""
        if not isinstance(fields, dict):
            raise BadRequest("managedFields: fieldsV1 must be a JSON object")
        try:
            text = json_dumps(fields)
        except (TypeError, orjson.JSONEncodeError):
            text = None
        if text is not None:
            known = _PARSED.get(text)
            if known is not None:
                return known
        found, _ = FieldSet._read(fields)
        result = found or FieldSet()
        if text is not None:
            # Shared sets are the ones written back unchanged, write after write.
            result._v1 = json_dumps(result._emit(include_self=False))
            with _PARSED_LOCK:
                if len(_PARSED) >= _PARSED_SIZE:
                    del _PARSED[next(iter(_PARSED))]  # the oldest
                _PARSED[text] = result
        return result

    @staticmethod
    def _read(node: dict[str, Any]) -> tuple[FieldSet | None, bool]:
        """(children, is_member) of one ``fieldsV1`` object, as Kubernetes reads it: an empty
        object is a member; ``"."`` marks a parent that is also a member."""
        out: FieldSet | None = None
        is_member = False
        for key, value in node.items():
            if key == ".":
                is_member = True
                continue
            pe = PathElement.deserialize(key)
            if pe is None:
                continue
            if not isinstance(value, dict):
                raise BadRequest(f"managedFields: the value of {key!r} must be a JSON object")
            grandchildren, child_is_member = FieldSet._read(value)
            if out is None:
                out = FieldSet()
            if child_is_member:
                out.members.add(pe)
            if grandchildren is not None and not grandchildren.empty():
                out.children[pe] = grandchildren
        if out is None:
            is_member = True
        return out, is_member
