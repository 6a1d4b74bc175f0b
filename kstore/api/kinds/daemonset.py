"""apps DaemonSet in v1; hub: the internal version; storage: apps/v1.

The hub has Kubernetes' internal ``apps.DaemonSet`` shape, which is apps/v1's plus
``spec.templateGeneration`` (the generation of the pod template, which the strategy bumps on
every template change). apps/v1 keeps it in the annotation
``deprecated.daemonset.template.generation`` (the number as decimal text), as
``pkg/apis/apps/v1/conversion.go`` does, so stored objects read and write as Kubernetes'
(``kubectl get ds -o yaml`` shows the annotation). Where Kubernetes' text would lose something
(see :mod:`kstore.api.kinds._annotations`) the annotation holds a JSON envelope instead.

Defaulting is ``SetObjectDefaults_DaemonSet``: ``updateStrategy`` ``RollingUpdate`` with
``maxUnavailable`` 1 and ``maxSurge`` 0, ``revisionHistoryLimit`` 10, then the pod spec defaults
of the template (:func:`kstore.api.kinds._workload.default_pod_template`).

Validation runs on the hub, with Kubernetes' paths, order and messages
(``pkg/apis/apps/validation``), expecting a defaulted object:

- :func:`validate_daemon_set` is ``ValidateDaemonSet``: ObjectMeta (the name a DNS
  subdomain), the selector (valid, not empty, matching the template labels: a missing selector
  matches nothing, which Kubernetes reports at the template labels only), the pod template
  (``restartPolicy: Always``, no ``activeDeadlineSeconds``), ``minReadySeconds``,
  ``templateGeneration`` and ``revisionHistoryLimit`` not negative, and the update strategy
  (``RollingUpdate`` with a ``rollingUpdate`` whose ``maxUnavailable``/``maxSurge`` are counts or
  percentages up to 100%, exactly one of them not zero; or ``OnDelete``);
- :func:`validate_daemon_set_update` is what the strategy's ``ValidateUpdate`` runs:
  ``ValidateDaemonSet``, then ``ValidateDaemonSetUpdate`` (ObjectMeta update rules, a
  ``templateGeneration`` that moves with the template and only up, the spec again: Kubernetes
  lists a spec problem twice among the causes and once in the message), then, unless asked not
  to, an immutable ``spec.selector`` (judged by the request's version, as for ReplicaSets);
- :func:`validate_daemon_set_status_update` is ``ValidateDaemonSetStatusUpdate``: the counts
  not negative, ``collisionCount`` not decremented.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._annotations import StashedField, int64_text, int64_value
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._rolling_update import (
    default_rolling_update,
    int_or_percent_value,
    int_or_string,
    strategy_value,
    validate_not_more_than_100_percent,
    validate_positive_int_or_percent,
)
from kstore.api.kinds._selector import as_matcher, selector_value, validate_label_selector
from kstore.api.kinds._workload import (
    default_pod_template,
    validate_collision_count_update,
    validate_controller_template,
    validate_selector_unchanged,
    validate_template_labels,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation.field import (
    JSONValue,
    Path,
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
    "DAEMON_SET",
    "DEFINITIONS",
    "TEMPLATE_GENERATION",
    "TEMPLATE_GENERATION_ANNOTATION",
    "default_daemon_set_v1",
    "validate_daemon_set",
    "validate_daemon_set_status_update",
    "validate_daemon_set_update",
]

GROUP = "apps"

#: Kubernetes' ``appsv1.DeprecatedTemplateGeneration``.
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"

#: The internal DaemonSetSpec's fields in declaration order (where a restored
#: ``templateGeneration`` is placed).
_SPEC_ORDER = (
    "selector",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "templateGeneration",
    "revisionHistoryLimit",
)

TEMPLATE_GENERATION = StashedField(
    annotation=TEMPLATE_GENERATION_ANNOTATION,
    container="spec",
    field="templateGeneration",
    order=_SPEC_ORDER,
    to_text=int64_text,
    from_text=int64_value,
)

_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_STRATEGY_TYPES: Final = ("RollingUpdate", "OnDelete")
_STATUS_COUNTS: Final = (
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "observedGeneration",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
)


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ------------------------------------------------------------------------------ defaulting


def default_daemon_set_v1(obj: Object) -> None:
    """apps/v1 ``SetObjectDefaults_DaemonSet``, in place."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    default_rolling_update(spec, "updateStrategy", max_unavailable=1, max_surge=0)
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    default_pod_template(spec)


# ------------------------------------------------------------------------------ validation


