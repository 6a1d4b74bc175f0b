"""ResourceQuota: what a namespace's quotas allow is charged at admission.

On create (and on the updates that change usage: a pod's or claim's requests), for each
ResourceQuota of the namespace whose ``spec.hard`` names something the object uses
(kube-apiserver's ``ResourceQuota`` plugin, the last of the chain):

- usage: ``count/<resource>[.<group>]`` for every kind; ``pods``, ``services``, ``secrets``,
  ``configmaps``, ``persistentvolumeclaims``, ``replicationcontrollers``, ``resourcequotas``;
  a pod's compute resources (``cpu``/``requests.cpu``, ``memory``/``requests.memory``,
  ``limits.*``, ``ephemeral-storage``; containers summed, raised to any larger init container,
  plus the pod's overhead); a claim's ``requests.storage`` and the per-class
  ``<class>.storageclass.storage.k8s.io/requests.storage`` and ``/persistentvolumeclaims``;
  ``services.loadbalancers`` and ``services.nodeports``;
- a pod whose containers do not all request (or limit) a compute resource the quota bounds is
  refused: 403 ``failed quota: <name>: must specify limits.cpu for: <containers>; ...``;
- usage past ``hard`` is refused: 403 ``exceeded quota: <name>, requested: pods=1, used:
  pods=2, limited: pods=2``;
- otherwise ``status.used`` (and ``status.hard``) of the quota is updated by a
  compare-and-swap of its status, retried on conflict with the check made again, so
  concurrent creates never overrun a quota. A dry run is checked and not charged.

Quota scopes (``Terminating``, ``NotTerminating``, ``BestEffort``, ``NotBestEffort``,
``PriorityClass`` selectors) select the pods a quota counts. Where a quota's
``status.used`` lacks a resource (no quota controller computed it yet), its usage is counted
from the namespace's objects, where kube-apiserver would refuse with ``status unknown``.
Objects deleted are not given back here: that is the ``resourcequota`` controller's recount
(:mod:`kstore.controllers.resource_quota`).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.registry.interface import (
    AdmissionAttributes,
    AdmissionHook,
    Operation,
    Registry,
    RequestContext,
    UpdateOptions,
)
from kstore.registry.plugins._common import forbidden, list_objects
from kstore.registry.plugins._quantities import format_like, value
from kstore.registry.strategies.base import copy_value

__all__ = ["count_usage", "hooks", "recounted_used"]

_LEGACY_COUNTS: Final = {
    ("", "pods"): "pods",
    ("", "services"): "services",
    ("", "secrets"): "secrets",
    ("", "configmaps"): "configmaps",
    ("", "persistentvolumeclaims"): "persistentvolumeclaims",
    ("", "replicationcontrollers"): "replicationcontrollers",
    ("", "resourcequotas"): "resourcequotas",
}
_STANDARD: Final = ("cpu", "memory", "ephemeral-storage")
#: The compute resources every container must give when a quota bounds them.
_MUST_SPECIFY: Final = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_CLASS_SUFFIX: Final = ".storageclass.storage.k8s.io/"

Usage = dict[str, tuple[Fraction, Any]]


def _map(obj: Any, key: str) -> dict[str, Any]:
    found = obj.get(key) if isinstance(obj, dict) else None
    return found if isinstance(found, dict) else {}


def _list(obj: Any, key: str) -> list[dict[str, Any]]:
    found = obj.get(key) if isinstance(obj, dict) else None
    return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []


def _put(usage: Usage, name: str, amount: Fraction, like: Any = None) -> None:
    old = usage.get(name)
    usage[name] = (amount + (old[0] if old else 0), old[1] if old else like)


def _container_usage(container: dict[str, Any]) -> Usage:
    resources = _map(container, "resources")
    usage: Usage = {}
    for name, text in _map(resources, "requests").items():
        if name in _STANDARD:
            usage[name] = (value(text), text)
        usage[f"requests.{name}"] = (value(text), text)
    for name, text in _map(resources, "limits").items():
        usage[f"limits.{name}"] = (value(text), text)
    return usage


def _pod_usage(pod: Any) -> Usage:
    spec = _map(pod, "spec")
    phase = _map(pod, "status").get("phase")
    usage: Usage = {"pods": (Fraction(1), None), "count/pods": (Fraction(1), None)}
    if phase in ("Succeeded", "Failed"):
        return {}
    compute: Usage = {}
    for container in _list(spec, "containers"):
        for name, (amount, like) in _container_usage(container).items():
            _put(compute, name, amount, like)
    for container in _list(spec, "initContainers"):
        for name, (amount, like) in _container_usage(container).items():
            if name not in compute or amount > compute[name][0]:
                compute[name] = (amount, like)
    for name, text in _map(spec, "overhead").items():
        for key in (f"requests.{name}", f"limits.{name}", *((name,) if name in _STANDARD else ())):
            if key in compute:
                _put(compute, key, value(text), text)
    usage.update(compute)
    return usage


def _claim_usage(claim: Any) -> Usage:
    spec = _map(claim, "spec")
    storage = _map(_map(spec, "resources"), "requests").get("storage")
    usage: Usage = {"persistentvolumeclaims": (Fraction(1), None)}
    usage["count/persistentvolumeclaims"] = (Fraction(1), None)
    class_name = spec.get("storageClassName")
    if class_name:
        usage[f"{class_name}{_CLASS_SUFFIX}persistentvolumeclaims"] = (Fraction(1), None)
    if storage is not None:
        usage["requests.storage"] = (value(storage), storage)
        if class_name:
            usage[f"{class_name}{_CLASS_SUFFIX}requests.storage"] = (value(storage), storage)
    return usage


def _service_usage(service: Any) -> Usage:
    spec = _map(service, "spec")
    usage: Usage = {"services": (Fraction(1), None), "count/services": (Fraction(1), None)}
    kind = spec.get("type")
    if kind == "LoadBalancer":
        usage["services.loadbalancers"] = (Fraction(1), None)
    if kind in ("NodePort", "LoadBalancer"):
        usage["services.nodeports"] = (Fraction(len(_list(spec, "ports"))), None)
    return usage


def _usage(group: str, plural: str, obj: Any) -> Usage:
    if (group, plural) == ("", "pods"):
        return _pod_usage(obj)
    if (group, plural) == ("", "persistentvolumeclaims"):
        return _claim_usage(obj)
    if (group, plural) == ("", "services"):
        return _service_usage(obj)
    usage: Usage = {f"count/{plural}.{group}" if group else f"count/{plural}": (Fraction(1), None)}
    legacy = _LEGACY_COUNTS.get((group, plural))
    if legacy is not None:
        usage[legacy] = (Fraction(1), None)
    return usage


def _best_effort(pod: Any) -> bool:
    spec = _map(pod, "spec")
    return not any(
        _map(_map(c, "resources"), "requests") or _map(_map(c, "resources"), "limits")
        for field in ("containers", "initContainers")
        for c in _list(spec, field)
    )


def _selected(quota: Any, plural: str, group: str, obj: Any) -> bool:
    spec = _map(quota, "spec")
    scopes = [str(s) for s in spec.get("scopes") or ()]
    expressions = _list(_map(spec, "scopeSelector"), "matchExpressions")
    if not scopes and not expressions:
        return True
    if (group, plural) != ("", "pods"):
        return False
    pod_spec = _map(obj, "spec")
    terminating = pod_spec.get("activeDeadlineSeconds") is not None
    checks = {
        "Terminating": terminating,
        "NotTerminating": not terminating,
        "BestEffort": _best_effort(obj),
        "NotBestEffort": not _best_effort(obj),
    }
    for scope in scopes:
        if not checks.get(scope, False):
            return False
    for expression in expressions:
        scope = str(expression.get("scopeName"))
        if scope != "PriorityClass":
            if not checks.get(scope, False):
                return False
            continue
        name = pod_spec.get("priorityClassName")
        operator = expression.get("operator")
        values = [str(v) for v in expression.get("values") or ()]
        if operator == "In" and name not in values:
            return False
        if operator == "NotIn" and name in values:
            return False
        if operator == "Exists" and not name:
            return False
        if operator == "DoesNotExist" and name:
            return False
    return True


def _pretty(usage: dict[str, str]) -> str:
    return ",".join(f"{k}={usage[k]}" for k in sorted(usage))


def count_usage(
    registry: Registry, quota: Object, namespace: str, names: Iterable[str]
) -> dict[str, Fraction]:
    """The usage of ``names`` (resource names of ``spec.hard``) by the objects of
    ``namespace`` that ``quota``'s scopes select, counted from the store as of now (what the
    ``resourcequota`` controller writes, and what admission uses where ``status.used`` lacks
    a name)."""
    wanted = set(names)
    totals: dict[str, Fraction] = dict.fromkeys(wanted, Fraction(0))
    sources = {("", "pods"), ("", "persistentvolumeclaims"), ("", "services")}
    for name in wanted:
        if name.startswith("count/"):
            resource, _, group = name.removeprefix("count/").partition(".")
            sources.add((group, resource))
    for key, legacy in _LEGACY_COUNTS.items():
        if legacy in wanted:
            sources.add(key)
    for group, plural in sorted(sources):
        for obj in list_objects(registry, group, plural, namespace):
            if not _selected(quota, plural, group, obj):
                continue
            for name, (amount, _) in _usage(group, plural, obj).items():
                if name in totals:
                    totals[name] += amount
    return totals


def recounted_used(registry: Registry, quota: Object, namespace: str) -> dict[str, str]:
    """``status.used`` of ``quota`` as counted from the objects now: every name of
    ``spec.hard``, each formatted as its hard limit is."""
    hard = _map(_map(quota, "spec"), "hard")
    totals = count_usage(registry, quota, namespace, hard)
    return {name: format_like(totals[name], hard[name]) for name in sorted(hard)}


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    def charge(
        attributes: AdmissionAttributes,
        quota: Object,
        delta: Usage,
        interesting: set[str],
    ) -> None:
        name = str(quota["metadata"]["name"])
        namespace = attributes.namespace

        def updated(current: Object) -> Object:
            hard = _map(_map(current, "spec"), "hard")
            used = _map(_map(current, "status"), "used")
            missing = {n for n in interesting if n not in used}
            extra = count_usage(registry, current, namespace, missing) if missing else {}
            totals = {n: extra[n] if n in extra else value(used.get(n)) for n in interesting}
            over = sorted(n for n in interesting if totals[n] + delta[n][0] > value(hard.get(n)))
            if over:
                requested = {n: format_like(delta[n][0], delta[n][1] or hard[n]) for n in over}
                now = {n: format_like(totals[n], used.get(n) or hard[n]) for n in over}
                limited = {n: str(hard[n]) for n in over}
                raise forbidden(
                    attributes,
                    f"exceeded quota: {name}, requested: {_pretty(requested)}, used: "
                    f"{_pretty(now)}, limited: {_pretty(limited)}",
                )
            if attributes.dry_run:
                return current
            out = copy_value(current)
            status = out.setdefault("status", {})
            status["hard"] = dict(hard)
            new_used = dict(_map(status, "used"))
            for n in interesting:
                new_used[n] = format_like(totals[n] + delta[n][0], hard[n])
            status["used"] = new_used
            return out

        store = registry.store("", "resourcequotas")
        ctx = RequestContext(namespace=namespace)
        if attributes.dry_run:
            updated(store.get(ctx, name))
            return
        store.update(ctx, name, updated, UpdateOptions(subresource="status"))

    def validate(attributes: AdmissionAttributes) -> None:
        definition = attributes.definition
        if attributes.subresource or definition.resource is None or not attributes.namespace:
            return
        if not isinstance(attributes.object, dict):
            return
        group, plural = definition.group, definition.resource.plural
        if attributes.operation is Operation.UPDATE and (group, plural) not in (
            ("", "pods"),
            ("", "persistentvolumeclaims"),
        ):
            return
        if attributes.operation not in (Operation.CREATE, Operation.UPDATE):
            return
        # The quotas first: most namespaces have none, and then usage is not worth computing.
        quotas = list_objects(registry, "", "resourcequotas", attributes.namespace)
        if not quotas:
            return
        if attributes.operation is Operation.CREATE:
            delta = _usage(group, plural, attributes.object)
        elif attributes.operation is Operation.UPDATE and (group, plural) in (
            ("", "pods"),
            ("", "persistentvolumeclaims"),
        ):
            new = _usage(group, plural, attributes.object)
            old = _usage(group, plural, attributes.old_object)
            delta = {
                n: (amount - old.get(n, (Fraction(0), None))[0], like)
                for n, (amount, like) in new.items()
                if amount > old.get(n, (Fraction(0), None))[0]
            }
        else:
            return
        if not delta:
            return
        work = []
        for quota in sorted(quotas, key=lambda q: str(q["metadata"]["name"])):
            hard = _map(_map(quota, "spec"), "hard")
            if not hard or not _selected(quota, plural, group, attributes.object):
                continue
            if (group, plural) == ("", "pods") and attributes.operation is Operation.CREATE:
                required = _MUST_SPECIFY & set(hard)
                missing: dict[str, list[str]] = {}
                for field in ("containers", "initContainers"):
                    for container in _list(_map(attributes.object, "spec"), field):
                        have = _container_usage(container)
                        for resource in sorted(required - set(have)):
                            missing.setdefault(resource, []).append(str(container.get("name")))
                if missing:
                    parts = [f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing)]
                    raise forbidden(
                        attributes,
                        f"failed quota: {quota['metadata']['name']}: must specify "
                        + "; ".join(parts),
                    )
            interesting = set(hard) & set(delta)
            if interesting:
                work.append((quota, interesting))
        for quota, interesting in work:
            charge(attributes, quota, delta, interesting)

    return None, validate
