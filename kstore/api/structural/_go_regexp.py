"""Whether a ``pattern`` compiles as Go's ``regexp.Compile``, and Go's words when it does not.

CRD patterns are RE2 syntax (Go's ``regexp``), not Python's ``re``: RE2 rejects backreferences
and lookaround that Python accepts. The check uses the RE2 library (``google-re2``) and renders
its error in Go's ``regexp/syntax.Error`` form, ``error parsing regexp: <code>: `<expr>```,
translating RE2's error codes to Go's (``missing )`` is Go's ``missing closing )``...).

Known difference: an error RE2 words in a way not listed here is reported with RE2's words.
"""

from __future__ import annotations

from typing import Final

import re2

__all__ = ["regexp_compile_error"]

# RE2's error text -> Go's ErrorCode text.
_CODES: Final = {
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing ]": "missing closing ]",
    "invalid repetition size": "invalid repeat count",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
}

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False


def regexp_compile_error(pattern: str) -> str | None:
    """``None`` when Go compiles ``pattern``; else the text of Go's compile error."""
    try:
        re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        return _go_message(exc)
    return None


def _go_message(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if text == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    code, sep, expr = text.partition(": ")
    if not sep:
        return f"error parsing regexp: {text}"
    return f"error parsing regexp: {_CODES.get(code, code)}: `{expr}`"
