"""Label and field selectors behave as Kubernetes' (k8s.io/apimachinery, Kubernetes 1.35).

Most tables are Kubernetes' own test cases (pkg/labels/selector_test.go,
pkg/fields/selector_test.go, pkg/apis/meta/v1/helpers_test.go), with the exact error texts
its parser produces added where the Go tests only check that an error happened.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.selectors import (
    FieldRequirement,
    FieldSelector,
    LabelRequirement,
    LabelSelector,
    Operator,
    _lex,
    _Token,
    escape_field_value,
)
from kstore.errors import BadRequest

NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
BINARY = "in, notin, =, ==, !=, gt, lt"
PARSE = "unable to parse requirement: "


def req(key: str, operator: str, *values: str) -> LabelRequirement:
    return LabelRequirement.create(key, operator, values)


def parse_error(text: str) -> str:
    with pytest.raises(BadRequest) as info:
        LabelSelector.parse(text)
    assert info.value.code == 400
    return info.value.message


def field_parse_error(text: str) -> str:
    with pytest.raises(BadRequest) as info:
        FieldSelector.parse(text)
    return info.value.message


# --------------------------------------------------------------------------- label: parsing


@pytest.mark.parametrize(
    "text",
    ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"],
)
def test_label_parse_accepts_and_restrings_kubernetes_good_strings(text: str) -> None:
    assert str(LabelSelector.parse(text)) == text.replace(" ", "")


def test_label_parse_is_deterministic_whatever_the_term_order() -> None:
    assert LabelSelector.parse("x=a,a=x") == LabelSelector.parse("a=x,x=a")
    assert str(LabelSelector.parse("x=a,a=x")) == "a=x,x=a"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ()),
        ("\rx", (req("x", "exists"),)),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            (req("this-is-a-dns.domain.com/key-with-dash", "exists"),),
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            (req("this-is-another-dns.domain.com/key-with-dash", "in", "so", "what"),),
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            (req("0.1.2.domain/99", "notin", "10.10.100.1", "tick.tack.clock"),),
        ),
        ("foo  in\t (abc)", (req("foo", "in", "abc"),)),
        ("x notin\n (abc)", (req("x", "notin", "abc"),)),
        ("x  notin\t\t\t(abc,def)", (req("x", "notin", "abc", "def"),)),
        ("x in (abc,def)", (req("x", "in", "abc", "def"),)),
        ("x in (abc,)", (req("x", "in", "", "abc"),)),
        ("x in (abc,abc)", (req("x", "in", "abc"),)),
        ("x in ()", (req("x", "in", ""),)),
        ("x in (a,,)", (req("x", "in", "", "a"),)),
        ("x in (a,,,)", (req("x", "in", "", "a"),)),
        ("x in (a,,,,,,)", (req("x", "in", "", "a"),)),
        ("x in (a,,a,,a,,a,,)", (req("x", "in", "", "a"),)),
        (
            "x notin (abc,,def),bar,z in (),w",
            (
                req("bar", "exists"),
                req("w", "exists"),
                req("x", "notin", "", "abc", "def"),
                req("z", "in", ""),
            ),
        ),
        ("x,y in (a)", (req("x", "exists"), req("y", "in", "a"))),
        ("x=a", (req("x", "=", "a"),)),
        ("x>1", (req("x", "gt", "1"),)),
        ("x<7", (req("x", "lt", "7"),)),
        ("x=a,y!=b", (req("x", "=", "a"), req("y", "!=", "b"))),
        (
            "x=a,y!=b,z in (h,i,j)",
            (req("x", "=", "a"), req("y", "!=", "b"), req("z", "in", "h", "i", "j")),
        ),
        ("x notin ( )", (req("x", "notin", ""),)),
        ("x notin (, a)", (req("x", "notin", "", "a"),)),
        ("a ", (req("a", "exists"),)),
        # "in" and "notin" are plain values inside a value list, and keys before an operator
        ("a in (x,y,notin, z,in)", (req("a", "in", "in", "notin", "x", "y", "z"),)),
        ("notin=in", (req("notin", "=", "in"),)),
        ("in in (in)", (req("in", "in", "in"),)),
        ("x==a", (req("x", "==", "a"),)),
        ("!x,y", (req("x", "!"), req("y", "exists"))),
        ("! x", (req("x", "!"),)),
    ],
)
def test_label_parse_builds_kubernetes_requirements(
    text: str, expected: tuple[LabelRequirement, ...]
) -> None:
    assert LabelSelector.parse(text).requirements == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Kubernetes' bad strings, with the message its parser gives
        ("x=a||y=b", f'{PARSE}values[0][x]: Invalid value: "a||y": {VALUE_RULE}'),
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        (
            "x<a",
            f'{PARSE}values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
        ("x nott in (y)", f"{PARSE}found 'nott', expected: {BINARY}"),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
        ("a in (xyz abc)", f"{PARSE}found 'abc', expected: ',' or ')'"),
        ("a notin(", f"{PARSE}found '', expected: ',', ')' or identifier"),
        ("a (", f"{PARSE}found '(', expected: {BINARY}"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        # more of the grammar's corners
        ("x in (", f"{PARSE}found '', expected: ',', ')' or identifier"),
        ("x in (,", f"{PARSE}found '', expected: ',', or identifier"),
        ("x in (=)", f"{PARSE}found '=', expected: ',', ')' or identifier"),
        ("x in (a=)", f"{PARSE}found '=', expected: ',' or ')'"),
        ("x in a", f"{PARSE}found 'a' expected: '('"),
        ("x=(", f"{PARSE}found '(', expected: identifier"),
        ("x=!a", f"{PARSE}found '!', expected: identifier"),
        ("x>=1", f"{PARSE}found '=', expected: identifier"),
        ("x ! y", f"{PARSE}found '!', expected: {BINARY}"),
        ("!", f"{PARSE}found '', expected: identifier"),
        ("!!x", f"{PARSE}found '!', expected: identifier"),
        ("!=x", "found '!=', expected: !, identifier, or 'end of string'"),
        ("x y", f"{PARSE}found 'y', expected: {BINARY}"),
        (")", "found ')', expected: !, identifier, or 'end of string'"),
        ("x=a b", "found 'b', expected: ',' or 'end of string'"),
        (
            "x>1.5",
            f'{PARSE}values[0]: Invalid value: "1.5": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "x>99999999999999999999",
            f'{PARSE}values[0]: Invalid value: "99999999999999999999": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        # a negative bound is an integer but not a label value
        ("x>-1", f'{PARSE}values[0][x]: Invalid value: "-1": {VALUE_RULE}'),
        (
            "x in (b c,a)",
            f"{PARSE}found 'c', expected: ',' or ')'",
        ),
        (
            "x in (-a,_b)",
            f'{PARSE}[values[0][x]: Invalid value: "-a": {VALUE_RULE}, '
            f'values[1][x]: Invalid value: "_b": {VALUE_RULE}]',
        ),
        (
            "x=" + "a" * 64,
            f'{PARSE}values[0][x]: Invalid value: "{"a" * 64}": must be no more than 63 bytes',
        ),
        (
            "x=" + "é" * 32,
            f'{PARSE}values[0][x]: Invalid value: "{"é" * 32}": '
            f"must be no more than 63 bytes; {VALUE_RULE}",
        ),
    ],
)
def test_label_parse_rejects_with_kubernetes_message(text: str, message: str) -> None:
    assert parse_error(text) == message


@pytest.mark.parametrize(
    ("key", "detail"),
    [
        # the message a real API server returns for `kubectl get pods -l app:monolith`
        ("app:monolith", f"name part {NAME_RULE}"),
        ("*bar", f"name part {NAME_RULE}"),
        ("_a", f"name part {NAME_RULE}"),
        (
            "a/b/c",
            f"a valid label key {NAME_RULE} with an optional DNS subdomain prefix and "
            "'/' (e.g. 'example.com/MyName')",
        ),
        ("/a", "prefix part must be non-empty"),
        ("a/", f"name part must be non-empty; name part {NAME_RULE}"),
        ("Example.com/a", f"prefix part {SUBDOMAIN_RULE}"),
        ("app.kubernetes_io/name", f"prefix part {SUBDOMAIN_RULE}"),
        ("a" * 64, "name part must be no more than 63 bytes"),
        ("a" * 254 + "/b", "prefix part must be no more than 253 bytes"),
        (
            "A" * 254 + "/b",
            f"prefix part must be no more than 253 bytes; prefix part {SUBDOMAIN_RULE}",
        ),
        ("ключ", f"name part {NAME_RULE}"),
    ],
)
def test_label_parse_rejects_bad_keys_with_a_nil_path(key: str, detail: str) -> None:
    # Kubernetes validates parsed keys with a nil field path, printed "<nil>".
    rendered = '"' + key + '"'
    assert parse_error(key) == f"{PARSE}<nil>: Invalid value: {rendered}: {detail}"
    assert parse_error(f"{key}=a") == f"{PARSE}<nil>: Invalid value: {rendered}: {detail}"


@pytest.mark.parametrize(
    ("key", "rendered"),
    [
        ('a"b', '"a\\"b"'),
        ("a\\b", '"a\\\\b"'),
        ("a\x01b", '"a\\x01b"'),
        ("a\x7fb", '"a\\x7fb"'),
        ("a\vb", '"a\\vb"'),
        ("a\u200bb", '"a\\u200bb"'),
        ("a\U000e0001b", '"a\\U000e0001b"'),
        ("名", '"名"'),
    ],
)
def test_label_errors_quote_values_as_go_does(key: str, rendered: str) -> None:
    assert parse_error(key).startswith(f"{PARSE}<nil>: Invalid value: {rendered}: ")


@pytest.mark.parametrize("blank", [" ", "\t", "\r", "\n"])
def test_label_parse_treats_only_space_tab_cr_lf_as_blank(blank: str) -> None:
    text = f"{blank}a{blank}in{blank}({blank}x{blank},{blank}y{blank}){blank},{blank}b{blank}"
    assert str(LabelSelector.parse(text)) == "a in (x,y),b"


def test_label_parse_keeps_other_whitespace_inside_identifiers() -> None:
    assert parse_error("a\fb").startswith(f'{PARSE}<nil>: Invalid value: "a\\fb": ')


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("a \x00zz", "a"),  # NUL where a token starts ends the input
        ("\x00a=b", ""),
        ("x=a\x00,y", "x=a,y"),  # NUL right after a token is skipped
        ("x=a\x00", "x=a"),
        ("!\x00x", "!x"),
    ],
)
def test_label_parse_reads_nul_as_kubernetes_lexer_does(text: str, rendered: str) -> None:
    assert str(LabelSelector.parse(text)) == rendered


def test_label_parse_of_blank_text_selects_everything() -> None:
    for text in ("", " ", "\t\n"):
        selector = LabelSelector.parse(text)
        assert selector.empty()
        assert selector == LabelSelector.everything()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        (",", [_Token.COMMA]),
        ("notin", [_Token.NOT_IN]),
        ("in", [_Token.IN]),
        ("=", [_Token.EQUALS]),
        ("==", [_Token.DOUBLE_EQUALS]),
        (">", [_Token.GREATER_THAN]),
        ("<", [_Token.LESS_THAN]),
        ("!", [_Token.NOT]),
        ("!=", [_Token.NOT_EQUALS]),
        ("(", [_Token.OPEN_PAREN]),
        (")", [_Token.CLOSE_PAREN]),
        ("~", [_Token.IDENTIFIER]),
        ("||", [_Token.IDENTIFIER]),
        (
            "key in ( value1, value2 )",
            [
                _Token.IDENTIFIER,
                _Token.IN,
                _Token.OPEN_PAREN,
                _Token.IDENTIFIER,
                _Token.COMMA,
                _Token.IDENTIFIER,
                _Token.CLOSE_PAREN,
            ],
        ),
        ("!key", [_Token.NOT, _Token.IDENTIFIER]),
        (
            "== != (), = notin",
            [
                _Token.DOUBLE_EQUALS,
                _Token.NOT_EQUALS,
                _Token.OPEN_PAREN,
                _Token.CLOSE_PAREN,
                _Token.COMMA,
                _Token.EQUALS,
                _Token.NOT_IN,
            ],
        ),
        ("key>2", [_Token.IDENTIFIER, _Token.GREATER_THAN, _Token.IDENTIFIER]),
        ("===", [_Token.DOUBLE_EQUALS, _Token.EQUALS]),
        ("!==", [_Token.NOT_EQUALS, _Token.EQUALS]),
        ("!!", [_Token.NOT, _Token.NOT]),
    ],
)
def test_label_lexer_takes_the_longest_symbol(text: str, tokens: list[_Token]) -> None:
    items = _lex(text)
    assert items[-1] == (_Token.END, "")
    assert [token for token, _ in items[:-1]] == tokens


# --------------------------------------------------------------------------- label: matching


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x", {"x": "z"}, True),
        ("!x", {"y": "z"}, True),
        ("x>1", {"x": "2"}, True),
        ("x<1", {"x": "0"}, True),
        ("x=z", {}, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x", {"y": "z"}, False),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "0"}, False),
        ("x<1", {"x": "2"}, False),
        ("foo=bar", {"foo": "bar", "baz": "blah"}, True),
        ("baz=blah", {"foo": "bar", "baz": "blah"}, True),
        ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
        ("foo=blah", {"foo": "bar", "baz": "blah"}, False),
        ("baz=bar", {"foo": "bar", "baz": "blah"}, False),
        ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
        # TestRequirementSelectorMatching
        ("x in (foo),y notin (alpha)", {"x": "foo", "y": "baz"}, True),
        ("x in (foo),y in (alpha)", {"x": "foo", "y": "baz"}, False),
        ("x notin (),y", {"y": ""}, True),
        ("!x,y", {"y": ""}, True),
        ("x notin (),!y", {"y": ""}, False),
        ("x in ()", {"y": "baz"}, False),
        ("z>1", {"z": "2"}, True),
        ("z>1", {"z": "v2"}, False),
        # absent labels: notin and != match, in and = and gt/lt do not
        ("x notin (a,b)", {}, True),
        ("x!=a", {}, True),
        ("x in (a,b)", {}, False),
        ("x==a", {}, False),
        ("x>1", {}, False),
        ("x<1", {}, False),
        # an empty value is a value
        ("x=", {"x": ""}, True),
        ("x=", {}, False),
        ("x in (,a)", {"x": ""}, True),
        ("x notin (,a)", {"x": ""}, False),
        ("x", {"x": ""}, True),
        # gt/lt compare as int64, and only when the label parses as one
        ("x>9", {"x": "10"}, True),
        ("x<10", {"x": "9"}, True),
        ("x>9", {"x": "010"}, True),
        ("x>1", {"x": "+2"}, True),
        ("x<1", {"x": "-5"}, True),
        ("x<1", {"x": "1"}, False),
        ("x>1", {"x": "1"}, False),
        ("x>1", {"x": "2.5"}, False),
        ("x>1", {"x": " 2"}, False),
        ("x>1", {"x": "1_000"}, False),
        ("x>1", {"x": "٢"}, False),
        ("x>1", {"x": ""}, False),
        ("x>1", {"x": "9223372036854775807"}, True),
        ("x>1", {"x": "9223372036854775808"}, False),
        ("x<1", {"x": "-9223372036854775808"}, True),
        ("x<1", {"x": "-9223372036854775809"}, False),
        ("x>1,x<5", {"x": "3"}, True),
        ("x>1,x<5", {"x": "5"}, False),
        ("a,b,c,d", {"a": "", "b": "", "c": "", "d": ""}, True),
        ("a,b,c,d", {"a": "", "b": "", "c": ""}, False),
    ],
)
def test_label_selector_matches_as_kubernetes(
    text: str, labels: dict[str, str], expected: bool
) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


def test_label_selector_matches_any_mapping() -> None:
    selector = LabelSelector.parse("app in (web,api),tier!=db,!canary")
    assert selector.matches(MappingProxyType({"app": "web", "tier": "fe"}))
    assert not selector.matches(MappingProxyType({"app": "web", "canary": "1"}))


def test_label_requirement_matches_on_its_own() -> None:
    requirement = req("x", "notin", "a")
    assert requirement.matches({})
    assert not requirement.matches({"x": "a"})


def test_everything_matches_all_and_is_empty() -> None:
    everything = LabelSelector.everything()
    assert everything.empty()
    assert everything.matches({"x": "y"})
    assert everything.matches({})
    assert str(everything) == ""


def test_nothing_matches_none_and_is_not_empty() -> None:
    nothing = LabelSelector.nothing()
    assert not nothing.empty()
    assert not nothing.matches({})
    assert not nothing.matches({"x": "y"})
    assert str(nothing) == ""  # as labels.Nothing().String()
    assert nothing != LabelSelector.everything()
    assert nothing.exact_value("x") is None


def test_unvalidated_gt_requirement_matches_nothing() -> None:
    # Kubernetes' Matches refuses a gt/lt whose bound is not one integer.
    assert not LabelSelector((LabelRequirement("x", Operator.GREATER_THAN, ("a",)),)).matches(
        {"x": "5"}
    )
    assert not LabelRequirement("x", Operator.LESS_THAN, ("1", "2")).matches({"x": "0"})


# --------------------------------------------------------------------------- label: requirements


@pytest.mark.parametrize(
    ("key", "operator", "values", "message"),
    [
        (
            "x1",
            "in",
            (),
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "x2",
            "notin",
            (),
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "x5",
            "=",
            ("bar", "foo"),
            'values: Invalid value: ["bar","foo"]: '
            "exact-match compatibility requires one single value",
        ),
        (
            "x8",
            "exists",
            ("foo",),
            'values: Invalid value: ["foo"]: '
            "values set must be empty for exists and does not exist",
        ),
        (
            "x13",
            "gt",
            (),
            "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            "x14",
            "gt",
            ("bar",),
            'values[0]: Invalid value: "bar": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "x15",
            "lt",
            ("bar",),
            'values[0]: Invalid value: "bar": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a" * 254,
            "exists",
            (),
            f'key: Invalid value: "{"a" * 254}": name part must be no more than 63 bytes',
        ),
        (
            "x16",
            "=",
            ("a" * 254,),
            f'values[0][x16]: Invalid value: "{"a" * 254}": must be no more than 63 bytes',
        ),
        ("x17", "=", ("a b",), f'values[0][x17]: Invalid value: "a b": {VALUE_RULE}'),
        (
            "x18",
            "unsupportedOp",
            (),
            'operator: Unsupported value: "unsupportedOp": supported values: "in", "notin", '
            '"=", "==", "!=", "gt", "lt", "exists", "!"',
        ),
        (
            "x19",
            "exists",
            ("<&>",),
            '[values: Invalid value: ["\\u003c\\u0026\\u003e"]: values set must be empty for '
            f'exists and does not exist, values[0][x19]: Invalid value: "<&>": {VALUE_RULE}]',
        ),
        (
            "bad key",
            "in",
            ("ok", "not ok"),
            f'[key: Invalid value: "bad key": name part {NAME_RULE}, '
            f'values[1][bad key]: Invalid value: "not ok": {VALUE_RULE}]',
        ),
    ],
)
def test_label_requirement_create_validates_as_new_requirement(
    key: str, operator: str, values: tuple[str, ...], message: str
) -> None:
    with pytest.raises(BadRequest) as info:
        LabelRequirement.create(key, operator, values)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("key", "operator", "values"),
    [
        ("x3", "in", ("foo",)),
        ("x4", "notin", ("foo",)),
        ("x6", "exists", ()),
        ("x7", "!", ()),
        ("x9", "in", ("bar",)),
        ("x11", "gt", ("1",)),
        ("x12", "lt", ("6",)),
        ("example.com/x", "==", ("",)),
        ("x", "!=", ("a-b_c.d",)),
    ],
)
def test_label_requirement_create_accepts_valid_requirements(
    key: str, operator: str, values: tuple[str, ...]
) -> None:
    requirement = LabelRequirement.create(key, operator, values)
    assert (requirement.key, requirement.operator, requirement.values) == (key, operator, values)


@pytest.mark.parametrize(
    ("requirements", "text"),
    [
        (
            [req("x", "in", "abc", "def"), req("y", "notin", "jkl"), req("z", "exists")],
            "x in (abc,def),y notin (jkl),z",
        ),
        (
            [req("x", "notin", "abc", "def"), req("y", "!=", "jkl"), req("z", "!")],
            "x notin (abc,def),y!=jkl,!z",
        ),
        (
            [req("x", "notin", "abc"), req("y", "in", "jkl", "mno"), req("z", "notin", "")],
            "x notin (abc),y in (jkl,mno),z notin ()",
        ),
        (
            [req("x", "=", "abc"), req("y", "==", "jkl"), req("z", "!=", "a"), req("z", "exists")],
            "x=abc,y==jkl,z!=a,z",
        ),
        ([req("x", "gt", "2"), req("y", "lt", "8"), req("z", "exists")], "x>2,y<8,z"),
        # out of order in, sorted (stably) by key out; values sorted only when rendered
        (
            [req("z", "exists"), req("a", "in", "b", "a", "b"), req("z", "!=", "q")],
            "a in (a,b,b),z,z!=q",
        ),
    ],
)
def test_label_selector_renders_kubernetes_canonical_string(
    requirements: list[LabelRequirement], text: str
) -> None:
    assert str(LabelSelector(tuple(requirements))) == text


@pytest.mark.parametrize(
    ("requirements", "key", "value"),
    [
        ([req("key", "in", "value")], "key", "value"),
        ([req("key", "in", "value", "value2")], "key", None),
        ([req("key", "in", "value", "value1"), req("key2", "in", "value2")], "key2", "value2"),
        ([req("key", "=", "value")], "key", "value"),
        ([req("key", "==", "value")], "key", "value"),
        ([req("key", "!=", "value")], "key", None),
        ([req("key", "in", "value"), req("key2", "in", "value2")], "key", "value"),
        ([req("key", "exists")], "key", None),
        ([req("key", "=", "")], "key", ""),
        ([], "key", None),
        # only the first requirement on the key counts
        ([req("key", "!=", "a"), req("key", "=", "b")], "key", None),
    ],
)
def test_label_selector_exact_value_as_requires_exact_match(
    requirements: list[LabelRequirement], key: str, value: str | None
) -> None:
    assert LabelSelector(tuple(requirements)).exact_value(key) == value


# --------------------------------------------------------------------------- label: from_dict


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"foo": "bar"}}, "foo=bar"),
        (
            {"matchExpressions": [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]},
            "baz in (norf,qux)",
        ),
        (
            {
                "matchLabels": {"foo": "bar"},
                "matchExpressions": [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}],
            },
            "baz in (norf,qux),foo=bar",
        ),
        (
            {
                "matchLabels": {"b": "1", "a": "2"},
                "matchExpressions": [
                    {"key": "c", "operator": "NotIn", "values": ["x"]},
                    {"key": "a", "operator": "Exists"},
                    {"key": "d", "operator": "DoesNotExist", "values": []},
                ],
            },
            "a=2,a,b=1,c notin (x),!d",
        ),
        ({"matchLabels": None, "matchExpressions": None}, ""),
    ],
)
def test_label_selector_from_dict_as_label_selector_as_selector(
    selector: dict[str, object], text: str
) -> None:
    assert str(LabelSelector.from_dict(selector)) == text


def test_label_selector_from_dict_none_selects_nothing_and_empty_everything() -> None:
    assert LabelSelector.from_dict(None) == LabelSelector.nothing()
    assert LabelSelector.from_dict({}) == LabelSelector.everything()
    assert LabelSelector.from_dict({"matchLabels": {}, "matchExpressions": []}).empty()


def test_label_selector_from_dict_matches_like_the_parsed_string() -> None:
    from_dict = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        }
    )
    parsed = LabelSelector.parse("app=web,tier notin (db)")
    assert from_dict == parsed
    for labels in ({"app": "web"}, {"app": "web", "tier": "db"}, {"tier": "fe"}):
        assert from_dict.matches(labels) is parsed.matches(labels)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]},
            'values: Invalid value: ["qux","norf"]: '
            "values set must be empty for exists and does not exist",
        ),
        (
            # a missing list is Go's nil slice, which its error prints as null
            {"matchExpressions": [{"key": "baz", "operator": "In"}]},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "baz", "operator": "NotIn", "values": []}]},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "baz", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "baz", "operator": "in", "values": ["1"]}]},
            '"in" is not a valid label selector operator',
        ),
        ({"matchExpressions": [{"key": "baz"}]}, '"" is not a valid label selector operator'),
        (
            {"matchLabels": {"a b": "c"}},
            f'key: Invalid value: "a b": name part {NAME_RULE}',
        ),
        (
            {"matchLabels": {"a b": "c d"}},
            f'[key: Invalid value: "a b": name part {NAME_RULE}, '
            f'values[0][a b]: Invalid value: "c d": {VALUE_RULE}]',
        ),
        (
            {"matchLabels": {"z": "-", "a": "-"}},  # the first key in sorted order is reported
            f'values[0][a]: Invalid value: "-": {VALUE_RULE}',
        ),
        (
            {"matchExpressions": [{"key": "", "operator": "Exists"}]},
            f'key: Invalid value: "": name part must be non-empty; name part {NAME_RULE}',
        ),
        ({"matchLabels": ["a"]}, "label selector matchLabels must map strings to strings"),
        ({"matchLabels": {"a": 1}}, "label selector matchLabels must map strings to strings"),
        ({"matchExpressions": {"key": "a"}}, "label selector matchExpressions must be a list"),
        ({"matchExpressions": ["a"]}, "label selector matchExpressions items must be objects"),
        (
            {"matchExpressions": [{"key": 1, "operator": "Exists"}]},
            "label selector requirement key and operator must be strings",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": "ab"}]},
            "label selector requirement values must be a list of strings",
        ),
    ],
)
def test_label_selector_from_dict_rejects_with_kubernetes_message(
    selector: dict[str, object], message: str
) -> None:
    with pytest.raises(BadRequest) as info:
        LabelSelector.from_dict(selector)
    assert info.value.message == message


# --------------------------------------------------------------------------- label: value type


def test_label_selectors_are_frozen_hashable_and_compare_by_value() -> None:
    a = LabelSelector.parse("app=web,tier in (fe,be)")
    b = LabelSelector.parse("tier in (be,fe), app=web")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, LabelSelector.everything(), LabelSelector.nothing()}) == 3
    assert LabelSelector.parse("a=b") != LabelSelector.parse("a==b")  # as Kubernetes' DeepEqual
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.requirements = ()  # type: ignore[misc]


def test_label_selector_sorts_requirements_it_is_given() -> None:
    selector = LabelSelector((req("z", "exists"), req("a", "exists")))
    assert [r.key for r in selector.requirements] == ["a", "z"]


def test_label_requirement_constructor_coerces_operator_strings() -> None:
    requirement = LabelRequirement("x", "in", ["a"])  # type: ignore[arg-type]
    assert requirement.operator is Operator.IN
    assert requirement.values == ("a",)
    assert requirement == req("x", "in", "a")


@pytest.mark.parametrize(
    "selector",
    [
        LabelSelector.parse("app in (web,api),tier!=db,!canary,v>1"),
        LabelSelector.nothing(),
        LabelSelector.everything(),
    ],
)
def test_label_selector_survives_pickle(selector: LabelSelector) -> None:
    copy = pickle.loads(pickle.dumps(selector))
    assert copy == selector
    for labels in ({}, {"app": "web", "v": "2"}, {"app": "web", "v": "2", "canary": ""}):
        assert copy.matches(labels) is selector.matches(labels)


def test_label_selector_repr_shows_its_canonical_string() -> None:
    assert repr(LabelSelector.parse("b, a=1")) == "LabelSelector.parse('a=1,b')"
    assert repr(LabelSelector.nothing()) == "LabelSelector.nothing()"


# --------------------------------------------------------------------------- label: properties

KEYS = st.sampled_from(["a", "b", "in", "notin", "example.com/app", "x.y_z-1"])
VALUES = st.sampled_from(["", "a", "b", "in", "0", "7", "12", "A-b_c.d"])
NUMBERS = st.integers(min_value=0, max_value=20).map(str)


@st.composite
def requirements(draw: st.DrawFn) -> LabelRequirement:
    key = draw(KEYS)
    operator = draw(st.sampled_from(list(Operator)))
    if operator in (Operator.IN, Operator.NOT_IN):
        values = tuple(sorted(set(draw(st.lists(VALUES, min_size=1, max_size=3)))))
    elif operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
        values = (draw(NUMBERS),)
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        values = ()
    else:
        values = (draw(VALUES),)
    return LabelRequirement.create(key, operator, values)


LABELS = st.dictionaries(KEYS, st.one_of(VALUES, NUMBERS, st.just("-3")), max_size=4)


def reference_match(requirement: LabelRequirement, labels: Mapping[str, str]) -> bool:
    """Kubernetes' matching rules written out longhand, one operator at a time."""
    present = requirement.key in labels
    value = labels.get(requirement.key)
    op = requirement.operator
    if op is Operator.EXISTS:
        return present
    if op is Operator.DOES_NOT_EXIST:
        return not present
    if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
        return present and value in requirement.values
    if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
        return not present or value not in requirement.values
    if not present or value is None:
        return False
    try:
        number = int(value)
    except ValueError:
        return False
    bound = int(requirement.values[0])
    return number > bound if op is Operator.GREATER_THAN else number < bound


