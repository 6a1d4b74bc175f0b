"""CEL semantics and Kubernetes' CEL libraries, evaluated through a rule on a schema node."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.cel import compile_schema_rules

# A typed node, bounded so that Kubernetes' static cost estimate accepts the rules below.
NODE_PROPERTIES: dict[str, Any] = {
    "min": {"type": "integer"},
    "max": {"type": "integer"},
    "one": {"type": "integer"},
    "name": {"type": "string", "maxLength": 64},
    "bad": {"type": "string", "maxLength": 64},
    "items": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 16}},
}


def node_rules(rule: str) -> Any:
    node = {
        "type": "object",
        "properties": NODE_PROPERTIES,
        "x-kubernetes-validations": [{"rule": rule}],
    }
    rules = compile_schema_rules({"type": "object", "properties": {"v": node}})
    assert rules.errors == [], rules.errors
    return rules


def holds(rule: str, value: dict[str, Any]) -> bool:
    """True when the rule passes with ``self`` = ``value`` (compile errors fail the test)."""
    causes = node_rules(rule).validate({"v": value})
    assert all("evaluating rule" not in c.message for c in causes), causes
    return causes == []


@pytest.mark.parametrize(
    "rule",
    [
        "self.min <= self.max",
        "has(self.min) && !has(self.one)",
        "self.items.all(x, x.startsWith('a'))",
        "self.items.exists_one(x, x == 'a1')",
        "self.items.map(x, x + '!') == ['a1!', 'a2!']",
        "self.items.filter(x, x != 'a1') == ['a2']",
        "size(self.items) < 10 && size('héllo') == 5",
        "self.name.matches('^a+bc$')",
        "'a1' in self.items && !('zz' in self.items)",
        "{'a': 1} == {'a': 1} && [dyn(1), dyn('a')] == [dyn(1), dyn('a')]",
        "7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1 && 7.0 / 2.0 == 3.5",
        "1u + 2u == 3u && uint(1) == 1u && type(1) == int",
        "int('12') + 1 == 13 && string(12) == '12' && double(1) == 1.0 && string(1.5) == '1.5'",
        "duration('1h') == duration('60m')",
        "timestamp('2020-01-01T00:00:00Z') < timestamp('2021-01-01T00:00:00Z')",
        "self.?min.orValue(9) == 1 && self.?one.orValue(9) == 9",
        "optional.of(1).hasValue() && !optional.none().hasValue()",
        "self.name.lowerAscii() == 'abc' && 'abc'.upperAscii() == 'ABC'",
        "'a,b'.split(',') == ['a', 'b'] && 'hello'.substring(1, 3) == 'el'",
        "'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3 && 'hello'.charAt(1) == 'e'",
        "' x '.trim() == 'x' && self.items.join('-') == 'a1-a2'",
        "'hello'.replace('l', 'L') == 'heLLo'",
        "strings.quote('a\"b') == '\"a\\\\\"b\"'",
        "[1, 2, 3].sum() == 6 && [1, 2, 3].isSorted() && ![3, 1].isSorted()",
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3",
        "'abc 123 def 456'.find('[0-9]+') == '123'",
        "'abc 123 def 456'.findAll('[0-9]+') == ['123', '456']",
        "'abc 123 def 456'.findAll('[0-9]+', 1) == ['123']",
        "quantity('1Gi').isGreaterThan(quantity('1G'))",
        "quantity('500m').isLessThan(quantity('1'))",
        "quantity('1.5').add(quantity('500m')).asInteger() == 2 && isQuantity('10Mi')",
        "!isQuantity('ten') && quantity('2').compareTo(quantity('2000m')) == 0",
        "url('https://example.com:8080/a/b?x=1&x=2').getHost() == 'example.com:8080'",
        "url('https://example.com:8080/p').getHostname() == 'example.com'",
        "url('https://example.com:8080/p').getPort() == '8080'",
        "url('https://example.com/a/b').getEscapedPath() == '/a/b'",
        "url('https://example.com/?x=1&x=2').getQuery() == {'x': ['1', '2']}",
        "isURL('https://example.com') && !isURL('not a url') && url('/p').getScheme() == ''",
        "ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && isIP('1.2.3.4')",
        "!isIP('1.2.3') && ip.isCanonical('10.0.0.1') && !ip.isCanonical('2001:DB8::1')",
        "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP('11.0.0.1')",
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && cidr('10.1.2.3/8').prefixLength() == 8",
        "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0')",
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.2.3').major() == 1",
        "isSemver('1.2.3-alpha') && !isSemver('1.2') && isSemver('v1.2', true)",
        "!format.dns1123Label().validate('my-name').hasValue()",
        "format.dns1123Label().validate('My_Name').hasValue()",
    ],
)
def test_expression_holds(rule: str) -> None:
    value = {"min": 1, "max": 3, "name": "abc", "items": ["a1", "a2"]}
    assert holds(rule, value)


@pytest.mark.parametrize(
    ("rule", "error"),
    [
        ("9223372036854775807 + self.one > 0", "integer overflow"),
        ("1 / (self.one - 1) > 0", "division by zero"),
        ("self.min == 1", "no such key: min"),
        ("[1][self.one] == 1", "index out of bounds: 1"),
        ("quantity(self.bad).sign() == 1", "quantities must match the regular expression"),
    ],
)
def test_runtime_errors_have_cel_go_texts(rule: str, error: str) -> None:
    [cause] = node_rules(rule).validate({"v": {"one": 1, "bad": "x"}})
    assert error in cause.message
    assert cause.message.endswith(f"evaluating rule: {rule}")


def test_errors_are_absorbed_by_logical_operators() -> None:
    assert holds("self.min == 1 || true", {})
    assert not holds("self.min == 2 && self.max == 1", {"min": 1})


@pytest.mark.parametrize(
    "rule",
    [
        "[1, 2, 3, 2].indexOf(2) == 1 && [1, 2, 3, 2].lastIndexOf(2) == 3",
        "self.items.indexOf('a2') == 1 && [1, 2].reverse() == [2, 1]",
        "sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])",
        "sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2, 5])",
        "[1, 2, 3].slice(1, 3) == [2, 3] && [[1], [2, 3]].flatten() == [1, 2, 3]",
    ],
)
def test_lists_and_sets_libraries(rule: str) -> None:
    assert holds(rule, {"items": ["a1", "a2"]})


def test_values_take_the_cel_type_their_schema_declares() -> None:
    props = {
        "ratio": {"type": "number"},
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "timeout": {"type": "string", "format": "duration"},
        "data": {"type": "string", "format": "byte", "maxLength": 16},
        "weights": {"type": "array", "maxItems": 4, "items": {"type": "number"}},
    }
    rule = (
        "type(self.ratio) == double && self.when > timestamp('2020-01-01T00:00:00Z')"
        " && self.day == timestamp('2024-02-03T00:00:00Z') && self.timeout < duration('1h')"
        " && self.data == b'hello' && self.weights.all(w, type(w) == double)"
    )
    node = {"type": "object", "properties": props, "x-kubernetes-validations": [{"rule": rule}]}
    rules = compile_schema_rules({"type": "object", "properties": {"v": node}})
    assert rules.errors == []
    value = {
        "ratio": 1,
        "when": "2024-05-06T07:08:09Z",
        "day": "2024-02-03",
        "timeout": "30m",
        "data": "aGVsbG8=",
        "weights": [1, 2.5],
    }
    assert rules.validate({"v": value}) == []
    assert len(rules.validate({"v": {**value, "timeout": "2h"}})) == 1


@pytest.mark.parametrize(
    "rule",
    [
        # Kubernetes' schema/cel validation_test.go ("unicode strings" and "numbers").
        "'%d %s %f %s %s'.format([1, 'abc', 1.0, duration('1m'), "
        "timestamp('2000-01-01T00:00:00.000Z')]) == '1 abc 1.000000 60s 2000-01-01T00:00:00Z'",
        "'%e'.format([3.14]) == '3.140000\u00d710\u2070\u2070'",
        "'%o %o %o'.format([7, 8, 9]) == '7 10 11'",
        "'%b %b %b'.format([7, 8, 9]) == '111 1000 1001'",
        "5 < 10.0 && 15 > 10.0 && self.min < 10.0 && 1 < 2u",
    ],
)
def test_format_and_cross_type_comparisons(rule: str) -> None:
    assert holds(rule, {"min": 1})


@pytest.mark.parametrize(
    "rule",
    [
        "timestamp('2024-05-06T07:08:09Z').getHours() == 7",
        "timestamp('2024-05-06T07:08:09Z').getHours('+02:00') == 9",
        "timestamp('2024-05-06T07:08:09Z').getDayOfWeek() == 1",
        "timestamp('2024-05-06T07:08:09Z').getMonth() == 4",
        "timestamp('2024-05-06T07:08:09Z').getDate() == 6",
        "timestamp('2024-05-06T07:08:09Z').getDayOfMonth() == 5",
        "timestamp('2024-01-01T00:00:00Z').getFullYear('America/Los_Angeles') == 2023",
        "duration('3h20m').getHours() == 3 && duration('3h20m').getMinutes() == 200",
        "self.?min.orValue(0) == 1 && !self.?one.hasValue()",
    ],
)
def test_time_accessors_and_optional_chaining(rule: str) -> None:
    assert holds(rule, {"min": 1})


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("héllo", "^h.llo$"),
        ("héllo", "é"),
        ("abc", "^b"),
        ("", "^$"),
        ("a\nb", "^b"),
        ("日本語テキスト", "本.テ"),
        ("x" * 300, "x{3}$"),
        ("bench-object-000123", "^[a-z0-9-]+$"),
    ],
)
def test_matches_agrees_with_a_full_regex_search(text: str, pattern: str) -> None:
    from kstore.api.cel._stdlib import regex

    # `matches` asks RE2 for a yes/no answer only; it must agree with the full search.
    expected = regex(pattern).search(text) is not None
    assert holds(f"self.name.matches({pattern!r})", {"name": text}) is expected
