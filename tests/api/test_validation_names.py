"""Name and format rules give Kubernetes' messages word for word (v1.36 wording)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kstore.api.validation.names import (
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_dns1123_subdomain_with_underscore,
    is_label_value,
    is_path_segment_name,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_port_name,
    is_valid_port_num,
    is_valid_user_id,
    mask_trailing_dash,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_path_segment_name,
)

# The messages Kubernetes prints (k8s.io/apimachinery v0.36), typed out independently of the
# code under test. Note the doubled space before "or" in the example lists: it is Kubernetes'.
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_KEY_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
NAME_PART = "name part " + LABEL_KEY_REGEX
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
    "[A-Za-z0-9])?')"
)
CONFIG_KEY = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)


@pytest.mark.parametrize(
    ("check", "value", "expected"),
    [
        (is_dns1123_subdomain, "example.com", []),
        (is_dns1123_subdomain, "a" * 253, []),
        (is_dns1123_subdomain, "Foo", [DNS_SUBDOMAIN]),
        (is_dns1123_subdomain, "", [DNS_SUBDOMAIN]),
        (is_dns1123_subdomain, "a..b", [DNS_SUBDOMAIN]),
        (is_dns1123_subdomain, "-a", [DNS_SUBDOMAIN]),
        (is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"]),
        (is_dns1123_subdomain, "A" * 254, ["must be no more than 253 characters", DNS_SUBDOMAIN]),
        # Go's $ matches only at the very end: a trailing newline is not forgiven.
        (is_dns1123_subdomain, "abc\n", [DNS_SUBDOMAIN]),
        (is_dns1123_label, "my-name", []),
        (is_dns1123_label, "123-abc", []),
        (is_dns1123_label, "a.b", ["must not contain dots"]),
        (is_dns1123_label, "a_b", [DNS_LABEL]),
        (is_dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
        (is_dns1123_label, "é", [DNS_LABEL]),
        (is_dns1035_label, "my-name", []),
        (is_dns1035_label, "1abc", [DNS1035]),
        (is_dns1035_label, "b" * 64, ["must be no more than 63 characters"]),
        (is_config_map_key, "KEY_name.1-x", []),
        (is_config_map_key, "a/b", [CONFIG_KEY]),
        (is_config_map_key, ".", ["must not be '.'"]),
        (is_config_map_key, "..", ["must not be '..'"]),
        (is_config_map_key, "..a", ["must not start with '..'"]),
        (is_config_map_key, ".a", []),
        (is_config_map_key, "k" * 254, ["must be no more than 253 characters"]),
    ],
)
def test_dns_names_and_config_keys(
    check: Callable[[str], list[str]], value: str, expected: list[str]
) -> None:
    assert check(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("app", []),
        ("example.com/MyName", []),
        ("a_b.C-d", []),
        ("x" * 63, []),
        ("x" * 64, ["name part must be no more than 63 bytes"]),
        ("-a", [NAME_PART]),
        ("", ["name part must be non-empty", NAME_PART]),
        ("example.com/", ["name part must be non-empty", NAME_PART]),
        ("/a", ["prefix part must be non-empty"]),
        ("Example.com/a", ["prefix part " + DNS_SUBDOMAIN]),
        ("p" * 254 + "/a", ["prefix part must be no more than 253 bytes"]),
        (
            "a/b/c",
            [
                "a valid label key "
                + LABEL_KEY_REGEX
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
        ),
    ],
)
def test_qualified_names_are_label_keys(value: str, expected: list[str]) -> None:
    assert is_qualified_name(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", []),
        ("v1.2_3-x", []),
        ("-x", [LABEL_VALUE]),
        ("a b", [LABEL_VALUE]),
        ("v" * 64, ["must be no more than 63 bytes"]),
        # Length is counted in bytes: 32 two-byte characters are 64 bytes.
        ("é" * 32, ["must be no more than 63 bytes", LABEL_VALUE]),
    ],
)
def test_label_values(value: str, expected: list[str]) -> None:
    assert is_label_value(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http", []),
        ("h2c-9", []),
        ("a" * 16, ["must be no more than 15 characters"]),
        ("HTTP", [
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            "must contain at least one letter (a-z)",
        ]),
        ("123", ["must contain at least one letter (a-z)"]),
        ("a--b", ["must not contain consecutive hyphens"]),
        ("-ab", ["must not begin or end with a hyphen"]),
    ],
)  # fmt: skip
def test_port_names_are_iana_service_names(value: str, expected: list[str]) -> None:
    assert is_valid_port_name(value) == expected


def test_numeric_ranges() -> None:
    assert is_valid_port_num(1) == []
    assert is_valid_port_num(65535) == []
    assert is_valid_port_num(0) == ["must be between 1 and 65535, inclusive"]
    assert is_valid_port_num(65536) == ["must be between 1 and 65535, inclusive"]
    assert is_valid_user_id(-1) == ["must be between 0 and 2147483647, inclusive"]
    assert is_valid_user_id(2**31 - 1) == []


def test_environment_variable_names_follow_the_relaxed_rule() -> None:
    message = (
        "a valid environment variable name must consist only of printable ASCII characters "
        "other than '='"
    )
    assert is_relaxed_env_var_name("1-weird.NAME") == []
    assert is_relaxed_env_var_name("A=B") == [message]
    assert is_relaxed_env_var_name("tab\there") == [message]
    assert is_relaxed_env_var_name("") == ["environment variable name must be non-empty"]


def test_dns_search_names_may_hold_underscores() -> None:
    assert is_dns1123_subdomain_with_underscore("_srv._tcp.example.com") == []
    assert is_dns1123_subdomain_with_underscore("Bad") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_',"
        " '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
        "(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("nameValue", []),
        ("", []),
        ("a b", []),
        (".", ["may not be '.'"]),
        ("..", ["may not be '..'"]),
        ("a/b%c", ["may not contain '/'", "may not contain '%'"]),
        ("...", []),
    ],
)
def test_path_segment_names(value: str, expected: list[str]) -> None:
    assert is_path_segment_name(value) == expected
    assert validate_path_segment_name(value, False) == expected


def test_path_segment_prefixes_may_be_dots() -> None:
    assert validate_path_segment_name("..", True) == []
    assert validate_path_segment_name("a/", True) == ["may not contain '/'"]


@pytest.mark.parametrize(
    ("prefix", "checked"),
    [
        ("web-", "wea"),  # Kubernetes drops two characters and appends "a".
        ("a-", "a"),
        ("-", "-"),
        ("web", "web"),
        ("", ""),
    ],
)
def test_generate_name_prefix_masks_a_trailing_dash(prefix: str, checked: str) -> None:
    assert mask_trailing_dash(prefix) == checked


def test_name_rules_check_generate_name_prefixes() -> None:
    assert name_is_dns_subdomain("web-", True) == []
    assert name_is_dns_subdomain("web-", False) == [DNS_SUBDOMAIN]
    assert name_is_dns_label("web-", True) == []
    assert name_is_dns1035_label("web-", True) == []
    assert name_is_dns1035_label("1web-", True) == [DNS1035]
    # A multi-byte character cut in half by the byte-wise mask stays invalid.
    assert name_is_dns_subdomain("é-", True) == [DNS_SUBDOMAIN]