@settings(max_examples=200, deadline=None)
@given(st.lists(requirements(), max_size=5), LABELS)
def test_label_selector_round_trips_and_matches_like_the_reference(
    reqs: list[LabelRequirement], labels: dict[str, str]
) -> None:
    selector = LabelSelector(tuple(reqs))
    assert LabelSelector.parse(str(selector)) == selector
    expected = all(reference_match(r, labels) for r in reqs)
    assert selector.matches(labels) is expected


# --------------------------------------------------------------------------- field: parsing


@pytest.mark.parametrize("text", ["x=a,y=b,z=c", "", "x!=a,y=b", r"x=a||y\=b", r"x=a\=\=b"])
def test_field_parse_accepts_and_restrings_kubernetes_good_strings(text: str) -> None:
    assert str(FieldSelector.parse(text)) == text


def test_field_parse_is_deterministic_whatever_the_term_order() -> None:
    assert str(FieldSelector.parse("x=a,a=x")) == str(FieldSelector.parse("a=x,x=a")) == "a=x,x=a"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=avalue", [("a", "=", "avalue")]),
        ("a=avalue,b=bvalue", [("a", "=", "avalue"), ("b", "=", "bvalue")]),
        (
            "a=avalue,b==bvalue,c!=cvalue",
            [("a", "=", "avalue"), ("b", "=", "bvalue"), ("c", "!=", "cvalue")],
        ),
        ("a=a,", [("a", "=", "a")]),
        (",a=a", [("a", "=", "a")]),
        (",,", []),
        # (sorted by text: "k2=..." before "k=...")
        (r"k=\,,k2=v2", [("k2", "=", "v2"), ("k", "=", ",")]),
        (r"k=\\,k2=v2", [("k2", "=", "v2"), ("k", "=", "\\")]),
        (r"k=\\\,,k2=v2", [("k2", "=", "v2"), ("k", "=", "\\,")]),
        (r"k=\=", [("k", "=", "=")]),
        ("함=수,목=록", [("목", "=", "록"), ("함", "=", "수")]),
        # no trimming: blanks belong to the field and the value
        ("a = b", [("a ", "=", " b")]),
        # the first operator splits; the field itself has no escapes
        ("a!b=c", [("a!b", "=", "c")]),
        ("a\\=b", [("a\\", "=", "b")]),
        # "=" alone (no field, no value) is dropped; an empty field or value alone is kept
        ("=", []),
        ("!=", []),
        ("==,a=b", [("a", "=", "b")]),
        ("a=", [("a", "=", "")]),
        ("=b", [("", "=", "b")]),
        # terms sort by their text: "!" sorts before "="
        ("b=1,b!=1", [("b", "!=", "1"), ("b", "=", "1")]),
        # the same term twice is accepted (kr8s sends metadata.name=x,metadata.name=x)
        (
            "metadata.name=nope,metadata.name=nope",
            [("metadata.name", "=", "nope"), ("metadata.name", "=", "nope")],
        ),
    ],
)
def test_field_parse_splits_terms_as_kubernetes(
    text: str, expected: list[tuple[str, str, str]]
) -> None:
    got = [(r.field, r.operator.value, r.value) for r in FieldSelector.parse(text).requirements]
    assert got == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("x==a==b", "invalid field selector: unescaped character in value: 61"),
        ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
        ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
        ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
        ("x", "invalid selector: 'x'; can't understand 'x'"),
        # terms are checked in sorted order
        ("z,a", "invalid selector: 'z,a'; can't understand 'a'"),
        (r"k=\a\b\\", r"invalid field selector: invalid escape sequence: \a"),
        (r"k=\\\\" + "\\", "invalid field selector: invalid escape sequence: \\"),
        ("k=\\", "invalid field selector: invalid escape sequence: \\"),
        (r"k=\ ", "invalid field selector: invalid escape sequence: \\ "),
    ],
)
def test_field_parse_rejects_with_kubernetes_message(text: str, message: str) -> None:
    assert field_parse_error(text) == message


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("", ""),
        ("a", "a"),
        ("=", r"\="),
        (",", r"\,"),
        ("\\", "\\\\"),
        ("\\=\\,\\", r"\\\=\\\,\\"),
    ],
)
def test_escape_field_value_as_kubernetes_escape_value(raw: str, escaped: str) -> None:
    assert escape_field_value(raw) == escaped
    assert FieldSelector.parse(f"f={escaped}").requirements[0].value == raw


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1), st.sampled_from(["=", "!="]))
def test_field_values_round_trip_through_escaping(value: str, operator: str) -> None:
    selector = FieldSelector.parse(f"spec.x{operator}{escape_field_value(value)}")
    assert [(r.field, r.operator.value, r.value) for r in selector.requirements] == [
        ("spec.x", operator, value)
    ]
    assert FieldSelector.parse(str(selector)) == selector


