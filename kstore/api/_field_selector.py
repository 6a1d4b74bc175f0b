"""Field selectors (``pkg/fields``): ``f=v``, ``f==v``, ``f!=v`` joined by commas (AND).

Escapes: ``\\\\``, ``\\,`` and ``\\=`` stand for ``\\``, ``,`` and ``=`` inside a value (the field
itself has none). An absent field reads as the empty string.

Invariants:

* requirements and selectors are frozen and hashable; ``==`` is stored as ``=``, so ``f=v`` and
  ``f==v`` are one requirement, as in Kubernetes;
* a selector keeps its requirements in the order of its sorted terms, so ``str()`` is the
  canonical string Kubernetes renders;
* each requirement compiles once into a :data:`~kstore.api._selection.Check`; ``matches`` only
  calls it;
* syntax errors raise :class:`~kstore.errors.BadRequest` with Kubernetes' message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from kstore.api._selection import Check, Operator, all_of
from kstore.errors import BadRequest

__all__ = ["FieldRequirement", "FieldSelector", "escape_field_value"]


def escape_field_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so ``value`` can stand in a field selector (EscapeValue)."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(raw: str) -> str:
    if "\\" not in raw and "," not in raw and "=" not in raw:
        return raw
    out: list[str] = []
    escaped = False
    for char in raw:
        if escaped:
            if char not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            # Go prints the offending rune with %v, i.e. as its number.
            raise BadRequest(f"invalid field selector: unescaped character in value: {ord(char)}")
        else:
            out.append(char)
    if escaped:
        raise BadRequest("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    """Split on the commas that are not escaped; the escapes stay in the terms."""
    if not text:
        return []
    if "\\" not in text:
        return text.split(",")
    terms: list[str] = []
    start = 0
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return terms


def _split_field_term(term: str) -> tuple[str, Operator, str] | None:
    """Field, operator and raw value, split at the first operator (the field has no escapes)."""
    equals_at = term.find("=")
    not_equals_at = term.find("!=")
    if not_equals_at != -1 and not_equals_at < equals_at:
        return term[:not_equals_at], Operator.NOT_EQUALS, term[not_equals_at + 2 :]
    if equals_at == -1:
        return None
    width = 2 if term.startswith("==", equals_at) else 1
    return term[:equals_at], Operator.EQUALS, term[equals_at + width :]


def _compile_field_check(name: str, operator: Operator, value: str) -> Check:
    if operator is Operator.EQUALS:

        def equals(fields: Mapping[str, str]) -> bool:
            return fields.get(name, "") == value

        return equals

    def differs(fields: Mapping[str, str]) -> bool:
        return fields.get(name, "") != value

    return differs


@dataclass(frozen=True, slots=True, repr=False)
class FieldRequirement:
    """One term of a field selector: ``field`` equals (or not) ``value``.

    ``==`` is the same requirement as ``=`` (Kubernetes keeps no trace of it either).
    """

    field: str
    operator: Operator
    value: str
    _check: Check = dataclass_field(init=False, compare=False)

    def __post_init__(self) -> None:
        operator = Operator(self.operator)
        if operator is Operator.DOUBLE_EQUALS:
            operator = Operator.EQUALS
        if operator is not Operator.EQUALS and operator is not Operator.NOT_EQUALS:
            raise ValueError(f"field selectors support only = and !=, not {operator.value}")
        object.__setattr__(self, "operator", operator)
        object.__setattr__(self, "_check", _compile_field_check(self.field, operator, self.value))

    def matches(self, fields: Mapping[str, str]) -> bool:
        return self._check(fields)

    def __str__(self) -> str:
        symbol = "=" if self.operator is Operator.EQUALS else "!="
        return f"{self.field}{symbol}{escape_field_value(self.value)}"

    def __repr__(self) -> str:
        return f"FieldRequirement({self.field!r}, {self.operator.name}, {self.value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.field, self.operator, self.value))


@dataclass(frozen=True, slots=True, repr=False)
class FieldSelector:
    """An AND of field requirements; no requirements selects everything."""

    requirements: tuple[FieldRequirement, ...] = ()
    _match: Check = dataclass_field(init=False, compare=False)

    def __post_init__(self) -> None:
        requirements = tuple(self.requirements)
        object.__setattr__(self, "requirements", requirements)
        object.__setattr__(self, "_match", all_of([r._check for r in requirements]))

    @classmethod
    def everything(cls) -> FieldSelector:
        return cls()

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        """Parse Kubernetes' field selector syntax; BadRequest with Kubernetes' message.

        Terms are ordered by their text, empty terms are skipped, and a term with neither field
        nor value (``=``) selects everything, all as ``fields.ParseSelector``.
        """
        requirements: list[FieldRequirement] = []
        for term in sorted(_split_field_terms(text)):
            if not term:
                continue
            parts = _split_field_term(term)
            if parts is None:
                raise BadRequest(f"invalid selector: '{text}'; can't understand '{term}'")
            name, operator, raw = parts
            value = _unescape_field_value(raw)
            if name or value:
                requirements.append(FieldRequirement(name, operator, value))
        return cls(tuple(requirements))

    def empty(self) -> bool:
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether ``fields`` satisfy every requirement; an absent field reads as ``""``."""
        return self._match(fields)

    def exact_value(self, field: str) -> str | None:
        """The value ``field`` must equal, when an ``=`` requirement names it (metadata.name)."""
        for requirement in self.requirements:
            if requirement.field == field and requirement.operator is Operator.EQUALS:
                return requirement.value
        return None

    @property
    def fields(self) -> tuple[str, ...]:
        """The distinct field names used, in order: what a caller checks against the fields its
        kind supports (Kubernetes answers 400 ``field label not supported: <field>``)."""
        return tuple(dict.fromkeys(r.field for r in self.requirements))

    def transform(self, convert: Callable[[str, str], tuple[str, str]]) -> FieldSelector:
        """Rewrite each ``(field, value)`` as Kubernetes' ``Transform``; ``("", "")`` drops the
        term. Exceptions raised by ``convert`` propagate (the caller's field-label check)."""
        requirements: list[FieldRequirement] = []
        for requirement in self.requirements:
            name, value = convert(requirement.field, requirement.value)
            if name or value:
                requirements.append(FieldRequirement(name, requirement.operator, value))
        return FieldSelector(tuple(requirements))

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelector.parse({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.requirements,))
