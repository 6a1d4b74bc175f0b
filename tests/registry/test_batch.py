"""batch Job and CronJob through the generic store: the generated selector, generation, the
status subresource and the default garbage-collection policy of Kubernetes' strategies."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid, NotFound
from kstore.registry.interface import CreateOptions, DeleteOptions, ListOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from kstore.registry.strategies.base import DELETE_DEPENDENTS, ORPHAN_DEPENDENTS
from tests.registry.objects import changed, ctx, hub, wait_for

BATCH = "batch/v1"
STATUS = UpdateOptions(subresource="status")


def _job(name: str = "pi", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": BATCH,
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "pi"}},
                "spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"},
            },
            **spec,
        },
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    plural = "jobs" if obj["kind"] == "Job" else "cronjobs"
    store = registry.store("batch", plural)
    return store.create(ctx("default", BATCH), hub(scheme, obj), CreateOptions()).object


def test_create_generates_the_selector_and_the_pod_labels(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    job = _create(registry, scheme, _job())
    uid = job["metadata"]["uid"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == {"app": "pi", **generated}
    # Defaulting gave the Job its template's labels: they include the generated ones.
    assert job["metadata"]["labels"] == {"app": "pi", **generated}
    assert job["metadata"]["generation"] == 1
    assert job["status"] == {}


def test_job_labels_of_its_own_are_kept(registry: StoreRegistry, scheme: Scheme) -> None:
    body = _job()
    body["metadata"]["labels"] = {"team": "a"}
    assert _create(registry, scheme, body)["metadata"]["labels"] == {"team": "a"}


def test_a_manual_selector_is_left_to_the_user(registry: StoreRegistry, scheme: Scheme) -> None:
    job = _create(
        registry, scheme, _job(manualSelector=True, selector={"matchLabels": {"app": "pi"}})
    )
    assert job["spec"]["selector"] == {"matchLabels": {"app": "pi"}}
    assert job["spec"]["template"]["metadata"]["labels"] == {"app": "pi"}


def test_a_conflicting_generated_label_is_refused(registry: StoreRegistry, scheme: Scheme) -> None:
    body = _job()
    body["spec"]["template"]["metadata"]["labels"]["job-name"] = "other"
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, body)
    assert "spec.template.metadata.labels[job-name]: Invalid value" in caught.value.message
    assert "must be 'pi'" in caught.value.message


def test_generation_follows_the_spec_and_status_writes_keep_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, _job())
    store = registry.store("batch", "jobs")
    request = ctx("default", BATCH)
    updated = store.update(
        request, "pi", changed(lambda o: o["spec"].update(suspend=True)), UpdateOptions()
    ).object
    assert updated["metadata"]["generation"] == 2

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = {"active": 1, "ready": 1}
        o["spec"]["parallelism"] = 5  # ignored by a status write

    stored = store.update(request, "pi", changed(set_status), STATUS).object
    assert stored["status"] == {"active": 1, "ready": 1}
    assert stored["spec"]["parallelism"] == 1
    assert stored["metadata"]["generation"] == 2
    # The main resource never writes status.
    again = store.update(
        request, "pi", changed(lambda o: o.update(status={"active": 9})), UpdateOptions()
    ).object
    assert again["status"] == {"active": 1, "ready": 1}


def test_status_writes_are_validated(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, _job())
    store = registry.store("batch", "jobs")
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", BATCH),
            "pi",
            changed(lambda o: o.update(status={"failed": -1})),
            STATUS,
        )
    assert "status.failed: Invalid value: -1: must be greater than or equal to 0" in (
        caught.value.message
    )


def test_the_pod_template_is_immutable(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, _job())
    store = registry.store("batch", "jobs")

    def new_image(o: dict[str, Any]) -> None:
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5"

    with pytest.raises(Invalid) as caught:
        store.update(ctx("default", BATCH), "pi", changed(new_image), UpdateOptions())
    assert "spec.template: Invalid value: " in caught.value.message
    assert "field is immutable" in caught.value.message


def test_deleting_through_batch_v1_orphans_the_pods(registry: StoreRegistry) -> None:
    jobs = registry.store("batch", "jobs").strategy
    assert jobs.default_gc_policy(ctx("default", BATCH)) == ORPHAN_DEPENDENTS
    assert jobs.default_gc_policy(ctx("default", "batch/v2")) == DELETE_DEPENDENTS
    cron_jobs = registry.store("batch", "cronjobs").strategy
    assert cron_jobs.default_gc_policy(ctx("default", BATCH)) == DELETE_DEPENDENTS


def test_cron_job_gets_generation_and_an_empty_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = {
        "apiVersion": BATCH,
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "@daily",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "image": "busybox"}],
                            "restartPolicy": "OnFailure",
                        }
                    }
                }
            },
        },
        "status": {"lastScheduleTime": "2026-01-01T00:00:00Z"},
    }
    cron_job = _create(registry, scheme, body)
    assert cron_job["metadata"]["generation"] == 1
    assert cron_job["status"] == {}
    store = registry.store("batch", "cronjobs")
    updated = store.update(
        ctx("default", BATCH),
        "nightly",
        changed(lambda o: o["spec"].update(schedule="@hourly")),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 2

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = {"lastScheduleTime": "2026-01-01T03:00:00Z"}
        o["spec"]["suspend"] = True  # ignored by a status write

    stored = store.update(ctx("default", BATCH), "nightly", changed(set_status), STATUS).object
    assert stored["status"] == {"lastScheduleTime": "2026-01-01T03:00:00Z"}
    assert stored["spec"]["suspend"] is False
    assert stored["metadata"]["generation"] == 2


def test_deleting_a_namespace_removes_its_jobs(registry: StoreRegistry, scheme: Scheme) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    namespaces = registry.store("", "namespaces")
    namespaces.create(ctx(""), hub(scheme, namespace), CreateOptions())
    jobs = registry.store("batch", "jobs")
    jobs.create(ctx("team", BATCH), hub(scheme, _job()), CreateOptions())
    namespaces.delete(ctx(""), "team", DeleteOptions())

    def gone() -> bool:
        try:
            namespaces.get(ctx(""), "team")
        except NotFound:
            return True
        return False

    assert wait_for(gone)
    assert jobs.list(ctx("team", BATCH), ListOptions()).items == []
