"""LimitRanger: a namespace's LimitRanges default and bound its pods' and claims' resources.

On pod and claim create (kube-apiserver's ``LimitRanger`` plugin; pod updates are left
alone, their containers cannot change), for each LimitRange of the namespace:

- mutating: each ``Container`` item's ``default`` (limits) and ``defaultRequest`` (requests)
  fill what a container or init container leaves unset; the pod is annotated
  ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu, memory request for container
  <name>; cpu limit for container <name>``;
- validating: ``Container`` items bound every container's request and limit by ``min``,
  ``max`` and ``maxLimitRequestRatio``; ``Pod`` items bound the pod's total (containers'
  sum, raised to any larger init container); ``PersistentVolumeClaim`` items bound a claim's
  storage request. Violations are one 403 with kube-apiserver's messages (``minimum cpu usage
  per Container is 100m, but request is 50m``), several joined in brackets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import dict_at, forbidden, is_resource, list_objects
from kstore.registry.plugins._quantities import add, format_like, maximum, value

__all__ = ["ANNOTATION", "hooks"]

ANNOTATION: Final = "kubernetes.io/limit-ranger"
_CONTAINER_FIELDS: Final = (("containers", "container"), ("initContainers", "init container"))

Totals = dict[str, tuple[Fraction, Any]]


def _map(obj: Any, key: str) -> dict[str, Any]:
    found = obj.get(key) if isinstance(obj, dict) else None
    return found if isinstance(found, dict) else {}


def _items(limit_range: Any) -> list[dict[str, Any]]:
    items = _map(limit_range, "spec").get("limits")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _containers(spec: dict[str, Any], field: str) -> list[dict[str, Any]]:
    found = spec.get(field)
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _merge(
    container: dict[str, Any], limits: dict[str, Any], requests: dict[str, Any]
) -> tuple[list[str], list[str]]:
    resources = dict_at(container, "resources")
    set_limits = []
    set_requests = []
    if limits:
        have = dict_at(resources, "limits")
        for name in sorted(limits):
            if name not in have:
                have[name] = limits[name]
                set_limits.append(name)
        if not have:
            del resources["limits"]
    if requests:
        have = dict_at(resources, "requests")
        for name in sorted(requests):
            if name not in have:
                have[name] = requests[name]
                set_requests.append(name)
        if not have:
            del resources["requests"]
    return set_requests, set_limits


def _mutate_pod(limit_range: Any, pod: dict[str, Any]) -> None:
    limits: dict[str, Any] = {}
    requests: dict[str, Any] = {}
    for item in _items(limit_range):
        if item.get("type") == "Container":
            requests.update(_map(item, "defaultRequest"))
            limits.update(_map(item, "default"))
    if not limits and not requests:
        return
    spec = _map(pod, "spec")
    notes = []
    for field, label in _CONTAINER_FIELDS:
        for container in _containers(spec, field):
            set_requests, set_limits = _merge(container, limits, requests)
            name = container.get("name")
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {label} {name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {label} {name}")
    if notes:
        annotations = dict_at(dict_at(pod, "metadata"), "annotations")
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _minimum(kind: str, name: str, bound: Any, requests: Totals, limits: Totals) -> str | None:
    enforced = value(bound)
    if name not in requests:
        return f"minimum {name} usage per {kind} is {bound}.  No request is specified"
    amount, text = requests[name]
    if amount < enforced:
        shown = format_like(amount, text)
        return f"minimum {name} usage per {kind} is {bound}, but request is {shown}"
    if name in limits and limits[name][0] < enforced:
        shown = format_like(*limits[name])
        return f"minimum {name} usage per {kind} is {bound}, but limit is {shown}"
    return None


def _maximum(kind: str, name: str, bound: Any, requests: Totals, limits: Totals) -> str | None:
    enforced = value(bound)
    if name not in limits:
        return f"maximum {name} usage per {kind} is {bound}.  No limit is specified"
    if limits[name][0] > enforced:
        shown = format_like(*limits[name])
        return f"maximum {name} usage per {kind} is {bound}, but limit is {shown}"
    if name in requests and requests[name][0] > enforced:
        shown = format_like(*requests[name])
        return f"maximum {name} usage per {kind} is {bound}, but request is {shown}"
    return None


def _ratio(kind: str, name: str, bound: Any, requests: Totals, limits: Totals) -> str | None:
    request = requests[name][0] if name in requests else Fraction(0)
    limit = limits[name][0] if name in limits else Fraction(0)
    if request == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {bound}, but no request is "
            "specified or request is 0"
        )
    if limit == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {bound}, but no limit is "
            "specified or limit is 0"
        )
    observed = limit / request
    if observed > value(bound):
        return (
            f"{name} max limit to request ratio per {kind} is {bound}, but provided ratio is "
            f"{float(observed):f}"
        )
    return None


def _check(kind: str, item: dict[str, Any], requests: Totals, limits: Totals) -> list[str]:
    errors = []
    for key, check in (("min", _minimum), ("max", _maximum), ("maxLimitRequestRatio", _ratio)):
        for name, bound in sorted(_map(item, key).items()):
            error = check(kind, name, bound, requests, limits)
            if error is not None:
                errors.append(error)
    return errors


def _totals(resources: Any) -> Totals:
    totals: Totals = {}
    add(totals, resources)
    return totals


def _validate_pod(limit_range: Any, pod: dict[str, Any]) -> list[str]:
    spec = _map(pod, "spec")
    errors: list[str] = []
    for item in _items(limit_range):
        kind = item.get("type")
        if kind == "Container":
            for field, _ in _CONTAINER_FIELDS:
                for container in _containers(spec, field):
                    resources = _map(container, "resources")
                    errors += _check(
                        "Container",
                        item,
                        _totals(resources.get("requests")),
                        _totals(resources.get("limits")),
                    )
        elif kind == "Pod":
            requests: Totals = {}
            limits: Totals = {}
            for container in _containers(spec, "containers"):
                resources = _map(container, "resources")
                add(requests, resources.get("requests"))
                add(limits, resources.get("limits"))
            for container in _containers(spec, "initContainers"):
                resources = _map(container, "resources")
                maximum(requests, resources.get("requests"))
                maximum(limits, resources.get("limits"))
            errors += _check("Pod", item, requests, limits)
    return errors


def _validate_claim(limit_range: Any, claim: dict[str, Any]) -> list[str]:
    requests = _totals(_map(_map(claim, "spec"), "resources").get("requests"))
    errors = []
    kind = "PersistentVolumeClaim"
    for item in _items(limit_range):
        if item.get("type") != kind:
            continue
        for name, bound in sorted(_map(item, "min").items()):
            error = _minimum(kind, name, bound, requests, {})
            if error is not None:
                errors.append(error)
        for name, bound in sorted(_map(item, "max").items()):
            if name not in requests:
                errors.append(
                    f"maximum {name} usage per {kind} is {bound}.  No request is specified"
                )
            elif requests[name][0] > value(bound):
                shown = format_like(*requests[name])
                errors.append(f"maximum {name} usage per {kind} is {bound}, but request is {shown}")
    return errors


def _joined(errors: list[str]) -> str:
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def hooks(registry: Registry) -> tuple[AdmissionHook | None, AdmissionHook | None]:
    # The LimitRanges the mutating phase read, for the validating phase of the same request
    # (both run on the request's thread; a request's warnings list identifies it).
    seen = threading.local()

    def ranges(attributes: AdmissionAttributes) -> list[Any]:
        last = getattr(seen, "last", None)
        if last is not None and last[0] is attributes.warnings:
            seen.last = None
            found: list[Any] = last[1]
            return found
        found = list_objects(registry, "", "limitranges", attributes.namespace)
        found.sort(key=lambda r: str(_map(r, "metadata").get("name")))
        seen.last = (attributes.warnings, found)
        return found

    def admit(attributes: AdmissionAttributes) -> None:
        if not is_resource(attributes, "", "Pod", Operation.CREATE):
            return
        assert isinstance(attributes.object, dict)
        for limit_range in ranges(attributes):
            _mutate_pod(limit_range, attributes.object)

    def validate(attributes: AdmissionAttributes) -> None:
        check: Callable[[Any, dict[str, Any]], list[str]]
        if is_resource(attributes, "", "Pod", Operation.CREATE):
            check = _validate_pod
        elif is_resource(
            attributes, "", "PersistentVolumeClaim", Operation.CREATE, Operation.UPDATE
        ):
            check = _validate_claim
        else:
            return
        assert isinstance(attributes.object, dict)
        errors: list[str] = []
        for limit_range in ranges(attributes):
            errors += check(limit_range, attributes.object)
        if errors:
            raise forbidden(attributes, _joined(errors))

    return admit, validate
