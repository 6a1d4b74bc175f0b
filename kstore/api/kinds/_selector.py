"""``metav1.LabelSelector`` (``matchLabels`` + ``matchExpressions``): validation and matching.

Kinds that select pods (Deployment, ReplicaSet, ...) validate their selector with Kubernetes'
``ValidateLabelSelector`` (strict: label values in expressions must be valid, unknown operators
are errors), turn it into a matcher with ``LabelSelectorAsSelector`` and check their template
against it. Both are reproduced here on the dict form:

- :func:`validate_label_selector` returns one cause per problem, with Kubernetes' paths and words;
- :func:`as_matcher` returns a :class:`Matcher`, or ``None`` where Kubernetes' conversion fails
  (an invalid key or value, an unknown operator, values missing or superfluous);
- :func:`selector_value` gives the value Kubernetes prints for a ``*LabelSelector`` in errors.

A missing selector (``None``) matches nothing and is not "empty", as ``labels.Nothing()``; a
selector with neither field matches everything and is empty, as ``labels.Everything()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.validation.field import GoStruct, JSONValue, Path, forbidden, invalid, required
from kstore.api.validation.names import is_label_value, is_qualified_name
from kstore.api.validation.objectmeta import validate_labels
from kstore.errors import Cause

__all__ = ["Matcher", "as_matcher", "selector_value", "validate_label_selector"]

_SET_OPERATORS: Final = ("In", "NotIn")
_EXISTENCE_OPERATORS: Final = ("Exists", "DoesNotExist")


def _labels(selector: Mapping[str, Any]) -> Mapping[str, Any]:
    value = selector.get("matchLabels")
    return value if isinstance(value, Mapping) else {}


def _expressions(selector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = selector.get("matchExpressions")
    if not isinstance(value, list):
        return []
    return [e if isinstance(e, Mapping) else {} for e in value]


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _values(expression: Mapping[str, Any]) -> list[str]:
    values = expression.get("values")
    if not isinstance(values, list):
        return []
    return [v if isinstance(v, str) else "" for v in values]


def validate_label_selector(
    selector: Mapping[str, Any] | None, path: Path, *, allow_invalid_label_values: bool = False
) -> list[Cause]:
    """Kubernetes' ``ValidateLabelSelector`` with the strict options workload kinds use, or,
    with ``allow_invalid_label_values``, without checking the values of expressions (its
    ``AllowInvalidLabelValueInSelector``, which updates keep when the old selector needed it)."""
    if selector is None:
        return []
    causes = validate_labels(_labels(selector), path.child("matchLabels"))
    for i, expression in enumerate(_expressions(selector)):
        causes.extend(
            _validate_requirement(
                expression, path.child("matchExpressions").index(i), allow_invalid_label_values
            )
        )
    return causes


def _validate_requirement(
    expression: Mapping[str, Any], path: Path, allow_invalid_label_values: bool
) -> list[Cause]:
    causes: list[Cause] = []
    operator = _str(expression, "operator")
    values = _values(expression)
    if operator in _SET_OPERATORS:
        if not values:
            causes.append(
                required(
                    path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif operator in _EXISTENCE_OPERATORS:
        if values:
            causes.append(
                forbidden(
                    path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        # LabelSelectorOperator is a named string type: Kubernetes prints it as JSON.
        causes.append(
            invalid(path.child("operator"), JSONValue(operator), "not a valid selector operator")
        )
    key = _str(expression, "key")
    causes.extend(invalid(path.child("key"), key, msg) for msg in is_qualified_name(key))
    if allow_invalid_label_values:
        return causes
    for j, value in enumerate(values):
        causes.extend(
            invalid(path.child("values").index(j), value, msg) for msg in is_label_value(value)
        )
    return causes


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, Any]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        return not present


@dataclass(frozen=True, slots=True)
class Matcher:
    """A parsed label selector (Kubernetes' ``labels.Selector``)."""

    requirements: tuple[_Requirement, ...]
    nothing: bool = False

    def empty(self) -> bool:
        """True for the selector that matches everything (it is never ``Nothing``)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)


def _valid_requirement(key: str, operator: str, values: Sequence[str]) -> bool:
    """What ``labels.NewRequirement`` accepts."""
    if is_qualified_name(key):
        return False
    if operator in _SET_OPERATORS and not values:
        return False
    if operator in _EXISTENCE_OPERATORS and values:
        return False
    return not any(is_label_value(v) for v in values)


def as_matcher(selector: Mapping[str, Any] | None) -> Matcher | None:
    """Kubernetes' ``LabelSelectorAsSelector``; ``None`` where it returns an error."""
    if selector is None:
        return Matcher((), nothing=True)
    requirements: list[_Requirement] = []
    for key, value in _labels(selector).items():
        text = value if isinstance(value, str) else ""
        # matchLabels entries become "In" requirements with one value (selection.Equals).
        if not _valid_requirement(key, "In", [text]):
            return None
        requirements.append(_Requirement(key, "In", frozenset([text])))
    for expression in _expressions(selector):
        operator = _str(expression, "operator")
        if operator not in _SET_OPERATORS and operator not in _EXISTENCE_OPERATORS:
            return None
        key, values = _str(expression, "key"), _values(expression)
        if not _valid_requirement(key, operator, values):
            return None
        requirements.append(_Requirement(key, operator, frozenset(values)))
    return Matcher(tuple(requirements))


def selector_value(selector: Mapping[str, Any] | None) -> GoStruct | None:
    """The ``*metav1.LabelSelector`` as Kubernetes' ``json.Marshal`` prints it (omitempty)."""
    if selector is None:
        return None
    out = GoStruct()
    labels = _labels(selector)
    if labels:
        out["matchLabels"] = dict(labels)
    expressions = _expressions(selector)
    if expressions:
        rendered = []
        for expression in expressions:
            item = GoStruct(key=_str(expression, "key"), operator=_str(expression, "operator"))
            values = _values(expression)
            if values:
                item["values"] = values
            rendered.append(item)
        out["matchExpressions"] = rendered
    return out
