"""JSON serializer (orjson), with the input limits Kubernetes' decoder enforces.

Decoding rejects, as :class:`~kstore.errors.BadRequest`: malformed JSON, NaN/Infinity, nesting
deeper than :data:`MAX_DEPTH` (Go's limit, 10,000 levels), integers outside int64, and documents
that are not a JSON object. Invalid UTF-8 and lone surrogate escapes are not errors: as Go's
decoder does, each invalid byte and each lone surrogate becomes U+FFFD, so the object decodes
and validation judges the names and keys that hold them. Encoding keeps the object's key
order (decode then encode reproduces the input document) and is deterministic for equal dicts
built in the same order.

Documents deeper than orjson goes (1,024 levels to decode, 254 to encode) take the slower
paths of :mod:`kstore.codec.nesting`.

The fast path is one ``orjson.loads`` plus a scan for runs of 19 digits; only documents with
such a run (the only ones that can hold an out-of-range integer) are parsed a second time.

Strict decoding also reports every key repeated within one object. Parsing again to find them
costs ~15x the decode, so a count decides first (:func:`_may_repeat_keys`): when the input holds
as many colons as orjson's re-encoding of the decoded object, no key was dropped, hence none
repeated; only otherwise (or when the input escapes a colon) is the document parsed again pair
by pair.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

import orjson

from kstore.api.gvk import Object
from kstore.codec.nesting import MAX_DEPTH, dumps_deep, loads_deep, nesting_depth
from kstore.codec.serializer import DecodeResult
from kstore.errors import BadRequest

__all__ = ["MAX_DEPTH", "MEDIA_TYPE_JSON", "JsonSerializer", "dumps", "join_path", "loads"]

MEDIA_TYPE_JSON = "application/json"

_TOO_DEEP = f"the object is nested deeper than the limit of {MAX_DEPTH} levels"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# Digits to "0", everything else to " ": an out-of-range integer needs a run of 19 digits, and
# ``in`` on the translated bytes finds one several times faster than a regular expression
# (bench/bench_codec.py: ~4.5 us for a 5.8 KiB Pod, against ~55 us for re.search).
_DIGITS_ONLY = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_LONG_DIGIT_RUN = b"0" * 19


def _go_replace(exc: UnicodeError) -> tuple[str, int]:
    # Go's decoder turns each byte of an invalid sequence into one U+FFFD (utf8.DecodeRune
    # reports width 1); Python's "replace" would give one per maximal invalid subpart.
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffd" * (exc.end - exc.start), exc.end


_GO_REPLACE = "kstore-go-replace"
codecs.register_error(_GO_REPLACE, _go_replace)
_SURROGATE = re.compile("[\ud800-\udfff]")

# A colon written as an escape: the duplicate-key pre-check cannot count it (_may_repeat_keys).
_ESCAPED_COLON = re.compile(rb"\\u003[aA]")


class JsonSerializer:
    """``application/json`` <-> object dicts.

    ``max_depth`` bounds the nesting of decoded documents (request bodies); ``pretty`` indents
    by two spaces, as the API server does for ``?pretty=true``. ``canonical``
    sorts keys, so that equal dicts encode to equal bytes whatever order they were built in:
    storage compares bytes to skip no-op writes (costs ~1.5 us on a 5 KiB Pod).
    """

    def __init__(
        self, *, pretty: bool = False, canonical: bool = False, max_depth: int | None = MAX_DEPTH
    ) -> None:
        self._options = (orjson.OPT_INDENT_2 if pretty else 0) | (
            orjson.OPT_SORT_KEYS if canonical else 0
        )
        # None for what the server wrote itself (storage): a custom object's managedFields
        # nest a few levels deeper than the object, which may itself be MAX_DEPTH deep.
        self._max_depth = max_depth

    @property
    def media_type(self) -> str:
        return MEDIA_TYPE_JSON

    def decode(self, data: bytes) -> Object:
        return _load(data, self._max_depth)[0]

    def decode_strict(self, data: bytes) -> DecodeResult:
        obj, replaced = _load(data, self._max_depth)
        if replaced is not None:
            return DecodeResult(obj, _duplicate_fields(replaced))
        if not _may_repeat_keys(data, obj):
            return DecodeResult(obj, [])
        return DecodeResult(obj, _duplicate_fields(data))

    def encode(self, obj: Object) -> bytes:
        try:
            return orjson.dumps(obj, option=self._options)
        except TypeError as exc:
            if not _too_deep_for_orjson(exc):
                raise BadRequest(f"object cannot be encoded as JSON: {exc}") from None
        try:
            return dumps_deep(
                obj,
                indent=bool(self._options & orjson.OPT_INDENT_2),
                sort_keys=bool(self._options & orjson.OPT_SORT_KEYS),
            )
        except TypeError as exc:
            raise BadRequest(f"object cannot be encoded as JSON: {exc}") from None


def _too_deep_for_orjson(exc: Exception) -> bool:
    return "Recursion limit" in str(exc)


def dumps(obj: Any, option: int = 0) -> bytes:
    """``orjson.dumps`` at any depth (TypeError for what is not JSON)."""
    try:
        return orjson.dumps(obj, option=option)
    except TypeError as exc:
        if not _too_deep_for_orjson(exc):
            raise
    return dumps_deep(
        obj,
        indent=bool(option & orjson.OPT_INDENT_2),
        sort_keys=bool(option & orjson.OPT_SORT_KEYS),
    )


def loads(data: bytes | str, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """``orjson.loads`` at any depth up to ``max_depth`` (BadRequest deeper; the
    ``orjson.JSONDecodeError`` of malformed text otherwise). Input from outside (patches,
    webhook answers) keeps Go's limit, which also keeps the stdlib parser's C recursion within
    the stack; copies of objects the server holds pass None."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "depth limit" not in str(exc):
            raise
    raw = data.encode() if isinstance(data, str) else data
    if max_depth is not None and nesting_depth(raw) > max_depth:
        raise BadRequest(_too_deep(max_depth))
    try:
        return loads_deep(raw)
    except json.JSONDecodeError as exc:
        raise orjson.JSONDecodeError(exc.msg, exc.doc, exc.pos) from None


