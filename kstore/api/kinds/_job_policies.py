"""The policies of a Job spec, validated as ``pkg/apis/batch/validation`` does:
``podFailurePolicy`` (rules, actions, exit code and pod condition requirements),
``successPolicy`` (rules, succeeded indexes and counts), and the ``managedBy`` domain-prefixed
path. Field paths, messages and the order of the causes are Kubernetes'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.validation._access import get_list, get_map, get_str, opt_int, opt_str
from kstore.api.validation.field import (
    OMIT_VALUE,
    JSONValue,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kstore.api.validation.names import is_dns1123_subdomain, is_qualified_name, regex_error
from kstore.api.validation.objectmeta import validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "success_policy_value",
    "validate_domain_prefixed_path",
    "validate_pod_failure_policy",
    "validate_success_policy",
]

_MAX_POD_FAILURE_RULES: Final = 20
_MAX_EXIT_CODE_VALUES: Final = 255
_MAX_POD_CONDITION_PATTERNS: Final = 20
_MAX_SUCCEEDED_INDEXES_LENGTH: Final = 64 * 1024
_MAX_SUCCESS_POLICY_RULES: Final = 20

# sets.List order (sorted), as Kubernetes lists the supported values.
_ACTIONS: Final = ("Count", "FailIndex", "FailJob", "Ignore")
_OPERATORS: Final = ("In", "NotIn")
_CONDITION_STATUSES: Final = ("False", "True", "Unknown")

_HTTP_PATH_FMT: Final = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH: Final = re.compile(_HTTP_PATH_FMT)
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _validate_exit_codes(
    requirement: Mapping[str, Any], path: Path, container_names: set[str]
) -> list[Cause]:
    causes: list[Cause] = []
    operator = get_str(requirement, "operator")
    operator_path = path.child("operator")
    if not operator:
        causes.append(required(operator_path, "valid values: " + _go_q_list(_OPERATORS)))
    elif operator not in _OPERATORS:
        causes.append(not_supported(operator_path, JSONValue(operator), _OPERATORS))
    container = opt_str(requirement, "containerName")
    if container is not None and container not in container_names:
        causes.append(
            invalid(
                path.child("containerName"),
                container,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    values = [v for v in get_list(requirement, "values") if isinstance(v, int)]
    values_path = path.child("values")
    if not values:
        causes.append(invalid(values_path, values, "at least one value is required"))
    elif len(values) > _MAX_EXIT_CODE_VALUES:
        causes.append(too_many(values_path, len(values), _MAX_EXIT_CODE_VALUES))
    seen: set[int] = set()
    ordered = True
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            causes.append(invalid(values_path.index(j), value, "must not be 0 for the In operator"))
        if value in seen:
            causes.append(duplicate(values_path.index(j), value))
        else:
            seen.add(value)
        if j > 0 and values[j - 1] > value:
            ordered = False
    if not ordered:
        causes.append(invalid(values_path, values, "must be ordered"))
    return causes


def _validate_pod_conditions(patterns: Sequence[Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    if len(patterns) > _MAX_POD_CONDITION_PATTERNS:
        causes.append(too_many(path, len(patterns), _MAX_POD_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        pattern = pattern if isinstance(pattern, Mapping) else {}
        pattern_path = path.index(j)
        kind = get_str(pattern, "type")
        causes.extend(
            invalid(pattern_path.child("type"), kind, msg) for msg in is_qualified_name(kind)
        )
        status = get_str(pattern, "status")
        status_path = pattern_path.child("status")
        if not status:
            causes.append(required(status_path, "valid values: " + _go_q_list(_CONDITION_STATUSES)))
        elif status not in _CONDITION_STATUSES:
            causes.append(not_supported(status_path, JSONValue(status), _CONDITION_STATUSES))
    return causes


def _go_q_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _validate_pod_failure_rule(
    spec: Mapping[str, Any], rule: Mapping[str, Any], path: Path, container_names: set[str]
) -> list[Cause]:
    causes: list[Cause] = []
    action = get_str(rule, "action")
    action_path = path.child("action")
    if not action:
        causes.append(required(action_path, "valid values: " + _go_q_list(_ACTIONS)))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            causes.append(
                invalid(
                    action_path, JSONValue(action), "requires the backoffLimitPerIndex to be set"
                )
            )
    elif action not in _ACTIONS:
        causes.append(not_supported(action_path, JSONValue(action), _ACTIONS))
    on_exit_codes = _opt_map(rule, "onExitCodes")
    if on_exit_codes is not None:
        causes.extend(
            _validate_exit_codes(on_exit_codes, path.child("onExitCodes"), container_names)
        )
    patterns = get_list(rule, "onPodConditions")
    if patterns:
        causes.extend(_validate_pod_conditions(patterns, path.child("onPodConditions")))
    if on_exit_codes is not None and patterns:
        causes.append(
            invalid(
                path, OMIT_VALUE, "specifying both OnExitCodes and OnPodConditions is not supported"
            )
        )
    if on_exit_codes is None and not patterns:
        causes.append(
            invalid(
                path, OMIT_VALUE, "specifying one of OnExitCodes and OnPodConditions is required"
            )
        )
    return causes


def validate_pod_failure_policy(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    rules = get_list(get_map(spec, "podFailurePolicy"), "rules")
    rules_path = path.child("rules")
    causes: list[Cause] = []
    if len(rules) > _MAX_POD_FAILURE_RULES:
        causes.append(too_many(rules_path, len(rules), _MAX_POD_FAILURE_RULES))
    pod_spec = get_map(get_map(spec, "template"), "spec")
    names = {
        get_str(c, "name")
        for key in ("containers", "initContainers")
        for c in get_list(pod_spec, key)
        if isinstance(c, Mapping)
    }
    for i, rule in enumerate(rules):
        rule = rule if isinstance(rule, Mapping) else {}
        causes.extend(_validate_pod_failure_rule(spec, rule, rules_path.index(i), names))
    return causes


def _parse_index_interval(text: str, completions: int) -> tuple[int, int]:
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(
            f'the fragment "{text}" violates the requirement that an index interval can have '
            "at most two parts separated by '-'"
        )
    bounds: list[int] = []
    for limit in limits:
        if _GO_INT.fullmatch(limit) is None:
            raise ValueError(f'cannot convert string to integer for index: "{limit}"')
        value = int(limit)
        if value >= completions:
            raise ValueError(f'too large index: "{limit}"')
        bounds.append(value)
    if len(bounds) == 2 and bounds[0] >= bounds[1]:
        raise ValueError(f"non-increasing order, previous: {bounds[0]}, current: {bounds[1]}")
    return bounds[0], bounds[-1]


def _indexes_total(text: str, completions: int) -> int:
    """``validateIndexesFormat``: how many indexes ``1,3-5`` names; ValueError when malformed."""
    if not text:
        return 0
    last: int | None = None
    total = 0
    for interval in text.split(","):
        x, y = _parse_index_interval(interval, completions)
        if last is not None and last >= x:
            raise ValueError(f"non-increasing order, previous: {last}, current: {x}")
        total += y - x + 1
        last = y
    return total


def success_policy_value(policy: Mapping[str, Any]) -> JSONValue:
    rules = []
    for rule in get_list(policy, "rules"):
        rule = rule if isinstance(rule, Mapping) else {}
        rules.append(
            {k: rule[k] for k in ("succeededIndexes", "succeededCount") if rule.get(k) is not None}
        )
    return JSONValue({"rules": rules})


def validate_success_policy(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    rules = get_list(get_map(spec, "successPolicy"), "rules")
    rules_path = path.child("rules")
    completions = opt_int(spec, "completions")
    causes: list[Cause] = []
    if not rules:
        causes.append(
            required(
                rules_path,
                "at least one rules must be specified when the successPolicy is specified",
            )
        )
    if len(rules) > _MAX_SUCCESS_POLICY_RULES:
        causes.append(too_many(rules_path, len(rules), _MAX_SUCCESS_POLICY_RULES))
    for i, rule in enumerate(rules):
        rule = rule if isinstance(rule, Mapping) else {}
        rule_path = rules_path.index(i)
        indexes = opt_str(rule, "succeededIndexes")
        count = opt_int(rule, "succeededCount")
        if indexes is None and count is None:
            causes.append(
                required(
                    rule_path,
                    "at least one of succeededCount or succeededIndexes must be specified",
                )
            )
        total = 0
        if indexes is not None:
            indexes_path = rule_path.child("succeededIndexes")
            if len(indexes.encode()) > _MAX_SUCCEEDED_INDEXES_LENGTH:
                causes.append(too_long(indexes_path, _MAX_SUCCEEDED_INDEXES_LENGTH))
            try:
                total = _indexes_total(indexes, completions or 0)
            except ValueError as exc:
                causes.append(
                    invalid(indexes_path, indexes, f"error parsing succeededIndexes: {exc}")
                )
        if count is not None:
            count_path = rule_path.child("succeededCount")
            causes.extend(validate_nonnegative_field(count, count_path))
            if completions is not None and count > completions:
                causes.append(
                    invalid(
                        count_path,
                        count,
                        f"must be less than or equal to {completions} "
                        "(the number of specified completions)",
                    )
                )
            if indexes is not None and count > total:
                causes.append(
                    invalid(
                        count_path,
                        count,
                        f"must be less than or equal to {total} "
                        "(the number of indexes in the specified succeededIndexes field)",
                    )
                )
    return causes


def validate_domain_prefixed_path(value: str, path: Path) -> list[Cause]:
    """``IsDomainPrefixedPath``."""
    if not value:
        return [required(path)]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    causes = [invalid(path, host, msg) for msg in is_dns1123_subdomain(host)]
    if _HTTP_PATH.fullmatch(rest) is None:
        causes.append(invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return causes
