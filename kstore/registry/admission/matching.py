"""Which admission requests a webhook or a policy applies to: rules, match policy, selectors.

Pure functions over a :class:`MatchRequest` (the request's group/version/resource, subresource,
operation, namespace, name, kind, objects, and the resources equivalent to it), with the
namespace's labels looked up through a caller's function. Both the admission webhooks and
the admission policies decide with them, in Kubernetes' order:

1. the ``namespaceSelector``: a request for a cluster-scoped resource always matches, except
   for Namespace objects themselves, which match on their own labels (the request object's on
   create and update, the stored namespace's otherwise);
2. the ``objectSelector``: on the labels of the object or of the old object (either matching
   is enough; an empty selector matches everything, including requests without objects);
3. the rules (a policy first checks its ``excludeResourceRules``): operations (``*`` for all),
   ``apiGroups``, ``apiVersions`` and ``resources`` (``*`` for all, ``*/*`` for every resource
   and subresource, ``pods/*``, ``*/status``), ``scope`` (``Cluster``, ``Namespaced``, ``*``),
   and for policies ``resourceNames``;
4. with ``matchPolicy: Equivalent``, when no rule matches the request as it came, the rules are
   tried again on each resource equivalent to it (the same kind at another version or group),
   earlier rules first; the webhook or policy then sees the object at the matched version.

The result names the resource and kind that matched (:class:`Match`), or is None. A namespace
selector that needs a namespace that does not exist fails with NotFound, but only once the
rules match (as Kubernetes reports it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson

from kstore.api.gvk import GroupVersionKind, GroupVersionResource, Object
from kstore.api.selectors import LabelSelector
from kstore.codec.json import dumps as json_dumps
from kstore.errors import KStoreError, NotFound
from kstore.registry.interface import AdmissionAttributes

__all__ = [
    "EXEMPT_KINDS",
    "Match",
    "MatchRequest",
    "NamespaceLabels",
    "constraints_match",
    "match_request",
    "object_selector_matches",
    "rule_matches",
    "rules_match",
    "webhook_match",
]

#: The labels of a namespace by name; None when there is no such namespace.
NamespaceLabels = Callable[[str], Mapping[str, str] | None]

_NAMESPACES: Final = GroupVersionResource("", "v1", "namespaces")

#: (group, kind) of the admission configuration kinds: never sent to webhooks nor mutated by
#: policies, so that a broken one cannot lock its own configuration in (Kubernetes'
#: ``IsExemptAdmissionConfigurationResource``).
EXEMPT_KINDS: Final = frozenset(
    ("admissionregistration.k8s.io", kind)
    for kind in (
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
    )
)


@dataclass(frozen=True, kw_only=True, slots=True)
class MatchRequest:
    """An admission request as matching sees it.

    ``namespace`` is the request's namespace ("" for cluster-scoped resources). ``equivalents``
    are the other (resource, kind) pairs the same objects are served as, in the order they are
    tried for ``matchPolicy: Equivalent``.
    """

    operation: str
    resource: GroupVersionResource
    kind: GroupVersionKind
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    object: Object | None = None
    old_object: Object | None = None
    equivalents: Sequence[tuple[GroupVersionResource, GroupVersionKind]] = ()


@dataclass(frozen=True, slots=True)
class Match:
    """The resource and kind a webhook or policy matched (the request's own or an equivalent)."""

    resource: GroupVersionResource
    kind: GroupVersionKind


def match_request(
    attributes: AdmissionAttributes,
    served: Callable[[GroupVersionKind], bool] | None = None,
) -> MatchRequest:
    """The :class:`MatchRequest` of a registry's admission attributes: the request's version
    (the kind's storage version when the request did not say), and every other version of the
    kind ``served`` (e.g. ``Scheme.is_served``; None: every version) as equivalents, in the
    kind's order."""
    definition = attributes.definition
    info = definition.resource
    plural = info.plural if info is not None else ""
    version = attributes.request_version
    requested = (
        version.version
        if version is not None and version.group == definition.group
        else definition.storage_group_version.version
    )
    resource = GroupVersionResource(definition.group, requested, plural)
    kind = GroupVersionKind(definition.group, requested, definition.kind)
    equivalents = tuple(
        (GroupVersionResource(definition.group, v.version, plural), gvk)
        for v in definition.versions
        if v.version != requested
        for gvk in (GroupVersionKind(definition.group, v.version, definition.kind),)
        if served is None or served(gvk)
    )
    return MatchRequest(
        operation=str(attributes.operation),
        resource=resource,
        kind=kind,
        subresource=attributes.subresource,
        namespace=attributes.namespace,
        name=attributes.name,
        object=attributes.object,
        old_object=attributes.old_object,
        equivalents=equivalents,
    )


# --------------------------------------------------------------------------------- rules


def _strings(value: Any) -> Sequence[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else ()


def _exact_or_wildcard(items: Sequence[str], requested: str) -> bool:
    return any(item == "*" or item == requested for item in items)


def _scope_matches(scope: Any, request: MatchRequest, resource: GroupVersionResource) -> bool:
    # A Namespace object is cluster-scoped, though its requests carry its name as namespace.
    if scope is None or scope == "*":
        return True
    if scope == "Namespaced":
        return resource != _NAMESPACES and request.namespace != ""
    if scope == "Cluster":
        return resource == _NAMESPACES or request.namespace == ""
    return False


def _resource_matches(patterns: Sequence[str], resource: str, subresource: str) -> bool:
    for pattern in patterns:
        res, _, sub = pattern.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def rule_matches(
    rule: Mapping[str, Any],
    request: MatchRequest,
    resource: GroupVersionResource | None = None,
) -> bool:
    """Whether a ``RuleWithOperations`` matches the request (at ``resource``, default the
    request's own)."""
    res = request.resource if resource is None else resource
    return (
        _scope_matches(rule.get("scope"), request, res)
        and _exact_or_wildcard(_strings(rule.get("operations")), request.operation)
        and _exact_or_wildcard(_strings(rule.get("apiGroups")), res.group)
        and _exact_or_wildcard(_strings(rule.get("apiVersions")), res.version)
        and _resource_matches(_strings(rule.get("resources")), res.resource, request.subresource)
    )


def _name_matches(rule: Mapping[str, Any], request: MatchRequest) -> bool:
    names = _strings(rule.get("resourceNames"))
    return not names or request.name in names


def rules_match(
    rules: Any, request: MatchRequest, match_policy: Any, *, named: bool = False
) -> Match | None:
    """The first match of ``rules`` (a list of rules with operations; ``named``: also their
    ``resourceNames``) on the request, then, with ``match_policy`` Equivalent, on each of its
    equivalent resources, earlier rules first."""
    candidates = [r for r in rules if isinstance(r, Mapping)] if isinstance(rules, list) else []
    for rule in candidates:
        if rule_matches(rule, request) and (not named or _name_matches(rule, request)):
            return Match(request.resource, request.kind)
    if match_policy != "Equivalent":
        return None
    for rule in candidates:
        for resource, kind in request.equivalents:
            if resource == request.resource:
                continue
            if rule_matches(rule, request, resource) and (
                not named or _name_matches(rule, request)
            ):
                return Match(resource, kind)
    return None


# ----------------------------------------------------------------------------- selectors

_selector_lock = threading.Lock()
_selectors: dict[bytes, LabelSelector] = {}
_SELECTOR_CACHE_SIZE: Final = 1024


def _selector(value: Any) -> LabelSelector:
    """A parsed ``LabelSelector`` (absent: everything, as the defaults make it), cached by its
    JSON: configurations are read far more often than they change."""
    if not value:
        return LabelSelector.everything()
    key = json_dumps(value, option=orjson.OPT_SORT_KEYS)
    with _selector_lock:
        found = _selectors.get(key)
    if found is not None:
        return found
    parsed = LabelSelector.from_dict(value)
    with _selector_lock:
        if len(_selectors) >= _SELECTOR_CACHE_SIZE:
            _selectors.clear()
        _selectors[key] = parsed
    return parsed


def _labels(obj: Object | None) -> Mapping[str, str] | None:
    if not isinstance(obj, Mapping):
        return None
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def object_selector_matches(selector: Any, request: MatchRequest) -> bool:
    """Whether the object or the old object carries labels the selector selects (an empty
    selector selects every request)."""
    parsed = _selector(selector)
    if parsed.empty():
        return True
    for obj in (request.object, request.old_object):
        labels = _labels(obj)
        if labels is not None and parsed.matches(labels):
            return True
    return False


def _namespace_selector_matches(
    selector: Any, request: MatchRequest, namespace_labels: NamespaceLabels
) -> bool:
    """Kubernetes' namespace matcher; NotFound when the namespace does not exist."""
    is_namespace = request.resource.group == "" and request.resource.resource == "namespaces"
    if not request.namespace and not is_namespace:
        return True  # a cluster-scoped object other than a Namespace is never exempted
    parsed = _selector(selector)
    if parsed.empty():
        return True
    if is_namespace and not request.subresource and request.operation in ("CREATE", "UPDATE"):
        labels = _labels(request.object) or {}
    else:
        name = request.namespace or request.name
        found = namespace_labels(name)
        if found is None:
            raise NotFound(f'namespaces "{name}" not found', kind="namespaces", name=name)
        labels = found
    return parsed.matches(labels)


def _selectors_then_rules(
    selectors: Mapping[str, Any],
    request: MatchRequest,
    namespace_labels: NamespaceLabels,
    rules: Callable[[], Match | None],
) -> Match | None:
    # Selector errors count only when the rules match (Kubernetes' order of reporting).
    error: KStoreError | None = None
    try:
        if not _namespace_selector_matches(
            selectors.get("namespaceSelector"), request, namespace_labels
        ):
            return None
    except KStoreError as exc:
        error = exc
    try:
        if not object_selector_matches(selectors.get("objectSelector"), request):
            return None
    except KStoreError as exc:
        error = error or exc
    matched = rules()
    if matched is not None and error is not None:
        raise error
    return matched


def webhook_match(
    webhook: Mapping[str, Any], request: MatchRequest, namespace_labels: NamespaceLabels
) -> Match | None:
    """Whether an admission webhook (a configuration's ``webhooks[]`` entry) is called for the
    request, and at which resource and kind (``matchConditions`` are not evaluated here)."""
    return _selectors_then_rules(
        webhook,
        request,
        namespace_labels,
        lambda: rules_match(webhook.get("rules"), request, webhook.get("matchPolicy")),
    )


def constraints_match(
    match_resources: Mapping[str, Any] | None,
    request: MatchRequest,
    namespace_labels: NamespaceLabels,
) -> Match | None:
    """Whether a policy's ``matchConstraints`` (or a binding's ``matchResources``) select the
    request: selectors, then ``excludeResourceRules`` (which win), then ``resourceRules`` (none
    means every resource). None ``match_resources`` matches every request."""
    if match_resources is None:
        return Match(request.resource, request.kind)
    policy = match_resources.get("matchPolicy")

    def rules() -> Match | None:
        if rules_match(match_resources.get("excludeResourceRules"), request, policy, named=True):
            return None
        include = match_resources.get("resourceRules")
        if not include:
            return Match(request.resource, request.kind)
        return rules_match(include, request, policy, named=True)

    return _selectors_then_rules(match_resources, request, namespace_labels, rules)
