"""The CEL of MutatingAdmissionPolicy mutations: expressions that build an apply
configuration (``Object{spec: Object.spec{replicas: 3}}``) or a JSON patch
(``[JSONPatch{op: "add", path: "/metadata/labels/a", value: "b"}]``).

Kubernetes resolves these type names dynamically (``k8s.io/apiserver/pkg/cel/mutation``):
``Object`` and every ``Object.<field>...`` name is an object type that takes any field, each
``dyn``; ``JSONPatch`` has ``op``, ``path`` and ``from`` (strings) and ``value`` (``dyn``).
The checker here (cel-cpp) knows struct types only as protobuf messages, and protobuf does not
let a message ``Object`` hold both a field ``spec`` and a nested type ``spec``. So each
expression is first parsed, the ``Object...`` names its literals use are listed with the
fields each is given, and the source is checked with every such name replaced by a distinct
identifier of the same length (so cel-go's columns and carets still hold), each a flat
message with those fields typed ``google.protobuf.Value`` (``dyn``). Messages mention the
original names again.

What Kubernetes checks at evaluation time, that a nested literal's type name follows its
field path from the root (``Object{spec: Object.spec{...}}``), is decided here once, from the
literals, and reported when the expression is evaluated (``type mismatch: ...``), as
Kubernetes reports it. Values are plain dicts and lists (:mod:`._interpreter`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

from google.protobuf import descriptor_pb2, struct_pb2

from kstore.api.cel._ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    Expr,
    Select,
    iter_nodes,
)
from kstore.api.cel._environment import CompileError, compile_with_variables, parse_expression
from kstore.api.cel._interpreter import build
from kstore.api.cel._values import NoOverload
from kstore.api.cel.admission import (
    ADMISSION_FUNCTIONS,
    CompiledExpression,
    admission_variables,
    root_reference,
)

__all__ = ["APPLY_CONFIGURATION", "JSON_PATCH", "MutationExpression", "compile_mutation"]

APPLY_CONFIGURATION: Final = "ApplyConfiguration"
JSON_PATCH: Final = "JSONPatch"
PatchType = Literal["ApplyConfiguration", "JSONPatch"]

_OBJECT: Final = "Object"
_F = descriptor_pb2.FieldDescriptorProto
_VALUE: Final = ".google.protobuf.Value"
_JSON_PATCH_FIELDS: Final = (("op", True), ("path", True), ("from", True), ("value", False))
_EXPECTED: Final = {APPLY_CONFIGURATION: "Object", JSON_PATCH: "list(JSONPatch)"}
#: cel-cpp's type names as cel-go prints them.
_TYPE_WORDS: Final = {
    "DYN": "dyn",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BOOL": "bool",
    "BYTES": "bytes",
    "NULL_TYPE": "null_type",
    "LIST": "list",
    "MAP": "map",
}


def _escape_key(key: Any) -> str:
    """``jsonpatch.escapeKey``: a map key as one JSON Pointer token (RFC 6901)."""
    if type(key) is not str:
        raise NoOverload()
    return key.replace("~", "~0").replace("/", "~1")


_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    **ADMISSION_FUNCTIONS,
    "jsonpatch.escapeKey": _escape_key,
}


@dataclass(frozen=True, slots=True)
class MutationExpression:
    """A compiled mutation: the expression, and the type-name mismatch Kubernetes reports
    when it is evaluated ("" when the literals' names follow their field paths)."""

    compiled: CompiledExpression
    mismatch: str = ""


def _struct_literals(e: Expr) -> Iterator[CreateMap]:
    for node in iter_nodes(e):
        if isinstance(node, CreateMap) and node.message_name:
            yield node


def _is_object_type(name: str) -> bool:
    return name == _OBJECT or name.startswith(_OBJECT + ".")


def _field_names(literal: CreateMap) -> list[str]:
    return [k.value for k, _, _ in literal.entries if isinstance(k, Const) and type(k.value) is str]


def _stand_ins(names: list[str]) -> dict[str, str]:
    """A distinct identifier of the same length for each name (the shortest, ``Object``,
    leaves five digits: room for 100,000 names)."""
    out: dict[str, str] = {}
    for i, name in enumerate(names):
        out[name] = "K" + str(i).zfill(len(name) - 1)
    return out


_STAND_IN: Final = re.compile(r"\bK\d{5,}\b")
_STRING: Final = re.compile(
    r"""(?s)[rR]?('''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
)
_TYPE_NAME: Final = re.compile(r"(?<![\w.])(Object(?:\.[A-Za-z_]\w*)*)(?=\s*\{)")


def _rewrite(source: str, stand_ins: dict[str, str]) -> str:
    """``source`` with the type names of struct literals replaced, string literals left
    alone."""
    out: list[str] = []
    pos = 0
    for match in _STRING.finditer(source):
        out.append(_replace_names(source[pos : match.start()], stand_ins))
        out.append(match.group(0))
        pos = match.end()
    out.append(_replace_names(source[pos:], stand_ins))
    return "".join(out)


def _replace_names(code: str, stand_ins: dict[str, str]) -> str:
    return _TYPE_NAME.sub(lambda m: stand_ins.get(m.group(1), m.group(1)), code)


def _types_file(fields: dict[str, list[str]], stand_ins: dict[str, str]) -> bytes:
    file = descriptor_pb2.FileDescriptorProto(name="kstore_cel_mutation.proto", syntax="proto3")
    file.dependency.append(struct_pb2.DESCRIPTOR.name)
    for name, names in fields.items():
        message = file.message_type.add(name=stand_ins[name])
        for number, field_name in enumerate(names, 1):
            message.field.add(
                name=field_name,
                number=number,
                label=_F.LABEL_OPTIONAL,
                type=_F.TYPE_MESSAGE,
                type_name=_VALUE,
                json_name=field_name,
            )
    patch = file.message_type.add(name=JSON_PATCH)
    for number, (field_name, is_string) in enumerate(_JSON_PATCH_FIELDS, 1):
        field = patch.field.add(
            name=field_name, number=number, label=_F.LABEL_OPTIONAL, json_name=field_name
        )
        if is_string:
            field.type = _F.TYPE_STRING
        else:
            field.type = _F.TYPE_MESSAGE
            field.type_name = _VALUE
    return file.SerializeToString(deterministic=True)


def _type_word(name: str, originals: dict[str, str]) -> str:
    """A cel-cpp result type name (``LIST<K00000>``) as cel-go prints it (``list(Object)``)."""
    inner = re.match(r"^(LIST|MAP)<(.*)>$", name)
    if inner:
        args = [_type_word(a.strip(), originals) for a in _split_args(inner.group(2))]
        return f"{inner.group(1).lower()}({', '.join(args)})"
    return originals.get(name, _TYPE_WORDS.get(name, name))


def _split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _mismatches(root: Expr, originals: dict[str, str]) -> list[str]:
    """Kubernetes' ``CheckTypeNamesMatchFieldPathNames`` over the literals: a literal under
    field ``f`` of ``Object.x`` must be named ``Object.x.f`` (lists and maps between them
    keep the path)."""
    errors: list[str] = []

    def walk(e: Expr, expected: str | None) -> None:
        if isinstance(e, CreateMap):
            name = originals.get(e.message_name, e.message_name)
            if name and _is_object_type(name):
                if expected is not None and name != expected:
                    errors.append(
                        f'unexpected type name "{name}", expected "{expected}", which matches '
                        "field name path from root Object type"
                    )
                here = expected if expected is not None else name
                for k, v, _ in e.entries:
                    if isinstance(k, Const) and type(k.value) is str:
                        walk(v, f"{here}.{k.value}")
                return
            for _, v, _ in e.entries:
                walk(v, expected if not name else None)
        elif isinstance(e, CreateList):
            for x in e.elements:
                walk(x, expected)
        elif isinstance(e, Call):
            for part in ([e.target] if e.target is not None else []) + list(e.args):
                walk(part, None)
        elif isinstance(e, Select):
            walk(e.operand, None)
        elif isinstance(e, Comprehension):
            for part in (e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result):
                walk(part, None)

    walk(root, None)
    return errors


def compile_mutation(
    expression: str,
    patch_type: str,
    *,
    params: bool,
    variables: frozenset[str] | None = None,
) -> MutationExpression:
    """Compile a mutation's expression as Kubernetes does (see the module docstring): the
    variables of every admission expression, the ``Object`` and ``JSONPatch`` types, and the
    result type the patch type asks for (``must evaluate to Object but got ...``)."""
    names = admission_variables(params=params, authorizer=True, variables=variables)
    fields: dict[str, list[str]] = {}
    try:
        parsed = parse_expression(expression)
        for literal in _struct_literals(parsed.expr):
            if _is_object_type(literal.message_name):
                known = fields.setdefault(literal.message_name, [])
                known.extend(f for f in _field_names(literal) if f not in known)
    except CompileError:
        pass  # the check below words the syntax error
    stand_ins = _stand_ins(sorted(fields))
    originals = {v: k for k, v in stand_ins.items()}
    source = _rewrite(expression, stand_ins) if stand_ins else expression
    try:
        ast, result_type = compile_with_variables(
            source, names, authorizer=True, types=_types_file(fields, stand_ins)
        )
    except CompileError as exc:
        # Whole tokens only: one stand-in may begin another ("K00000", "K0000000001").
        message = _STAND_IN.sub(lambda m: originals.get(m.group(0), m.group(0)), str(exc))
        error = f"compilation failed: {root_reference(message)}"
        return MutationExpression(CompiledExpression(expression, None, error))
    got = _type_word(result_type, originals)
    expected = _EXPECTED.get(patch_type, "Object")
    if got != expected:
        error = f"must evaluate to {expected} but got {got}"
        return MutationExpression(CompiledExpression(expression, None, error))
    program = build(ast.expr, _FUNCTIONS)
    mismatch = "\n".join(_mismatches(ast.expr, originals))
    return MutationExpression(CompiledExpression(expression, program, "", got), mismatch)
