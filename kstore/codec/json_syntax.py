"""The syntax error Go's ``encoding/json`` reports for a text that is not JSON.

kube-apiserver reads the ``apiVersion`` and ``kind`` of a JSON body with ``json.Unmarshal``
before anything else, so a malformed body is refused with the words of Go's scanner
(``unexpected end of JSON input``, ``invalid character 'x' looking for beginning of value``).
:func:`go_syntax_error` walks the text with the same states as that scanner and returns its
message for the first byte it refuses. It runs only after a body failed to parse, so it is
written for clarity, not speed.

The states and their words, as the scanner has them: a value may begin with ``{ [ " - 0-9
t f n`` (else ``looking for beginning of value``); an object key must be a string (``looking
for beginning of object key string``), followed by ``:`` (``after object key``), its value by
``,`` or ``}`` (``after object key:value pair``); an array element by ``,`` or ``]`` (``after
array element``); a complete top-level value by whitespace only (``after top-level value``).
Strings refuse control bytes (``in string literal``), bad escapes (``in string escape code``,
``in \\u hexadecimal character escape``); numbers refuse a missing digit (``in numeric
literal``, ``after decimal point in numeric literal``, ``in exponent of numeric literal``);
literals name the byte they expected (``in literal true (expecting 'r')``). An object or array
opened deeper than :data:`~kstore.codec.nesting.MAX_DEPTH` levels is refused at its opening
byte (``invalid character '{' exceeded max depth``).
"""

from __future__ import annotations

from kstore.codec.nesting import MAX_DEPTH

__all__ = ["go_syntax_error"]

_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'"\\/bfnrtu'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_END_OF_INPUT = "unexpected end of JSON input"


class _Refused(Exception):
    pass


_GO_QUOTED = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 92: "\\\\"}


def _quote_char(c: int) -> str:
    """Go's ``quoteChar``: the byte (as the rune of that number) in single quotes, escaped as
    ``strconv.Quote`` escapes it."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c in _GO_QUOTED:
        body = _GO_QUOTED[c]
    elif c < 0x20 or c == 0x7F:
        body = f"\\x{c:02x}"
    elif c < 0x80 or chr(c).isprintable():
        body = chr(c)
    else:
        body = f"\\u{c:04x}"
    return f"'{body}'"


def _refuse(c: int, context: str) -> _Refused:
    return _Refused(f"invalid character {_quote_char(c)} {context}")


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0
        self.depth = 0

    def peek(self) -> int | None:
        return self.data[self.i] if self.i < len(self.data) else None

    def next(self) -> int:
        c = self.peek()
        if c is None:
            raise _Refused(_END_OF_INPUT)
        self.i += 1
        return c

    def skip_space(self) -> int:
        while (c := self.next()) in _SPACE:
            pass
        return c

    def value(self, c: int) -> None:
        """Scan the value that starts with ``c`` (already consumed)."""
        if c in (ord("{"), ord("[")):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _refuse(c, "exceeded max depth")
            if c == ord("{"):
                self.object()
            else:
                self.array()
            self.depth -= 1
        elif c == ord('"'):
            self.string()
        elif c == ord("-") or c in _DIGITS:
            self.number(c)
        elif c in _LITERALS:
            literal = _LITERALS[c]
            for expected in literal[1:]:
                got = self.next()
                if got != expected:
                    word = literal.decode()
                    raise _refuse(got, f"in literal {word} (expecting '{chr(expected)}')")
        else:
            raise _refuse(c, "looking for beginning of value")

    def object(self) -> None:
        c = self.skip_space()
        if c == ord("}"):
            return
        while True:
            if c != ord('"'):
                raise _refuse(c, "looking for beginning of object key string")
            self.string()
            c = self.skip_space()
            if c != ord(":"):
                raise _refuse(c, "after object key")
            self.value(self.skip_space())
            c = self.skip_space()
            if c == ord("}"):
                return
            if c != ord(","):
                raise _refuse(c, "after object key:value pair")
            c = self.skip_space()

    def array(self) -> None:
        c = self.skip_space()
        if c == ord("]"):
            return
        while True:
            self.value(c)
            c = self.skip_space()
            if c == ord("]"):
                return
            if c != ord(","):
                raise _refuse(c, "after array element")
            c = self.skip_space()

    def string(self) -> None:
        while True:
            c = self.next()
            if c == ord('"'):
                return
            if c < 0x20:
                raise _refuse(c, "in string literal")
            if c == ord("\\"):
                c = self.next()
                if c not in _ESCAPES:
                    raise _refuse(c, "in string escape code")
                if c == ord("u"):
                    for _ in range(4):
                        h = self.next()
                        if h not in _HEX:
                            raise _refuse(h, "in \\u hexadecimal character escape")

    def number(self, c: int) -> None:
        if c == ord("-"):
            c = self.next()
            if c not in _DIGITS:
                raise _refuse(c, "in numeric literal")
        if c != ord("0"):
            self.digits()
        if self.peek() == ord("."):
            self.i += 1
            if self.next() not in _DIGITS:
                raise _refuse(self.data[self.i - 1], "after decimal point in numeric literal")
            self.digits()
        if self.peek() in (ord("e"), ord("E")):
            self.i += 1
            c = self.next()
            if c in (ord("+"), ord("-")):
                c = self.next()
            if c not in _DIGITS:
                raise _refuse(c, "in exponent of numeric literal")
            self.digits()

    def digits(self) -> None:
        while (c := self.peek()) is not None and c in _DIGITS:
            self.i += 1


def go_syntax_error(data: bytes) -> str | None:
    """The message of Go's ``json.Unmarshal`` for ``data`` when it is not valid JSON syntax
    (None when it is: the problem lies elsewhere)."""
    scanner = _Scanner(data)
    try:
        scanner.value(scanner.skip_space())
        while (c := scanner.peek()) is not None:
            if c not in _SPACE:
                raise _refuse(c, "after top-level value")
            scanner.i += 1
    except _Refused as refused:
        return str(refused)
    except RecursionError:
        # Nested deeper than this walk goes; the caller's own message stands.
        return None
    return None
