"""The garbagecollector through ``kstore.open``: background, foreground and orphan deletion of
dependents named by ``ownerReferences``, and batch/v1 Job's default (orphan) completed."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore import open as open_store
from kstore.controllers.garbage_collector import GarbageCollector
from kstore.embedded import Client


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open_store(f"lmdb://{tmp_path}/store", controllers="garbagecollector") as opened:
        _eventually(lambda: bool(opened._controllers.running))
        # What the service account controller (not run here) gives the namespace: the
        # ServiceAccount admission plugin wants the pods' account to exist.
        accounts = opened.resource("v1", "serviceaccounts").namespace("default")
        accounts.create({"metadata": {"name": "default"}})
        yield opened


def _cm(name: str, *owners: dict[str, Any], block: bool = False) -> dict[str, Any]:
    refs = [
        {
            "apiVersion": o["apiVersion"],
            "kind": o["kind"],
            "name": o["metadata"]["name"],
            "uid": o["metadata"]["uid"],
            **({"blockOwnerDeletion": True} if block else {}),
        }
        for o in owners
    ]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": refs},
    }


def _names(client: Client) -> list[str]:
    cms = client.resource("v1", "configmaps", namespace="default")
    return sorted(c["metadata"]["name"] for c in cms.list()["items"])


def _secret(client: Client, name: str) -> dict[str, Any]:
    secrets = client.resource("v1", "secrets", namespace="default")
    made: dict[str, Any] = secrets.create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}
    )
    return made


def test_background_deletes_dependents_after_the_owner(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    owner, other = _secret(client, "owner"), _secret(client, "other")
    cms.create(_cm("only-child", owner))
    cms.create(_cm("shared-child", owner, other))
    cms.create(_cm("unrelated"))
    client.resource("v1", "secrets", namespace="default").delete("owner")
    _eventually(lambda: "only-child" not in _names(client))
    # A dependent with another owner stays, without the reference to the one gone.
    _eventually(lambda: len(cms.get("shared-child")["metadata"]["ownerReferences"]) == 1)
    assert cms.get("shared-child")["metadata"]["ownerReferences"][0]["name"] == "other"
    assert "unrelated" in _names(client)


def test_a_dependent_of_an_owner_that_never_existed_goes(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    ghost = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000001"},
    }
    cms.create(_cm("dangling", ghost))
    _eventually(lambda: "dangling" not in _names(client))


def test_foreground_deletes_the_owner_after_its_blocking_dependents(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    secrets = client.resource("v1", "secrets", namespace="default")
    owner = _secret(client, "fg-owner")
    child = _cm("fg-child", owner, block=True)
    child["metadata"]["finalizers"] = ["example.com/hold"]
    cms.create(child)
    secrets.delete("fg-owner", propagation_policy="Foreground")
    _eventually(lambda: bool(cms.get("fg-child")["metadata"].get("deletionTimestamp")))
    time.sleep(0.5)
    held = secrets.get("fg-owner")["metadata"]
    assert "foregroundDeletion" in held["finalizers"] and held["deletionTimestamp"]
    # The dependent goes: then the owner does.
    cms.patch("fg-child", {"metadata": {"finalizers": None}})
    _eventually(lambda: "fg-owner" not in [s["metadata"]["name"] for s in secrets.list()["items"]])


def test_orphan_keeps_dependents_without_the_reference(client: Client) -> None:
    cms = client.resource("v1", "configmaps", namespace="default")
    secrets = client.resource("v1", "secrets", namespace="default")
    owner = _secret(client, "orphaning")
    cms.create(_cm("orphan-child", owner))
    secrets.delete("orphaning", propagation_policy="Orphan")
    _eventually(lambda: "orphaning" not in [s["metadata"]["name"] for s in secrets.list()["items"]])
    assert not cms.get("orphan-child")["metadata"].get("ownerReferences")


def test_a_job_deleted_without_a_policy_leaves_no_finalizer(client: Client) -> None:
    jobs = client.resource("batch/v1", "jobs", namespace="default")
    pods = client.resource("v1", "pods", namespace="default")
    job = jobs.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        }
    )
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": job["metadata"]["uid"]}
    pods.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "j-pod", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    jobs.delete("j")  # batch/v1's default: the pods are orphaned
    _eventually(lambda: jobs.list()["items"] == [])
    # A pod the collector heard of only after the job went is orphaned then (see the test of
    # a dependent heard of late below): eventually, not necessarily before the job is gone.
    _eventually(lambda: not pods.get("j-pod")["metadata"].get("ownerReferences"))


def test_custom_resources_own_and_are_owned(client: Client) -> None:
    crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
    crds.create(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.gc.example.com"},
            "spec": {
                "group": "gc.example.com",
                "scope": "Cluster",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
    )
    _eventually(lambda: any(r.info.plural == "things" for r in client.scheme.resources()))
    things = client.resource("gc.example.com/v1", "things")
    owner = things.create(
        {"apiVersion": "gc.example.com/v1", "kind": "Thing", "metadata": {"name": "owner"}}
    )
    ref = {"apiVersion": "gc.example.com/v1", "kind": "Thing", "name": "owner"}
    ref["uid"] = owner["metadata"]["uid"]
    things.create(
        {
            "apiVersion": "gc.example.com/v1",
            "kind": "Thing",
            "metadata": {"name": "child", "ownerReferences": [ref]},
        }
    )
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create(_cm("thing-child", owner))
    time.sleep(0.5)
    assert "thing-child" in _names(client)
    things.delete("owner")
    _eventually(lambda: "thing-child" not in _names(client))
    _eventually(lambda: [t["metadata"]["name"] for t in things.list()["items"]] == [])


def _collector(client: Client) -> GarbageCollector:
    [collector] = [c for c in client._controllers.running if isinstance(c, GarbageCollector)]
    return collector


def test_the_collector_keeps_metadata_only_and_leaves_events_alone(client: Client) -> None:
    collector = _collector(client)
    assert ("", "events") not in collector.informers
    assert ("events.k8s.io", "events") not in collector.informers
    owner = _secret(client, "meta-owner")
    cms = client.resource("v1", "configmaps", namespace="default")
    cms.create({**_cm("meta-dependent", owner), "data": {"big": "x" * 1000}})
    informer = collector.informers[("", "configmaps")]
    _eventually(lambda: informer.get("default/meta-dependent") is not None)
    kept = informer.get("default/meta-dependent")
    assert kept is not None and set(kept) <= {"apiVersion", "kind", "metadata"}
    assert kept["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]


def test_objects_without_owners_are_not_reconciled(client: Client) -> None:
    collector = _collector(client)
    informer = collector.informers[("", "configmaps")]
    cms = client.resource("v1", "configmaps", namespace="default")
    before = collector.reconciles
    for i in range(30):
        last = cms.create({"metadata": {"name": f"plain-{i}"}, "data": {"k": "v"}})
    _eventually(lambda: informer.get("default/plain-29") is not None)
    # Of a plain object the collector keeps the uid its dependents would name, nothing more.
    assert informer.get("default/plain-29") == {"metadata": {"uid": last["metadata"]["uid"]}}
    owner = _secret(client, "late-owner")
    cms.create(_cm("owned", owner))
    # The owned one is reconciled (its owner checked); none of the thirty plain ones was.
    _eventually(lambda: collector.reconciles > before)
    time.sleep(0.2)
    assert collector.reconciles - before <= 2
    client.resource("v1", "secrets", namespace="default").delete("late-owner")
    _eventually(lambda: "owned" not in _names(client))


def test_a_dependent_heard_of_after_its_owner_was_orphan_deleted_is_orphaned_not_deleted(
    client: Client,
) -> None:
    """Each resource has its own watch: a dependent made just before its owner is deleted with
    the orphan policy can reach the collector after the owner is gone. It made the dependent
    before the deletion, so it keeps it, without the reference."""
    cms = client.resource("v1", "configmaps", namespace="default")
    secrets = client.resource("v1", "secrets", namespace="default")
    configmaps = _collector(client).informers[("", "configmaps")]
    owner = _secret(client, "quick-owner")
    # The collector's ConfigMap watch is held up (its informer cannot store what it receives)
    # from just before the dependent is made until its owner is gone.
    with configmaps._lock:
        cms.create(_cm("late-child", owner))
        secrets.delete("quick-owner", propagation_policy="Orphan")
        _eventually(
            lambda: "quick-owner" not in [s["metadata"]["name"] for s in secrets.list()["items"]]
        )
    _eventually(lambda: configmaps.get("default/late-child") is not None)
    _eventually(lambda: not cms.get("late-child")["metadata"].get("ownerReferences"))
    time.sleep(0.5)
    assert "late-child" in _names(client)
    # A dependent made after the owner was gone still goes, as any with a missing owner.
    cms.create(_cm("later-child", owner))
    _eventually(lambda: "later-child" not in _names(client))
