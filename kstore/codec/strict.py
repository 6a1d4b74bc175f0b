"""The schema walk of a decoded body: unknown fields (``fieldValidation``) and wrong JSON types.

Kubernetes decodes built-in kinds into typed structs, so fields the schema does not know are
dropped (Ignore), reported as warnings (Warn) or fail the request (Strict), and a value of the
wrong JSON type fails the decode whatever ``fieldValidation`` says (400). Objects here are
dicts, so the same effect needs a walk over the decoded object; one walk does both:

- :func:`unknown_fields` reports paths such as ``spec.containers[0].foo`` and, with ``prune``,
  deletes those fields from the object (which the caller owns);
- :func:`check_fields` does the same and, for a schema bound to the kind's protobuf message
  (which knows the scalar types), also finds the first value Go's decoder would refuse, with
  Go's message: ``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
  of type int32``, ``illegal base64 data at input byte 0``.

Invariants: ``null`` is accepted anywhere (Go leaves the zero value); a value the schema leaves
open (``ANY``, and the special JSON forms Time, Quantity, IntOrString...) is never judged; the
walk visits objects in document order, so among several wrong values the first one Go meets is
usually the one reported (a wrong scalar of an object is found before the objects it holds).
The per-schema plans are computed once. Checking an object costs one set intersection and one
C-level superset test of (field, type) pairs; Python looks at single values only for int32
ranges, base64 and to word an error (bench/bench_strict_decode.py: the typed walk of a 5.8 KiB
Pod costs about twice the unknown-field walk alone).
"""

from __future__ import annotations

import binascii
import threading
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kstore.api.proto_schema import JsonKind, field_inline, json_kind
from kstore.api.schema import FieldSchema, SchemaType
from kstore.errors import BadRequest

__all__ = ["FieldCheck", "FieldValidation", "check_fields", "unknown_fields"]


class FieldValidation(StrEnum):
    """The ``fieldValidation`` query parameter; Kubernetes' default for requests is Warn."""

    IGNORE = "Ignore"
    WARN = "Warn"
    STRICT = "Strict"

    @classmethod
    def parse(cls, value: str | None) -> FieldValidation:
        if not value:
            return cls.WARN
        try:
            return cls(value)
        except ValueError:
            raise BadRequest(
                f"fieldValidation must be one of Ignore, Warn or Strict, not {value!r}"
            ) from None


@dataclass(frozen=True, slots=True)
class FieldCheck:
    """What one walk found: unknown field paths (parents first) and Go's message for the first
    value of the wrong type (None when every value has its field's type)."""

    unknown: list[str]
    type_error: str | None = None


def unknown_fields(obj: dict[str, Any], schema: FieldSchema, *, prune: bool) -> list[str]:
    """Paths of every field of ``obj`` that ``schema`` does not define (parents first).

    With ``prune`` the unknown fields are removed from ``obj`` in place. Types are not judged.
    """
    return _walk(obj, schema, prune, False).unknown


def check_fields(
    obj: dict[str, Any],
    schema: FieldSchema,
    *,
    prune: bool,
    message: Descriptor | None = None,
) -> FieldCheck:
    """Unknown fields as :func:`unknown_fields`, and the first value of the wrong type.

    ``message`` is the protobuf message of the kind ``schema`` was built from; it gives the
    scalar types (once per schema, remembered). Without it, only containers are judged
    (an object where a list belongs...) as far as the schema alone tells.
    """
    if message is not None and schema not in _MESSAGES:
        _bind(schema, message)
    return _walk(obj, schema, prune, True)


# ------------------------------------------------------------------------------- scalar types


class _Scalar:
    """Scalar kinds, named as Go names their types (plain strings: an Enum's Python-level hash
    would cost more than the check it keys)."""

    STRING: Final = "string"
    BYTES: Final = "[]uint8"
    BOOL: Final = "bool"
    INT32: Final = "int32"
    INT64: Final = "int64"
    UINT32: Final = "uint32"
    UINT64: Final = "uint64"
    FLOAT: Final = "float64"


