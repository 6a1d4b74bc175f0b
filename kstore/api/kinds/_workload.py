"""What the workload kinds (Deployment, ReplicaSet, DaemonSet) share: the pod template they embed
(``spec.template``), the selector that picks its pods, and their status' ``collisionCount``.

- :func:`default_pod_template`: the template's pod spec gets the pod spec defaults, as the
  generated ``SetObjectDefaults_<Kind>`` of Deployments, ReplicaSets and DaemonSets do. The
  template and its spec are Go structs, always there to be defaulted, so they are created when
  missing.
- :func:`validate_selector_and_template`: the selector and template rules Deployments and
  ReplicaSets share (``ValidateDeploymentSpec`` and ``ValidateReplicaSetSpec`` are the same
  there, down to the empty-selector message naming a deployment), with
  ``ValidatePodTemplateSpecForReplicaSet``, whose pieces DaemonSets use too
  (:func:`validate_template_labels`, :func:`validate_controller_template`);
- :func:`validate_selector_unchanged`: the strategies' immutable ``spec.selector`` (compared as
  Kubernetes compares the ``*LabelSelector``: an empty list is no list);
- :func:`validate_collision_count_update`: a status write may not lower ``collisionCount``
  (``apivalidation.IsDecremented``);
- :func:`validate_replica_counts`: the status counts ReplicaSets and ReplicationControllers
  share (``ValidateReplicaSetStatus``, ``ValidateReplicationControllerStatus``).

Validation expects a defaulted object, as Kubernetes validates after defaulting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kstore.api.kinds._selector import Matcher, as_matcher, selector_value, validate_label_selector
from kstore.api.kinds.core import default_pod_spec
from kstore.api.validation.core.pod import validate_pod_template_spec
from kstore.api.validation.field import JSONValue, Path, forbidden, invalid, not_supported, required
from kstore.api.validation.objectmeta import validate_immutable_field, validate_nonnegative_field
from kstore.errors import Cause

__all__ = [
    "default_pod_template",
    "validate_collision_count_update",
    "validate_controller_template",
    "validate_selector_and_template",
    "validate_selector_unchanged",
    "validate_template_labels",
]


def default_pod_template(spec: dict[str, Any]) -> None:
    """Default ``spec["template"]["spec"]`` in place, creating the template when missing."""
    template = spec.get("template")
    if template is None:
        template = spec["template"] = {}
    if isinstance(template, dict):
        pod_spec = template.get("spec")
        if pod_spec is None:
            pod_spec = template["spec"] = {}
        if isinstance(pod_spec, dict):
            default_pod_spec(pod_spec)


def _map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def _opt_map(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def validate_selector_and_template(spec: Mapping[str, Any], path: Path) -> list[Cause]:
    """``spec.selector`` required, valid and not empty; the template checked against it.

    An unparseable selector skips the template checks (Kubernetes has no selector to match the
    template with), reporting ``invalid label selector`` instead.
    """
    causes: list[Cause] = []
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
    return causes


def _validate_template(spec: Mapping[str, Any], matcher: Matcher, path: Path) -> list[Cause]:
    """``ValidatePodTemplateSpecForReplicaSet``, reached only when the selector parses.

    A missing selector parses to "nothing", which matches no labels: Kubernetes then reports
    the template labels as well as the missing selector.
    """
    template = _map(spec, "template")
    template_path = path.child("template")
    causes = validate_template_labels(matcher, template, template_path)
    causes.extend(validate_controller_template(template, template_path, "ReplicaSet"))
    return causes


def validate_template_labels(
    matcher: Matcher, template: Mapping[str, Any], template_path: Path
) -> list[Cause]:
    """The selector must match the template's labels (an empty selector matches any)."""
    labels = _opt_map(_map(template, "metadata"), "labels")
    if matcher.matches(labels or {}):
        return []
    return [
        invalid(
            template_path.child("metadata", "labels"),
            dict(labels) if labels is not None else None,
            "`selector` does not match template `labels`",
        )
    ]


def validate_controller_template(
    template: Mapping[str, Any], template_path: Path, kind: str
) -> list[Cause]:
    """A controller's pod template: the pod template rules, ``restartPolicy: Always`` and no
    ``activeDeadlineSeconds`` (Kubernetes' words name the kind validating it)."""
    causes = validate_pod_template_spec(template, template_path)
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
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return causes


def validate_selector_unchanged(
    new_spec: Mapping[str, Any], old_spec: Mapping[str, Any], path: Path
) -> list[Cause]:
    """``ValidateImmutableField`` of ``spec.selector`` (``path`` is the spec's)."""
    return validate_immutable_field(
        selector_value(_opt_map(new_spec, "selector")),
        selector_value(_opt_map(old_spec, "selector")),
        path.child("selector"),
    )


def _opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def validate_collision_count_update(
    status: Mapping[str, Any], old_status: Mapping[str, Any], path: Path
) -> list[Cause]:
    """``collisionCount`` not decremented (``path`` is the status')."""
    collisions = _opt_int(status, "collisionCount")
    old_collisions = _opt_int(old_status, "collisionCount")
    # apivalidation.IsDecremented: only a set old value can be decremented (to nil or lower).
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        return [
            invalid(
                path.child("collisionCount"),
                collisions if collisions is not None else 0,
                "cannot be decremented",
            )
        ]
    return []


def _count(status: Mapping[str, Any], key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_REPLICA_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")


def validate_replica_counts(
    status: Mapping[str, Any], path: Path, *, terminating: bool
) -> list[Cause]:
    """Every count non-negative (``terminatingReplicas`` too when the kind has it and it is
    set), none above ``replicas``, ``availableReplicas`` not above ``readyReplicas``."""
    counts = {key: _count(status, key) for key in _REPLICA_COUNTS}
    causes: list[Cause] = []
    for key, value in counts.items():
        causes.extend(validate_nonnegative_field(value, path.child(key)))
    causes.extend(
        validate_nonnegative_field(
            _count(status, "observedGeneration"), path.child("observedGeneration")
        )
    )
    set_terminating = status.get("terminatingReplicas")
    if terminating and isinstance(set_terminating, int) and not isinstance(set_terminating, bool):
        causes.extend(
            validate_nonnegative_field(set_terminating, path.child("terminatingReplicas"))
        )
    for key in _REPLICA_COUNTS[1:]:
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
