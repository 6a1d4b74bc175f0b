"""Deletion rules: preconditions, graceful deletion and the garbage-collection finalizers.

As Kubernetes' ``rest.BeforeDelete`` and the generic store's delete helpers:

- :func:`validate_delete_options`: ``propagationPolicy`` is Foreground, Background or Orphan,
  and not given together with ``orphanDependents`` (422 on ``DeleteOptions.meta.k8s.io``);
- :func:`check_delete_preconditions`: the uid / resourceVersion preconditions against the
  object read, worded as Kubernetes words them (the resource named by its *kind*, a quirk
  kept for fidelity);
- :func:`before_delete`: decides whether a delete is graceful. A negative grace period means
  1 s. A first graceful delete sets ``deletionTimestamp = now + grace`` and
  ``deletionGracePeriodSeconds``, and bumps a non-zero ``generation``; a second one with a
  shorter period moves the deadline earlier (never before now); one with a period that is not
  shorter changes nothing ("pending");
- :func:`gc_finalizers`: the ``orphan`` / ``foregroundDeletion`` finalizers a delete adds or
  removes, from ``orphanDependents``, ``propagationPolicy``, the finalizers already there and
  the kind's default policy;
- :func:`mark_as_deleting`: an object kept by finalizers gets ``deletionTimestamp = now``
  (unless an earlier one is set), ``deletionGracePeriodSeconds = 0`` and a generation bump.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.validation.field import Path, invalid, not_supported
from kstore.errors import Conflict, Invalid
from kstore.registry.interface import DeleteOptions, RequestContext
from kstore.registry.strategies.base import (
    ORPHAN_DEPENDENTS,
    UNSUPPORTED,
    Strategy,
    generation_of,
    meta,
    read_meta,
)
from kstore.storage.interface import Preconditions

__all__ = [
    "FOREGROUND_FINALIZER",
    "ORPHAN_FINALIZER",
    "DeleteDecision",
    "before_delete",
    "check_delete_preconditions",
    "format_time",
    "gc_finalizers",
    "mark_as_deleting",
    "now",
    "parse_time",
    "validate_delete_options",
]

ORPHAN_FINALIZER: Final = "orphan"
FOREGROUND_FINALIZER: Final = "foregroundDeletion"
_POLICIES: Final = ("Foreground", "Background", "Orphan")


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def format_time(moment: datetime) -> str:
    """A ``metav1.Time`` as Kubernetes writes it: RFC 3339, UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def validate_delete_options(opts: DeleteOptions) -> None:
    causes = []
    path = Path("propagationPolicy")
    if opts.orphan_dependents is not None and opts.propagation_policy is not None:
        causes.append(
            invalid(
                path,
                opts.propagation_policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if opts.propagation_policy is not None and opts.propagation_policy not in _POLICIES:
        causes.append(not_supported(path, opts.propagation_policy, (*_POLICIES, "nil")))
    if causes:
        raise Invalid.for_object("DeleteOptions", "", causes, group="meta.k8s.io")


def check_delete_preconditions(
    strategy: Strategy, obj: Object, preconditions: Preconditions | None
) -> None:
    """Raise Conflict when ``obj`` does not satisfy the DeleteOptions preconditions."""
    if preconditions is None:
        return
    m = read_meta(obj)
    d = strategy.definition
    problem = ""
    uid = str(m.get("uid") or "")
    rv = str(m.get("resourceVersion") or "")
    if preconditions.uid is not None and preconditions.uid != uid:
        problem = (
            f"the UID in the precondition ({preconditions.uid}) does not match the UID in "
            f"record ({uid}). The object might have been deleted and then recreated"
        )
    elif preconditions.resource_version is not None and preconditions.resource_version != rv:
        problem = (
            f"the ResourceVersion in the precondition ({preconditions.resource_version}) does "
            f"not match the ResourceVersion in record ({rv}). The object might have been "
            "modified"
        )
    if problem:
        # Kubernetes builds this error's resource from the object's kind.
        qualified = f"{d.kind}.{d.group}" if d.group else d.kind
        name = str(m.get("name") or "")
        raise Conflict(
            f'Operation cannot be fulfilled on {qualified} "{name}": {problem}',
            name=name,
            kind=d.kind,
            group=d.group,
        )


@dataclass(frozen=True, slots=True)
class DeleteDecision:
    """``graceful``: the object was marked for a graceful delete (write it, keep it while
    ``grace_period_seconds`` > 0). ``pending``: a graceful delete is already under way and
    this request changes nothing. ``grace_period_seconds``: the period in effect."""

    graceful: bool
    pending: bool
    grace_period_seconds: int | None


def before_delete(strategy: Strategy, obj: Object, requested: int | None) -> DeleteDecision:
    """Decide, and mark ``obj`` (owned by the caller) when the delete is graceful."""
    grace = 1 if requested is not None and requested < 0 else requested
    m = meta(obj)
    current = m.get("deletionGracePeriodSeconds")
    if isinstance(current, int) and current < 0:
        m["deletionGracePeriodSeconds"] = current = 1
    if not strategy.supports_graceful_deletion:
        return DeleteDecision(False, False, grace)
    if m.get("deletionTimestamp"):
        if not current:
            return DeleteDecision(False, False, grace)
        if grace is None:
            return DeleteDecision(False, True, current)
        if grace >= current:
            return DeleteDecision(False, True, grace)
        deadline = parse_time(m["deletionTimestamp"]) or now()
        moment = deadline - timedelta(seconds=current) + timedelta(seconds=grace)
        period = grace
        if moment < now():
            moment = now()
            if period != 0:
                period = 1
        m["deletionTimestamp"] = format_time(moment)
        m["deletionGracePeriodSeconds"] = period
        return DeleteDecision(True, False, period)
    first = strategy.graceful_delete_period(obj, grace)
    if first is None:
        return DeleteDecision(False, False, grace)
    m["deletionTimestamp"] = format_time(now() + timedelta(seconds=first))
    m["deletionGracePeriodSeconds"] = first
    generation = generation_of(obj)
    if generation > 0:
        m["generation"] = generation + 1
    return DeleteDecision(True, False, first)


def _finalizers(obj: Object) -> list[str]:
    value = read_meta(obj).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def _should_orphan(policy: str, opts: DeleteOptions, finalizers: list[str]) -> bool:
    if policy == UNSUPPORTED:
        return False
    if opts.orphan_dependents is not None:
        return opts.orphan_dependents
    if opts.propagation_policy == "Orphan":
        return True
    if opts.propagation_policy in ("Background", "Foreground"):
        return False
    for f in finalizers:
        if f == ORPHAN_FINALIZER:
            return True
        if f == FOREGROUND_FINALIZER:
            return False
    return policy == ORPHAN_DEPENDENTS


def _should_foreground(policy: str, opts: DeleteOptions, finalizers: list[str]) -> bool:
    if policy == UNSUPPORTED or opts.orphan_dependents is not None:
        return False
    if opts.propagation_policy == "Foreground":
        return True
    if opts.propagation_policy in ("Background", "Orphan"):
        return False
    for f in finalizers:
        if f == FOREGROUND_FINALIZER:
            return True
        if f == ORPHAN_FINALIZER:
            return False
    return False


def gc_finalizers(
    strategy: Strategy, ctx: RequestContext, obj: Object, opts: DeleteOptions
) -> list[str] | None:
    """The finalizers ``obj`` must have after this delete, or None when unchanged."""
    current = _finalizers(obj)
    policy = strategy.default_gc_policy(ctx)
    wanted = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if _should_orphan(policy, opts, current):
        wanted.append(ORPHAN_FINALIZER)
    if _should_foreground(policy, opts, current):
        wanted.append(FOREGROUND_FINALIZER)
    if set(wanted) == set(current):
        return None
    return wanted


def mark_as_deleting(obj: Object) -> None:
    m = meta(obj)
    existing = parse_time(m.get("deletionTimestamp"))
    if existing is None:
        generation = generation_of(obj)
        if generation > 0:
            m["generation"] = generation + 1
    moment = now()
    if existing is None or existing > moment:
        m["deletionTimestamp"] = format_time(moment)
    m["deletionGracePeriodSeconds"] = 0