_T = FieldDescriptor
_PROTO_SCALARS: Final[dict[int, str]] = {
    _T.TYPE_STRING: _Scalar.STRING,
    _T.TYPE_BYTES: _Scalar.BYTES,
    _T.TYPE_BOOL: _Scalar.BOOL,
    _T.TYPE_INT32: _Scalar.INT32,
    _T.TYPE_SINT32: _Scalar.INT32,
    _T.TYPE_SFIXED32: _Scalar.INT32,
    _T.TYPE_INT64: _Scalar.INT64,
    _T.TYPE_SINT64: _Scalar.INT64,
    _T.TYPE_SFIXED64: _Scalar.INT64,
    _T.TYPE_UINT32: _Scalar.UINT32,
    _T.TYPE_FIXED32: _Scalar.UINT32,
    _T.TYPE_UINT64: _Scalar.UINT64,
    _T.TYPE_FIXED64: _Scalar.UINT64,
    _T.TYPE_DOUBLE: _Scalar.FLOAT,
    _T.TYPE_FLOAT: _Scalar.FLOAT,
}
_INT_RANGES: Final = {
    _Scalar.INT32: (-(2**31), 2**31 - 1),
    _Scalar.INT64: (-(2**63), 2**63 - 1),
    _Scalar.UINT32: (0, 2**32 - 1),
    _Scalar.UINT64: (0, 2**64 - 1),
}
_NONE = type(None)


def _json_value(value: Any) -> str:
    """How Go's decoder names a JSON value it cannot store (``UnmarshalTypeError.Value``)."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def _scalar_problem(value: Any, scalar: str) -> tuple[str, str] | None:
    """(JSON value description, or a whole message) when ``value`` does not fit ``scalar``."""
    kind = type(value)
    if scalar is _Scalar.STRING:
        return None if kind is str else (_json_value(value), "")
    if scalar is _Scalar.BOOL:
        return None if kind is bool else (_json_value(value), "")
    if scalar is _Scalar.FLOAT:
        return None if kind is float or kind is int else (_json_value(value), "")
    if scalar is _Scalar.BYTES:
        if kind is not str:
            return (_json_value(value), "")
        bad = _base64_error_offset(value)
        return None if bad is None else ("", f"illegal base64 data at input byte {bad}")
    if kind is int:
        low, high = _INT_RANGES[scalar]
        if low <= value <= high:
            return None
        return (f"number {value}", "")
    if kind is float:
        # Go parses the literal as an integer and fails; its text is gone, Python's repr is
        # the same for the usual cases (1.5, 2.0).
        return (f"number {value!r}", "")
    return (_json_value(value), "")


_BASE64_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
)


def _base64_error_offset(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` stops on ``text`` (it skips CR and LF), or None."""
    stripped = text.replace("\r", "").replace("\n", "") if "\r" in text or "\n" in text else text
    try:
        binascii.a2b_base64(stripped, strict_mode=True)
        return None
    except (binascii.Error, ValueError):
        pass
    for index, char in enumerate(text):
        if char not in _BASE64_ALPHABET and char not in "\r\n":
            return index
    # Every character is of the alphabet: padding or length is wrong; Go reports the start
    # of the incomplete quantum.
    return len(stripped) - len(stripped) % 4


# ------------------------------------------------------------------------------------ plans

# Object schema -> its protobuf message, for the schemas bound through check_fields.
_MESSAGES: dict[FieldSchema, Descriptor] = {}
_BIND_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class _Types:
    """What a bound object schema knows beyond field names."""

    struct: str  # Go's struct name (UnmarshalTypeError.Struct)
    go_types: dict[str, str]  # Go type of every field, for messages
    scalars: dict[str, str]  # every typed scalar field: its _Scalar
    scalar_names: frozenset[str]
    # Every (field, Python type its value may have): the fields present are tested with one
    # C-level superset check; values that need more (int32 range, base64) are listed.
    allowed: frozenset[tuple[str, type]]
    valued: frozenset[str]
    items: dict[str, tuple[str, type]]  # maps/lists of typed scalars: element, container
    item_names: frozenset[str]
    checks: bool  # anything to check at all (many messages hold only objects)