# --------------------------------------------------------------------------- field: matching


FIELDSET = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {"x": "y"}, True),
        ("x=y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("foo=bar", FIELDSET, True),
        ("baz=blah", FIELDSET, True),
        ("foo=bar,baz=blah", FIELDSET, True),
        (r"foo=bar,baz=blah,complex=\=value\\\,\\", FIELDSET, True),
        ("foo=blah", FIELDSET, False),
        ("baz=bar", FIELDSET, False),
        ("foo=bar,foobar=bar,baz=blah", FIELDSET, False),
        # an absent field is the empty string
        ("spec.nodeName=", {}, True),
        ("spec.nodeName!=", {}, False),
        ("spec.nodeName!=node1", {}, True),
        ("spec.nodeName=node1", {}, False),
        ("a=1,b=2,c=3", {"a": "1", "b": "2", "c": "3"}, True),
        ("a=1,b=2,c=3", {"a": "1", "b": "2", "c": "4"}, False),
    ],
)
def test_field_selector_matches_as_kubernetes(
    text: str, fields: dict[str, str], expected: bool
) -> None:
    assert FieldSelector.parse(text).matches(fields) is expected


def test_field_everything_matches_all_and_is_empty() -> None:
    everything = FieldSelector.everything()
    assert everything.empty()
    assert everything.matches({})
    assert everything == FieldSelector.parse("")
    assert not FieldSelector.parse("a=").empty()


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("", "test", None),
        ("a=b", "test", None),
        ("test=b", "test", "b"),
        ("test=", "test", ""),
        ("test!=b", "test", None),
        ("test!=", "test", None),
        ("a=,test=b", "test", "b"),
        ("metadata.name!=x,metadata.name=y", "metadata.name", "y"),
        ("metadata.name=a,metadata.name=b", "metadata.name", "a"),
        ("metadata.name==n,metadata.namespace=ns", "metadata.namespace", "ns"),
    ],
)
def test_field_selector_exact_value_as_requires_exact_match(
    text: str, field: str, value: str | None
) -> None:
    assert FieldSelector.parse(text).exact_value(field) == value


