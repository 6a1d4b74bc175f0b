"""A rule's ``fieldPath``: a JSON path of field names and map keys, checked against the schema.

Kubernetes' ``ValidFieldPath``: ``.spec.foo`` selects properties, ``['a.b']`` a property or
map key whose name needs quoting (single quotes, backslash escapes ``\\a \\b \\f \\n \\r \\t
\\v \\' \\\\``); a step is a property when the schema has ``properties`` (which must then
contain the name), else a map key when it has ``additionalProperties``. The result is
rendered as ``field.Path`` renders it (``foo.bar``, ``foo[key]``) and is appended as one
child to the failing node's path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["FieldPathError", "valid_field_path"]

_ESCAPES: Final = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "'": "'",
    "\\": "\\",
}


class FieldPathError(ValueError):
    pass


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "'":
            j = i + 1
            while j < len(text) and not (text[j] == "'" and text[j - 1] != "\\"):
                j += 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text[i] in ".[]":
            out.append(text[i])
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in ".[]":
                j += 1
            out.append(text[i:j])
            i = j
    return out


def _unquote(body: str) -> str:
    def replace(m: re.Match[str]) -> str:
        found = _ESCAPES.get(m.group(0)[1])
        if found is None:
            raise FieldPathError(f"invalid string literal: invalid escape char {m.group(0)}")
        return found

    return re.sub(r"\\.", replace, body)


def valid_field_path(text: str, schema: Mapping[str, Any]) -> str:
    """The path as ``field.Path`` renders it; :class:`FieldPathError` when it names nothing."""
    rendered = ""
    node: Mapping[str, Any] | None = schema
    tokens = _tokens(text)
    i = 0

    def step(name: str) -> None:
        nonlocal rendered, node
        if node is not None and node.get("properties"):
            sub = node["properties"].get(name)
            if sub is None:
                raise FieldPathError("does not refer to a valid field")
            rendered = f"{rendered}.{name}" if rendered else name
            node = sub
        elif node is not None and isinstance(node.get("additionalProperties"), Mapping):
            rendered = f"{rendered}[{name}]"
            node = node["additionalProperties"]
        else:
            raise FieldPathError("does not refer to a valid field")

    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            if i + 1 >= len(tokens):
                raise FieldPathError("unexpected end of JSON path")
            quoted = tokens[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                raise FieldPathError(f"expected single quoted string but got {quoted}")
            step(_unquote(quoted[1:-1]))
            if i + 2 >= len(tokens):
                raise FieldPathError("unexpected end of JSON path")
            if tokens[i + 2] != "]":
                raise FieldPathError(f"expected ] but got {tokens[i + 2]}")
            i += 3
        elif tok == ".":
            if i + 1 >= len(tokens):
                raise FieldPathError("unexpected end of JSON path")
            step(tokens[i + 1])
            i += 2
        else:
            raise FieldPathError(f"expected [ or . but got: {tok}")
    return rendered
