"""Docker-config Secrets are checked with Go's json.Unmarshal wording, reproduced exactly."""

from __future__ import annotations

import pytest

from kstore.api.validation._gojson import unmarshal_object_error

MAP_TYPE = "Go value of type map[string]interface {}"


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b'{"auths":{"r.io":{"auth":"eDp5"}}}', None),
        (b"  {}  ", None),
        (b"null", None),  # Go decodes null into a map without complaint.
        (b"", "unexpected end of JSON input"),
        (b"{", "unexpected end of JSON input"),
        (b'"abc', "unexpected end of JSON input"),
        (b"[]", f"json: cannot unmarshal array into {MAP_TYPE}"),
        (b'"x"', f"json: cannot unmarshal string into {MAP_TYPE}"),
        (b"12", f"json: cannot unmarshal number into {MAP_TYPE}"),
        (b"true", f"json: cannot unmarshal bool into {MAP_TYPE}"),
        (b"not json", "invalid character 'o' in literal null (expecting 'u')"),
        (b"tru", "invalid character ' ' in literal true (expecting 'e')"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b"{a}", "invalid character 'a' looking for beginning of object key string"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b'{"a":1 2}', "invalid character '2' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"[1,]", "invalid character ']' looking for beginning of value"),
        (b"{} x", "invalid character 'x' after top-level value"),
        (b"12.", "invalid character ' ' after decimal point in numeric literal"),
        (b"1e", "invalid character ' ' in exponent of numeric literal"),
        (b"-", "invalid character ' ' in numeric literal"),
        (b'{"a":"\x01"}', "invalid character '\\x01' in string literal"),
        (b'{"a":"\\q"}', "invalid character 'q' in string escape code"),
        (b'"\\u12g"', "invalid character 'g' in \\u hexadecimal character escape"),
        (b"'x'", "invalid character '\\'' looking for beginning of value"),
        (b"\xff", "invalid character 'ÿ' looking for beginning of value"),
        (b"[" * 10001, "invalid character '[' exceeded max depth"),
    ],
)
def test_unmarshal_errors_read_like_go(data: bytes, error: str | None) -> None:
    assert unmarshal_object_error(data) == error
