"""Which requests a webhook or a policy matches: rules, scope, match policy, selectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kstore.api.gvk import GroupVersion, GroupVersionKind, GroupVersionResource
from kstore.api.kinds import builtin_scheme
from kstore.errors import NotFound
from kstore.registry.admission.matching import (
    Match,
    MatchRequest,
    constraints_match,
    match_request,
    object_selector_matches,
    rule_matches,
    webhook_match,
)
from kstore.registry.interface import AdmissionAttributes, Operation

_NAMESPACES = {"default": {"env": "dev"}, "prod": {"env": "prod", "team": "a"}}


def _labels(name: str) -> Mapping[str, str] | None:
    return _NAMESPACES.get(name)


def _pod(
    operation: str = "CREATE",
    *,
    namespace: str = "default",
    subresource: str = "",
    labels: dict[str, str] | None = None,
    old_labels: dict[str, str] | None = None,
    name: str = "p",
) -> MatchRequest:
    def obj(lbls: dict[str, str] | None) -> dict[str, Any] | None:
        return None if lbls is None else {"metadata": {"name": name, "labels": lbls}}

    return MatchRequest(
        operation=operation,
        resource=GroupVersionResource("", "v1", "pods"),
        kind=GroupVersionKind("", "v1", "Pod"),
        subresource=subresource,
        namespace=namespace,
        name=name,
        object=obj({} if labels is None else labels),
        old_object=obj(old_labels),
    )


def _deployment(version: str = "v1beta1") -> MatchRequest:
    return MatchRequest(
        operation="CREATE",
        resource=GroupVersionResource("apps", version, "deployments"),
        kind=GroupVersionKind("apps", version, "Deployment"),
        namespace="default",
        name="d",
        object={"metadata": {"name": "d"}},
        equivalents=tuple(
            (
                GroupVersionResource("apps", v, "deployments"),
                GroupVersionKind("apps", v, "Deployment"),
            )
            for v in ("v1", "v1beta2", "v1beta1")
        ),
    )


def _namespace(operation: str, labels: dict[str, str]) -> MatchRequest:
    return MatchRequest(
        operation=operation,
        resource=GroupVersionResource("", "v1", "namespaces"),
        kind=GroupVersionKind("", "v1", "Namespace"),
        name="prod",
        object={"metadata": {"name": "prod", "labels": labels}},
    )


def _rule(**kw: Any) -> dict[str, Any]:
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["pods"],
    }
    rule.update(kw)
    return rule


@pytest.mark.parametrize(
    ("rule", "subresource", "expected"),
    [
        (_rule(), "", True),
        (_rule(), "status", False),
        (_rule(resources=["*"]), "", True),
        (_rule(resources=["*"]), "status", False),
        (_rule(resources=["*/*"]), "status", True),
        (_rule(resources=["*/*"]), "", True),
        (_rule(resources=["pods/*"]), "status", True),
        (_rule(resources=["pods/*"]), "", True),
        (_rule(resources=["*/status"]), "status", True),
        (_rule(resources=["*/status"]), "", False),
        (_rule(resources=["pods/status"]), "status", True),
        (_rule(resources=["services"]), "", False),
        (_rule(operations=["*"]), "", True),
        (_rule(operations=["UPDATE", "DELETE"]), "", False),
        (_rule(apiGroups=["*"]), "", True),
        (_rule(apiGroups=["apps"]), "", False),
        (_rule(apiVersions=["*"]), "", True),
        (_rule(apiVersions=["v2"]), "", False),
        (_rule(scope="Namespaced"), "", True),
        (_rule(scope="Cluster"), "", False),
        (_rule(scope="*"), "", True),
    ],
)
def test_rule_matching(rule: dict[str, Any], subresource: str, expected: bool) -> None:
    assert rule_matches(rule, _pod(subresource=subresource)) is expected


def test_namespace_objects_are_cluster_scoped_for_rules() -> None:
    request = _namespace("CREATE", {})
    rule = _rule(resources=["namespaces"])
    assert rule_matches({**rule, "scope": "Cluster"}, request)
    assert not rule_matches({**rule, "scope": "Namespaced"}, request)


def test_equivalent_match_policy_matches_another_version_and_names_it() -> None:
    hook = {
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": ["apps"],
                "apiVersions": ["v1"],
                "resources": ["deployments"],
            }
        ],
        "matchPolicy": "Equivalent",
    }
    v1 = GroupVersionKind("apps", "v1", "Deployment")
    assert webhook_match(hook, _deployment(), _labels) == Match(
        GroupVersionResource("apps", "v1", "deployments"), v1
    )
    assert webhook_match({**hook, "matchPolicy": "Exact"}, _deployment(), _labels) is None
    # The request's own version wins when a rule names it.
    both = {**hook, "rules": [{**hook["rules"][0], "apiVersions": ["v1", "v1beta1"]}]}
    assert webhook_match(both, _deployment(), _labels) == Match(
        GroupVersionResource("apps", "v1beta1", "deployments"),
        GroupVersionKind("apps", "v1beta1", "Deployment"),
    )


def test_match_request_from_attributes_uses_the_request_version_and_served_versions() -> None:
    scheme = builtin_scheme()
    definition = scheme.definition("apps", "Deployment")
    attributes = AdmissionAttributes(
        operation=Operation.CREATE,
        definition=definition,
        namespace="default",
        name="d",
        object={"metadata": {"name": "d"}},
        request_version=GroupVersion("apps", "v1beta2"),
    )
    request = match_request(attributes, scheme.is_served)
    assert request.resource == GroupVersionResource("apps", "v1beta2", "deployments")
    assert request.kind == GroupVersionKind("apps", "v1beta2", "Deployment")
    assert [r.version for r, _ in request.equivalents] == ["v1", "v1beta1"]
    only_v1 = match_request(attributes, lambda gvk: gvk.version == "v1")
    assert [r.version for r, _ in only_v1.equivalents] == ["v1"]
    unsaid = match_request(
        AdmissionAttributes(
            operation=Operation.DELETE,
            definition=definition,
            namespace="default",
            name="d",
            object=None,
        )
    )
    assert unsaid.resource.version == "v1"
    assert unsaid.operation == "DELETE"


def test_namespace_selector_uses_the_namespace_labels() -> None:
    hook = {"rules": [_rule()], "namespaceSelector": {"matchLabels": {"env": "prod"}}}
    assert webhook_match(hook, _pod(namespace="default"), _labels) is None
    assert webhook_match(hook, _pod(namespace="prod"), _labels) is not None
    exists = {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
    assert webhook_match({**hook, "namespaceSelector": exists}, _pod(namespace="prod"), _labels)


def test_a_missing_namespace_is_not_found_only_when_the_rules_match() -> None:
    hook = {"rules": [_rule()], "namespaceSelector": {"matchLabels": {"env": "prod"}}}
    with pytest.raises(NotFound, match='namespaces "gone" not found'):
        webhook_match(hook, _pod(namespace="gone"), _labels)
    other = {**hook, "rules": [_rule(resources=["services"])]}
    assert webhook_match(other, _pod(namespace="gone"), _labels) is None


def test_cluster_scoped_objects_always_match_the_namespace_selector_except_namespaces() -> None:
    selector = {"matchLabels": {"env": "prod"}}
    node = MatchRequest(
        operation="CREATE",
        resource=GroupVersionResource("", "v1", "nodes"),
        kind=GroupVersionKind("", "v1", "Node"),
        name="n",
        object={"metadata": {"name": "n"}},
    )
    rules = [_rule(resources=["nodes", "namespaces"])]
    hook = {"rules": rules, "namespaceSelector": selector}
    assert webhook_match(hook, node, _labels) is not None
    # A namespace being created or updated matches on the labels it is given...
    assert webhook_match(hook, _namespace("CREATE", {"env": "prod"}), _labels) is not None
    assert webhook_match(hook, _namespace("CREATE", {"env": "dev"}), _labels) is None
    # ... and on delete on its stored labels.
    delete = {**hook, "rules": [_rule(operations=["DELETE"], resources=["namespaces"])]}
    assert webhook_match(delete, _namespace("DELETE", {}), _labels) is not None


def test_object_selector_matches_object_or_old_object() -> None:
    selector = {"matchLabels": {"app": "web"}}
    assert object_selector_matches(selector, _pod(labels={"app": "web"}))
    assert not object_selector_matches(selector, _pod(labels={"app": "db"}))
    assert object_selector_matches(
        selector, _pod("UPDATE", labels={"app": "db"}, old_labels={"app": "web"})
    )
    assert object_selector_matches({}, _pod(labels={}))
    hook = {"rules": [_rule()], "objectSelector": selector}
    assert webhook_match(hook, _pod(labels={"app": "db"}), _labels) is None


def test_policy_constraints_exclude_and_resource_names() -> None:
    pods = {**_rule(operations=["*"]), "resourceNames": []}
    constraints = {
        "resourceRules": [pods],
        "excludeResourceRules": [{**pods, "resourceNames": ["skip-me"]}],
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
    }
    assert constraints_match(constraints, _pod(name="p"), _labels) is not None
    assert constraints_match(constraints, _pod(name="skip-me"), _labels) is None
    named = {**constraints, "resourceRules": [{**pods, "resourceNames": ["only"]}]}
    assert constraints_match(named, _pod(name="p"), _labels) is None
    assert constraints_match(named, _pod(name="only"), _labels) is not None
    # No resource rules: every resource not excluded.
    everything = {"excludeResourceRules": constraints["excludeResourceRules"]}
    assert constraints_match(everything, _pod(name="p"), _labels) is not None
    assert constraints_match(None, _pod(), _labels) == Match(
        GroupVersionResource("", "v1", "pods"), GroupVersionKind("", "v1", "Pod")
    )


def test_policy_constraints_match_equivalent_versions() -> None:
    rule = {
        "operations": ["CREATE"],
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "resources": ["deployments"],
    }
    constraints = {"resourceRules": [rule], "matchPolicy": "Equivalent"}
    found = constraints_match(constraints, _deployment(), _labels)
    assert found is not None and found.kind.version == "v1"
    assert (
        constraints_match({**constraints, "matchPolicy": "Exact"}, _deployment(), _labels) is None
    )
    excluded = {**constraints, "resourceRules": [], "excludeResourceRules": [rule]}
    assert constraints_match(excluded, _deployment(), _labels) is None
