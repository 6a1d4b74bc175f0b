"""``pods/eviction`` over HTTP against a real server: PodDisruptionBudget-aware deletes with
kube-apiserver's answers (201 Status, 429 with the DisruptionBudget cause, 500 for two
budgets), the budget's status written as the API server writes it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.harness import RunningServer, start_server

NS = "evict"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    running = start_server(tmp_path_factory.mktemp("eviction") / "data")
    try:
        with running.client() as client:
            r = client.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            )
            assert r.status_code == 201, r.text
        yield running
    finally:
        running.stop()


@pytest.fixture
def api(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _pod(
    api: httpx.Client,
    name: str,
    labels: dict[str, str],
    *,
    phase: str = "Running",
    ready: bool = True,
    node: str = "",
) -> dict[str, Any]:
    """A pod in ``phase``; one on no node is deleted at once (no kubelet to wait for)."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }
    r = api.post(f"/api/v1/namespaces/{NS}/pods", json=body)
    assert r.status_code == 201, r.text
    pod = r.json()
    pod["status"] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    r = api.put(f"/api/v1/namespaces/{NS}/pods/{name}/status", json=pod)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _budget(
    api: httpx.Client, name: str, selector: dict[str, Any] | None, status: dict[str, Any]
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minAvailable": 1}
    if selector is not None:
        spec["selector"] = selector
    r = api.post(
        f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets",
        json={
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name},
            "spec": spec,
        },
    )
    assert r.status_code == 201, r.text
    budget = r.json()
    budget["status"] = {
        "observedGeneration": budget["metadata"]["generation"],
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
        **status,
    }
    r = api.put(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{name}/status", json=budget)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _evict(api: httpx.Client, name: str, **body: Any) -> httpx.Response:
    return api.post(
        f"/api/v1/namespaces/{NS}/pods/{name}/eviction",
        json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}, **body},
    )


def _gone(api: httpx.Client, name: str) -> bool:
    r = api.get(f"/api/v1/namespaces/{NS}/pods/{name}")
    return r.status_code == 404


def _delete_budget(api: httpx.Client, name: str) -> None:
    r = api.delete(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{name}")
    assert r.status_code == 200, r.text


def test_eviction_without_a_budget_deletes_the_pod(api: httpx.Client) -> None:
    _pod(api, "free", {"app": "free"})
    r = _evict(api, "free")
    assert r.status_code == 201, r.text
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    assert _gone(api, "free")


def test_budget_that_allows_no_disruption_answers_429(api: httpx.Client) -> None:
    _pod(api, "guarded", {"app": "db"})
    _budget(
        api,
        "db-pdb",
        {"matchLabels": {"app": "db"}},
        {"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "disruptionsAllowed": 0},
    )
    r = _evict(api, "guarded")
    assert r.status_code == 429, r.text
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget db-pdb needs 1 healthy pods and has 1 "
                    "currently",
                }
            ]
        },
        "code": 429,
    }
    assert not _gone(api, "guarded")
    _delete_budget(api, "db-pdb")


def test_allowed_eviction_takes_one_disruption_and_records_the_pod(api: httpx.Client) -> None:
    _pod(api, "web-1", {"app": "web"})
    _pod(api, "web-2", {"app": "web"})
    _budget(
        api,
        "web-pdb",
        {"matchLabels": {"app": "web"}},
        {"currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2, "disruptionsAllowed": 1},
    )
    r = _evict(api, "web-1")
    assert r.status_code == 201, r.text
    assert _gone(api, "web-1")
    budget = api.get(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web-pdb").json()
    status = budget["status"]
    assert status["disruptionsAllowed"] == 0
    assert list(status["disruptedPods"]) == ["web-1"]
    condition = next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")
    assert (condition["status"], condition["reason"]) == ("False", "InsufficientPods")
    # The budget is spent: the second pod stays.
    r = _evict(api, "web-2")
    assert r.status_code == 429
    assert not _gone(api, "web-2")
    _delete_budget(api, "web-pdb")


def test_dry_run_eviction_changes_nothing(api: httpx.Client) -> None:
    _pod(api, "dry", {"app": "dry"})
    _budget(api, "dry-pdb", {"matchLabels": {"app": "dry"}}, {"disruptionsAllowed": 1})
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods/dry/eviction?dryRun=All",
        json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "dry"}},
    )
    assert r.status_code == 201, r.text
    assert not _gone(api, "dry")
    budget = api.get(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/dry-pdb").json()
    assert budget["status"]["disruptionsAllowed"] == 1
    assert "disruptedPods" not in budget["status"]
    _delete_budget(api, "dry-pdb")


def test_pending_pods_ignore_budgets_and_two_budgets_are_500(api: httpx.Client) -> None:
    _pod(api, "waiting", {"app": "two"}, phase="Pending")
    _pod(api, "running", {"app": "two"})
    _budget(api, "two-a", {"matchLabels": {"app": "two"}}, {"disruptionsAllowed": 0})
    _budget(api, "two-b", {}, {"disruptionsAllowed": 0})
    r = _evict(api, "running")
    assert r.status_code == 500
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction "
        "subresource does not support.",
        "code": 500,
    }
    assert _evict(api, "waiting").status_code == 201
    assert _gone(api, "waiting")
    _delete_budget(api, "two-a")
    _delete_budget(api, "two-b")