def test_field_selector_lists_the_fields_it_uses() -> None:
    selector = FieldSelector.parse("spec.nodeName!=,metadata.name=a,metadata.name!=b")
    assert selector.fields == ("metadata.name", "spec.nodeName")
    assert FieldSelector.everything().fields == ()


def identity(field: str, value: str) -> tuple[str, str]:
    return field, value


def rename_a(field: str, value: str) -> tuple[str, str]:
    return ("e", "f") if field == "a" else (field, value)


def drop_all(field: str, value: str) -> tuple[str, str]:
    return "", ""


def drop_c(field: str, value: str) -> tuple[str, str]:
    return ("", "") if field == "c" else (field, value)


@pytest.mark.parametrize(
    ("text", "convert", "result", "empty"),
    [
        ("", identity, "", True),
        ("a=b,c=d", identity, "a=b,c=d", False),
        ("a=b,c=d", rename_a, "e=f,c=d", False),
        ("a=b", drop_all, "", True),
        ("a=b,c=d,e=f", drop_c, "a=b,e=f", False),
    ],
)
def test_field_selector_transform_as_kubernetes(
    text: str, convert: object, result: str, empty: bool
) -> None:
    transformed = FieldSelector.parse(text).transform(convert)  # type: ignore[arg-type]
    assert str(transformed) == result
    assert transformed.empty() is empty


