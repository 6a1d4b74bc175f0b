"""RBAC privilege-escalation prevention: nobody grants, through RBAC objects, more than they hold.

As kube-apiserver's RBAC storage (``pkg/registry/rbac``), a validating admission hook on the
RBAC kinds, for requests of authenticated or anonymous users (calls that carry no user, from
embedding code, are trusted as the API server's own loopback client is):

- creating or updating a Role or ClusterRole is allowed to ``system:masters``, to a user the
  authorizer allows the verb ``escalate`` on that role, and otherwise only when every rule of
  the role is covered by the rules the user holds in that namespace (cluster-wide rules only,
  for a ClusterRole);
- creating or updating a RoleBinding or ClusterRoleBinding is allowed to ``system:masters``,
  to a user allowed the verb ``bind`` on the referenced role, and otherwise only when the user
  holds every rule of the referenced role (a missing role is NotFound).

A refusal is 403 with Kubernetes' wording: ``<resource> "<name>" is forbidden: user "<user>"
(groups=[...]) is attempting to grant RBAC permissions not currently held:`` and the missing
rules, one per line.

Coverage is ``policy_comparator.go``'s: the rule to grant is broken down into single-verb,
single-group, single-resource (and single-name) rules; each must be covered by one held rule
(``*`` covers any verb, group or resource, ``*/<sub>`` any resource's subresource, a held rule
without resourceNames any name, a non-resource URL ending in ``*`` its prefix).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.kinds.rbac import GROUP
from kstore.api.validation._render import go_quote
from kstore.errors import Forbidden
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, UserInfo
from kstore.server.filters.authentication import current_user
from kstore.server.filters.authorization import SYSTEM_PRIVILEGED_GROUP, Attributes
from kstore.server.filters.rbac import RBACAuthorizer

__all__ = ["covers", "escalation_check"]

_ROLE_RESOURCES: Final = {"Role": "roles", "ClusterRole": "clusterroles"}
_BINDING_RESOURCES: Final = {
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}


def _strings(rule: Mapping[str, Any], key: str) -> list[str]:
    value = rule.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _breakdown(rule: Mapping[str, Any]) -> list[dict[str, list[str]]]:
    """``BreakdownRule``: one rule per verb and group/resource/name, or verb and URL."""
    verbs = _strings(rule, "verbs")
    out: list[dict[str, list[str]]] = []
    for group in _strings(rule, "apiGroups"):
        for resource in _strings(rule, "resources"):
            names = _strings(rule, "resourceNames")
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                if names:
                    out.extend({**base, "resourceNames": [n]} for n in names)
                else:
                    out.append(base)
    for url in _strings(rule, "nonResourceURLs"):
        out.extend({"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs)
    return out


def _resource_covered(held: Sequence[str], resource: str) -> bool:
    if "*" in held or resource in held:
        return True
    _, slash, sub = resource.partition("/")
    return bool(slash) and f"*/{sub}" in held


def _url_covered(held: Sequence[str], url: str) -> bool:
    return any(h == url or (h.endswith("*") and url.startswith(h.rstrip("*"))) for h in held)


def _rule_covers(owner: Mapping[str, Any], sub: Mapping[str, list[str]]) -> bool:
    verbs = _strings(owner, "verbs")
    if "*" not in verbs and not set(sub["verbs"]) <= set(verbs):
        return False
    groups = _strings(owner, "apiGroups")
    if "*" not in groups and not set(sub.get("apiGroups", [])) <= set(groups):
        return False
    resources = _strings(owner, "resources")
    if not all(_resource_covered(resources, r) for r in sub.get("resources", [])):
        return False
    urls = _strings(owner, "nonResourceURLs")
    if not all(_url_covered(urls, u) for u in sub.get("nonResourceURLs", [])):
        return False
    owner_names = _strings(owner, "resourceNames")
    if not sub.get("resourceNames"):
        return not owner_names
    return not owner_names or set(sub["resourceNames"]) <= set(owner_names)


def covers(owner_rules: Sequence[Any], rules: Sequence[Any]) -> list[dict[str, list[str]]]:
    """``Covers``: the broken-down rules of ``rules`` that no rule of ``owner_rules`` covers
    (empty when the owner holds them all)."""
    owners = [r for r in owner_rules if isinstance(r, Mapping)]
    missing: list[dict[str, list[str]]] = []
    for rule in rules:
        if not isinstance(rule, Mapping):
            continue
        missing.extend(
            sub for sub in _breakdown(rule) if not any(_rule_covers(o, sub) for o in owners)
        )
    return missing


def _compact(rule: Mapping[str, list[str]]) -> str:
    """A rule as ``PolicyRule.CompactString`` prints it."""
    parts = []
    for key, label in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("resourceNames", "ResourceNames"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("verbs", "Verbs"),
    ):
        if rule.get(key):
            parts.append(f"{label}:[{', '.join(go_quote(v) for v in rule[key])}]")
    return "{" + ", ".join(parts) + "}"


def _object_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def escalation_check(authorizer: RBACAuthorizer) -> AdmissionHook:
    """The validating admission hook of RBAC objects (see the module docstring)."""

    def allowed_verb(user: UserInfo, verb: str, resource: str, name: str, namespace: str) -> bool:
        attributes = Attributes(
            user=user,
            verb=verb,
            resource_request=True,
            namespace=namespace,
            api_group=GROUP,
            api_version="v1",
            resource=resource,
            name=name,
        )
        return authorizer.authorize(attributes).allowed

    def confirm_no_escalation(
        user: UserInfo, rules: Sequence[Any], namespace: str, resource: str, name: str
    ) -> None:
        held: list[Any] = []
        errors: list[str] = []
        for found, error in authorizer.visit_rules(user, namespace):
            held.extend(found)
            if error:
                errors.append(error)
        missing = covers(held, rules)
        if not missing:
            return
        groups = "[" + " ".join(go_quote(g) for g in user.groups) + "]"
        detail = (
            f'user "{user.name}" (groups={groups}) is attempting to grant RBAC permissions not '
            "currently held:\n" + "\n".join(_compact(m) for m in missing)
        )
        if errors:
            detail += f"; resolution errors: [{', '.join(errors)}]"
        raise Forbidden(
            f'{resource}.{GROUP} "{name}" is forbidden: {detail}',
            group=GROUP,
            kind=resource,
            name=name,
        )

    def hook(attrs: AdmissionAttributes) -> None:
        kind = attrs.definition.kind
        if attrs.definition.group != GROUP or attrs.operation is Operation.DELETE:
            return
        if attrs.object is None or kind not in (*_ROLE_RESOURCES, *_BINDING_RESOURCES):
            return
        user = attrs.user or current_user()
        if user is None or SYSTEM_PRIVILEGED_GROUP in user.groups:
            return
        obj = attrs.object
        name = _object_name(obj) or attrs.name
        if kind in _ROLE_RESOURCES:
            resource = _ROLE_RESOURCES[kind]
            if allowed_verb(user, "escalate", resource, name, attrs.namespace):
                return
            rules = obj.get("rules")
            confirm_no_escalation(
                user, rules if isinstance(rules, list) else [], attrs.namespace, resource, name
            )
            return
        ref = obj.get("roleRef")
        ref = ref if isinstance(ref, Mapping) else {}
        role_kind = ref.get("kind") if isinstance(ref.get("kind"), str) else ""
        role_name = ref.get("name") if isinstance(ref.get("name"), str) else ""
        role_resource = _ROLE_RESOURCES.get(str(role_kind))
        if role_resource is None:
            return  # validation refuses the binding
        # Asked in the binding's namespace, as Kubernetes does: "bind" granted by a RoleBinding
        # lets its holder bind that (cluster) role within that namespace only.
        if allowed_verb(user, "bind", role_resource, str(role_name), attrs.namespace):
            return
        rules = authorizer.role_rules(str(role_kind), str(role_name), attrs.namespace)
        confirm_no_escalation(user, rules, attrs.namespace, _BINDING_RESOURCES[kind], name)

    return hook
