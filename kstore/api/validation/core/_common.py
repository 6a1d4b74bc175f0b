"""Small cause-building rules the core/v1 validators share (private to this package)."""

from __future__ import annotations

from typing import Final

from kstore.api.validation.field import (
    Path,
    invalid,
)
from kstore.api.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
)
from kstore.errors import Cause

__all__ = ["dns_label", "dns_subdomain", "go_trim_space", "qualified_name"]

# Go's unicode.IsSpace (what strings.TrimSpace trims); Python's isspace() differs slightly.
_GO_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


def go_trim_space(s: str) -> str:
    start, end = 0, len(s)
    while start < end and s[start] in _GO_SPACE:
        start += 1
    while end > start and s[end - 1] in _GO_SPACE:
        end -= 1
    return s[start:end]


def dns_label(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def dns_subdomain(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_dns1123_subdomain(value)]


def qualified_name(value: str, path: Path) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]