def _load(data: bytes, max_depth: int | None) -> tuple[Object, str | None]:
    """The object, and the text it was parsed from when invalid UTF-8 or lone surrogates had to
    be replaced first (None on the fast path, where ``data`` itself was parsed)."""
    replaced: str | None = None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        text = str(exc)
        if "depth limit" in text:
            return _load_deep(data, max_depth), None
        if "UTF-8" not in text and "surrogate" not in text:
            raise BadRequest(_describe(exc, data)) from None
        replaced = data.decode("utf-8", _GO_REPLACE)
        # The stdlib parser recurses in C: the depth is checked before it runs.
        if max_depth is not None and nesting_depth(data) > max_depth:
            raise BadRequest(_too_deep(max_depth)) from None
        obj = _load_replacing(replaced)
    if not isinstance(obj, dict):
        raise BadRequest(f"the body must be a JSON object, not {_json_type(obj)}")
    if replaced is None and _LONG_DIGIT_RUN in data.translate(_DIGITS_ONLY):
        _check_integers(data)
    return obj, replaced


def _too_deep(max_depth: int) -> str:
    return f"the object is nested deeper than the limit of {max_depth} levels"


def _load_deep(data: bytes, max_depth: int | None) -> Object:
    """A document deeper than orjson decodes: the stdlib parser, within ``max_depth``."""
    if max_depth is not None and nesting_depth(data) > max_depth:
        raise BadRequest(_too_deep(max_depth))
    try:
        obj = loads_deep(data, parse_int=_int64, parse_constant=_reject_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if isinstance(exc, UnicodeDecodeError) or "surrogate" in str(exc):
            obj = _load_replacing(data.decode("utf-8", _GO_REPLACE))
        else:
            raise BadRequest(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise BadRequest(f"the body must be a JSON object, not {_json_type(obj)}")
    return obj


def _reject_constant(name: str) -> Any:
    raise BadRequest(f"invalid JSON: NaN and Infinity are not valid JSON numbers ({name})")


def _load_replacing(text: str) -> Any:
    """Parse text whose invalid bytes are already U+FFFD; lone surrogate escapes (which the
    stdlib parser keeps as surrogate code points) become U+FFFD too, as in Go."""
    try:
        obj = json.loads(text, parse_int=_int64, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise BadRequest(_TOO_DEEP) from None
    if "\\u" in text:
        obj = _replace_surrogates(obj)
    return obj


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _replace_surrogates(v) for k, v in value.items()}
    return value


def _may_repeat_keys(data: bytes, obj: Object) -> bool:
    """False only when no object in ``data`` repeats a key; ``obj`` is ``data`` decoded.

    Why counting colons suffices: in a JSON text a colon is either the one after each key or
    a character of a string. orjson's compact encoding of ``obj`` writes one colon per key it
    kept and every colon of the strings it kept, literally. A repeated key is dropped with
    whatever its first value held, so the encoding has fewer key colons than ``data`` has;
    the strings kept are a subset of those written, with no more colons unless ``data`` wrote
    one as an escape (sent to the full parse). So equal counts mean no key was dropped.
    Two byte counts and one encode: ~7 us for a 5.8 KiB Pod, against ~350 us to parse again.
    """
    if b"\\u" in data and _ESCAPED_COLON.search(data):
        return True
    encoded = dumps(obj)
    return data.count(b":") != encoded.count(b":")


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


def _object_with_replaced_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keys as Go reads them: a lone surrogate is U+FFFD, so "\udfff" repeats "\ufffd".
    return _object_with_duplicates([(_SURROGATE.sub("\ufffd", k), v) for k, v in pairs])


def _duplicate_fields(data: bytes | str) -> list[str]:
    """``duplicate field "<path>"`` for every key repeated in one JSON object, parsing the
    document again pair by pair (the slow path, and the reference the pre-check is tested
    against). ``data`` is text when it had invalid UTF-8 replaced already."""
    if isinstance(data, str):
        hook = _object_with_replaced_duplicates
    elif data.count(b'"') < 4:
        return []
    else:
        hook = _object_with_duplicates
    tree = json.loads(data, object_pairs_hook=hook)
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
