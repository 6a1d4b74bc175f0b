"""The RBAC authorizer: Kubernetes' rule evaluation over the stored RBAC objects.

A request is allowed when some rule reachable from a binding that applies to its user allows
it (``plugin/pkg/auth/authorizer/rbac``); nothing is ever denied explicitly, so no rule means
"no opinion", which the filter turns into 403.

- Bindings: every ClusterRoleBinding; for a namespaced request also the RoleBindings of that
  namespace. A RoleBinding may name a Role of its namespace or a ClusterRole, whose rules then
  apply only inside the binding's namespace. Cluster-scoped requests consult ClusterRoleBindings
  only.
- Subjects: ``User`` by name; ``Group`` by membership; ``ServiceAccount`` as the user
  ``system:serviceaccount:<namespace>:<name>`` (a RoleBinding's subject without a namespace
  means the binding's own).
- Rules (``rbac/v1`` ``evaluation_helpers.go``): the verb equals one listed or ``*``; the API
  group equals one listed or ``*``; the resource equals one listed, where a subresource request
  is ``<resource>/<subresource>`` (``pods`` does not cover ``pods/status``), ``*`` covers every
  resource and ``*/<sub>`` a subresource of any; ``resourceNames``, when given, must list the
  name. A non-resource request matches ``nonResourceURLs`` entries equal to its path, ``*``, or
  ending in ``*`` as a prefix.
- A binding whose role is missing contributes nothing; its error is the reason given with the
  denial (``RBAC: role.rbac.authorization.k8s.io "x" not found``), as Kubernetes reports it.
  An allow names its binding (``RBAC: allowed by RoleBinding "b/ns" of Role "r" to User
  "u"``), which access reviews report; :meth:`RBACAuthorizer.rules_for` lists the bound rules
  for rules reviews.

:meth:`RBACAuthorizer.authorize` reads the objects from the registry (a consistent read: a
binding created before a request is always seen by it), on the worker thread the authorization
filter uses. In front of it, :class:`~kstore.server.filters.policy_cache.PolicyCache` allows
what its watch-fed copy allows without any read; only what it does not allow reaches the
registry, so a grant is honoured at once and a revocation within the watch delay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from kstore.api.kinds.rbac import GROUP
from kstore.api.validation._render import go_quote
from kstore.errors import NotFound
from kstore.registry.interface import Registry, RequestContext, UserInfo
from kstore.server.filters.authorization import Attributes, Authorizer, Decision, Rules
from kstore.storage.interface import ListOptions

if TYPE_CHECKING:
    from kstore.server.filters.policy_cache import PolicyCache

__all__ = ["RBACAuthorizer", "applies_to", "rule_allows", "rules_allow"]

_SERVICE_ACCOUNT_PREFIX: Final = "system:serviceaccount:"


def _strings(obj: Mapping[str, Any], key: str) -> Sequence[str]:
    value = obj.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else ()


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _resource_matches(rule: Mapping[str, Any], combined: str, subresource: str) -> bool:
    for resource in _strings(rule, "resources"):
        if resource == "*" or resource == combined:
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def _non_resource_url_matches(rule: Mapping[str, Any], path: str) -> bool:
    for url in _strings(rule, "nonResourceURLs"):
        if url == "*" or url == path:
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attributes: Attributes, rule: Mapping[str, Any]) -> bool:
    """``RuleAllows``: whether one PolicyRule covers the request."""
    verbs = _strings(rule, "verbs")
    if "*" not in verbs and attributes.verb not in verbs:
        return False
    if not attributes.resource_request:
        return _non_resource_url_matches(rule, attributes.path)
    groups = _strings(rule, "apiGroups")
    if "*" not in groups and attributes.api_group not in groups:
        return False
    combined = attributes.resource
    if attributes.subresource:
        combined = f"{combined}/{attributes.subresource}"
    if not _resource_matches(rule, combined, attributes.subresource):
        return False
    names = _strings(rule, "resourceNames")
    return not names or attributes.name in names


def rules_allow(attributes: Attributes, rules: Iterable[Any]) -> bool:
    return any(isinstance(r, Mapping) and rule_allows(attributes, r) for r in rules)


def applies_to(subject: Mapping[str, Any], user: UserInfo, binding_namespace: str) -> bool:
    """``appliesToUser``: whether a binding's subject names this user."""
    kind = _str(subject, "kind")
    name = _str(subject, "name")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = _str(subject, "namespace") or binding_namespace
        if not namespace:
            return False
        return user.name == f"{_SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"
    return False


def _binds(binding: Mapping[str, Any], user: UserInfo, namespace: str) -> bool:
    subjects = binding.get("subjects")
    if not isinstance(subjects, list):
        return False
    return any(isinstance(s, Mapping) and applies_to(s, user, namespace) for s in subjects)


def _role_ref(binding: Mapping[str, Any]) -> tuple[str, str]:
    ref = binding.get("roleRef")
    if not isinstance(ref, Mapping):
        return "", ""
    return _str(ref, "kind"), _str(ref, "name")


def _describe_subject(subject: Mapping[str, Any], binding_namespace: str) -> str:
    kind, name = _str(subject, "kind"), _str(subject, "name")
    if kind == "ServiceAccount":
        name = f"{name}/{_str(subject, 'namespace') or binding_namespace}"
    return f"{kind} {go_quote(name)}"


