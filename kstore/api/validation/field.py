"""Field paths and field-level causes, worded exactly as Kubernetes' ``field`` package words them.

A :class:`Path` renders like ``field.Path``: ``metadata.name``, ``spec.containers[0].image``,
``data[my-key]`` (a key is printed raw inside brackets), and the root path ``Path("")`` as
``[]`` (Kubernetes' ``field.NewPath("")``, used e.g. for a ConfigMap's total size).

Each constructor returns a :class:`kstore.errors.Cause` whose ``type`` is Kubernetes' cause type
(``FieldValueInvalid``...), whose ``field`` is the rendered path and whose ``message`` is
``ErrorBody()``: the type's words, the bad value when that type shows one (rendered as Go
renders it, see :mod:`kstore.api.validation._render`), then ``: <detail>`` when there is one::

    invalid(Path("metadata", "name"), "Foo", "a lowercase RFC 1123 ...")
    # Cause("FieldValueInvalid", 'Invalid value: "Foo": a lowercase RFC 1123 ...', "metadata.name")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from kstore.api.validation._render import GoStruct, JSONValue, render_value
from kstore.errors import Cause

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INTERNAL",
    "INVALID",
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "OMIT_VALUE",
    "REQUIRED",
    "TOO_LONG",
    "TOO_MANY",
    "TYPE_INVALID",
    "GoStruct",
    "JSONValue",
    "Path",
    "duplicate",
    "forbidden",
    "internal_error",
    "invalid",
    "not_found",
    "not_supported",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]

# Kubernetes' metav1.CauseType values (field.ErrorType).
NOT_FOUND: Final = "FieldValueNotFound"
REQUIRED: Final = "FieldValueRequired"
DUPLICATE: Final = "FieldValueDuplicate"
INVALID: Final = "FieldValueInvalid"
NOT_SUPPORTED: Final = "FieldValueNotSupported"
FORBIDDEN: Final = "FieldValueForbidden"
TOO_LONG: Final = "FieldValueTooLong"
TOO_MANY: Final = "FieldValueTooMany"
INTERNAL: Final = "InternalError"
TYPE_INVALID: Final = "FieldValueTypeInvalid"

_WORDS: Final = {
    NOT_FOUND: "Not found",
    REQUIRED: "Required value",
    DUPLICATE: "Duplicate value",
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    FORBIDDEN: "Forbidden",
    TOO_LONG: "Too long",
    TOO_MANY: "Too many",
    INTERNAL: "Internal error",
    TYPE_INVALID: "Invalid value",
}


class _Omit:
    """Marker: the error shows no value (Kubernetes' ``omitValue``)."""

    def __repr__(self) -> str:
        return "OMIT_VALUE"


OMIT_VALUE: Final = _Omit()


class Path:
    """An immutable field path; ``str(path)`` is what Kubernetes puts in ``Cause.field``."""

    __slots__ = ("_text",)

    def __init__(self, name: str, *more: str) -> None:
        # A root with an empty name renders as an empty subscript, as field.NewPath("") does.
        text = name if name else "[]"
        for part in more:
            text = _append_child(text, part)
        self._text = text

    @classmethod
    def _of(cls, text: str) -> Path:
        path = cls.__new__(cls)
        path._text = text
        return path

    def child(self, name: str, *more: str) -> Path:
        if not more:
            # Validators build the same child paths for every object (whether or not a
            # cause is reported); paths are immutable, so they are shared.
            key = (self._text, name)
            found = _CHILDREN.get(key)
            if found is None:
                found = Path._of(_append_child(self._text, name))
                if len(_CHILDREN) < _MEMO_SIZE:
                    _CHILDREN[key] = found
            return found
        text = _append_child(self._text, name)
        for part in more:
            text = _append_child(text, part)
        return Path._of(text)

    def index(self, i: int) -> Path:
        key = (self._text, i)
        found = _INDEXES.get(key)
        if found is None:
            found = Path._of(f"{self._text}[{i}]")
            if len(_INDEXES) < _MEMO_SIZE:
                _INDEXES[key] = found
        return found

    def key(self, key: str) -> Path:
        return Path._of(f"{self._text}[{key}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


_MEMO_SIZE: Final = 65536
_CHILDREN: dict[tuple[str, str], Path] = {}
_INDEXES: dict[tuple[str, int], Path] = {}


def _append_child(text: str, name: str) -> str:
    return f"{text}.{name}" if name else f"{text}[]"


def _cause(kind: str, path: Path, value: Any, detail: str) -> Cause:
    body = _WORDS[kind]
    if value is not OMIT_VALUE:
        body = f"{body}: {render_value(value)}"
    if detail:
        body = f"{body}: {detail}"
    return Cause(kind, body, str(path))


def required(path: Path, detail: str = "") -> Cause:
    """``Required value`` (a missing or empty field)."""
    return _cause(REQUIRED, path, OMIT_VALUE, detail)


def invalid(path: Path, value: Any, detail: str) -> Cause:
    """``Invalid value: <value>: <detail>``."""
    return _cause(INVALID, path, value, detail)


def type_invalid(path: Path, value: Any, detail: str) -> Cause:
    """Like :func:`invalid`, with cause type ``FieldValueTypeInvalid``."""
    return _cause(TYPE_INVALID, path, value, detail)


def not_found(path: Path, value: Any) -> Cause:
    return _cause(NOT_FOUND, path, value, "")


def duplicate(path: Path, value: Any) -> Cause:
    return _cause(DUPLICATE, path, value, "")


def not_supported(path: Path, value: Any, valid_values: Iterable[str]) -> Cause:
    """``Unsupported value: <value>: supported values: "a", "b"`` (values in the given order)."""
    quoted = [render_value(str(v)) for v in valid_values]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return _cause(NOT_SUPPORTED, path, value, detail)


def forbidden(path: Path, detail: str) -> Cause:
    return _cause(FORBIDDEN, path, OMIT_VALUE, detail)


def too_long(path: Path, max_length: int) -> Cause:
    """``Too long: may not be more than <n> bytes`` (the value itself is never shown)."""
    if max_length >= 0:
        unit = "byte" if max_length == 1 else "bytes"
        detail = f"may not be more than {max_length} {unit}"
    else:
        detail = "value is too long"
    return _cause(TOO_LONG, path, OMIT_VALUE, detail)


def too_many(path: Path, actual: int, max_quantity: int) -> Cause:
    """``Too many: <actual>: must have at most <n> items``; a negative ``actual`` is not shown."""
    if max_quantity >= 0:
        unit = "item" if max_quantity == 1 else "items"
        detail = f"must have at most {max_quantity} {unit}"
    else:
        detail = "has too many items"
    return _cause(TOO_MANY, path, actual if actual >= 0 else OMIT_VALUE, detail)


def internal_error(path: Path, message: str) -> Cause:
    return _cause(INTERNAL, path, OMIT_VALUE, message)
