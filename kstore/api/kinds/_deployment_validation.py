"""Deployment validation on the hub, as ``pkg/apis/apps/validation`` and the registry strategy do.

:func:`validate_deployment` is ``ValidateDeployment`` (create), :func:`validate_deployment_update`
is ``ValidateDeploymentUpdate`` plus the strategy's selector immutability, and
:func:`validate_deployment_status_update` is ``ValidateDeploymentStatusUpdate`` (the ``status``
subresource). Each returns one cause per problem, in Kubernetes' order, with its field paths
(quirks included: a negative ``rollbackTo.revision`` is reported at ``spec.rollback.version``)
and its messages, the bad value printed as Go prints the internal type.

Selector immutability: Kubernetes' strategy forbids changing ``spec.selector`` on update for
every group version except apps/v1beta1 (and extensions/v1beta1), judged by the *request's*
version. The Scheme's update validator does not know that version, so it applies the rule of
apps/v1 (the storage version) and apps/v1beta2; a caller serving apps/v1beta1 requests passes
``selector_immutable=False``.

Expects a defaulted object, as Kubernetes validates after defaulting; the selector and the pod
template are checked as ReplicaSets check theirs
(:func:`kstore.api.kinds._workload.validate_selector_and_template`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._rolling_update import (
    int_or_percent_value,
    int_or_string,
    strategy_value,
    validate_not_more_than_100_percent,
    validate_positive_int_or_percent,
)
from kstore.api.kinds._workload import (
    validate_collision_count_update,
    validate_selector_and_template,
    validate_selector_unchanged,
)
from kstore.api.validation.field import (
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import name_is_dns_subdomain
from kstore.api.validation.objectmeta import (
    validate_nonnegative_field,
    validate_object_meta,
    validate_object_meta_update,
)
from kstore.errors import Cause

__all__ = [
    "validate_deployment",
    "validate_deployment_status_update",
    "validate_deployment_update",
]

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_STRATEGY_TYPES: Final = ("Recreate", "RollingUpdate")


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ------------------------------------------------------------------------ strategy


def _validate_rolling_update(rolling: Mapping[str, Any], path: Path) -> list[Cause]:
    max_unavailable = int_or_string(rolling.get("maxUnavailable"))
    max_surge = int_or_string(rolling.get("maxSurge"))
    causes = validate_positive_int_or_percent(max_unavailable, path.child("maxUnavailable"))
    causes.extend(validate_positive_int_or_percent(max_surge, path.child("maxSurge")))
    if int_or_percent_value(max_unavailable) == 0 and int_or_percent_value(max_surge) == 0:
        causes.append(
            invalid(
                path.child("maxUnavailable"),
                JSONValue(max_unavailable),
                "may not be 0 when `maxSurge` is 0",
            )
        )
    causes.extend(validate_not_more_than_100_percent(max_unavailable, path.child("maxUnavailable")))
    return causes


def _validate_strategy(strategy: Mapping[str, Any], path: Path) -> list[Cause]:
    kind = strategy.get("type")
    rolling = _opt_map(strategy, "rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                forbidden(
                    path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if rolling is None:
            return [
                required(path.child("rollingUpdate"), "this should be defaulted and never be nil")
            ]
        return _validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [not_supported(path, strategy_value(strategy), _STRATEGY_TYPES)]


# ------------------------------------------------------------------------ spec


def _validate_spec(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateDeploymentSpec``."""
    causes = validate_nonnegative_field(_int(spec, "replicas"), path.child("replicas"))
    causes.extend(validate_selector_and_template(spec, path))
    causes.extend(_validate_strategy(_map(spec, "strategy"), path.child("strategy")))
    min_ready = _int(spec, "minReadySeconds")
    causes.extend(validate_nonnegative_field(min_ready, path.child("minReadySeconds")))
    history = _opt_int(spec, "revisionHistoryLimit")
    if history is not None:
        causes.extend(validate_nonnegative_field(history, path.child("revisionHistoryLimit")))
    rollback_to = _opt_map(spec, "rollbackTo")
    if rollback_to is not None:
        causes.extend(
            validate_nonnegative_field(
                _int(rollback_to, "revision"), path.child("rollback", "version")
            )
        )
    deadline = _opt_int(spec, "progressDeadlineSeconds")
    if deadline is not None:
        deadline_path = path.child("progressDeadlineSeconds")
        causes.extend(validate_nonnegative_field(deadline, deadline_path))
        if deadline <= min_ready:
            causes.append(invalid(deadline_path, deadline, "must be greater than minReadySeconds"))
    return causes


def _validate_status(status: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateDeploymentStatus``."""
    counts = {
        key: _int(status, key)
        for key in (
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        )
    }
    causes = validate_nonnegative_field(
        _int(status, "observedGeneration"), path.child("observedGeneration")
    )
    for key, value in counts.items():
        causes.extend(validate_nonnegative_field(value, path.child(key)))
    terminating = _opt_int(status, "terminatingReplicas")
    if terminating is not None:
        causes.extend(validate_nonnegative_field(terminating, path.child("terminatingReplicas")))
    collisions = _opt_int(status, "collisionCount")
    if collisions is not None:
        causes.extend(validate_nonnegative_field(collisions, path.child("collisionCount")))
    for key in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if counts[key] > counts["replicas"]:
            causes.append(
                invalid(path.child(key), counts[key], "cannot be greater than status.replicas")
            )
    if counts["availableReplicas"] > counts["readyReplicas"]:
        causes.append(
            invalid(
                path.child("availableReplicas"),
                counts["availableReplicas"],
                "cannot be greater than readyReplicas",
            )
        )
    return causes


# ------------------------------------------------------------------------ entry points


def validate_deployment(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateDeployment``: a Deployment (hub) on create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_map(obj, "spec"), _SPEC))
    return causes


def validate_deployment_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, selector_immutable: bool = True
) -> list[Cause]:
    """``ValidateDeploymentUpdate`` and, unless asked not to, an immutable ``spec.selector``."""
    causes = validate_object_meta_update(new, old)
    new_spec, old_spec = _map(new, "spec"), _map(old, "spec")
    causes.extend(_validate_spec(new_spec, _SPEC))
    if selector_immutable:
        causes.extend(validate_selector_unchanged(new_spec, old_spec, _SPEC))
    return causes


def validate_deployment_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateDeploymentStatusUpdate``: metadata, status counts, no smaller collisionCount."""
    causes = validate_object_meta_update(new, old)
    status, old_status = _map(new, "status"), _map(old, "status")
    causes.extend(_validate_status(status, _STATUS))
    causes.extend(validate_collision_count_update(status, old_status, _STATUS))
    return causes