# Object schema -> (its field count, its field names, the fields worth descending into, the
# subset of those that hold objects somewhere below, the lists and maps of scalars (by the
# Python type they must have) that are left out of that subset, types when bound).
# Schemas are shared and live as long as their scheme; bounded for
# embedders that build schemas on the fly. A schema's fields are filled once, possibly after
# it is built (recursive types): a plan made before that is stale, which the field count tells.
_Plan = tuple[
    int,
    frozenset[str],
    dict[str, FieldSchema],
    dict[str, FieldSchema],
    dict[str, type],
    _Types | None,
]
_PLANS: dict[FieldSchema, _Plan] = {}
_PLANS_SIZE: Final = 4096


def _plan(schema: FieldSchema) -> _Plan:
    fields = schema.fields
    message = _MESSAGES.get(schema)
    nested = {
        name: child
        for name, child in fields.items()
        if child.type is not SchemaType.SCALAR and child.type is not SchemaType.ANY
    }
    shaped: dict[str, type] = {}
    for name, child in nested.items():
        if child.type is not SchemaType.OBJECT and _leaf(child.items):
            shaped[name] = list if child.type is SchemaType.LIST else dict
    plan = (
        len(fields),
        frozenset(fields),
        nested,
        {name: child for name, child in nested.items() if name not in shaped},
        shaped,
        None if message is None else _types(message),
    )
    if len(_PLANS) < _PLANS_SIZE:
        _PLANS[schema] = plan
    return plan


def _leaf(items: FieldSchema | None) -> bool:
    """Whether the elements of a list or map are never walked (scalars or open values)."""
    return items is None or items.type is SchemaType.SCALAR or items.type is SchemaType.ANY


def _go_package(desc: Descriptor) -> str:
    return desc.file.package.rsplit(".", 1)[-1]


def _go_type(fd: FieldDescriptor) -> str:
    desc = fd.message_type
    if desc is not None and desc.GetOptions().map_entry:
        return f"map[string]{_go_type(desc.fields_by_name['value'])}"
    if desc is None:
        scalar = _PROTO_SCALARS.get(fd.type)
        element = scalar if scalar is not None else "string"
    else:
        element = f"{_go_package(desc)}.{desc.name}"
    return f"[]{element}" if fd.is_repeated else element


def _flat_fields(desc: Descriptor) -> list[FieldDescriptor]:
    out: list[FieldDescriptor] = []
    for fd in desc.fields:
        if fd.message_type is not None and field_inline(fd):
            out.extend(_flat_fields(fd.message_type))
        else:
            out.append(fd)
    return out


_ALLOWED: Final[dict[str, frozenset[type]]] = {
    _Scalar.STRING: frozenset((str, _NONE)),
    _Scalar.BYTES: frozenset((str, _NONE)),
    _Scalar.BOOL: frozenset((bool, _NONE)),
    _Scalar.INT32: frozenset((int, _NONE)),
    _Scalar.INT64: frozenset((int, _NONE)),
    _Scalar.UINT32: frozenset((int, _NONE)),
    _Scalar.UINT64: frozenset((int, _NONE)),
    _Scalar.FLOAT: frozenset((int, float, _NONE)),
}
# Kinds whose values need a check beyond their Python type. int64 needs none: the JSON
# decoder already refuses integers outside int64.
_VALUED: Final = frozenset((_Scalar.BYTES, _Scalar.INT32, _Scalar.UINT32, _Scalar.UINT64))