def test_unready_pod_with_a_met_budget_is_evicted_without_spending_it(api: httpx.Client) -> None:
    _pod(api, "sick", {"app": "met"}, ready=False)
    _budget(
        api,
        "met-pdb",
        {"matchLabels": {"app": "met"}},
        {"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 0},
    )
    assert _evict(api, "sick").status_code == 201
    budget = api.get(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/met-pdb").json()
    assert budget["status"]["disruptionsAllowed"] == 0
    assert "disruptedPods" not in budget["status"]
    _delete_budget(api, "met-pdb")


def test_graceful_eviction_marks_the_pod_as_a_disruption_target(api: httpx.Client) -> None:
    _pod(api, "slow", {"app": "slow"}, node="node-1")
    r = _evict(api, "slow", deleteOptions={"gracePeriodSeconds": 30})
    assert r.status_code == 201, r.text
    pod = api.get(f"/api/v1/namespaces/{NS}/pods/slow").json()
    assert pod["metadata"]["deletionTimestamp"]
    target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "EvictionByEvictionAPI",
        "Eviction API: evicting",
    )


def test_bad_evictions(api: httpx.Client) -> None:
    r = api.post(
        f"/api/v1/namespaces/{NS}/pods/x/eviction",
        json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "y"}},
    )
    assert r.status_code == 400
    assert r.json()["message"] == "name in URL does not match name in Eviction object"
    r = _evict(api, "missing")
    assert r.status_code == 404
    assert r.json()["message"] == 'pods "missing" not found'
    r = api.get(f"/api/v1/namespaces/{NS}/pods/missing/eviction")
    assert r.status_code == 405


def test_discovery_lists_pods_eviction(api: httpx.Client) -> None:
    resources = api.get("/api/v1").json()["resources"]
    entry = next(r for r in resources if r["name"] == "pods/eviction")
    assert entry == {
        "name": "pods/eviction",
        "singularName": "",
        "namespaced": True,
        "group": "policy",
        "version": "v1",
        "kind": "Eviction",
        "verbs": ["create"],
    }


def test_concurrent_evictions_never_overspend_the_budget(server: RunningServer) -> None:
    """Eight pods, a budget allowing three disruptions, eight evictions at once: exactly three
    pods go, the others are 429, and the budget ends at zero with three disrupted pods."""
    import concurrent.futures

    with server.client() as api:
        names = [f"race-{i}" for i in range(8)]
        for name in names:
            _pod(api, name, {"app": "race"})
        _budget(
            api,
            "race-pdb",
            {"matchLabels": {"app": "race"}},
            {"currentHealthy": 8, "desiredHealthy": 5, "expectedPods": 8, "disruptionsAllowed": 3},
        )

    def evict(name: str) -> int:
        with server.client() as client:
            return _evict(client, name).status_code

    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        codes = list(pool.map(evict, names))
    assert sorted(codes) == [201] * 3 + [429] * 5
    with server.client() as api:
        left = [n for n in names if not _gone(api, n)]
        assert len(left) == 5
        status = api.get(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/race-pdb").json()[
            "status"
        ]
        assert status["disruptionsAllowed"] == 0
        assert sorted(status["disruptedPods"]) == sorted(set(names) - set(left))