def _validate_rolling_update(rolling: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateRollingUpdateDaemonSet``."""
    max_unavailable = int_or_string(rolling.get("maxUnavailable"))
    max_surge = int_or_string(rolling.get("maxSurge"))
    unavailable_path, surge_path = path.child("maxUnavailable"), path.child("maxSurge")
    causes = validate_positive_int_or_percent(max_unavailable, unavailable_path)
    causes.extend(validate_positive_int_or_percent(max_surge, surge_path))
    causes.extend(validate_not_more_than_100_percent(max_unavailable, unavailable_path))
    causes.extend(validate_not_more_than_100_percent(max_surge, surge_path))
    has_unavailable = int_or_percent_value(max_unavailable) != 0
    has_surge = int_or_percent_value(max_surge) != 0
    if has_unavailable and has_surge:
        causes.append(
            invalid(
                surge_path, JSONValue(max_surge), "may not be set when maxUnavailable is non-zero"
            )
        )
    elif not has_unavailable and not has_surge:
        causes.append(required(unavailable_path, "cannot be 0 when maxSurge is 0"))
    return causes


def _validate_update_strategy(strategy: Mapping[str, Any], path: Path) -> list[Cause]:
    """``ValidateDaemonSetUpdateStrategy``."""
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind == "RollingUpdate":
        rolling = _opt_map(strategy, "rollingUpdate")
        if rolling is None:
            return [required(path.child("rollingUpdate"))]
        return _validate_rolling_update(rolling, path.child("rollingUpdate"))
    return [not_supported(path, strategy_value(strategy), _STRATEGY_TYPES)]


def _validate_template(spec: Mapping[str, Any]) -> list[Cause]:
    """The selector and pod template part of ``ValidateDaemonSetSpec``."""
    selector = _opt_map(spec, "selector")
    selector_path = _SPEC.child("selector")
    template = _map(spec, "template")
    template_path = _SPEC.child("template")
    causes = validate_label_selector(selector, selector_path)
    matcher = as_matcher(selector)
    if matcher is not None:
        causes.extend(validate_template_labels(matcher, template, template_path))
    if (
        selector is not None
        and not _map(selector, "matchLabels")
        and not selector.get("matchExpressions")
    ):
        causes.append(
            invalid(
                selector_path, selector_value(selector), "empty selector is invalid for daemonset"
            )
        )
    causes.extend(validate_controller_template(template, template_path, "DaemonSet"))
    return causes


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateDaemonSetSpec``."""
    causes = _validate_template(spec)
    for key in ("minReadySeconds", "templateGeneration"):
        causes.extend(validate_nonnegative_field(_int(spec, key), _SPEC.child(key)))
    causes.extend(
        _validate_update_strategy(_map(spec, "updateStrategy"), _SPEC.child("updateStrategy"))
    )
    history = spec.get("revisionHistoryLimit")
    if isinstance(history, int) and not isinstance(history, bool):
        causes.extend(validate_nonnegative_field(history, _SPEC.child("revisionHistoryLimit")))
    return causes


def _validate_spec_update(spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[Cause]:
    """``ValidateDaemonSetSpecUpdate``: ``templateGeneration`` moves with the template, up."""
    generation = _int(spec, "templateGeneration")
    old_generation = _int(old_spec, "templateGeneration")
    path = _SPEC.child("templateGeneration")
    causes: list[Cause] = []
    if generation < old_generation:
        causes.append(invalid(path, generation, "must not be decremented"))
    template_updated = spec.get("template") != old_spec.get("template")
    if generation == old_generation and template_updated:
        causes.append(invalid(path, generation, "must be incremented upon template update"))
    elif generation > old_generation and not template_updated:
        causes.append(invalid(path, generation, "must not be incremented without template update"))
    return causes


def validate_daemon_set(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateDaemonSet``: a DaemonSet (hub) on create."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    causes.extend(_validate_spec(_map(obj, "spec")))
    return causes


def validate_daemon_set_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, selector_immutable: bool = True
) -> list[Cause]:
    """The strategy's ``ValidateUpdate`` (see the module docstring)."""
    new_spec, old_spec = _map(new, "spec"), _map(old, "spec")
    causes = validate_daemon_set(new)
    causes.extend(validate_object_meta_update(new, old))
    causes.extend(_validate_spec_update(new_spec, old_spec))
    causes.extend(_validate_spec(new_spec))
    if selector_immutable:
        causes.extend(validate_selector_unchanged(new_spec, old_spec, _SPEC))
    return causes


def validate_daemon_set_status_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    """``ValidateDaemonSetStatusUpdate``."""
    causes = validate_object_meta_update(new, old)
    status = _map(new, "status")
    for key in _STATUS_COUNTS:
        causes.extend(validate_nonnegative_field(_int(status, key), _STATUS.child(key)))
    collisions = status.get("collisionCount")
    if isinstance(collisions, int) and not isinstance(collisions, bool):
        causes.extend(validate_nonnegative_field(collisions, _STATUS.child("collisionCount")))
    causes.extend(validate_collision_count_update(status, _map(old, "status"), _STATUS))
    return causes


# ------------------------------------------------------------------------------ the kind

DAEMON_SET = KindDefinition(
    group=GROUP,
    kind="DaemonSet",
    versions=(
        KindVersion(
            version="v1",
            to_hub=TEMPLATE_GENERATION.restore,
            from_hub=TEMPLATE_GENERATION.stash,
            default=default_daemon_set_v1,
        ),
    ),
    storage_version="v1",
    validate=validate_daemon_set,
    validate_update=validate_daemon_set_update,
    resource=ResourceInfo(
        plural="daemonsets",
        singular="daemonset",
        namespaced=True,
        short_names=("ds",),
        categories=("all",),
        subresources=("status",),
    ),
    list_kind="DaemonSetList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (DAEMON_SET, list_definition(DAEMON_SET))
