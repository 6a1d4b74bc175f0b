"""RBAC rule and subject matching, case by case, as ``rbac/v1`` ``evaluation_helpers.go``."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.registry.interface import UserInfo
from kstore.server.filters.authorization import Attributes
from kstore.server.filters.rbac import applies_to, rule_allows

ALICE = UserInfo(name="alice", groups=("dev", "system:authenticated"))


def _resource(
    verb: str, resource: str, *, group: str = "", sub: str = "", name: str = "", ns: str = "x"
) -> Attributes:
    return Attributes(
        user=ALICE,
        verb=verb,
        resource_request=True,
        namespace=ns,
        api_group=group,
        api_version="v1",
        resource=resource,
        subresource=sub,
        name=name,
    )


def _path(verb: str, path: str) -> Attributes:
    return Attributes(user=ALICE, verb=verb, resource_request=False, path=path)


POD_READER: dict[str, Any] = {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}

CASES: list[tuple[str, dict[str, Any], Attributes, bool]] = [
    ("verb-listed", POD_READER, _resource("get", "pods"), True),
    ("verb-not-listed", POD_READER, _resource("delete", "pods"), False),
    ("watch-is-its-own-verb", POD_READER, _resource("watch", "pods"), False),
    ("verb-star", {**POD_READER, "verbs": ["*"]}, _resource("deletecollection", "pods"), True),
    ("group-mismatch", POD_READER, _resource("get", "pods", group="apps"), False),
    (
        "group-star",
        {**POD_READER, "apiGroups": ["*"]},
        _resource("get", "pods", group="x.io"),
        True,
    ),
    ("resource-mismatch", POD_READER, _resource("get", "secrets"), False),
    ("resource-star", {**POD_READER, "resources": ["*"]}, _resource("get", "secrets"), True),
    ("resource-does-not-cover-sub", POD_READER, _resource("get", "pods", sub="status"), False),
    (
        "sub-listed",
        {**POD_READER, "resources": ["pods/status"]},
        _resource("get", "pods", sub="status"),
        True,
    ),
    (
        "sub-does-not-cover-resource",
        {**POD_READER, "resources": ["pods/status"]},
        _resource("get", "pods"),
        False,
    ),
    (
        "star-slash-sub",
        {**POD_READER, "resources": ["*/scale"]},
        _resource("get", "deployments", sub="scale"),
        True,
    ),
    (
        "star-slash-sub-other-sub",
        {**POD_READER, "resources": ["*/scale"]},
        _resource("get", "deployments", sub="status"),
        False,
    ),
    (
        "resource-name-listed",
        {**POD_READER, "resourceNames": ["a"]},
        _resource("get", "pods", name="a"),
        True,
    ),
    (
        "resource-name-not-listed",
        {**POD_READER, "resourceNames": ["a"]},
        _resource("get", "pods", name="b"),
        False,
    ),
    (
        "resource-names-never-match-a-list",
        {**POD_READER, "resourceNames": ["a"]},
        _resource("list", "pods"),
        False,
    ),
    (
        "url-exact",
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
        _path("get", "/healthz"),
        True,
    ),
    (
        "url-not-a-prefix-without-star",
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
        _path("get", "/healthz/etcd"),
        False,
    ),
    (
        "url-star-prefix",
        {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]},
        _path("get", "/apis/apps/v1"),
        True,
    ),
    ("url-star", {"verbs": ["get"], "nonResourceURLs": ["*"]}, _path("get", "/anything"), True),
    (
        "url-verb-mismatch",
        {"verbs": ["get"], "nonResourceURLs": ["*"]},
        _path("post", "/anything"),
        False,
    ),
    (
        "url-rule-for-resource",
        {"verbs": ["*"], "nonResourceURLs": ["*"]},
        _resource("get", "pods"),
        False,
    ),
    ("resource-rule-for-url", {**POD_READER, "verbs": ["*"]}, _path("get", "/api"), False),
]


@pytest.mark.parametrize(
    ("rule", "attributes", "allowed"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_rule_allows(rule: dict[str, Any], attributes: Attributes, allowed: bool) -> None:
    assert rule_allows(attributes, rule) is allowed


@pytest.mark.parametrize(
    ("subject", "user", "binding_namespace", "applies"),
    [
        ({"kind": "User", "name": "alice"}, ALICE, "", True),
        ({"kind": "User", "name": "bob"}, ALICE, "", False),
        ({"kind": "Group", "name": "dev"}, ALICE, "", True),
        ({"kind": "Group", "name": "alice"}, ALICE, "", False),
        (
            {"kind": "ServiceAccount", "name": "robot", "namespace": "ns"},
            UserInfo(name="system:serviceaccount:ns:robot"),
            "",
            True,
        ),
        (
            {"kind": "ServiceAccount", "name": "robot"},
            UserInfo(name="system:serviceaccount:ns:robot"),
            "ns",
            True,
        ),
        (
            {"kind": "ServiceAccount", "name": "robot"},
            UserInfo(name="system:serviceaccount:ns:robot"),
            "other",
            False,
        ),
        ({"kind": "ServiceAccount", "name": "robot"}, UserInfo(name="robot"), "", False),
        ({"kind": "Robot", "name": "alice"}, ALICE, "", False),
    ],
)
def test_subject_applies_to_user(
    subject: dict[str, str], user: UserInfo, binding_namespace: str, applies: bool
) -> None:
    assert applies_to(subject, user, binding_namespace) is applies
