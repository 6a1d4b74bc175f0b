"""The JSONPath of kubectl and of a CRD's ``additionalPrinterColumns``, for objects as dicts.

A path such as ``.status.conditions[?(@.type=="Ready")].status`` is compiled once
(:func:`compile_json_path`) into steps, then evaluated against any number of objects. The forms
Kubernetes' ``client-go/util/jsonpath`` accepts and printer columns use:

- fields: ``.a.b``, ``['a.b']`` (a key with dots), ``.*`` (every value of a map);
- lists: ``[0]``, ``[-1]``, ``[*]``, slices ``[1:3]``;
- filters: ``[?(@.type=="Ready")]``, with ``==``, ``!=``, ``<``, ``>``, ``<=``, ``>=`` against a
  string, number or boolean, or ``[?(@.ready)]`` for "has a non-empty value";
- recursive descent ``..name``.

As the API server does for columns (``AllowMissingKeys``), a missing key yields no result
rather than an error; :class:`JSONPathError` is raised only for a path that does not parse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["JSONPathError", "compile_json_path"]


class JSONPathError(ValueError):
    """The path does not parse."""


Step = Callable[[Any], Iterator[Any]]


@dataclass(frozen=True, slots=True)
class _Filter:
    path: tuple[str, ...]
    op: str
    value: Any

    def holds(self, item: Any) -> bool:
        found = item
        for key in self.path:
            if not isinstance(found, Mapping) or key not in found:
                return False
            found = found[key]
        if not self.op:
            return found not in (None, "", False, 0, [], {})
        if isinstance(self.value, bool) or isinstance(found, bool):
            return (
                _compare(self.op, found, self.value)
                if type(found) is type(self.value)
                else self.op == "!="
            )
        if isinstance(self.value, int | float) and isinstance(found, int | float):
            return _compare(self.op, found, self.value)
        if isinstance(self.value, str) and isinstance(found, str):
            return _compare(self.op, found, self.value)
        return self.op == "!="


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)


_FILTER = re.compile(
    r"""\?\(\s*@((?:\.[\w-]+|\['[^']*'\])+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*\)$"""
)


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise JSONPathError(f"unrecognized filter value {text!r}") from None


def _keys(chain: str) -> tuple[str, ...]:
    return tuple(m.group(1) or m.group(2) for m in re.finditer(r"\.([\w-]+)|\['([^']*)'\]", chain))


def _field(name: str) -> Step:
    def step(node: Any) -> Iterator[Any]:
        if isinstance(node, Mapping) and name in node:
            yield node[name]

    return step


def _every(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        yield from node.values()
    elif isinstance(node, list):
        yield from node


def _index(text: str) -> Step:
    if ":" in text:
        parts = [int(p) if p.strip() else None for p in text.split(":")]
        if len(parts) > 3:
            raise JSONPathError(f"invalid slice [{text}]")
        window = slice(*parts)

        def sliced(node: Any) -> Iterator[Any]:
            if isinstance(node, list):
                yield from node[window]

        return sliced
    position = int(text)

    def indexed(node: Any) -> Iterator[Any]:
        if isinstance(node, list) and -len(node) <= position < len(node):
            yield node[position]

    return indexed


def _filtered(spec: _Filter) -> Step:
    def step(node: Any) -> Iterator[Any]:
        if isinstance(node, list):
            yield from (item for item in node if spec.holds(item))

    return step


def _recursive(name: str) -> Step:
    def walk(node: Any) -> Iterator[Any]:
        if isinstance(node, Mapping):
            if name in node:
                yield node[name]
            for value in node.values():
                yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)

    return walk


def _parse(path: str) -> list[Step]:
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    i = 0
    while i < len(text):
        if text.startswith("..", i):
            m = re.match(r"\.\.([\w-]+)", text[i:])
            if m is None:
                raise JSONPathError(f"invalid recursive descent in {path!r}")
            steps.append(_recursive(m.group(1)))
            i += m.end()
        elif text[i] == ".":
            m = re.match(r"\.(\*|[\w-]+)", text[i:])
            if m is None:
                if i == len(text) - 1 and not steps:  # "." alone: the object itself
                    break
                raise JSONPathError(f"invalid field at {text[i:]!r} in {path!r}")
            steps.append(_every if m.group(1) == "*" else _field(m.group(1)))
            i += m.end()
        elif text[i] == "[":
            end = _closing(text, i)
            inner = text[i + 1 : end].strip()
            i = end + 1
            if inner == "*":
                steps.append(_every)
            elif inner.startswith("?"):
                m = _FILTER.match(inner)
                if m is None:
                    raise JSONPathError(f"invalid filter [{inner}] in {path!r}")
                value = _literal(m.group(3)) if m.group(2) else None
                steps.append(_filtered(_Filter(_keys(m.group(1)), m.group(2) or "", value)))
            elif inner[:1] in "'\"" and inner[-1:] == inner[:1]:
                steps.append(_field(inner[1:-1]))
            else:
                try:
                    steps.append(_index(inner))
                except ValueError:
                    raise JSONPathError(f"invalid array index [{inner}] in {path!r}") from None
        else:
            raise JSONPathError(f"unexpected {text[i]!r} in {path!r}")
    return steps


def _closing(text: str, start: int) -> int:
    quote = ""
    depth = 0
    for j in range(start, len(text)):
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError(f"unclosed [ in {text!r}")


def compile_json_path(path: str) -> Callable[[Any], list[Any]]:
    """The path as a function from an object to the values it selects (empty when none)."""
    steps = _parse(path)

    def evaluate(obj: Any) -> list[Any]:
        nodes = [obj]
        for step in steps:
            nodes = [found for node in nodes for found in step(node)]
            if not nodes:
                break
        return nodes

    return evaluate
