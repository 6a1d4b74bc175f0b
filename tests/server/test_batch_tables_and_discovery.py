"""The batch group at the REST edge: its discovery entries, the Job and CronJob tables kubectl
prints, its OpenAPI document and the meta kinds every group version accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme
from kstore.server.discovery import Discovery
from kstore.server.openapi import OpenAPIV3
from kstore.server.table import build_table


def _ago(seconds: int) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_discovery_lists_jobs_and_cron_jobs() -> None:
    discovery = Discovery(builtin_scheme())
    groups = orjson.loads(discovery.aggregated_groups.body)
    batch = next(g for g in groups["items"] if g["metadata"]["name"] == "batch")
    assert [v["version"] for v in batch["versions"]] == ["v1"]
    resources = {r["resource"]: r for r in batch["versions"][0]["resources"]}
    assert set(resources) == {"jobs", "cronjobs"}
    assert resources["jobs"]["categories"] == ["all"]
    assert "shortNames" not in resources["jobs"]
    assert resources["cronjobs"]["shortNames"] == ["cj"]
    assert resources["cronjobs"]["categories"] == ["all"]
    for resource in resources.values():
        assert resource["scope"] == "Namespaced"
        assert [s["subresource"] for s in resource["subresources"]] == ["status"]
    legacy = discovery.group("batch")
    assert legacy is not None
    assert orjson.loads(legacy.body)["preferredVersion"]["groupVersion"] == "batch/v1"


@pytest.mark.parametrize("kind", ["WatchEvent", "DeleteOptions", "ListOptions", "PatchOptions"])
def test_batch_v1_accepts_the_meta_kinds(kind: str) -> None:
    assert builtin_scheme().recognizes(GroupVersionKind("batch", "v1", kind))


def _job(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "pi", "creationTimestamp": _ago(300)},
        "spec": {
            "completions": 3,
            "parallelism": 1,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}},
        },
        "status": status,
    }


def _cells(obj: dict[str, Any], kind: str) -> list[Any]:
    cells: list[Any] = build_table([obj], kind=kind, group="batch", meta_version="v1")["rows"][0][
        "cells"
    ]
    return cells


def test_job_table_columns() -> None:
    table = build_table([_job()], kind="Job", group="batch", meta_version="v1")
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", 0),
        ("Status", 0),
        ("Completions", 0),
        ("Duration", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
        ("Selector", 1),
    ]


def test_job_rows_as_kubectl_prints_them() -> None:
    running = _cells(_job(succeeded=1, startTime=_ago(65)), "Job")
    assert running[:4] == ["pi", "Running", "1/3", "65s"]
    assert running[5:] == ["pi", "perl", "batch.kubernetes.io/controller-uid=u"]
    done = _job(
        succeeded=3,
        startTime="2026-01-01T00:00:00Z",
        completionTime="2026-01-01T00:02:30Z",
        conditions=[{"type": "Complete", "status": "True"}],
    )
    assert _cells(done, "Job")[1:4] == ["Complete", "3/3", "2m30s"]
    suspended = _job(conditions=[{"type": "Suspended", "status": "True"}])
    assert _cells(suspended, "Job")[1:4] == ["Suspended", "0/3", ""]
    parallel = _job()
    parallel["spec"].update(completions=None, parallelism=4)
    assert _cells(parallel, "Job")[2] == "0/1 of 4"


def test_cron_job_rows_as_kubectl_prints_them() -> None:
    cron_job = {
        "metadata": {"name": "nightly", "creationTimestamp": _ago(3600)},
        "spec": {
            "schedule": "0 3 * * *",
            "suspend": False,
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [{"name": "b", "image": "busybox"}]}}}
            },
        },
        "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": _ago(120)},
    }
    table = build_table([cron_job], kind="CronJob", group="batch", meta_version="v1")
    assert [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0] == [
        "Name",
        "Schedule",
        "Timezone",
        "Suspend",
        "Active",
        "Last Schedule",
        "Age",
    ]
    assert table["rows"][0]["cells"] == [
        "nightly",
        "0 3 * * *",
        "<none>",
        "False",
        1,
        "2m",
        "60m",
        "b",
        "busybox",
        "<none>",
    ]


def test_openapi_document_of_batch_v1() -> None:
    openapi = OpenAPIV3(builtin_scheme(), "v1.36.0")
    doc = openapi.document("apis/batch/v1")
    assert doc is not None
    body = orjson.loads(doc.body)
    paths = body["paths"]
    assert "/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status" in paths
    assert "/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}" in paths
    schemas = body["components"]["schemas"]
    conditions = schemas["io.k8s.api.batch.v1.JobStatus"]["properties"]["conditions"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-list-type"] == "atomic"
    assert schemas["io.k8s.api.batch.v1.JobSpec"]["required"] == ["template"]
    assert schemas["io.k8s.api.batch.v1.CronJobSpec"]["required"] == ["jobTemplate", "schedule"]
