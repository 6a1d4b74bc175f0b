"""Label selectors (``pkg/labels``, ``LabelSelectorAsSelector``): requirements, parsing, matching.

The language: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a`` (exists),
``!a`` (does not exist), ``a>5``, ``a<5``; a comma is AND. Keys must be qualified names and
values label values (the rules of :mod:`kstore.api.validation.names`). ``in``/``notin``/``!=``
match an absent label; ``>``/``<`` need the label to be a base-10 int64. A selector is also built
from a ``metav1.LabelSelector`` dict (:meth:`LabelSelector.from_dict`: ``{}`` selects
everything, ``None`` nothing).

Invariants:

* requirements and selectors are frozen and hashable, and compare equal exactly when
  Kubernetes' would (``a=b`` and ``a==b`` are different requirements);
* a selector keeps its requirements sorted by key (stably), so ``str()`` is the canonical
  string Kubernetes renders;
* each requirement compiles once into a :data:`~kstore.api._selection.Check`; ``matches`` only
  calls those closures;
* every syntax or validation problem raises :class:`~kstore.errors.BadRequest` carrying the
  message Kubernetes' parser returns, bad values rendered as Go renders them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Final

from kstore.api._selection import Check, Operator, all_of, never
from kstore.api.validation._render import go_json, go_quote
from kstore.api.validation.names import is_label_value, is_qualified_name
from kstore.errors import BadRequest

__all__ = ["LabelRequirement", "LabelSelector"]

_SUPPORTED_OPERATORS: Final = ", ".join(f'"{op.value}"' for op in Operator)
_OPERATORS_BY_VALUE: Final = {op.value: op for op in Operator}
# Kubernetes lists the binary operators in this order when the parser wants an operator.
_BINARY_OPERATORS: Final = "in, notin, =, ==, !=, gt, lt"

# ---------------------------------------------------------------------------------------------
# Go renderings and label rules, from kstore.api.validation, adapted for lone surrogates.
#
# Selectors have always treated a lone surrogate (U+D800..U+DFFF: an embedding Python caller
# can pass one; the REST query string and orjson never decode to one) differently from
# validation:
#
#   Go's %q       here U+DC80..U+DCFF print as the byte \xNN they escape and the others as the
#                 text \ufffd; validation prints a literal U+FFFD
#   json.Marshal  here the surrogate is left as it is; validation prints a literal U+FFFD
#   byte length   here 3 bytes each (surrogatepass); validation counts 1 for U+DC80..U+DCFF
#
# The adapters keep selectors' rendering: a string without surrogates goes to validation as it
# is, and only the surrogates themselves are handled here. They reduce to direct calls once
# both modules follow one rule.

_SURROGATE: Final = re.compile("([\ud800-\udfff])")
# Stands in for a surrogate in rule checks: also 3 UTF-8 bytes, also matched by no rule's regex.
_THREE_BYTE_STAND_IN: Final = "\u0800"


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _quote_surrogate(char: str) -> str:
    code = ord(char)
    # U+DC80..U+DCFF is a raw byte smuggled in by surrogateescape: Go prints such a byte as \xNN.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\\ufffd"


def _go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` prints it (validation's ``go_quote``)."""
    if not _has_surrogate(text):
        return go_quote(text)
    # split() with a group puts the surrogates at the odd indexes; %q works character by
    # character, so quoting the pieces apart and dropping their quotes is quoting the whole.
    pieces = _SURROGATE.split(text)
    inner = (_quote_surrogate(p) if i % 2 else go_quote(p)[1:-1] for i, p in enumerate(pieces))
    return '"' + "".join(inner) + '"'


def _json_string_keeping_surrogates(text: str) -> str:
    pieces = _SURROGATE.split(text)
    return '"' + "".join(p if i % 2 else go_json(p)[1:-1] for i, p in enumerate(pieces)) + '"'


def _go_json(value: object) -> str:
    """``value`` as Go's ``json.Marshal`` prints it (validation's ``go_json``).

    Values are strings or tuples of strings; anything else a caller slipped past the types
    (``create("a", None)``) still renders rather than raising.
    """
    if isinstance(value, str):
        return _json_string_keeping_surrogates(value) if _has_surrogate(value) else go_json(value)
    if isinstance(value, tuple) and any(isinstance(t, str) and _has_surrogate(t) for t in value):
        return "[" + ",".join(_json_string_keeping_surrogates(text) for text in value) + "]"
    return go_json(value)