def _types(desc: Descriptor) -> _Types:
    scalars: dict[str, str] = {}
    items: dict[str, tuple[str, type]] = {}
    go_types: dict[str, str] = {}
    for fd in _flat_fields(desc):
        go_types[fd.name] = _go_type(fd)
        element = fd
        entry = fd.message_type
        if entry is not None and entry.GetOptions().map_entry:
            element = entry.fields_by_name["value"]
        if element.message_type is not None:
            continue  # objects are walked; special JSON forms are not judged
        scalar = _PROTO_SCALARS.get(element.type)
        if scalar is None:
            continue
        if element is not fd:
            items[fd.name] = (scalar, dict)
        elif fd.is_repeated:
            items[fd.name] = (scalar, list)
        else:
            scalars[fd.name] = scalar
    allowed = frozenset((k, t) for k, v in scalars.items() for t in _ALLOWED[v])
    valued = frozenset(k for k, v in scalars.items() if v in _VALUED)
    return _Types(
        desc.name,
        go_types,
        scalars,
        frozenset(scalars),
        allowed,
        valued,
        items,
        frozenset(items),
        bool(scalars or items),
    )


def _bind(schema: FieldSchema, message: Descriptor) -> None:
    """Remember the message of ``schema`` and of every object schema it reaches."""
    with _BIND_LOCK:
        pending = [(schema, message)]
        while pending:
            node, desc = pending.pop()
            if node.type is not SchemaType.OBJECT or node in _MESSAGES:
                continue
            _MESSAGES[node] = desc
            _PLANS.pop(node, None)
            for fd in _flat_fields(desc):
                child = node.fields.get(fd.name)
                sub = fd.message_type
                if child is None or sub is None:
                    continue
                if sub.GetOptions().map_entry:
                    sub = sub.fields_by_name["value"].message_type
                    child = child.items if child.type is SchemaType.MAP else None
                elif fd.is_repeated:
                    child = child.items if child.type is SchemaType.LIST else None
                if child is None or sub is None:
                    continue
                if json_kind(sub) == JsonKind.ITEMS_LIST and child.type is SchemaType.LIST:
                    items_fd = sub.fields_by_name["items"]
                    child, sub = child.items, items_fd.message_type
                    if child is None or sub is None:
                        continue
                if json_kind(sub) == JsonKind.OBJECT:
                    pending.append((child, sub))


# ------------------------------------------------------------------------------------- walk


def _mismatch(value: Any, where: str, struct: str, go_type: str) -> str:
    return f"json: cannot unmarshal {value} into Go struct field {struct}.{where} of type {go_type}"


#: Where a node of the walk is, rendered only for a message: None at the root, else (the
#: parent's, the field name or the element's index or key, whether it is a field name).
_Where = tuple[Any, Any, bool] | None


def _json_path(where: _Where) -> str:
    """``spec.containers[0].foo``: field names joined by dots, indexes and keys in brackets."""
    steps: list[tuple[Any, bool]] = []
    while where is not None:
        where, key, is_field = where
        steps.append((key, is_field))
    path = ""
    for key, is_field in reversed(steps):
        if is_field:
            path = f"{path}.{key}" if path else key
        else:
            path = f"{path}[{key}]"
    return path


def _go_path(where: _Where) -> str:
    """Go's field path: the field names only (``spec.containers.ports``)."""
    names: list[str] = []
    while where is not None:
        where, key, is_field = where
        if is_field:
            names.append(key)
    return ".".join(reversed(names))


def _check_scalars(node: dict[str, Any], types: _Types, where: _Where) -> str | None:
    """Go's message for the first scalar of ``node`` of the wrong type, or None."""
    present = types.scalar_names.intersection(node)
    if present and not types.allowed.issuperset(
        zip(present, map(type, map(node.__getitem__, present)), strict=True)
    ):
        return _first_scalar_problem(node, types, where)
    if types.valued:
        for key in types.valued.intersection(node):
            value = node[key]
            if value is not None and _scalar_problem(value, types.scalars[key]) is not None:
                return _first_scalar_problem(node, types, where)
    if not types.item_names:
        return None
    for key in types.item_names.intersection(node):
        container = node[key]
        scalar, container_type = types.items[key]
        values: Any
        # A container of the wrong kind is judged by the walk.
        if container_type is dict:
            if not isinstance(container, dict):
                continue
            values = container.values()
        elif isinstance(container, list):
            values = container
        else:
            continue
        if scalar not in _VALUED and _ALLOWED[scalar].issuperset(map(type, values)):
            continue
        for value in values:
            if value is None:
                continue
            problem = _scalar_problem(value, scalar)
            if problem is not None:
                described, message = problem
                return message or _mismatch(
                    described, _go_path((where, key, True)), types.struct, scalar
                )
    return None


