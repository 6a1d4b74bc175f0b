"""``pattern`` as kube-apiserver matches it: Go's ``regexp`` (RE2 syntax), unanchored search.

Kubernetes compiles a schema's ``pattern`` with Go's ``regexp.Compile`` and reports a failure when
``MatchString`` finds no match anywhere in the value. Go's dialect is RE2, which Python's ``re``
resembles but does not equal. So:

- the pattern is first compiled with RE2 itself (``google-re2``): what RE2 rejects is an invalid
  pattern, reported as Go reports it (``error parsing regexp: ...``);
- a pattern that uses only constructs whose meaning is the same in both engines, once the few
  spelling differences are rewritten, runs on Python's ``re`` (about 25 times faster per call
  than the RE2 binding here): Go's ``$`` and ``\\z`` (end of text only) become ``\\Z``; Go's
  ASCII-only ``\\d`` ``\\w`` ``\\s`` become explicit ASCII classes (Python's are Unicode, and its
  ``\\s`` also matches ``\\v``);
- a pattern Python's backtracking engine could run in more than linear time (see
  :func:`_linear_in_python`) runs on RE2, so a crafted value cannot stall the server;
- anything else runs on RE2 too: flags (``(?i)``, ``(?s)``, ``(?m)``...), ``\\b``/``\\B``
  (ASCII word boundaries in Go), Unicode classes ``\\pL``, POSIX classes ``[[:alpha:]]``,
  ``\\Q...\\E``, ``\\x{...}``, named groups, ``{,n}`` (a literal in Go, a repetition in
  Python) and any pattern Python's ``re`` would warn about or reject.

Invariant: a value matches here if and only if Go's ``regexp.MatchString`` matches it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Final

import re2

__all__ = ["Matcher", "compile_pattern"]

Matcher = Callable[[str], bool]

_ASCII_CLASSES: Final = {
    "d": "0-9",
    "w": "0-9A-Za-z_",
    "s": "\\t\\n\\f\\r ",
}

# Escapes that mean one literal character in both dialects.
_LITERAL_ESCAPES: Final = set("\\.+*?()|[]{}^$-/afnrtv&~#!\"',:;<=>@%`_ ")

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class PatternError(ValueError):
    """The pattern is not valid RE2; the message is Go's ``regexp`` error text."""


def _translate(pattern: str) -> str | None:
    """The Python ``re`` spelling of a Go pattern, or ``None`` when only RE2 will do."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                return None
            nxt = pattern[i + 1]
            if nxt in _ASCII_CLASSES:
                cls = _ASCII_CLASSES[nxt]
                out.append(cls if in_class else f"[{cls}]")
            elif nxt in ("D", "W", "S"):
                if in_class:
                    return None
                out.append(f"[^{_ASCII_CLASSES[nxt.lower()]}]")
            elif nxt == "z" and not in_class:
                out.append("\\Z")
            elif nxt == "A" and not in_class:
                out.append("\\A")
            elif nxt in _LITERAL_ESCAPES:
                out.append("\\" + nxt)
            elif nxt == "x" and i + 3 < n and pattern[i + 2] != "{":
                out.append(pattern[i : i + 4])
                i += 4
                continue
            else:
                return None
            i += 2
            continue
        if in_class:
            if ch == "]" and out[-1] not in ("[", "[^"):
                in_class = False
            elif ch == "[":
                return None
            out.append(ch)
        elif ch == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                if i < n and pattern[i] == "]":
                    out.append("\\]")
                    i += 1
                continue
            out.append("[")
            if i + 1 < n and pattern[i + 1] == "]":
                out.append("\\]")
                i += 2
                continue
        elif ch == "$":
            out.append("\\Z")
        elif (ch == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i)) or (
            ch == "{" and pattern.startswith("{,", i)
        ):
            return None
        else:
            out.append(ch)
        i += 1
    return "".join(out)


_REPEAT = re.compile("\\{([0-9]+)(,([0-9]*))?\\}")
_SHORT_REPEAT: Final = 16


def _linear_in_python(pattern: str) -> bool:
    """Whether Python's backtracking ``re`` is sure to run this pattern in linear time.

    RE2 guarantees linear time; a backtracking engine does not: ``search("a+b", "a" * 10**5)``
    takes seconds in Python (every start position re-scans the run of ``a``). Python gets the
    pattern only when it has no repeated group and either no unbounded repetition (``*``,
    ``+``, ``{n,}``, ``{n,m}`` with m > 16) at all, or exactly one in a pattern anchored at the
    start (``^``/``\\A``) with no top-level alternation: then there is one start position and
    one place to backtrack, and matching is linear.
    """
    unbounded = 0
    depth = 0
    top_level_alternation = False
    in_class = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            # A "]" right after "[" or "[^" is a literal member.
            i += 3 if pattern.startswith("[^]", i) else 2 if pattern.startswith("[]", i) else 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if i + 1 < n and pattern[i + 1] in "*+{":
                m = _REPEAT.match(pattern, i + 1) if pattern[i + 1] == "{" else None
                if pattern[i + 1] != "{" or m is not None:
                    return False  # a repeated group: the classic exponential shape
        elif ch == "|" and depth == 0:
            top_level_alternation = True
        elif ch in "*+":
            unbounded += 1
        elif ch == "{":
            m = _REPEAT.match(pattern, i)
            if m is not None and (m[2] is not None and (not m[3] or int(m[3]) > _SHORT_REPEAT)):
                unbounded += 1
        i += 1
    if unbounded == 0:
        return True
    anchored = pattern.startswith(("^", "\\A"))
    return unbounded == 1 and anchored and not top_level_alternation


def _go_error(message: str, pattern: str) -> str:
    """Go's wording for the RE2 errors a schema author is likely to meet."""
    if message.startswith("no argument for repetition operator: "):
        op = message.rsplit(": ", 1)[1]
        return f"error parsing regexp: missing argument to repetition operator: `{op}`"
    if message.startswith("missing ): "):
        return f"error parsing regexp: missing closing ): `{pattern}`"
    if message.startswith("missing ]: "):
        return f"error parsing regexp: missing closing ]: `{message.split(': ', 1)[1]}`"
    if message.startswith("unexpected ): "):
        return f"error parsing regexp: unexpected ): `{pattern}`"
    if message.startswith("invalid escape sequence: "):
        return f"error parsing regexp: invalid escape sequence: `{message.split(': ', 1)[1]}`"
    if message.startswith("invalid perl operator: "):
        what = message.split(": ", 1)[1]
        return f"error parsing regexp: invalid or unsupported Perl syntax: `{what}`"
    return f"error parsing regexp: {message}"


def compile_pattern(pattern: str) -> Matcher:
    """A predicate ``value -> matched``; raises :class:`PatternError` for an invalid pattern."""
    try:
        compiled = re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        text = exc.args[0] if exc.args else str(exc)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        raise PatternError(_go_error(str(text), pattern)) from None
    translated = _translate(pattern) if _linear_in_python(pattern) else None
    if translated is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                py = re.compile(translated)
        except (re.error, Warning):
            py = None
        if py is not None:
            py_search = py.search
            return lambda value: py_search(value) is not None
    re2_search = compiled.search
    return lambda value: re2_search(value) is not None
