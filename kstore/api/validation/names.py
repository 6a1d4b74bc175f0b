"""Kubernetes' string format rules: DNS names, label keys and values, config keys, ports, paths.

Each ``is_*`` function returns the list of problems Kubernetes reports for a value, word for word
(empty when the value is valid), like ``k8s.io/apimachinery/pkg/util/validation``. Lengths are
counted in UTF-8 bytes, as Go's ``len`` does. Two families of length messages exist in Kubernetes
v1.36 and both are kept: DNS names, config keys and port names say ``must be no more than N
characters``; label keys and values (the ``validate/content`` package) say ``... N bytes``.

A :data:`NameValidator` ``(name, prefix) -> problems`` decides which names a kind accepts; with
``prefix=True`` it checks a ``generateName`` prefix (Kubernetes masks a trailing ``-`` first,
because a random suffix will follow).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

__all__ = [
    "DNS1035_LABEL_MAX_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "NameValidator",
    "byte_len",
    "empty_error",
    "inclusive_range_error",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_dns1123_subdomain_with_underscore",
    "is_label_value",
    "is_path_segment_name",
    "is_path_segment_prefix",
    "is_qualified_name",
    "is_relaxed_env_var_name",
    "is_valid_group_id",
    "is_valid_port_name",
    "is_valid_port_num",
    "is_valid_user_id",
    "mask_trailing_dash",
    "max_len_error",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "regex_error",
    "validate_namespace_name",
    "validate_path_segment_name",
]

#: ``(name, prefix) -> problems``: Kubernetes' ``ValidateNameFunc``.
NameValidator = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX_LENGTH: Final = 63
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
DNS1035_LABEL_MAX_LENGTH: Final = 63
LABEL_VALUE_MAX_LENGTH: Final = 63
_LABEL_KEY_NAME_MAX_LENGTH: Final = 63
_PORT_NAME_MAX_LENGTH: Final = 15
_MAX_INT32: Final = 2**31 - 1

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_US_FMT: Final = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_US_FMT: Final = _DNS1123_LABEL_US_FMT + "(\\." + _DNS1123_LABEL_US_FMT + ")*"
_DNS1123_SUBDOMAIN_US_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT: Final = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_CONFIG_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_MSG: Final = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
)
_RELAXED_ENV_MSG: Final = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)

_DNS1123_LABEL_RE: Final = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_US_RE: Final = re.compile(_DNS1123_SUBDOMAIN_US_FMT)
_DNS1035_LABEL_RE: Final = re.compile(_DNS1035_LABEL_FMT)
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)
_CONFIG_KEY_RE: Final = re.compile(_CONFIG_KEY_FMT)
_PORT_NAME_CHARSET_RE: Final = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE: Final = re.compile("[a-z]")


def byte_len(s: str) -> int:
    """Go's ``len`` of a string: its UTF-8 byte count."""
    return len(s) if s.isascii() else len(_go_bytes(s))


def _go_bytes(s: str) -> bytes:
    # Escaped surrogates (from a byte-wise cut, see mask_trailing_dash) stand for single bytes.
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _max_len_bytes_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')``.

    The doubled space before ``or`` is Kubernetes' own (each example ends in ``', ``).
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _dns1123_subdomain(value: str, max_len: Callable[[int], str]) -> list[str]:
    errs = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """A lowercase RFC 1123 subdomain of at most 253 characters (most object names)."""
    return _dns1123_subdomain(value, max_len_error)


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    """A DNS-1123 subdomain whose labels may also hold (and start with) ``_`` (DNS searches)."""
    errs = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_US_RE.fullmatch(value):
        errs.append(
            regex_error(_DNS1123_SUBDOMAIN_US_MSG, _DNS1123_SUBDOMAIN_US_FMT, "example.com")
        )
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """A lowercase RFC 1123 label of at most 63 characters (namespaces, container names)."""
    errs = []
    if byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            # A valid subdomain that is not a label (length already checked): it has dots.
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """A DNS-1035 label: starts with a letter (Service names)."""
    errs = []
    if byte_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key (Kubernetes' "qualified name"): ``[prefix/]name``, the prefix a DNS subdomain."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend(
                "prefix part " + m for m in _dns1123_subdomain(prefix, _max_len_bytes_error)
            )
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif byte_len(name) > _LABEL_KEY_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_bytes_error(_LABEL_KEY_NAME_MAX_LENGTH))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_label_value(value: str) -> list[str]:
    """A label value: empty, or up to 63 bytes of ``[-A-Za-z0-9_.]`` framed by alphanumerics."""
    errs = []
    if byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_bytes_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_config_map_key(value: str) -> list[str]:
    """A ConfigMap or Secret key: ``[-._a-zA-Z0-9]+``, at most 253 characters, not ``.``/``..``."""
    errs = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_KEY_RE.fullmatch(value):
        errs.append(
            regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
        )
    errs.extend(_chdir_prefix(value))
    return errs


def is_relaxed_env_var_name(value: str) -> list[str]:
    """An environment variable name: printable ASCII other than ``=`` (the v1.34+ rule)."""
    if not value:
        return ["environment variable name " + empty_error()]
    # An ASCII string is printable exactly when every character is in 0x20-0x7E.
    if value.isascii() and value.isprintable() and "=" not in value:
        return []
    return [_RELAXED_ENV_MSG]


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """An IANA service name: at most 15 of ``[-a-z0-9]``, a letter, no ``--``, no edge ``-``."""
    errs = []
    if byte_len(port) > _PORT_NAME_MAX_LENGTH:
        errs.append(max_len_error(_PORT_NAME_MAX_LENGTH))
    if not _PORT_NAME_CHARSET_RE.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER_RE.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_user_id(uid: int) -> list[str]:
    return [] if 0 <= uid <= _MAX_INT32 else [inclusive_range_error(0, _MAX_INT32)]


def is_valid_group_id(gid: int) -> list[str]:
    return [] if 0 <= gid <= _MAX_INT32 else [inclusive_range_error(0, _MAX_INT32)]


def is_path_segment_name(name: str) -> list[str]:
    """Safe as one URL path segment: not ``.`` or ``..``, no ``/`` or ``%`` (empty is allowed)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return is_path_segment_prefix(name)


def is_path_segment_prefix(name: str) -> list[str]:
    return [f"may not contain '{c}'" for c in "/%" if c in name]


def mask_trailing_dash(name: str) -> str:
    """What Kubernetes checks in place of a ``generateName`` ending in ``-``.

    Kubernetes replaces the last *two* characters by ``a`` (``name[:len-2] + "a"``); the rule
    is reproduced as is, so ``ab-`` is checked as ``aa`` and ``a-`` as ``a``.
    """
    raw = _go_bytes(name)
    if len(raw) > 1 and raw.endswith(b"-"):
        # Cut bytes, as Go does: a split multi-byte character stays invalid (and fails).
        return (raw[:-2] + b"a").decode("utf-8", "surrogateescape")
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(mask_trailing_dash(name) if prefix else name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """The generic rule every stored object's name obeys (the API server's last check)."""
    return is_path_segment_prefix(name) if prefix else is_path_segment_name(name)


#: Namespace names are DNS-1123 labels.
validate_namespace_name: NameValidator = name_is_dns_label
