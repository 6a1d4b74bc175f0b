"""JSON serializer (orjson), with the input limits Kubernetes' decoder enforces.

Decoding rejects, as :class:`~kstore.errors.BadRequest`: malformed JSON, invalid UTF-8,
NaN/Infinity, nesting deeper than :data:`MAX_DEPTH`, integers outside int64, and documents that
are not a JSON object. Encoding keeps the object's key order (decode then encode reproduces the
input document) and is deterministic for equal dicts built in the same order.

The fast path is one ``orjson.loads`` plus a scan for runs of 19 digits; only documents with
such a run (the only ones that can hold an out-of-range integer) are parsed a second time.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from kstore.api.gvk import Object
from kstore.codec.serializer import DecodeResult
from kstore.errors import BadRequest

__all__ = ["MAX_DEPTH", "MEDIA_TYPE_JSON", "JsonSerializer", "join_path"]

MEDIA_TYPE_JSON = "application/json"

#: The deepest nesting accepted, in objects and arrays: orjson's own hard limit, so the fast
#: path needs no check of its own (YAML enforces the same number while it builds).
MAX_DEPTH = 1024

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# Digits to "0", everything else to " ": an out-of-range integer needs a run of 19 digits, and
# ``in`` on the translated bytes finds one several times faster than a regular expression
# (bench/bench_codec.py: ~4.5 us for a 5.8 KiB Pod, against ~55 us for re.search).
_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_DIGIT_RUN = b"0" * 19


class JsonSerializer:
    """``application/json`` <-> object dicts.

    ``pretty`` indents by two spaces, as the API server does for ``?pretty=true``. ``canonical``
    sorts keys, so that equal dicts encode to equal bytes whatever order they were built in:
    storage compares bytes to skip no-op writes (costs ~1.5 us on a 5 KiB Pod).
    """

    def __init__(self, *, pretty: bool = False, canonical: bool = False) -> None:
        self._options = (orjson.OPT_INDENT_2 if pretty else 0) | (
            orjson.OPT_SORT_KEYS if canonical else 0
        )

    @property
    def media_type(self) -> str:
        return MEDIA_TYPE_JSON

    def decode(self, data: bytes) -> Object:
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise BadRequest(_describe(exc, data)) from None
        if not isinstance(obj, dict):
            raise BadRequest(f"the body must be a JSON object, not {_json_type(obj)}")
        if _LONG_DIGIT_RUN in data.translate(_DIGITS_ONLY):
            _check_integers(data)
        return obj

    def decode_strict(self, data: bytes) -> DecodeResult:
        obj = self.decode(data)
        return DecodeResult(obj, _duplicate_fields(data))

    def encode(self, obj: Object) -> bytes:
        try:
            return orjson.dumps(obj, option=self._options)
        except TypeError as exc:
            raise BadRequest(f"object cannot be encoded as JSON: {exc}") from None


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _describe(exc: orjson.JSONDecodeError, data: bytes) -> str:
    text = str(exc)
    if "depth limit" in text:
        return f"the object is nested deeper than the limit of {MAX_DEPTH} levels"
    if "infinity" in text or b"NaN" in data:
        return f"invalid JSON: NaN and Infinity are not valid JSON numbers ({text})"
    if "UTF-8" in text or "surrogate" in text:
        return f"invalid JSON: the body is not valid UTF-8 ({text})"
    return f"invalid JSON: {text}"


def _int64(text: str) -> int:
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise BadRequest(f"invalid JSON: the integer {text} is outside the int64 range")
    return value


def _check_integers(data: bytes) -> None:
    json.loads(data, parse_int=_int64)


class _PairsWithDuplicates(dict[str, Any]):
    """A decoded JSON object that remembers which of its keys appeared more than once."""

    __slots__ = ("duplicates",)

    duplicates: list[str]


def _object_with_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = _PairsWithDuplicates(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dups: list[str] = []
        for key, _ in pairs:
            if key in seen and key not in dups:
                dups.append(key)
            seen.add(key)
        out.duplicates = dups
    return out


def _duplicate_fields(data: bytes) -> list[str]:
    """``duplicate field "<path>"`` for every key repeated in one JSON object."""
    if data.count(b'"') < 4:
        return []
    tree = json.loads(data, object_pairs_hook=_object_with_duplicates)
    problems: list[str] = []
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key in getattr(node, "duplicates", ()):
                problems.append(f'duplicate field "{join_path(path, key)}"')
            stack.extend((v, join_path(path, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return problems
