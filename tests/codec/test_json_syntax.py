"""Go's ``encoding/json`` syntax errors for texts that are not JSON (kstore.codec.json_syntax)."""

from __future__ import annotations

import pytest

from kstore.codec.json_syntax import go_syntax_error


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"apiVersion":"v1",', "unexpected end of JSON input"),
        (b'{"a":-', "unexpected end of JSON input"),
        (b"nonsense", "invalid character 'o' in literal null (expecting 'u')"),
        (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e')"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 x}', "invalid character 'x' after object key:value pair"),
        (b'{"a":01}', "invalid character '1' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"{a:1}", "invalid character 'a' looking for beginning of object key string"),
        (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
        (b'{"a":"\\q"}', "invalid character 'q' in string escape code"),
        (b'{"a":"\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"),
        (b'{"a":"\x01"}', "invalid character '\\x01' in string literal"),
        (b'{"a":"\t"}', "invalid character '\\t' in string literal"),
        (b'{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
        (b'{"a":1e+}', "invalid character '}' in exponent of numeric literal"),
        (b'{"a":-x}', "invalid character 'x' in numeric literal"),
        (b"{} x", "invalid character 'x' after top-level value"),
        (b"\xc3\xa9", "invalid character '\u00c3' looking for beginning of value"),
    ],
)
def test_the_first_refused_byte_is_named_in_go_scanner_words(text: bytes, message: str) -> None:
    assert go_syntax_error(text) == message


@pytest.mark.parametrize(
    "text",
    [b'{"a":[1,-2.5e+3,true,false,null,{"b":"\\u00e9\\n"}]} \n', b"[]", b'"s"', b"0"],
)
def test_valid_json_has_no_syntax_error(text: bytes) -> None:
    assert go_syntax_error(text) is None


def test_nesting_deeper_than_go_s_limit_is_refused_at_the_opening_byte() -> None:
    assert go_syntax_error(b"[" * 100_000) == "invalid character '[' exceeded max depth"
    assert go_syntax_error(b'{"a":' * 10_001) == "invalid character '{' exceeded max depth"
    # Ten thousand levels are within the limit: the problem is elsewhere (here, the end).
    assert go_syntax_error(b"[" * 10_000) == "unexpected end of JSON input"
    assert go_syntax_error(b"[" * 10_000 + b"]" * 10_000) is None
