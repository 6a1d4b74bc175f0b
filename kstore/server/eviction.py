"""The ``pods/eviction`` subresource (``policy/v1`` Eviction), as kube-apiserver's
``EvictionREST``: a delete of the pod that respects its PodDisruptionBudget.

- The Eviction's name must be the pod's (400 ``name in URL does not match name in Eviction
  object``); its ``deleteOptions`` are the delete's (grace period, preconditions, dry run).
- A pod that is Pending, Succeeded or Failed, or already terminating, disrupts nothing: it is
  deleted without looking at budgets (with the pod's resourceVersion as a precondition, unless
  it is terminal, so a pod that became ready meanwhile is not deleted unchecked).
- Otherwise the budgets of the namespace whose selector matches the pod's labels are looked
  at (a budget without a selector matches nothing, an empty one every pod, as the v1 API
  says). None: the pod is deleted. More than one: a Status with code 500 (the subresource does
  not support it). One: an unready pod is deleted without touching the budget when its
  ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or the budget is met
  (``currentHealthy >= desiredHealthy > 0``); else the budget must allow a disruption: a
  budget not yet observed at its generation is 429 with a 10 s retry, a negative
  ``disruptionsAllowed`` is 403, 0 is 429 ``Cannot evict pod as it would violate the pod's
  disruption budget.`` with a ``DisruptionBudget`` cause saying what the budget needs.
  Allowed, ``disruptionsAllowed`` is decremented, the pod recorded in ``disruptedPods`` (the
  ``DisruptionAllowed`` condition turning False at 0) with a status write of the budget that is
  compare-and-swap (retried on conflict with fresh state), then the pod is deleted.
- Before the delete, the pod gets the ``DisruptionTarget`` condition
  (``EvictionByEvictionAPI``), as with the PodDisruptionConditions feature (GA).
- The answer is a ``Status`` of success, code 201.

Invariant: a budget's ``disruptionsAllowed`` is decremented at most once per eviction that
goes on to delete, and never below zero, whatever the concurrency (the decrement is a
conditional write of the budget's status).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.selectors import LabelSelector
from kstore.errors import BadRequest, Cause, Conflict, Forbidden, TooManyRequests
from kstore.registry.interface import (
    DeleteOptions,
    Registry,
    RequestContext,
    UpdateOptions,
)
from kstore.server.options import delete_options
from kstore.storage.interface import ListOptions, Preconditions

__all__ = ["evict"]

_VIOLATION: Final = "Cannot evict pod as it would violate the pod's disruption budget."
_DISRUPTION_BUDGET_CAUSE: Final = "DisruptionBudget"
_MULTIPLE: Final = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)
_TERMINAL: Final = frozenset({"Succeeded", "Failed"})
#: kube-apiserver's ``MaxDisruptedPodSize``.
_MAX_DISRUPTED_PODS: Final = 2000
_API_VERSION: Final = "policy/v1"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _success() -> Object:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def _can_ignore_budget(pod: Object) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    deleting = (pod.get("metadata") or {}).get("deletionTimestamp")
    return phase in (*_TERMINAL, "Pending") or bool(deleting)


def _enforces_resource_version(pod: Object) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in _TERMINAL and not (pod.get("metadata") or {}).get("deletionTimestamp")


def _ready(pod: Object) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _with_resource_version(options: DeleteOptions, pod: Object) -> DeleteOptions:
    version = str((pod.get("metadata") or {}).get("resourceVersion", ""))
    pre = options.preconditions or Preconditions()
    return replace(options, preconditions=replace(pre, resource_version=version))


def _too_many_requests(message: str, retry_after: int = 0) -> TooManyRequests:
    return TooManyRequests(
        _VIOLATION,
        causes=(Cause(_DISRUPTION_BUDGET_CAUSE, message),),
        retry_after_seconds=retry_after,
        details=True,
    )


def _still_processing(name: str) -> TooManyRequests:
    return _too_many_requests(
        f"The disruption budget {name} is still being processed by the server.", 10
    )


def _decoded(body: Any, name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body of the request must be an Eviction object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind and kind != "Eviction":
        raise BadRequest(f"not a Eviction object: {kind}")
    if api_version and api_version not in (_API_VERSION, "policy/v1beta1"):
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({_API_VERSION})"
        )
    if (body.get("metadata") or {}).get("name") != name:
        raise BadRequest("name in URL does not match name in Eviction object")
    return body


def _budgets(registry: Registry, pod: Object, namespace: str) -> list[Object]:
    store = registry.store("policy", "poddisruptionbudgets")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    out = []
    for budget in store.list(RequestContext(namespace=namespace), ListOptions()).items:
        raw = (budget.get("spec") or {}).get("selector")
        if raw is None:
            continue
        try:
            selector = LabelSelector.from_dict(raw)
        except Exception:  # an invalid selector matches no pod
            continue
        if selector.matches(labels):
            out.append(budget)
    return out


def _disruption_allowed_condition(status: dict[str, Any]) -> None:
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    wanted = {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "observedGeneration": status.get("observedGeneration", 0),
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
    }
    conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]
    for condition in conditions:
        if condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != wanted["status"]:
                condition["lastTransitionTime"] = _now()
            condition.update({k: v for k, v in wanted.items() if k != "type"})
            break
    else:
        conditions.append({**wanted, "lastTransitionTime": _now()})
    status["conditions"] = conditions


def _decrement(
    registry: Registry, namespace: str, pod_name: str, budget_name: str, dry_run: bool
) -> None:
    """Take one disruption from the budget (conditional write; retried on conflict)."""

    def taken(current: Object) -> Object:
        meta = current.get("metadata") or {}
        status = dict(current.get("status") or {})
        name = str(meta.get("name", budget_name))
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise _still_processing(name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise Forbidden(
                f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed '
                "is negative",
                group="policy",
                kind="poddisruptionbudget",
                name=name,
            )
        disrupted = dict(status.get("disruptedPods") or {})
        if len(disrupted) > _MAX_DISRUPTED_PODS:
            raise Forbidden(
                f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - '
                "too many evictions not confirmed by PDB controller",
                group="policy",
                kind="poddisruptionbudget",
                name=name,
            )
        if allowed == 0:
            raise _too_many_requests(
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
                f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently"
            )
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            _disruption_allowed_condition(status)
        disrupted[pod_name] = _now()
        status["disruptedPods"] = disrupted
        return {**current, "status": status}

    store = registry.store("policy", "poddisruptionbudgets")
    ctx = RequestContext(namespace=namespace)
    if dry_run:
        taken(store.get(ctx, budget_name))
        return
    store.update(ctx, budget_name, taken, UpdateOptions(subresource="status"))


def _mark_and_delete(registry: Registry, namespace: str, name: str, options: DeleteOptions) -> None:
    """The pod gets the DisruptionTarget condition, then is deleted with ``options``."""
    store = registry.store("", "pods")
    ctx = RequestContext(namespace=namespace)
    if not options.dry_run:

        def marked(current: Object) -> Object:
            meta = current.get("metadata") or {}
            pre = options.preconditions
            if pre is not None and pre.uid and pre.uid != meta.get("uid"):
                raise Conflict(
                    f'Operation cannot be fulfilled on Pod "{name}": the UID in the precondition '
                    f"({pre.uid}) does not match the UID in record ({meta.get('uid')}). The "
                    "object might have been deleted and then recreated",
                    kind="Pod",
                    name=name,
                )
            if (
                pre is not None
                and pre.resource_version
                and pre.resource_version != meta.get("resourceVersion")
            ):
                raise Conflict(
                    f'Operation cannot be fulfilled on Pod "{name}": the ResourceVersion in the '
                    f"precondition ({pre.resource_version}) does not match the ResourceVersion "
                    f"in record ({meta.get('resourceVersion')}). The object might have been "
                    "modified",
                    kind="Pod",
                    name=name,
                )
            status = dict(current.get("status") or {})
            conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]
            target = {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": _now(),
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
            for i, condition in enumerate(conditions):
                if condition.get("type") == "DisruptionTarget":
                    if condition.get("status") == "True":
                        target["lastTransitionTime"] = condition.get("lastTransitionTime")
                    conditions[i] = target
                    break
            else:
                conditions.append(target)
            status["conditions"] = conditions
            return {**current, "status": status}

        result = store.update(ctx, name, marked, UpdateOptions(subresource="status"))
        pre = options.preconditions
        if pre is not None and pre.resource_version:
            version = str(result.object["metadata"]["resourceVersion"])
            options = replace(options, preconditions=replace(pre, resource_version=version))
    store.delete(ctx, name, options)


def evict(
    registry: Registry, namespace: str, name: str, body: Any, dry_run: bool
) -> tuple[int, Object]:
    """Evict pod ``name``: (the HTTP code, the Status to answer with)."""
    eviction = _decoded(body, name)
    raw = eviction.get("deleteOptions")
    options = delete_options(raw if isinstance(raw, dict) else None, {}, [])
    if dry_run and not options.dry_run:
        options = replace(options, dry_run=True)
    pods = registry.store("", "pods")
    ctx = RequestContext(namespace=namespace)
    pod = pods.get(ctx, name)
    if _can_ignore_budget(pod):
        delete = options
        pre = options.preconditions
        if _enforces_resource_version(pod) and (pre is None or not pre.resource_version):
            delete = _with_resource_version(options, pod)
        _mark_and_delete(registry, namespace, name, delete)
        return 201, _success()
    budgets = _budgets(registry, pod, namespace)
    if len(budgets) > 1:
        status = {**_success(), "status": "Failure", "message": _MULTIPLE, "code": 500}
        return 500, status
    checked = False
    if budgets:
        budget = budgets[0]
        spec, status = budget.get("spec") or {}, budget.get("status") or {}
        budget_name = str(budget["metadata"]["name"])
        current, desired = (
            int(status.get("currentHealthy") or 0),
            int(status.get("desiredHealthy") or 0),
        )
        if not _ready(pod) and (
            spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or (current >= desired > 0)
        ):
            checked = True
        else:
            _decrement(registry, namespace, name, budget_name, options.dry_run)
    delete = _with_resource_version(options, pod) if checked else options
    try:
        _mark_and_delete(registry, namespace, name, delete)
    except Exception as exc:
        pre = options.preconditions
        if isinstance(exc, Conflict) and checked and (pre is None or not pre.resource_version):
            raise _still_processing(budget_name) from exc
        raise
    return 201, _success()
