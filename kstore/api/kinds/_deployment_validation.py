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

Expects a defaulted object, as Kubernetes validates after defaulting; the pod template is
validated by the core pod rules (:func:`kstore.api.validation.core.pod.validate_pod_template_spec`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kstore.api.kinds._selector import (
    Matcher,
    as_matcher,
    selector_value,
    validate_label_selector,
)
from kstore.api.validation.core.pod import validate_pod_template_spec
from kstore.api.validation.field import (
    GoStruct,
    JSONValue,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kstore.api.validation.names import name_is_dns_subdomain, regex_error
from kstore.api.validation.objectmeta import (
    validate_immutable_field,
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
_PERCENT_RE: Final = re.compile(r"[0-9]+%")
_PERCENT_MSG: Final = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)
_GO_ATOI_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


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


# ------------------------------------------------------------------------ IntOrString


def _int_or_string(value: Any) -> int | str:
    """The internal ``intstr.IntOrString`` a JSON value decodes to (absent: the int 0)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0


def _go_atoi(text: str) -> int:
    """``IntOrString.IntValue`` of a string: ``strconv.Atoi``, 0 when it fails, clamped."""
    if _GO_ATOI_RE.fullmatch(text) is None:
        return 0
    return max(_INT64_MIN, min(_INT64_MAX, int(text)))


def _percent(value: int | str) -> int | None:
    if isinstance(value, str) and _PERCENT_RE.fullmatch(value):
        return _go_atoi(value[:-1])
    return None


def _int_or_percent_value(value: int | str) -> int:
    percent = _percent(value)
    if percent is not None:
        return percent
    return _go_atoi(value) if isinstance(value, str) else value


def _validate_positive_int_or_percent(value: int | str, path: Path) -> list[Cause]:
    if isinstance(value, str):
        if _PERCENT_RE.fullmatch(value) is None:
            return [invalid(path, JSONValue(value), _PERCENT_MSG)]
        return []
    return validate_nonnegative_field(value, path)


def _validate_not_more_than_100_percent(value: int | str, path: Path) -> list[Cause]:
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [invalid(path, JSONValue(value), "must not be greater than 100%")]


# ------------------------------------------------------------------------ strategy


def _strategy_value(strategy: Mapping[str, Any]) -> GoStruct:
    """The internal ``apps.DeploymentStrategy`` as ``json.Marshal`` prints it (no json tags)."""
    rolling = _opt_map(strategy, "rollingUpdate")
    rolling_value = None
    if rolling is not None:
        rolling_value = GoStruct(
            MaxUnavailable=_int_or_string(rolling.get("maxUnavailable")),
            MaxSurge=_int_or_string(rolling.get("maxSurge")),
        )
    kind = strategy.get("type")
    return GoStruct(Type=kind if isinstance(kind, str) else "", RollingUpdate=rolling_value)


def _validate_rolling_update(rolling: Mapping[str, Any], path: Path) -> list[Cause]:
    max_unavailable = _int_or_string(rolling.get("maxUnavailable"))
    max_surge = _int_or_string(rolling.get("maxSurge"))
    causes = _validate_positive_int_or_percent(max_unavailable, path.child("maxUnavailable"))
    causes.extend(_validate_positive_int_or_percent(max_surge, path.child("maxSurge")))
    if _int_or_percent_value(max_unavailable) == 0 and _int_or_percent_value(max_surge) == 0:
        causes.append(
            invalid(
                path.child("maxUnavailable"),
                JSONValue(max_unavailable),
                "may not be 0 when `maxSurge` is 0",
            )
        )
    causes.extend(
        _validate_not_more_than_100_percent(max_unavailable, path.child("maxUnavailable"))
    )
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
    return [not_supported(path, _strategy_value(strategy), _STRATEGY_TYPES)]


# ------------------------------------------------------------------------ spec


def _validate_template(spec: Mapping[str, Any], matcher: Matcher, path: Path) -> list[Cause]:
    """``ValidatePodTemplateSpecForReplicaSet``, reached only when the selector parses.

    A missing selector parses to "nothing", which is not empty and matches no labels: Kubernetes
    then reports the template labels as well as the missing selector.
    """
    template = _map(spec, "template")
    template_path = path.child("template")
    causes: list[Cause] = []
    template_labels = _opt_map(_map(template, "metadata"), "labels")
    if not matcher.empty() and not matcher.matches(template_labels or {}):
        causes.append(
            invalid(
                template_path.child("metadata", "labels"),
                dict(template_labels) if template_labels is not None else None,
                "`selector` does not match template `labels`",
            )
        )
    causes.extend(validate_pod_template_spec(template, template_path))
    pod_spec = _map(template, "spec")
    restart_policy = pod_spec.get("restartPolicy")
    if restart_policy != "Always":
        causes.append(
            not_supported(
                template_path.child("spec", "restartPolicy"),
                JSONValue(restart_policy if isinstance(restart_policy, str) else ""),
                ["Always"],
            )
        )
    if pod_spec.get("activeDeadlineSeconds") is not None:
        causes.append(
            forbidden(
                template_path.child("spec", "activeDeadlineSeconds"),
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            )
        )
    return causes


def _validate_spec(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateDeploymentSpec``."""
    causes = validate_nonnegative_field(_int(spec, "replicas"), path.child("replicas"))
    selector = _opt_map(spec, "selector")
    selector_path = path.child("selector")
    if selector is None:
        causes.append(required(selector_path))
    else:
        causes.extend(validate_label_selector(selector, selector_path))
        if not _map(selector, "matchLabels") and not selector.get("matchExpressions"):
            causes.append(
                invalid(
                    selector_path,
                    selector_value(selector),
                    "empty selector is invalid for deployment",
                )
            )
    matcher = as_matcher(selector)
    if matcher is None:
        causes.append(invalid(selector_path, selector_value(selector), "invalid label selector"))
    else:
        causes.extend(_validate_template(spec, matcher, path))
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
        causes.extend(
            validate_immutable_field(
                selector_value(_opt_map(new_spec, "selector")),
                selector_value(_opt_map(old_spec, "selector")),
                _SPEC.child("selector"),
            )
        )
    return causes


def validate_deployment_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateDeploymentStatusUpdate``: metadata, status counts, no smaller collisionCount."""
    causes = validate_object_meta_update(new, old)
    status, old_status = _map(new, "status"), _map(old, "status")
    causes.extend(_validate_status(status, _STATUS))
    collisions = _opt_int(status, "collisionCount")
    old_collisions = _opt_int(old_status, "collisionCount")
    # apivalidation.IsDecremented: only a set old value can be decremented (to nil or lower).
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        causes.append(
            invalid(
                _STATUS.child("collisionCount"),
                collisions if collisions is not None else 0,
                "cannot be decremented",
            )
        )
    return causes
