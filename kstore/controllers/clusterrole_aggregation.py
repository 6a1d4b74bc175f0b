"""The ``clusterrole-aggregation`` controller: a ClusterRole with
``aggregationRule.clusterRoleSelectors`` gets the rules of the ClusterRoles its selectors match.

The matched roles (any selector, itself excepted) are taken in name order, and each rule not
already among the collected ones is appended; the role's ``rules`` are replaced by that list
when they differ from it. Any ClusterRole's change looks at every aggregating role again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from kstore.api.gvk import GroupVersion, Object
from kstore.controllers.base import Controller
from kstore.errors import NotFound
from kstore.registry.interface import RequestContext, UpdateOptions

__all__ = ["ClusterRoleAggregationController", "selector_matches"]

_ROLES: Final = ("rbac.authorization.k8s.io", "clusterroles")
_CONTEXT: Final = RequestContext(request_version=GroupVersion("rbac.authorization.k8s.io", "v1"))


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a ``metav1.LabelSelector`` matches ``labels`` (an empty one matches all)."""
    for key, value in _map(selector.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, dict):
            return False
        key, operator = str(expression.get("key")), expression.get("operator")
        values = expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def _selectors(role: Object) -> list[dict[str, Any]]:
    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return []
    return [s for s in rule.get("clusterRoleSelectors") or [] if isinstance(s, dict)]


class ClusterRoleAggregationController(Controller):
    name: ClassVar[str] = "clusterrole-aggregation"
    watches: ClassVar[tuple[tuple[str, str], ...]] = (_ROLES,)

    def _aggregating(self) -> list[str]:
        roles = self.informer(*_ROLES).items()
        return sorted(str(_map(r.get("metadata")).get("name")) for r in roles if _selectors(r))

    def keys_for(self, watched: tuple[str, str], key: str, obj: Object | None) -> Iterable[str]:
        return self._aggregating()

    def resync_keys(self) -> Iterable[str]:
        return self._aggregating()

    def reconcile(self, key: str) -> None:
        informer = self.informer(*_ROLES)
        role = informer.get(key)
        if role is None:
            return
        selectors = _selectors(role)
        if not selectors:
            return
        rules: list[Any] = []
        for name in sorted(informer.keys()):
            if name == key:
                continue
            other = informer.get(name) or {}
            labels = _map(_map(other.get("metadata")).get("labels"))
            if not any(selector_matches(s, labels) for s in selectors):
                continue
            for rule in other.get("rules") or []:
                if rule not in rules:
                    rules.append(rule)
        if (role.get("rules") or []) == rules:
            return

        def aggregated(current: Object) -> Object:
            return {**current, "rules": rules}

        opts = UpdateOptions(field_manager="clusterrole-aggregation-controller")
        try:
            self.store(*_ROLES).update(_CONTEXT, key, aggregated, opts)
        except NotFound:
            return
