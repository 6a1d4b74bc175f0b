"""The parsed and checked CEL expression, as plain Python nodes.

The CEL C++ front end (``cel-expr-python``) parses and type-checks a rule and hands the result
back only as a serialized ``cel.expr.CheckedExpr`` protobuf wrapped in ``google.protobuf.Any``.
This module reads that wire format directly (a few dozen lines, no generated code) into the
node classes below. Macros (``all``, ``exists``, ``map``, ``filter`` ...) arrive already
expanded into :class:`Comprehension` nodes, so the interpreter has one loop construct.

Invariant: every node keeps its expression id; ``positions`` maps ids to character offsets in
the source, which is what cost errors and the field check use to point at the source.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Call",
    "CheckedAst",
    "Comprehension",
    "Const",
    "CreateList",
    "CreateMap",
    "Expr",
    "Ident",
    "Select",
    "UInt",
    "decode_checked",
    "iter_nodes",
]


class UInt(int):
    """A CEL ``uint``: a Python int that remembers it is unsigned (``type(v) is UInt``)."""

    __slots__ = ()


@dataclass(slots=True)
class Const:
    id: int
    value: Any


@dataclass(slots=True)
class Ident:
    id: int
    name: str


@dataclass(slots=True)
class Select:
    id: int
    operand: Expr
    field: str
    test_only: bool


@dataclass(slots=True)
class Call:
    id: int
    target: Expr | None
    function: str
    args: list[Expr]


@dataclass(slots=True)
class CreateList:
    id: int
    elements: list[Expr]
    optional_indices: frozenset[int]


@dataclass(slots=True)
class CreateMap:
    id: int
    # (key, value, optional entry)
    entries: list[tuple[Expr, Expr, bool]]
    #: The message a struct literal names (``Object.spec{...}``); "" for a map literal.
    message_name: str = ""


@dataclass(slots=True)
class Comprehension:
    id: int
    iter_var: str
    iter_var2: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


Expr = Const | Ident | Select | Call | CreateList | CreateMap | Comprehension


@dataclass(slots=True)
class CheckedAst:
    expr: Expr
    positions: dict[int, int] = field(default_factory=dict)
    # Names the checker resolved identifiers and functions to (``self``, ``_+_``...), by id.
    references: dict[int, str] = field(default_factory=dict)
    # The overloads the checker found possible for each call (``add_string``...), by id.
    overloads: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # Each expression's checked type, spelled as cel-go's FormatCELType (``list(int)``).
    types: dict[int, str] = field(default_factory=dict)


def iter_nodes(root: Expr) -> list[Expr]:
    """Every node of ``root``'s tree (``root`` included), parents before their children."""
    found: list[Expr] = []
    stack: list[Expr] = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, Select):
            stack.append(node.operand)
        elif isinstance(node, Call):
            stack.extend(node.args)
            if node.target is not None:
                stack.append(node.target)
        elif isinstance(node, CreateList):
            stack.extend(node.elements)
        elif isinstance(node, CreateMap):
            for k, v, _ in node.entries:
                stack.extend((k, v))
        elif isinstance(node, Comprehension):
            stack.extend(
                (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
            )
    return found


# --- protobuf wire format -------------------------------------------------------------------


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """Split one message into (field number, wire type, raw value) triples."""
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            val, i = _varint(buf, i)
            out.append((num, wire, val))
        elif wire == 1:
            out.append((num, wire, buf[i : i + 8]))
            i += 8
        elif wire == 2:
            size, i = _varint(buf, i)
            out.append((num, wire, buf[i : i + size]))
            i += size
        elif wire == 5:
            out.append((num, wire, buf[i : i + 4]))
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def decode_checked(serialized: bytes) -> CheckedAst:
    """Read ``Any{cel.expr.CheckedExpr}`` bytes as produced by ``Expression.serialize()``
    (or ``Any{cel.expr.ParsedExpr}`` for an unchecked one: no references, no types)."""
    payload = serialized
    parsed = False
    for num, _, val in _fields(serialized):
        if num == 1:
            parsed = bytes(val).endswith(b".ParsedExpr")
        elif num == 2:
            payload = val
    if parsed:
        expr_field, info_field = 2, 3
    else:
        expr_field, info_field = 4, 5
    expr: Expr | None = None
    positions: dict[int, int] = {}
    references: dict[int, str] = {}
    overloads: dict[int, tuple[str, ...]] = {}
    types: dict[int, str] = {}
    for num, _, val in _fields(payload):
        if num == 2 and not parsed:  # reference_map entry
            key, name, ids = 0, "", []
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    key = _signed(v2)
                elif n2 == 2:
                    for n3, _, v3 in _fields(v2):
                        if n3 == 1:
                            name = bytes(v3).decode()
                        elif n3 == 3:
                            ids.append(bytes(v3).decode())
            if name:
                references[key] = name
            if ids:
                overloads[key] = tuple(ids)
        elif num == 3 and not parsed:  # type_map entry
            key, text = 0, "dyn"
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    key = _signed(v2)
                elif n2 == 2:
                    text = _type_name(v2)
            types[key] = text
        elif num == expr_field:
            expr = _expr(val)
        elif num == info_field:
            positions = _positions(val)
    if expr is None:
        raise ValueError("checked expression without an expression")
    return CheckedAst(expr, positions, references, overloads, types)


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def _type_name(buf: bytes) -> str:
    """A cel.expr.Type as cel-go's FormatCELType spells it."""
    for num, _, val in _fields(buf):
        if num == 1:
            return "dyn"
        if num == 2:
            return "null_type"
        if num == 3:
            return _PRIMITIVES.get(val, "dyn")
        if num == 4:
            return f"wrapper({_PRIMITIVES.get(val, 'dyn')})"
        if num == 5:
            return _WELL_KNOWN.get(val, "dyn")
        if num == 6:
            return f"list({_type_name(_first(val, 1))})"
        if num == 7:
            return f"map({_type_name(_first(val, 1))}, {_type_name(_first(val, 2))})"
        if num in (9, 10):
            return bytes(val).decode()
        if num == 11:
            return f"type({_type_name(val)})" if val else "type"
        if num == 12:
            return "*error*"
        if num == 14:
            name, params = "", []
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    name = bytes(v2).decode()
                elif n2 == 2:
                    params.append(_type_name(v2))
            return f"{name}({', '.join(params)})" if params else name
    return "dyn"


def _first(buf: bytes, number: int) -> bytes:
    for num, _, val in _fields(buf):
        if num == number:
            return bytes(val)
    return b""


def _positions(buf: bytes) -> dict[int, int]:
    out: dict[int, int] = {}
    for num, _, val in _fields(buf):
        if num == 4:
            key = pos = 0
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    key = _signed(v2)
                elif n2 == 2:
                    pos = _signed(v2)
            out[key] = pos
    return out


def _expr(buf: bytes) -> Expr:
    eid = 0
    kind = 0
    body = b""
    for num, _, val in _fields(buf):
        if num == 2:
            eid = _signed(val)
        elif 3 <= num <= 9:
            kind, body = num, val
    if kind == 3:
        return Const(eid, _constant(body))
    if kind == 4:
        return Ident(eid, _string_field(body, 1))
    if kind == 5:
        operand: Expr | None = None
        name, test_only = "", False
        for num, _, val in _fields(body):
            if num == 1:
                operand = _expr(val)
            elif num == 2:
                name = val.decode()
            elif num == 3:
                test_only = bool(val)
        assert operand is not None
        return Select(eid, operand, name, test_only)
    if kind == 6:
        target: Expr | None = None
        function = ""
        args: list[Expr] = []
        for num, _, val in _fields(body):
            if num == 1:
                target = _expr(val)
            elif num == 2:
                function = val.decode()
            elif num == 3:
                args.append(_expr(val))
        return Call(eid, target, function, args)
    if kind == 7:
        elements: list[Expr] = []
        optional: set[int] = set()
        for num, wire, val in _fields(body):
            if num == 1:
                elements.append(_expr(val))
            elif num == 2:
                if wire == 2:
                    j = 0
                    while j < len(val):
                        idx, j = _varint(val, j)
                        optional.add(idx)
                else:
                    optional.add(val)
        return CreateList(eid, elements, frozenset(optional))
    if kind == 8:
        entries: list[tuple[Expr, Expr, bool]] = []
        message_name = ""
        for num, _, val in _fields(body):
            if num == 1:
                message_name = bytes(val).decode()
            elif num == 2:
                key: Expr | None = None
                value: Expr | None = None
                opt = False
                for n2, _, v2 in _fields(val):
                    if n2 == 2:
                        key = Const(0, v2.decode())
                    elif n2 == 3:
                        key = _expr(v2)
                    elif n2 == 4:
                        value = _expr(v2)
                    elif n2 == 5:
                        opt = bool(v2)
                assert key is not None and value is not None
                entries.append((key, value, opt))
        return CreateMap(eid, entries, message_name)
    if kind == 9:
        parts: dict[int, Any] = {}
        for num, _, val in _fields(body):
            parts[num] = val
        return Comprehension(
            eid,
            iter_var=parts.get(1, b"").decode(),
            iter_var2=parts.get(8, b"").decode(),
            iter_range=_expr(parts[2]),
            accu_var=parts.get(3, b"").decode(),
            accu_init=_expr(parts[4]),
            loop_condition=_expr(parts[5]),
            loop_step=_expr(parts[6]),
            result=_expr(parts[7]),
        )
    raise ValueError(f"unsupported expression kind {kind}")


def _string_field(buf: bytes, number: int) -> str:
    for num, _, val in _fields(buf):
        if num == number:
            return bytes(val).decode()
    return ""


def _constant(buf: bytes) -> Any:
    for num, _, val in _fields(buf):
        if num == 1:
            return None
        if num == 2:
            return bool(val)
        if num == 3:
            return _signed(val)
        if num == 4:
            return UInt(val)
        if num == 5:
            return struct.unpack("<d", val)[0]
        if num == 6:
            return bytes(val).decode()
        if num == 7:
            return bytes(val)
    return None
