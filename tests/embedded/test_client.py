"""The embedding API: ``kstore.embedded.open`` on LMDB (and etcd), resource clients in any
served version, every verb in-process."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.embedded import Client, backend_for_url, open
from kstore.errors import AlreadyExists, BadRequest, Conflict, Invalid, NotFound
from kstore.registry.interface import AdmissionAttributes
from kstore.registry.registry import RegistryConfig
from kstore.storage.lmdb import LmdbBackend


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open(f"lmdb://{tmp_path / 'store'}?durable=false") as c:
        yield c


def _deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    body = {
        "replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def test_lmdb_url_forms(tmp_path: Path) -> None:
    backend = backend_for_url(f"lmdb://{tmp_path / 'a'}")
    try:
        assert isinstance(backend, LmdbBackend) and backend.path == tmp_path / "a"
    finally:
        backend.close()
    with pytest.raises(BadRequest):
        backend_for_url("lmdb://")
    with pytest.raises(BadRequest) as caught:
        backend_for_url("sqlite:///x")
    assert "lmdb:///path or etcd://host:port" in caught.value.message


def test_etcd_url_mistakes_are_bad_requests() -> None:
    with pytest.raises(BadRequest):
        backend_for_url("etcd:///registry")
    with pytest.raises(BadRequest) as caught:
        backend_for_url("etcds://127.0.0.1:1/registry?cert=/tmp/c.pem")
    assert "certificate and key must be given together" in caught.value.message


def test_objects_persist_across_opens(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'store'}"
    with open(url) as first:
        first.resource("v1", "configmaps", namespace="default").create(
            {"metadata": {"name": "kept"}, "data": {"k": "v"}}
        )
    with open(url) as second:
        got = second.resource("v1", "configmaps", namespace="default").get("kept")
        assert got["data"] == {"k": "v"}


def test_create_fills_api_version_and_kind_and_returns_the_stored_object(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    created = cms.create({"metadata": {"name": "c"}, "data": {"k": "v"}})
    assert created["apiVersion"] == "v1" and created["kind"] == "ConfigMap"
    assert created["metadata"]["namespace"] == "default"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    assert cms.get("c") == created


def test_an_object_of_another_version_is_refused(client: Client) -> None:
    with pytest.raises(BadRequest):
        client.resource("apps/v1", "deployments").create(
            {"apiVersion": "apps/v1beta1", "kind": "Deployment", **_deployment()}
        )


def test_unknown_resources_and_versions_are_not_found(client: Client) -> None:
    with pytest.raises(NotFound):
        client.resource("v1", "widgets")
    with pytest.raises(NotFound):
        client.resource("apps/v9", "deployments")


def test_one_object_is_read_in_every_served_version(client: Client) -> None:
    v1beta1 = client.resource("apps/v1beta1", "deployments", namespace="default")
    created = v1beta1.create(_deployment(rollbackTo={"revision": 3}))
    assert created["spec"]["rollbackTo"] == {"revision": 3}
    assert created["spec"]["revisionHistoryLimit"] == 2  # v1beta1's default
    as_v1 = client.resource("apps/v1", "deployments", namespace="default").get("web")
    assert as_v1["apiVersion"] == "apps/v1"
    assert "rollbackTo" not in as_v1["spec"]
    as_v1["spec"]["replicas"] = 4
    client.resource("apps/v1", "deployments").update(as_v1)
    again = v1beta1.get("web")
    assert again["spec"]["rollbackTo"] == {"revision": 3}
    assert again["spec"]["replicas"] == 4


def test_list_returns_a_list_object_and_filters(client: Client) -> None:
    default = client.resource("v1", "configmaps", namespace="default")
    system = default.namespace("kube-system")
    default.create({"metadata": {"name": "a", "labels": {"app": "x"}}})
    default.create({"metadata": {"name": "b", "labels": {"app": "y"}}})
    system.create({"metadata": {"name": "c", "labels": {"app": "x"}}})
    listed = default.list(label_selector="app=x")
    assert listed["apiVersion"] == "v1" and listed["kind"] == "ConfigMapList"
    assert int(listed["metadata"]["resourceVersion"]) > 0
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
    everywhere = client.resource("v1", "configmaps").list(label_selector="app=x")
    assert [o["metadata"]["name"] for o in everywhere["items"]] == ["a", "c"]
    page = client.resource("v1", "configmaps").list(limit=2)
    assert len(page["items"]) == 2 and page["metadata"]["continue"]
    rest = client.resource("v1", "configmaps").list(continue_token=page["metadata"]["continue"])
    assert [o["metadata"]["name"] for o in rest["items"]] == ["c"]


def test_update_conflicts_on_a_stale_resource_version(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    first = cms.create({"metadata": {"name": "c"}, "data": {"k": "1"}})
    cms.update({**first, "data": {"k": "2"}})
    with pytest.raises(Conflict) as caught:
        cms.update({**first, "data": {"k": "3"}})
    assert caught.value.code == 409
    assert cms.get("c")["data"] == {"k": "2"}


def test_update_status_changes_only_the_status(client: Client) -> None:
    deployments = client.resource("apps/v1", "deployments", namespace="default")
    created = deployments.create(_deployment())
    changed = {**created, "spec": {**created["spec"], "replicas": 9}, "status": {"replicas": 1}}
    stored = deployments.update_status(changed)
    assert stored["spec"]["replicas"] == 1
    assert stored["status"] == {"replicas": 1}


def test_merge_patch_sets_and_removes_fields(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}})
    patched = cms.patch("c", {"data": {"a": None, "c": "3"}, "metadata": {"labels": {"x": "y"}}})
    assert patched["data"] == {"b": "2", "c": "3"}
    assert patched["metadata"]["labels"] == {"x": "y"}


def test_json_patch_applies_operations_in_order(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create({"metadata": {"name": "c"}, "data": {"a": "1"}})
    patched = cms.patch(
        "c",
        [
            {"op": "test", "path": "/data/a", "value": "1"},
            {"op": "add", "path": "/data/b", "value": "2"},
            {"op": "replace", "path": "/data/a", "value": "9"},
            {"op": "move", "from": "/data/b", "path": "/data/c"},
        ],
        patch_type="json",
    )
    assert patched["data"] == {"a": "9", "c": "2"}
    with pytest.raises(Invalid) as caught:
        cms.patch("c", [{"op": "test", "path": "/data/a", "value": "0"}], patch_type="json")
    assert caught.value.message == "the server rejected our request due to an error in our request"


def test_strategic_merge_patch_merges_containers_by_name(client: Client) -> None:
    deployments = client.resource("apps/v1", "deployments", namespace="default")
    deployments.create(_deployment())
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}
    }
    patched = deployments.patch("web", patch, patch_type="strategic")
    names = [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]]
    assert names == ["sidecar", "web"]
    assert patched["metadata"]["generation"] == 2


def test_server_side_apply_creates_then_conflicts_with_another_manager(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "applied"},
        "data": {"k": "one"},
    }
    created = cms.patch("applied", config, patch_type="apply", field_manager="alice")
    assert created["data"] == {"k": "one"}
    (entry,) = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"]) == ("alice", "Apply")
    with pytest.raises(Conflict) as caught:
        cms.patch(
            "applied", {**config, "data": {"k": "two"}}, patch_type="apply", field_manager="bob"
        )
    assert caught.value.message.startswith("Apply failed with 1 conflict")
    forced = cms.patch(
        "applied",
        {**config, "data": {"k": "two"}},
        patch_type="apply",
        field_manager="bob",
        force=True,
    )
    assert forced["data"] == {"k": "two"}


def test_patch_of_a_missing_object_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as caught:
        client.resource("v1", "services", namespace="default").patch("nope", {"spec": {}})
    assert caught.value.message == 'services "nope" not found'


def test_patch_is_validated(client: Client) -> None:
    deployments = client.resource("apps/v1", "deployments", namespace="default")
    deployments.create(_deployment())
    with pytest.raises(Invalid):
        deployments.patch("web", {"spec": {"replicas": -1}})


def test_delete_returns_the_last_state_and_finalizers_keep_the_object(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create({"metadata": {"name": "gone"}, "data": {"k": "v"}})
    assert cms.delete("gone")["data"] == {"k": "v"}
    cms.create({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    held = cms.delete("held")
    assert held["metadata"]["deletionTimestamp"]
    cms.patch("held", {"metadata": {"finalizers": None}})
    with pytest.raises(NotFound):
        cms.get("held")


def test_delete_collection_deletes_what_matches(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    for name in ("a", "b"):
        cms.create({"metadata": {"name": name, "labels": {"batch": "1"}}})
    cms.create({"metadata": {"name": "c"}})
    deleted = cms.delete_collection(label_selector="batch=1")
    assert sorted(o["metadata"]["name"] for o in deleted) == ["a", "b"]
    assert [o["metadata"]["name"] for o in cms.list()["items"]] == ["c"]


def test_watch_delivers_changes_in_the_watch_version(client: Client) -> None:
    v1beta1 = client.resource("apps/v1beta1", "deployments", namespace="default")
    start = v1beta1.list()["metadata"]["resourceVersion"]
    with v1beta1.watch(resource_version=start) as watch:
        client.resource("apps/v1", "deployments").create(
            {**_deployment(), "metadata": {"name": "web", "namespace": "default"}}
        )
        client.resource("apps/v1", "deployments", namespace="default").delete("web")
        events = [watch.next(timeout=5.0) for _ in range(2)]
    assert [(e.type, e.object["apiVersion"]) for e in events if e is not None] == [
        ("ADDED", "apps/v1beta1"),
        ("DELETED", "apps/v1beta1"),
    ]


def test_watch_from_nothing_starts_with_the_current_objects(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create({"metadata": {"name": "here"}})
    with cms.watch() as watch:
        event = watch.next(timeout=5.0)
    assert event is not None and (event.type, event.object["metadata"]["name"]) == (
        "ADDED",
        "here",
    )


def test_admission_hooks_and_warnings_reach_the_embedder(tmp_path: Path) -> None:
    warnings: list[str] = []
    with open(f"lmdb://{tmp_path / 's'}", on_warning=warnings.append) as client:

        def stamp(a: AdmissionAttributes) -> None:
            if a.object is not None:
                a.object.setdefault("metadata", {}).setdefault("labels", {})["stamped"] = "yes"

        client.add_admission(mutating=stamp)
        # The account the ServiceAccount admission plugin wants (a cluster's controller makes it).
        accounts = client.resource("v1", "serviceaccounts", namespace="default")
        with contextlib.suppress(AlreadyExists):  # the service account controller was first
            accounts.create({"metadata": {"name": "default"}})
        pods = client.resource("v1", "pods", namespace="default")
        created = pods.create(
            {"metadata": {"name": "web.v1"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
        )
        assert created["metadata"]["labels"] == {"stamped": "yes"}
    assert len(warnings) == 1 and "DNS label" in warnings[0]


def test_a_custom_config_reaches_the_registry(tmp_path: Path) -> None:
    config = RegistryConfig(watch_cache=False, event_ttl_seconds=5)
    with open(f"lmdb://{tmp_path / 's'}", config=config) as client:
        assert client.registry.config.event_ttl_seconds == 5
        events = client.registry.store("", "events")
        assert events.strategy.ttl_seconds == 5


_etcd_prefixes = itertools.count()


@pytest.mark.etcd
def test_etcd_url_opens_a_store_on_etcd(request: pytest.FixtureRequest) -> None:
    from tests.conftest_etcd import RawEtcd, shared_cluster

    endpoint = shared_cluster(request.config).endpoints[0]
    prefix = f"/kstore-test-embedded-{next(_etcd_prefixes)}"
    raw = RawEtcd(endpoint)
    try:
        with open(f"etcd://{endpoint}{prefix}") as client:
            cms = client.resource("v1", "configmaps", namespace="default")
            cms.create({"metadata": {"name": "on-etcd"}, "data": {"k": "v"}})
            assert cms.get("on-etcd")["data"] == {"k": "v"}
        # Kubernetes' key layout under the url's prefix.
        stored = raw.get(f"{prefix}/configmaps/default/on-etcd".encode())
        assert stored is not None and b'"name":"on-etcd"' in stored.value
    finally:
        raw.delete_prefix(prefix.encode() + b"/")
        raw.close()
