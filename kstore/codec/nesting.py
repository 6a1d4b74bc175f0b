"""Deeply nested documents: JSON in and out up to the depth kube-apiserver accepts.

kube-apiserver's only depth limit is Go's JSON scanner: :data:`MAX_DEPTH` (10,000) levels of
objects and arrays, counting the outermost. orjson, the fast path everywhere, stops far
earlier (1,024 levels to decode, 254 to encode), so this module is the fallback for what
orjson refuses:

- :func:`loads_deep` parses with the stdlib parser (recursive in C, bounded by the interpreter's
  recursion limit) after :func:`nesting_depth` has checked the depth;
- :func:`dumps_deep` lets orjson encode every subtree shallow enough for it and writes the
  deeper spine itself, without recursion, in orjson's format (compact or two-space indent,
  keys in insertion order or sorted).

Recursive walkers elsewhere (pruning, defaulting, validation, field sets, copies) rely on the
interpreter's recursion limit, which importing this module raises to :data:`RECURSION_LIMIT`,
and on thread stacks large enough for the C recursion that comes with it (dict comparison, the
stdlib parser): :data:`THREAD_STACK_SIZE` for every thread started afterwards.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import orjson

__all__ = [
    "MAX_DEPTH",
    "RECURSION_LIMIT",
    "THREAD_STACK_SIZE",
    "dumps_deep",
    "loads_deep",
    "nesting_depth",
]

#: Go's ``encoding/json`` maxNestingDepth: the deepest document kube-apiserver decodes.
MAX_DEPTH = 10_000
#: Python frames for walkers of a MAX_DEPTH object whose managedFields nest deeper still
#: (several frames a level); pure-Python frames cost no C stack in CPython 3.11.
RECURSION_LIMIT = 200_000
#: Stack for threads started after import: C recursion (the stdlib parser, dict comparison)
#: at RECURSION_LIMIT levels needs some 100 bytes a level.
THREAD_STACK_SIZE = 256 * 1024 * 1024

# orjson encodes at most 254 levels; subtrees up to this height go to it whole.
_ORJSON_HEIGHT = 200

if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)
if threading.stack_size() < THREAD_STACK_SIZE:
    threading.stack_size(THREAD_STACK_SIZE)

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS_ONLY = bytes(range(256))
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"{}[]")
_STEP = {ord("{"): 1, ord("["): 1, ord("}"): -1, ord("]"): -1}


def nesting_depth(data: bytes) -> int:
    """How deep ``data``'s objects and arrays nest (the outermost counts 1); brackets inside
    strings do not count. Meaningful for valid JSON only."""
    brackets = _STRING.sub(b"", data).translate(_BRACKETS_ONLY, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(accumulate(map(_STEP.__getitem__, brackets)))


def loads_deep(
    data: bytes | str,
    *,
    parse_int: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """The stdlib parse of ``data`` (any depth the recursion limit allows; callers check
    :func:`nesting_depth` first). Raises ``json.JSONDecodeError`` for malformed text."""
    return json.loads(data, parse_int=parse_int, parse_constant=parse_constant)


def _heights(root: Any) -> dict[int, int]:
    """Height of every container under ``root`` (a leaf container is 1), by id, without
    recursion."""
    heights: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if done:
            heights[id(node)] = 1 + max(
                (heights[id(c)] for c in children if isinstance(c, dict | list)), default=0
            )
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, dict | list))
    return heights


def dumps_deep(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``value`` as orjson would write it with ``OPT_INDENT_2`` when ``indent`` and
    ``OPT_SORT_KEYS`` when ``sort_keys``, at any depth. Raises ``TypeError`` for what is not
    JSON (as orjson does)."""
    options = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    if not isinstance(value, dict | list):
        return orjson.dumps(value, option=options)
    heights = _heights(value)
    out: list[bytes] = []
    # Work items: a value to write at a level, or literal bytes.
    work: list[tuple[Any, int] | bytes] = [(value, 0)]
    while work:
        item = work.pop()
        if isinstance(item, bytes):
            out.append(item)
            continue
        node, level = item
        if not isinstance(node, dict | list) or heights[id(node)] <= _ORJSON_HEIGHT:
            encoded = orjson.dumps(node, option=options)
            if indent and level:
                encoded = encoded.replace(b"\n", b"\n" + b"  " * level)
            out.append(encoded)
            continue
        is_dict = isinstance(node, dict)
        opening, closing = (b"{", b"}") if is_dict else (b"[", b"]")
        if not node:
            out.append(opening + closing)
            continue
        inner = b"\n" + b"  " * (level + 1) if indent else b""
        entries: list[tuple[bytes, Any]]
        if is_dict:
            keys = sorted(node) if sort_keys else list(node)
            separator = b": " if indent else b":"
            entries = [(orjson.dumps(k) + separator, node[k]) for k in keys]
            if any(not isinstance(k, str) for k in keys):
                raise TypeError("Dict key must be str")
        else:
            entries = [(b"", v) for v in node]
        pending: list[tuple[Any, int] | bytes] = [opening]
        for index, (prefix, child) in enumerate(entries):
            pending.append((b"," if index else b"") + inner + prefix)
            pending.append((child, level + 1))
        pending.append((b"\n" + b"  " * level if indent else b"") + closing)
        work.extend(reversed(pending))
    return b"".join(out)