def _first_scalar_problem(node: dict[str, Any], types: _Types, where: _Where) -> str | None:
    """The slow path of :func:`_check_scalars`: each typed scalar in document order."""
    for key, value in node.items():
        scalar = types.scalars.get(key)
        if scalar is None or value is None:
            continue
        problem = _scalar_problem(value, scalar)
        if problem is not None:
            described, message = problem
            return message or _mismatch(
                described, _go_path((where, key, True)), types.struct, types.go_types[key]
            )
    return None


def _walk(obj: dict[str, Any], schema: FieldSchema, prune: bool, typed: bool) -> FieldCheck:
    found: list[str] = []
    error: str | None = None
    # (node, its schema, where it is (see _Where: paths are rendered only for a message, most
    # walks need none), the types of the object whose field holds it and how its Go type
    # reads from the field's: "" for the field itself, "[]" or "map[string]" for an element),
    # the last two for messages
    stack: list[tuple[Any, FieldSchema, _Where, _Types | None, str]] = [
        (obj, schema, None, None, "")
    ]
    plans = _PLANS
    while stack:
        node, node_schema, where, owner, prefix = stack.pop()
        kind = node_schema.type
        if kind is SchemaType.OBJECT and isinstance(node, dict):
            entry = plans.get(node_schema)
            if entry is None or entry[0] != len(node_schema.fields):
                entry = _plan(node_schema)
            _, known, nested, below, shaped, types = entry
            if not known.issuperset(node):
                unknown = [key for key in node if key not in known]
                path = _json_path(where)
                found.extend(f"{path}.{key}" if path else key for key in unknown)
                if prune:
                    for key in unknown:
                        del node[key]
            if typed and error is None and types is not None and types.checks:
                error = _check_scalars(node, types, where)
            # A list or map of scalars of the right type (or null) holds nothing to walk:
            # only one of the wrong type is pushed, with the rest, to be judged in order.
            into = below
            if shaped:
                for key in shaped.keys() & node.keys():
                    value = node[key]
                    if value is not None and type(value) is not shaped[key]:
                        into = nested
                        break
            if into:
                stack.extend(
                    reversed(
                        [
                            (value, into[key], (where, key, True), types, "")
                            for key, value in node.items()
                            if key in into
                        ]
                    )
                )
        elif kind is SchemaType.LIST and isinstance(node, list):
            item = node_schema.items
            if (
                item is not None
                and item.type is not SchemaType.SCALAR
                and item.type is not SchemaType.ANY
            ):
                stack.extend(
                    (v, item, (where, i, False), owner, "[]")
                    for i, v in reversed(list(enumerate(node)))
                )
        elif kind is SchemaType.MAP and isinstance(node, dict):
            item = node_schema.items
            if (
                item is not None
                and item.type is not SchemaType.SCALAR
                and item.type is not SchemaType.ANY
            ):
                stack.extend(
                    (v, item, (where, k, False), owner, "map[string]")
                    for k, v in reversed(list(node.items()))
                )
        elif typed and error is None and node is not None and kind is not SchemaType.ANY:
            # An object, list or map where the schema wants another (scalars never get here).
            gopath = _go_path(where)
            field = gopath.rpartition(".")[2]
            struct = owner.struct if owner is not None else ""
            go_type = owner.go_types.get(field, "") if owner is not None else ""
            error = _mismatch(_json_value(node), gopath, struct, go_type.removeprefix(prefix))
    return FieldCheck(found, error)
