"""policy/v1 PodDisruptionBudget: the hub has v1's shape (one served version, conversion only
rewrites ``apiVersion``); storage is policy/v1.

Defaulting: none. Kubernetes' policy/v1 registers no PodDisruptionBudget defaults (policy/v1beta1
set ``minAvailable`` 1 when neither limit was given; v1 does not), and
``unhealthyPodEvictionPolicy`` stays unset, which the eviction API reads as ``IfHealthyBudget``.

Validation runs on the hub with ``pkg/apis/policy/validation``'s paths and messages:

- :func:`validate_pod_disruption_budget` is ``ValidatePodDisruptionBudget``: ``minAvailable``
  and ``maxUnavailable`` not both set (neither is allowed), each a non-negative count or a
  percentage of at most 100%; the label selector (strict on create, and on update unless the
  stored selector already had a value the strict rules refuse); ``unhealthyPodEvictionPolicy``
  one of ``AlwaysAllow`` and ``IfHealthyBudget``. ObjectMeta is left to the generic pass that
  follows when the kind's own rules pass, as Kubernetes' ``BeforeCreate`` does;
- :func:`validate_pod_disruption_budget_status_update` is what the ``status`` subresource runs
  for policy/v1: the four counters not negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._rolling_update import (
    int_or_string,
    validate_not_more_than_100_percent,
    validate_positive_int_or_percent,
)
from kstore.api.kinds._selector import selector_value, validate_label_selector
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import GoStruct, JSONValue, Path, invalid, not_supported
from kstore.api.validation.objectmeta import validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "POD_DISRUPTION_BUDGET",
    "UNHEALTHY_POD_EVICTION_POLICIES",
    "validate_pod_disruption_budget",
    "validate_pod_disruption_budget_status_update",
    "validate_pod_disruption_budget_update",
]

GROUP: Final = "policy"

#: ``supportedUnhealthyPodEvictionPolicies``, in the sorted order Kubernetes lists them.
UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_STATUS_COUNTS: Final = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _spec_value(spec: Mapping[str, Any]) -> GoStruct:
    """The internal ``policy.PodDisruptionBudgetSpec`` as ``json.Marshal`` prints it: Go field
    names (the internal type has no json tags), pointers as their value or null."""
    limits = {
        key: None if spec.get(key) is None else int_or_string(spec.get(key))
        for key in ("minAvailable", "maxUnavailable")
    }
    policy = spec.get("unhealthyPodEvictionPolicy")
    return GoStruct(
        MinAvailable=limits["minAvailable"],
        Selector=selector_value(_opt_map(spec, "selector")),
        MaxUnavailable=limits["maxUnavailable"],
        UnhealthyPodEvictionPolicy=policy if isinstance(policy, str) else None,
    )


def _validate_limit(value: Any, path: Path) -> list[Cause]:
    limit = int_or_string(value)
    causes = validate_positive_int_or_percent(limit, path)
    causes.extend(validate_not_more_than_100_percent(limit, path))
    return causes


def _validate_spec(
    spec: Mapping[str, Any], path: Path, *, allow_invalid_label_values: bool
) -> list[Cause]:
    causes: list[Cause] = []
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        causes.append(
            invalid(path, _spec_value(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    if min_available is not None:
        causes.extend(_validate_limit(min_available, path.child("minAvailable")))
    if max_unavailable is not None:
        causes.extend(_validate_limit(max_unavailable, path.child("maxUnavailable")))
    causes.extend(
        validate_label_selector(
            _opt_map(spec, "selector"),
            path.child("selector"),
            allow_invalid_label_values=allow_invalid_label_values,
        )
    )
    policy = spec.get("unhealthyPodEvictionPolicy")
    if isinstance(policy, str) and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        causes.append(
            not_supported(
                path.child("unhealthyPodEvictionPolicy"),
                JSONValue(policy),
                UNHEALTHY_POD_EVICTION_POLICIES,
            )
        )
    return causes


def validate_pod_disruption_budget(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidatePodDisruptionBudget`` on create: the spec, with the strict selector rules."""
    return _validate_spec(_map(obj, "spec"), _SPEC, allow_invalid_label_values=False)


def validate_pod_disruption_budget_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """The strategy's ``ValidateUpdate``: the new spec, its selector's label values checked
    only when the stored selector's passed the strict rules."""
    stored = _opt_map(_map(old, "spec"), "selector")
    tolerant = bool(validate_label_selector(stored, _SPEC.child("selector")))
    return _validate_spec(_map(new, "spec"), _SPEC, allow_invalid_label_values=tolerant)


def validate_pod_disruption_budget_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` for policy/v1: the counters not negative."""
    status = _map(new, "status")
    causes: list[Cause] = []
    for key in _STATUS_COUNTS:
        causes.extend(validate_nonnegative_field(_int(status, key), _STATUS.child(key)))
    return causes


POD_DISRUPTION_BUDGET = KindDefinition(
    group=GROUP,
    kind="PodDisruptionBudget",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    validate=validate_pod_disruption_budget,
    validate_update=validate_pod_disruption_budget_update,
    resource=ResourceInfo(
        plural="poddisruptionbudgets",
        singular="poddisruptionbudget",
        namespaced=True,
        short_names=("pdb",),
        subresources=("status",),
    ),
    list_kind="PodDisruptionBudgetList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    POD_DISRUPTION_BUDGET,
    list_definition(POD_DISRUPTION_BUDGET),
)
