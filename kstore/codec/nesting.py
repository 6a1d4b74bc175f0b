"""Deeply nested documents: JSON in and out up to the depth kube-apiserver accepts.

kube-apiserver's only depth limit is Go's JSON scanner: :data:`MAX_DEPTH` (10,000) levels of
objects and arrays, counting the outermost. orjson, the fast path everywhere, stops far
earlier (1,024 levels to decode, 254 to encode), so this module is the fallback for what
orjson refuses:

- :func:`loads_deep` parses with the stdlib parser (recursive in C, bounded by the interpreter's
  recursion limit) after :func:`nesting_depth` has checked the depth;
- :func:`dumps_deep` writes compact JSON with the stdlib encoder (recursive in C); indented
  output (``?pretty=true``) lets orjson encode every subtree shallow enough for it (it tries
  each node and gives up within 255 levels) and writes the deeper spine itself, without
  recursion. Either way keys keep their order or are sorted, as orjson's options say; only
  float spelling may differ from orjson's (``1e+16`` for ``1e16``), the same numbers.

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
#: Python frames for walkers of a MAX_DEPTH object (several frames a level; a patch result
#: may nest twice as deep before it is refused). Pure-Python frames cost no C stack in
#: CPython 3.11; C recursion (the stdlib parser and encoder, dict comparison) does, and the
#: main thread's 8 MiB hold some 40,000 levels of it: a request body is capped at 10,000.
RECURSION_LIMIT = 120_000
#: Stack for threads started after import: C recursion (the stdlib parser, dict comparison)
#: at RECURSION_LIMIT levels needs some 100 bytes a level.
THREAD_STACK_SIZE = 256 * 1024 * 1024

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


def dumps_deep(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``value`` as orjson would write it with ``OPT_INDENT_2`` when ``indent`` and
    ``OPT_SORT_KEYS`` when ``sort_keys``, at any depth. Raises ``TypeError`` for NaN, infinities
    and lone surrogates (as orjson does); values come from decoded JSON, so keys are strings."""
    if not indent:
        # The stdlib encoder recurses in C (bounded by the recursion limit): some 10 ms for a
        # 10,000-level object, where a writer in Python takes half a second.
        try:
            text = json.dumps(
                value,
                ensure_ascii=False,
                separators=(",", ":"),
                sort_keys=sort_keys,
                allow_nan=False,
            )
            return text.encode()
        except (ValueError, UnicodeEncodeError) as exc:
            raise TypeError(str(exc)) from None
    options = orjson.OPT_INDENT_2 | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    out: list[bytes] = []
    # Work items: a value to write at an indentation level, or literal bytes.
    work: list[tuple[Any, int] | bytes] = [(value, 0)]
    while work:
        item = work.pop()
        if isinstance(item, bytes):
            out.append(item)
            continue
        node, level = item
        try:
            encoded = orjson.dumps(node, option=options)
        except TypeError as exc:
            # orjson gives up within 255 levels of the node, so trying each spine node first
            # costs at most that much work again per level: linear in the depth.
            if "Recursion limit" not in str(exc) or not isinstance(node, dict | list):
                raise
        else:
            if indent and level:
                encoded = encoded.replace(b"\n", b"\n" + b"  " * level)
            out.append(encoded)
            continue
        work.extend(reversed(_spine(node, level, indent=indent, sort_keys=sort_keys)))
    return b"".join(out)


def _spine(
    node: dict[str, Any] | list[Any], level: int, *, indent: bool, sort_keys: bool
) -> list[tuple[Any, int] | bytes]:
    """One container too deep for orjson, as its punctuation and its children to write."""
    is_dict = isinstance(node, dict)
    opening, closing = (b"{", b"}") if is_dict else (b"[", b"]")
    if not node:
        return [opening + closing]
    inner = b"\n" + b"  " * (level + 1) if indent else b""
    entries: list[tuple[bytes, Any]]
    if isinstance(node, dict):
        if any(not isinstance(k, str) for k in node):
            raise TypeError("Dict key must be str")
        keys = sorted(node) if sort_keys else list(node)
        separator = b": " if indent else b":"
        entries = [(orjson.dumps(k) + separator, node[k]) for k in keys]
    else:
        entries = [(b"", v) for v in node]
    parts: list[tuple[Any, int] | bytes] = [opening]
    for index, (prefix, child) in enumerate(entries):
        parts.append((b"," if index else b"") + inner + prefix)
        parts.append((child, level + 1))
    parts.append((b"\n" + b"  " * level if indent else b"") + closing)
    return parts