def _describe_binding(binding: Mapping[str, Any], user: UserInfo, binding_namespace: str) -> str:
    """The API server's words for the binding that allowed a request, naming its first
    subject that is the user: ``RoleBinding "name/namespace" of Role "r" to User "u"``."""
    subjects = binding.get("subjects")
    subject = next(
        (
            s
            for s in (subjects if isinstance(subjects, list) else ())
            if isinstance(s, Mapping) and applies_to(s, user, binding_namespace)
        ),
        {},
    )
    metadata = binding.get("metadata")
    name = _str(metadata, "name") if isinstance(metadata, Mapping) else ""
    kind, role = _role_ref(binding)
    described = _describe_subject(subject, binding_namespace)
    if binding_namespace:
        where = f"RoleBinding {go_quote(f'{name}/{binding_namespace}')}"
    else:
        where = f"ClusterRoleBinding {go_quote(name)}"
    return f"{where} of {kind} {go_quote(role)} to {described}"


class RBACAuthorizer(Authorizer):
    """Allows what the RBAC objects stored in ``registry`` grant; no opinion otherwise.
    With a ``cache``, what the cache allows is allowed without blocking."""

    def __init__(self, registry: Registry, cache: PolicyCache | None = None) -> None:
        self._registry = registry
        self._cache = cache

    def allows_without_blocking(self, attributes: Attributes) -> bool:
        return self._cache is not None and self._cache.allows(attributes)

    def _list(self, resource: str, namespace: str) -> list[Any]:
        store = self._registry.store(GROUP, resource)
        return list(store.list(RequestContext(namespace=namespace), ListOptions()).items)

    def role_rules(self, kind: str, name: str, namespace: str) -> Sequence[Any]:
        """The rules of a Role (in ``namespace``) or ClusterRole; NotFound when missing."""
        return self._rules(kind, name, namespace)

    def _rules(self, kind: str, name: str, namespace: str) -> Sequence[Any]:
        """The rules of the role a binding names; NotFound when it does not exist."""
        if kind == "ClusterRole":
            store, ctx, what = self._registry.store(GROUP, "clusterroles"), RequestContext(), kind
        elif kind == "Role" and namespace:
            store = self._registry.store(GROUP, "roles")
            ctx, what = RequestContext(namespace=namespace), kind
        else:
            return ()
        try:
            role = store.get(ctx, name)
        except NotFound:
            raise NotFound(f'{what.lower()}.{GROUP} "{name}" not found') from None
        rules = role.get("rules")
        return rules if isinstance(rules, list) else ()

    def _visit(
        self, user: UserInfo, namespace: str
    ) -> Iterator[tuple[Sequence[Any], str, Mapping[str, Any], str]]:
        """:meth:`visit_rules` with each role's binding and the binding's namespace."""
        bindings = [("", b) for b in self._list("clusterrolebindings", "")]
        if namespace:
            bindings += [(namespace, b) for b in self._list("rolebindings", namespace)]
        for binding_namespace, binding in bindings:
            if not _binds(binding, user, binding_namespace):
                continue
            kind, name = _role_ref(binding)
            if not binding_namespace and kind != "ClusterRole":
                continue
            try:
                yield self._rules(kind, name, binding_namespace), "", binding, binding_namespace
            except NotFound as exc:
                yield (), exc.message, binding, binding_namespace

    def visit_rules(self, user: UserInfo, namespace: str) -> Iterator[tuple[Sequence[Any], str]]:
        """``VisitRulesFor``: the rules of every role bound to ``user`` that apply in
        ``namespace`` ("": cluster-wide bindings only), one role at a time, as (rules, "");
        a binding whose role is missing gives ((), its error)."""
        for rules, error, _, _ in self._visit(user, namespace):
            yield rules, error

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """The rules of every role bound to ``user`` in ``namespace`` (RBAC's ``RulesFor``):
        a rule naming resources and one naming non-resource URLs are listed apart; a
        missing role is an error, not incompleteness."""
        resource: list[Mapping[str, Any]] = []
        non_resource: list[Mapping[str, Any]] = []
        errors: list[str] = []
        for rules, error in self.visit_rules(user, namespace):
            if error:
                errors.append(error)
            for rule in rules:
                if not isinstance(rule, Mapping):
                    continue
                if _strings(rule, "resources"):
                    resource.append(rule)
                if _strings(rule, "nonResourceURLs"):
                    non_resource.append(rule)
        return Rules(tuple(resource), tuple(non_resource), False, tuple(errors))

    def authorize(self, attributes: Attributes) -> Decision:
        errors: list[str] = []
        user = attributes.user
        for rules, error, binding, binding_namespace in self._visit(user, attributes.namespace):
            if error:
                errors.append(error)
            elif rules_allow(attributes, rules):
                # The reason access reviews report (requests only look at ``allowed``).
                source = _describe_binding(binding, user, binding_namespace)
                return Decision(True, True, f"RBAC: allowed by {source}")
        if not errors:
            return Decision(False, False)
        joined = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        return Decision(False, False, f"RBAC: {joined}")