def test_field_selector_transform_lets_field_label_errors_through() -> None:
    def supported_only(field: str, value: str) -> tuple[str, str]:
        if field not in ("metadata.name", "metadata.namespace"):
            raise BadRequest(f"field label not supported: {field}")
        return field, value

    selector = FieldSelector.parse("metadata.name=a,spec.foo=b")
    with pytest.raises(BadRequest, match=r"^field label not supported: spec\.foo$"):
        selector.transform(supported_only)


# --------------------------------------------------------------------------- field: value type


def test_field_selectors_are_frozen_hashable_and_compare_by_value() -> None:
    a = FieldSelector.parse("metadata.name==a,spec.nodeName!=")
    b = FieldSelector.parse("spec.nodeName!=,metadata.name=a")
    assert a == b  # "==" and "=" are one requirement
    assert hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.requirements = ()  # type: ignore[misc]
    assert repr(a) == "FieldSelector.parse('metadata.name=a,spec.nodeName!=')"


def test_field_selector_survives_pickle() -> None:
    selector = FieldSelector.parse(r"metadata.name=a\,b,spec.nodeName!=")
    copy = pickle.loads(pickle.dumps(selector))
    assert copy == selector
    assert copy.matches({"metadata.name": "a,b", "spec.nodeName": "n"})


def test_field_requirement_accepts_only_equality_operators() -> None:
    assert FieldRequirement("a", Operator.DOUBLE_EQUALS, "b").operator is Operator.EQUALS
    assert FieldRequirement("a", "!=", "b").operator is Operator.NOT_EQUALS  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only = and !="):
        FieldRequirement("a", Operator.IN, "b")
    assert FieldRequirement("a", Operator.NOT_EQUALS, "b").matches({})
