"""The error Go's ``json.Unmarshal`` gives for bytes decoded into a ``map[string]interface{}``.

Kubernetes checks that a docker-config Secret holds a JSON object by unmarshalling it and
printing Go's error text. This module reproduces that text: Go's JSON scanner state machine
(``encoding/json/scanner.go``) with its exact syntax-error wording, then the type error when the
document is valid JSON but not an object. ``null`` decodes without error, as in Go.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kstore.api.validation._render import go_quote

__all__ = ["json_kind", "unmarshal_object_error"]

_MAX_NESTING_DEPTH: Final = 10000
_SPACE: Final = b" \t\r\n"
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")

# Parse-state stack entries.
_OBJECT_KEY, _OBJECT_VALUE, _ARRAY_VALUE = 0, 1, 2


class _SyntaxError(Exception):
    pass


def _quote_char(c: int) -> str:
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    quoted = go_quote(chr(c))
    return "'" + quoted[1:-1] + "'"


def _fail(c: int, context: str) -> _SyntaxError:
    return _SyntaxError(f"invalid character {_quote_char(c)} {context}")


class _Scanner:
    """One byte at a time, like Go's scanner; ``step`` is the current state function."""

    def __init__(self) -> None:
        self.stack: list[int] = []
        self.step: Callable[[int], None] = self.begin_value
        self.end_top = False

    # -- values
    def begin_value_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("]"):
            self.end_value(c)
            return
        self.begin_value(c)

    def begin_value(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("{"):
            self._push(c, _OBJECT_KEY)
            self.step = self.begin_string_or_empty
        elif c == ord("["):
            self._push(c, _ARRAY_VALUE)
            self.step = self.begin_value_or_empty
        elif c == ord('"'):
            self.step = self.in_string
        elif c == ord("-"):
            self.step = self.neg
        elif c == ord("0"):
            self.step = self.zero
        elif c == ord("t"):
            self.step = self._literal(b"rue", "true")
        elif c == ord("f"):
            self.step = self._literal(b"alse", "false")
        elif c == ord("n"):
            self.step = self._literal(b"ull", "null")
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        else:
            raise _fail(c, "looking for beginning of value")

    def _push(self, c: int, state: int) -> None:
        self.stack.append(state)
        if len(self.stack) > _MAX_NESTING_DEPTH:
            raise _fail(c, "exceeded max depth")

    def begin_string_or_empty(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord("}"):
            self.stack[-1] = _OBJECT_VALUE
            self.end_value(c)
            return
        self.begin_string(c)

    def begin_string(self, c: int) -> None:
        if c in _SPACE:
            return
        if c == ord('"'):
            self.step = self.in_string
            return
        raise _fail(c, "looking for beginning of object key string")

    def end_value(self, c: int) -> None:
        if not self.stack:
            self.step = self.end_top_state
            self.end_top = True
            self.end_top_state(c)
            return
        if c in _SPACE:
            self.step = self.end_value
            return
        top = self.stack[-1]
        if top == _OBJECT_KEY:
            if c == ord(":"):
                self.stack[-1] = _OBJECT_VALUE
                self.step = self.begin_value
                return
            raise _fail(c, "after object key")
        if top == _OBJECT_VALUE:
            if c == ord(","):
                self.stack[-1] = _OBJECT_KEY
                self.step = self.begin_string
                return
            if c == ord("}"):
                self._pop()
                return
            raise _fail(c, "after object key:value pair")
        if c == ord(","):
            self.step = self.begin_value
            return
        if c == ord("]"):
            self._pop()
            return
        raise _fail(c, "after array element")

    def _pop(self) -> None:
        self.stack.pop()
        if not self.stack:
            self.step = self.end_top_state
            self.end_top = True
        else:
            self.step = self.end_value

    def end_top_state(self, c: int) -> None:
        if c not in _SPACE:
            raise _fail(c, "after top-level value")

    # -- strings
    def in_string(self, c: int) -> None:
        if c == ord('"'):
            self.step = self.end_value
        elif c == ord("\\"):
            self.step = self.in_string_esc
        elif c < 0x20:
            raise _fail(c, "in string literal")

    def in_string_esc(self, c: int) -> None:
        if c in b'bfnrt\\/"':
            self.step = self.in_string
        elif c == ord("u"):
            self.step = self._hex(4)
        else:
            raise _fail(c, "in string escape code")

    def _hex(self, remaining: int) -> Callable[[int], None]:
        def state(c: int) -> None:
            if c not in _HEX:
                raise _fail(c, "in \\u hexadecimal character escape")
            self.step = self.in_string if remaining == 1 else self._hex(remaining - 1)

        return state

    # -- numbers
    def neg(self, c: int) -> None:
        if c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.one
        else:
            raise _fail(c, "in numeric literal")

    def one(self, c: int) -> None:
        if ord("0") <= c <= ord("9"):
            return
        self.zero(c)

    def zero(self, c: int) -> None:
        if c == ord("."):
            self.step = self.dot
        elif c in b"eE":
            self.step = self.exp
        else:
            self.end_value(c)

    def dot(self, c: int) -> None:
        if ord("0") <= c <= ord("9"):
            self.step = self.dot0
            return
        raise _fail(c, "after decimal point in numeric literal")

    def dot0(self, c: int) -> None:
        if ord("0") <= c <= ord("9"):
            return
        if c in b"eE":
            self.step = self.exp
            return
        self.end_value(c)

    def exp(self, c: int) -> None:
        if c in b"+-":
            self.step = self.exp_sign
            return
        self.exp_sign(c)

    def exp_sign(self, c: int) -> None:
        if ord("0") <= c <= ord("9"):
            self.step = self.exp0
            return
        raise _fail(c, "in exponent of numeric literal")

    def exp0(self, c: int) -> None:
        if ord("0") <= c <= ord("9"):
            return
        self.end_value(c)

    # -- true / false / null
    def _literal(self, rest: bytes, word: str) -> Callable[[int], None]:
        def state(c: int) -> None:
            if c != rest[0]:
                raise _fail(c, f"in literal {word} (expecting {_quote_char(rest[0])})")
            self.step = self._literal(rest[1:], word) if len(rest) > 1 else self.end_value

        return state


def _top_level_kind(data: bytes) -> str:
    first = data.lstrip(_SPACE)[:1]
    if first == b"{":
        return "object"
    if first == b"[":
        return "array"
    if first == b'"':
        return "string"
    if first in (b"t", b"f"):
        return "bool"
    if first == b"n":
        return "null"
    return "number"


def unmarshal_object_error(data: bytes) -> str | None:
    """Go's error text for ``json.Unmarshal(data, &map[string]interface{}{})``, or None."""
    scanner = _Scanner()
    try:
        for c in data:
            scanner.step(c)
        if not scanner.end_top:
            # Go feeds one more space at end of input; only a bare number can end there.
            scanner.step(ord(" "))
    except _SyntaxError as exc:
        return str(exc)
    if not scanner.end_top:
        return "unexpected end of JSON input"
    kind = _top_level_kind(data)
    if kind in ("object", "null"):
        return None
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def json_kind(value: Any) -> str:
    """A decoded JSON value's kind as Go's encoding/json names it in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"