def _without_surrogates(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub(_THREE_BYTE_STAND_IN, text)


def _label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a label key (a qualified name); empty when it is one."""
    return is_qualified_name(_without_surrogates(key))


def _label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a label value; empty when it is one."""
    return is_label_value(_without_surrogates(value))


# ---------------------------------------------------------------------------------------------
# Error texts and numbers as Kubernetes' Go code produces them.


def _invalid(path: str, rendered_value: str, detail: str) -> str:
    """The text of a ``field.Invalid`` error whose value is already rendered.

    Not ``validation.field.invalid``: that one renders the value itself, without the surrogate
    rule above.
    """
    return f"{path}: Invalid value: {rendered_value}: {detail}"


def _aggregate(messages: Sequence[str]) -> str:
    """The text of ``field.ErrorList.ToAggregate()``: duplicates dropped, brackets for many."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign, ASCII digits, int64 range."""
    if text.isascii() and text.isdigit():  # the usual label, unsigned: a third off gt/lt matching
        value = int(text)
        return value if value <= _INT64_MAX else None
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


# ---------------------------------------------------------------------------------------------
# Label requirements and selectors.


def _compile_label_check(key: str, operator: Operator, values: tuple[str, ...]) -> Check:
    # Absent labels read as None, which equals no value and is in no value set: that gives
    # Kubernetes' "in/= need the label, notin/!= match without it" for free.
    if operator in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
        if len(values) == 1:
            only = values[0]
            return lambda labels: labels.get(key) == only
        allowed = frozenset(values)
        return lambda labels: labels.get(key) in allowed
    if operator in (Operator.NOT_IN, Operator.NOT_EQUALS):
        if len(values) == 1:
            only = values[0]
            return lambda labels: labels.get(key) != only
        excluded = frozenset(values)
        return lambda labels: labels.get(key) not in excluded
    if operator is Operator.EXISTS:
        return lambda labels: key in labels
    if operator is Operator.DOES_NOT_EXIST:
        return lambda labels: key not in labels
    bound = _parse_int64(values[0]) if len(values) == 1 else None
    if bound is None:  # only reachable by bypassing validation; Kubernetes then matches nothing
        return never
    greater = operator is Operator.GREATER_THAN

    def compare(labels: Mapping[str, str]) -> bool:
        raw = labels.get(key)
        if raw is None:
            return False
        number = _parse_int64(raw)
        if number is None:
            return False
        return number > bound if greater else number < bound

    return compare


class _RequirementError(Exception):
    """A requirement Kubernetes would refuse; the message is its aggregate error text."""


_GO_EMPTY_SLICE: Final = "[]"
_GO_NIL_SLICE: Final = "null"


def _new_label_requirement(
    key: str, operator: str, values: tuple[str, ...], *, empty_values: str = _GO_EMPTY_SLICE
) -> LabelRequirement:
    """Validate like ``labels.NewRequirement`` (no field path) and build the requirement.

    ``empty_values`` is how Go prints an empty value list in an error: a caller that passes a
    nil slice (``LabelSelectorAsSelector``) gets ``null``, the parser's empty slice ``[]``.
    """
    errors: list[str] = []
    key_errors = _label_key_errors(key)
    if key_errors:
        errors.append(_invalid("key", _go_quote(key), "; ".join(key_errors)))

    def bad_values(detail: str) -> str:
        # Rendered only on error: a valid requirement, the common case, never pays for it.
        return _invalid("values", _go_json(values) if values else empty_values, detail)

    op = _OPERATORS_BY_VALUE.get(operator)
    if op in (Operator.IN, Operator.NOT_IN):
        if not values:
            errors.append(bad_values("for 'in', 'notin' operators, values set can't be empty"))
    elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(values) != 1:
            errors.append(bad_values("exact-match compatibility requires one single value"))
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            errors.append(bad_values("values set must be empty for exists and does not exist"))
    elif op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        if len(values) != 1:
            errors.append(bad_values("for 'Gt', 'Lt' operators, exactly one value is required"))
        for index, value in enumerate(values):
            if _parse_int64(value) is None:
                errors.append(
                    _invalid(
                        f"values[{index}]",
                        _go_quote(value),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        # selection.Operator is a named string type, so Go prints it through json.Marshal.
        errors.append(
            f"operator: Unsupported value: {_go_json(operator)}: "
            f"supported values: {_SUPPORTED_OPERATORS}"
        )
    for index, value in enumerate(values):
        value_errors = _label_value_errors(value)
        if value_errors:
            errors.append(
                _invalid(f"values[{index}][{key}]", _go_quote(value), "; ".join(value_errors))
            )
    if errors or op is None:
        raise _RequirementError(_aggregate(errors))
    return LabelRequirement(key, op, values)


@dataclass(frozen=True, slots=True, repr=False)
class LabelRequirement:
    """One term of a label selector: ``key``, an operator and its values.

    The constructor trusts its input (as a Go ``Requirement`` literal does); use :meth:`create`
    for Kubernetes' validation. ``values`` keep the order given (the parser sorts and
    de-duplicates them, as Kubernetes' does).
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()
    _check: Check = dataclass_field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "operator", Operator(self.operator))
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(
            self, "_check", _compile_label_check(self.key, self.operator, self.values)
        )

    @classmethod
    def create(cls, key: str, operator: str, values: Iterable[str] = ()) -> LabelRequirement:
        """A validated requirement, as ``labels.NewRequirement``; BadRequest with its message."""
        try:
            return _new_label_requirement(key, operator, tuple(values))
        except _RequirementError as error:
            raise BadRequest(str(error)) from None

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self._check(labels)

    def __str__(self) -> str:
        operator = self.operator
        if operator is Operator.EXISTS:
            return self.key
        if operator is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if operator is Operator.IN:
            return f"{self.key} in ({values})"
        if operator is Operator.NOT_IN:
            return f"{self.key} notin ({values})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(operator, operator)
        return f"{self.key}{symbol}{values}"

    def __repr__(self) -> str:
        return f"LabelRequirement({self.key!r}, {self.operator.name}, {self.values!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # The compiled closure cannot be pickled; rebuild it from the public fields.
        return (type(self), (self.key, self.operator, self.values))


_EXPRESSION_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


@dataclass(frozen=True, slots=True, repr=False)
class LabelSelector:
    """An AND of label requirements, or the selector that matches nothing.

    ``requirements`` are kept sorted by key. :meth:`everything` (no requirements) matches every
    object and is :meth:`empty`; :meth:`nothing` matches none, is not empty, and renders as
    ``""`` like Kubernetes' ``labels.Nothing()``.
    """

    requirements: tuple[LabelRequirement, ...] = ()
    matches_nothing: bool = False
    _match: Check = dataclass_field(init=False, compare=False)

    def __post_init__(self) -> None:
        requirements = () if self.matches_nothing else self.requirements
        ordered = tuple(sorted(requirements, key=lambda r: r.key))
        object.__setattr__(self, "requirements", ordered)
        check = never if self.matches_nothing else all_of([r._check for r in ordered])
        object.__setattr__(self, "_match", check)

    @classmethod
    def everything(cls) -> LabelSelector:
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        return cls(matches_nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse Kubernetes' label selector syntax; BadRequest with Kubernetes' message."""
        return cls(tuple(_LabelParser(text).parse()))

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        """From a ``metav1.LabelSelector`` (``matchLabels``, ``matchExpressions``).

        ``None`` selects nothing and ``{}`` everything, as ``LabelSelectorAsSelector``. Errors
        are BadRequest with its messages (without the parser's ``unable to parse requirement``).
        """
        if selector is None:
            return cls.nothing()
        if not isinstance(selector, Mapping):
            raise BadRequest("label selector must be an object")
        match_labels = selector.get("matchLabels") or {}
        match_expressions = selector.get("matchExpressions") or []
        if not isinstance(match_labels, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items()
        ):
            raise BadRequest("label selector matchLabels must map strings to strings")
        if not isinstance(match_expressions, list):
            raise BadRequest("label selector matchExpressions must be a list")
        if not match_labels and not match_expressions:
            return cls.everything()
        requirements: list[LabelRequirement] = []
        try:
            # Go walks the map in random order; sorted keys make the reported error stable.
            for key in sorted(match_labels):
                requirements.append(
                    _new_label_requirement(key, Operator.EQUALS, (match_labels[key],))
                )
            for expression in match_expressions:
                key, operator, values = _expression_parts(expression)
                op = _EXPRESSION_OPERATORS.get(operator)
                if op is None:
                    raise BadRequest(
                        f"{_go_quote(operator)} is not a valid label selector operator"
                    )
                requirements.append(
                    _new_label_requirement(key, op, values, empty_values=_GO_NIL_SLICE)
                )
        except _RequirementError as error:
            raise BadRequest(str(error)) from None
        return cls(tuple(requirements))

    def empty(self) -> bool:
        """True when the selector does not restrict anything (``nothing()`` is not empty)."""
        return not self.requirements and not self.matches_nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self._match(labels)

    def exact_value(self, key: str) -> str | None:
        """The value ``key`` must have, as Kubernetes' ``RequiresExactMatch``.

        Only the first requirement on ``key`` counts; it must be ``=``, ``==`` or a one-value
        ``in``.
        """
        for requirement in self.requirements:
            if requirement.key == key:
                if len(requirement.values) == 1 and requirement.operator in (
                    Operator.EQUALS,
                    Operator.DOUBLE_EQUALS,
                    Operator.IN,
                ):
                    return requirement.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        if self.matches_nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector.parse({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.requirements, self.matches_nothing))


def _expression_parts(expression: object) -> tuple[str, str, tuple[str, ...]]:
    """``key``, ``operator`` and ``values`` of one ``LabelSelectorRequirement`` dict."""
    if not isinstance(expression, Mapping):
        raise BadRequest("label selector matchExpressions items must be objects")
    key = expression.get("key") or ""
    operator = expression.get("operator") or ""
    values = expression.get("values") or []
    if not isinstance(key, str) or not isinstance(operator, str):
        raise BadRequest("label selector requirement key and operator must be strings")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise BadRequest("label selector requirement values must be a list of strings")
    return key, operator, tuple(values)


# ---------------------------------------------------------------------------------------------
# The label selector lexer and parser (the grammar of labels.Parse).


class _Token(enum.Enum):
    END = enum.auto()
    IDENTIFIER = enum.auto()
    IN = enum.auto()
    NOT_IN = enum.auto()
    OPEN_PAREN = enum.auto()
    CLOSE_PAREN = enum.auto()
    COMMA = enum.auto()
    NOT = enum.auto()
    EQUALS = enum.auto()
    DOUBLE_EQUALS = enum.auto()
    NOT_EQUALS = enum.auto()
    GREATER_THAN = enum.auto()
    LESS_THAN = enum.auto()


_SYMBOL_TOKENS: Final = {
    "(": _Token.OPEN_PAREN,
    ")": _Token.CLOSE_PAREN,
    ",": _Token.COMMA,
    "!": _Token.NOT,
    "=": _Token.EQUALS,
    "==": _Token.DOUBLE_EQUALS,
    "!=": _Token.NOT_EQUALS,
    ">": _Token.GREATER_THAN,
    "<": _Token.LESS_THAN,
}
_KEYWORD_TOKENS: Final = {"in": _Token.IN, "notin": _Token.NOT_IN}
_OPERATOR_TOKENS: Final = {
    _Token.IN: Operator.IN,
    _Token.NOT_IN: Operator.NOT_IN,
    _Token.EQUALS: Operator.EQUALS,
    _Token.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    _Token.NOT_EQUALS: Operator.NOT_EQUALS,
    _Token.GREATER_THAN: Operator.GREATER_THAN,
    _Token.LESS_THAN: Operator.LESS_THAN,
}
_SPECIAL: Final = frozenset("=!(),><")
_BLANK: Final = frozenset(" \t\r\n")
_NUL: Final = "\x00"
_Item = tuple[_Token, str]


def _lex(text: str) -> list[_Item]:
    """The tokens of a label selector, ending with one END token.

    Kubernetes' lexer reads byte 0 as its end-of-input mark, and after each token it reads one
    character more, keeping it only when it is that 0. So a NUL where a token would start ends
    the input, and a NUL right after a token is skipped. Both are kept here.
    """
    items: list[_Item] = []
    length = len(text)
    pos = 0
    while True:
        while pos < length and text[pos] in _BLANK:
            pos += 1
        if pos >= length or text[pos] == _NUL:
            items.append((_Token.END, ""))
            return items
        char = text[pos]
        if char in _SPECIAL:
            # The longest symbol wins; only "==" and "!=" are two characters long.
            width = 2 if char in "=!" and text.startswith("=", pos + 1) else 1
            literal = text[pos : pos + width]
            items.append((_SYMBOL_TOKENS[literal], literal))
            pos += width
        else:
            start = pos
            while pos < length:
                char = text[pos]
                if char in _SPECIAL or char in _BLANK or char == _NUL:
                    break
                pos += 1
            literal = text[start:pos]
            items.append((_KEYWORD_TOKENS.get(literal, _Token.IDENTIFIER), literal))
        if pos < length and text[pos] == _NUL:
            pos += 1


class _LabelParser:
    """Recursive descent over the token list, with Kubernetes' error messages.

    Where a value may stand (keys included), ``in`` and ``notin`` are plain identifiers; only
    in operator position are they operators. Errors inside one requirement raise
    :class:`_RequirementError`; :meth:`parse` prefixes them with ``unable to parse requirement``.
    """

    __slots__ = ("_items", "_pos")

    def __init__(self, text: str) -> None:
        self._items = _lex(text)
        self._pos = 0

    def _peek(self) -> _Item:
        token, literal = self._items[self._pos]
        if token is _Token.IN or token is _Token.NOT_IN:
            return _Token.IDENTIFIER, literal
        return token, literal

    def _take(self) -> _Item:
        item = self._peek()
        self._pos += 1
        return item

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            token, literal = self._peek()
            if token is _Token.END:
                return requirements
            if token is not _Token.IDENTIFIER and token is not _Token.NOT:
                raise BadRequest(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self._requirement())
            except _RequirementError as error:
                raise BadRequest(f"unable to parse requirement: {error}") from None
            token, literal = self._take()
            if token is _Token.END:
                return requirements
            if token is not _Token.COMMA:
                raise BadRequest(f"found '{literal}', expected: ',' or 'end of string'")
            token, literal = self._peek()
            if token is not _Token.IDENTIFIER and token is not _Token.NOT:
                raise BadRequest(f"found '{literal}', expected: identifier after ','")

    def _requirement(self) -> LabelRequirement:
        key, operator = self._key_and_unary_operator()
        if operator is not None:
            return _new_label_requirement(key, operator, ())
        operator = self._binary_operator()
        if operator is Operator.IN or operator is Operator.NOT_IN:
            values = self._value_set()
        else:
            values = self._exact_value()
        return _new_label_requirement(key, operator, tuple(sorted(values)))

    def _key_and_unary_operator(self) -> tuple[str, Operator | None]:
        """The key, and EXISTS or DOES_NOT_EXIST when no binary operator can follow it."""
        operator: Operator | None = None
        token, literal = self._take()
        if token is _Token.NOT:
            operator = Operator.DOES_NOT_EXIST
            token, literal = self._take()
        if token is not _Token.IDENTIFIER:
            raise _RequirementError(f"found '{literal}', expected: identifier")
        errors = _label_key_errors(literal)
        if errors:
            # The parser validates keys with a nil field path, which Go prints as "<nil>".
            raise _RequirementError(_invalid("<nil>", _go_quote(literal), "; ".join(errors)))
        following, _ = self._peek()
        if operator is None and (following is _Token.END or following is _Token.COMMA):
            operator = Operator.EXISTS
        # "!key" followed by anything else is still a complete requirement: the caller then
        # trips over the leftover token ("!x=a" fails on '=').
        return literal, operator

    def _binary_operator(self) -> Operator:
        token, literal = self._items[self._pos]  # here "in" and "notin" are operators
        self._pos += 1
        operator = _OPERATOR_TOKENS.get(token)
        if operator is None:
            raise _RequirementError(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        return operator

    def _value_set(self) -> set[str]:
        token, literal = self._take()
        if token is not _Token.OPEN_PAREN:
            raise _RequirementError(f"found '{literal}' expected: '('")
        token, literal = self._peek()
        if token is _Token.CLOSE_PAREN:
            self._take()
            return {""}  # "()" is the set holding the empty value
        if token is not _Token.IDENTIFIER and token is not _Token.COMMA:
            raise _RequirementError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self._identifiers()
        self._take()  # the ")" that _identifiers stopped before
        return values

    def _identifiers(self) -> set[str]:
        """A comma-separated list where a missing value between commas is the empty value."""
        values: set[str] = set()
        while True:
            token, literal = self._take()
            if token is _Token.IDENTIFIER:
                values.add(literal)
                following, following_literal = self._peek()
                if following is _Token.CLOSE_PAREN:
                    return values
                if following is not _Token.COMMA:
                    raise _RequirementError(f"found '{following_literal}', expected: ',' or ')'")
            elif token is _Token.COMMA:
                following, _ = self._peek()
                if not values or following is _Token.CLOSE_PAREN or following is _Token.COMMA:
                    values.add("")  # "(," ",)" and ",," each stand for an empty value
                if following is _Token.CLOSE_PAREN:
                    return values
            else:
                raise _RequirementError(f"found '{literal}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        token, _ = self._peek()
        if token is _Token.END or token is _Token.COMMA:
            return {""}
        token, literal = self._take()
        if token is not _Token.IDENTIFIER:
            raise _RequirementError(f"found '{literal}', expected: identifier")
        return {literal}
