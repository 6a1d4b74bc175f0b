"""clusterrole-aggregation through ``kstore.open``: an aggregating ClusterRole gets the rules of
the roles its selectors match, and follows them as they change."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore import open as open_store
from kstore.controllers.clusterrole_aggregation import selector_matches
from kstore.embedded import Client


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open_store(f"lmdb://{tmp_path}/store", controllers="clusterrole-aggregation") as opened:
        _eventually(lambda: bool(opened._controllers.running))
        yield opened


def _role(name: str, labels: dict[str, str], *resources: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels},
        "rules": [{"apiGroups": [""], "resources": [r], "verbs": ["get"]} for r in resources],
    }


def test_selector_matching() -> None:
    labels = {"a": "1", "b": "2"}
    assert selector_matches({}, labels)
    assert selector_matches({"matchLabels": {"a": "1"}}, labels)
    assert not selector_matches({"matchLabels": {"a": "2"}}, labels)
    expr = {"key": "b", "operator": "In", "values": ["2", "3"]}
    assert selector_matches({"matchExpressions": [expr]}, labels)
    assert not selector_matches({"matchExpressions": [{**expr, "operator": "NotIn"}]}, labels)
    assert selector_matches(
        {"matchExpressions": [{"key": "c", "operator": "DoesNotExist"}]}, labels
    )
    assert not selector_matches({"matchExpressions": [{"key": "c", "operator": "Exists"}]}, labels)


def test_aggregated_rules_follow_the_matched_roles(client: Client) -> None:
    roles = client.resource("rbac.authorization.k8s.io/v1", "clusterroles")
    roles.create(_role("b-pods", {"agg": "yes"}, "pods", "secrets"))
    roles.create(_role("a-cms", {"agg": "yes"}, "configmaps", "pods"))
    roles.create(_role("other", {"agg": "no"}, "nodes"))
    aggregate = _role("aggregate", {})
    aggregate["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]}
    roles.create(aggregate)

    def resources() -> list[str]:
        return [r["resources"][0] for r in roles.get("aggregate").get("rules") or []]

    # In name order, each rule once.
    _eventually(lambda: resources() == ["configmaps", "pods", "secrets"])
    roles.patch("other", {"metadata": {"labels": {"agg": "yes"}}})
    _eventually(lambda: resources() == ["configmaps", "pods", "secrets", "nodes"])
    roles.delete("a-cms")
    _eventually(lambda: resources() == ["pods", "secrets", "nodes"])
