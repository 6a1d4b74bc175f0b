"""The ``kubernetes`` Python client against a real ``kstore serve`` (clients.md §6, scenarios
17, 18 and 19), on LMDB and on etcd: CRUD with bodies that carry no apiVersion/kind, errors as
``ApiException`` with a Status body, every patch type, watch streams, a watch that gets 410
Expired once the server has compacted its history, and the 31.x client (which spells
booleans ``True``) in a process of its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.clients.servers import start_compacting_server, storage_args, wait_for_watches
from tests.server.harness import RunningServer

#: The classic-generator client whose watch sends ``watch=True`` (scenario 19).
_OLD_CLIENT = "kubernetes==31.0.0"


def _cm(name: str, data: dict[str, str], **labels: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


def _error(exc: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    status = json.loads(exc.value.body)
    assert status["kind"] == "Status" and status["code"] == exc.value.status
    return exc.value.status, status["reason"]


# ------------------------------------------------------------------------ 17. CRUD


def test_crud_and_errors(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, _cm("py1", {"k": "v"}, app="py"))
    assert created.metadata.uid and created.metadata.resource_version
    assert created.metadata.creation_timestamp is not None
    core.create_namespaced_config_map(namespace, _cm("other", {"k": "o"}))

    with pytest.raises(ApiException) as duplicate:
        core.create_namespaced_config_map(namespace, _cm("py1", {"k": "v"}))
    assert _error(duplicate) == (409, "AlreadyExists")

    assert core.read_namespaced_config_map("py1", namespace).data == {"k": "v"}
    listed = core.list_namespaced_config_map(namespace, label_selector="app=py")
    assert [item.metadata.name for item in listed.items] == ["py1"]
    assert listed.metadata.resource_version
    assert core.list_namespaced_config_map(namespace, label_selector="app=none").items == []

    stale = core.read_namespaced_config_map("py1", namespace)
    fresh = core.read_namespaced_config_map("py1", namespace)
    fresh.data["k"] = "v2"
    replaced = core.replace_namespaced_config_map("py1", namespace, fresh)
    assert replaced.data == {"k": "v2"}
    stale.data["k"] = "lost"
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("py1", namespace, stale)
    assert _error(conflict) == (409, "Conflict")

    core.patch_namespaced_config_map("py1", namespace, {"data": {"s": "1"}})
    core.patch_namespaced_config_map(
        "py1", namespace, [{"op": "add", "path": "/data/j", "value": "2"}]
    )
    core.patch_namespaced_config_map(
        "py1", namespace, {"data": {"m": "3"}}, _content_type="application/merge-patch+json"
    )
    applied = core.patch_namespaced_config_map(
        "py1",
        namespace,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py1"}, "data": {"a": "4"}},
        field_manager="py",
        _content_type="application/apply-patch+yaml",
    )
    assert applied.data == {"k": "v2", "s": "1", "j": "2", "m": "3", "a": "4"}
    managers = {e.manager: e.operation for e in applied.metadata.managed_fields}
    assert managers["py"] == "Apply"

    deleted = core.delete_namespaced_config_map("py1", namespace)
    assert deleted["status"] == "Success"
    assert deleted["details"]["name"] == "py1"
    with pytest.raises(ApiException) as missing:
        core.delete_namespaced_config_map("py1", namespace)
    assert _error(missing) == (404, "NotFound")
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("py1", namespace)
    assert _error(gone) == (404, "NotFound")


def test_apply_creates_and_deployment_status_subresource(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
        },
    }
    created = apps.patch_namespaced_deployment(
        "web", namespace, body, field_manager="py", _content_type="application/apply-patch+yaml"
    )
    assert created.metadata.generation == 1
    assert created.spec.template.spec.containers[0].image_pull_policy == "IfNotPresent"

    status = {"status": {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}}
    written = apps.patch_namespaced_deployment_status("web", namespace, status)
    assert written.status.ready_replicas == 1
    assert written.metadata.generation == 1
    # A status write ignores spec; a main-resource write ignores status.
    apps.patch_namespaced_deployment_status("web", namespace, {"spec": {"replicas": 9}})
    apps.patch_namespaced_deployment("web", namespace, {"status": {"readyReplicas": 0}})
    live = apps.read_namespaced_deployment("web", namespace)
    assert live.spec.replicas == 2 and live.status.ready_replicas == 1


# ----------------------------------------------------------------------- 18. watch


def _watch_names(
    core: client.CoreV1Api, namespace: str, seconds: int, out: list[tuple[str, str]]
) -> None:
    for event in watch.Watch().stream(
        core.list_namespaced_config_map, namespace, timeout_seconds=seconds
    ):
        out.append((event["type"], event["object"].metadata.name))


def test_watch_sees_existing_objects_then_changes(
    core: client.CoreV1Api, namespace: str, kstore_server: RunningServer
) -> None:
    core.create_namespaced_config_map(namespace, _cm("old1", {"a": "1"}))
    core.create_namespaced_config_map(namespace, _cm("old2", {"a": "1"}))
    events: list[tuple[str, str]] = []
    watcher = threading.Thread(target=_watch_names, args=(core, namespace, 3, events))
    watcher.start()
    wait_for_watches(kstore_server.url, "configmaps")
    core.create_namespaced_config_map(namespace, _cm("py2", {"a": "1"}))
    core.patch_namespaced_config_map("py2", namespace, {"data": {"a": "2"}})
    core.delete_namespaced_config_map("py2", namespace)
    watcher.join(10)
    assert not watcher.is_alive()
    # No resourceVersion: the existing objects first (as ADDED), then the changes.
    assert sorted(events[:2]) == [("ADDED", "old1"), ("ADDED", "old2")]
    assert events[2:] == [("ADDED", "py2"), ("MODIFIED", "py2"), ("DELETED", "py2")]


def test_watch_from_a_resource_version_replays_later_changes(
    core: client.CoreV1Api, namespace: str
) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, _cm("w1", {"a": "1"}))
    core.delete_namespaced_config_map("w1", namespace)
    seen = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=1
        )
    ]
    assert seen == [("ADDED", "w1"), ("DELETED", "w1")]


def test_bookmarks_carry_the_resource_version(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, _cm("b1", {"a": "1"}))
    w = watch.Watch()
    types: list[str] = []
    for event in w.stream(
        core.list_namespaced_config_map,
        namespace,
        allow_watch_bookmarks=True,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        timeout_seconds=1,
    ):
        types.append(event["type"])
        if event["type"] == "BOOKMARK":
            annotations = event["raw_object"]["metadata"].get("annotations", {})
            assert annotations.get("k8s.io/initial-events-end") == "true"
            break
    assert types == ["ADDED", "BOOKMARK"]
    assert int(w.resource_version) > 0


# ------------------------------------------------------------ 410 after compaction


@pytest.fixture(scope="module")
def compacting_server(
    request: pytest.FixtureRequest, backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """A second server on the module's backend that compacts its history every second, with
    the watch cache off so that watches read the backend's (compacted) history."""
    with storage_args(request.config, backend, own_etcd=True) as args:
        server = start_compacting_server(
            tmp_path_factory.mktemp(f"compacting-{backend}") / "data",
            1.0,
            "--watch-cache=false",
            *args,
        )
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


def test_watch_from_a_compacted_revision_is_410(compacting_server: RunningServer) -> None:
    configuration = client.Configuration()
    configuration.host = compacting_server.url
    with client.ApiClient(configuration) as api:
        core = client.CoreV1Api(api)
        first = core.create_namespaced_config_map("default", _cm("c1", {"n": "0"}))
        start = first.metadata.resource_version
        for n in range(1, 4):
            core.patch_namespaced_config_map("c1", "default", {"data": {"n": str(n)}})
        # Before compaction the history from `start` is there: its events replay.
        replayed = [
            e["object"].data["n"]
            for e in watch.Watch().stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=start,
                timeout_seconds=1,
            )
        ]
        assert replayed == ["1", "2", "3"]

        deadline = time.monotonic() + 20
        while True:
            # Writes keep the revision moving, so the compactor has somewhere to go.
            core.patch_namespaced_config_map("c1", "default", {"data": {"tick": str(time.time())}})
            try:
                for _ in watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "default",
                    resource_version=start,
                    timeout_seconds=1,
                ):
                    pass
            except ApiException as exc:
                assert exc.status == 410
                # LMDB words it as the watch cache does, etcd as Kubernetes' etcd3 watcher.
                assert re.fullmatch(
                    rf"Expired: too old resource version: {start} \(\d+\)|"
                    r"Expired: The resourceVersion for the provided watch is too old\.",
                    str(exc.reason),
                ), exc.reason
                break
            assert time.monotonic() < deadline, "the history from `start` was never compacted"
            time.sleep(0.5)

        # A list at the compacted revision is 410 too; the newest state is still readable.
        with pytest.raises(ApiException) as listed:
            core.list_namespaced_config_map(
                "default", resource_version=start, resource_version_match="Exact"
            )
        assert _error(listed) == (410, "Expired")
        assert core.read_namespaced_config_map("c1", "default").data["n"] == "3"


# ---------------------------------------------------- 19. the 31.x client (watch=True)


@pytest.fixture(scope="session")
def old_client_path(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A directory with the 31.x client and its dependencies, installed once and kept in
    pytest's cache when there is one (the 37.x client of the test environment cannot share a
    site-packages with it)."""
    cache = getattr(request.config, "cache", None)
    root = cache.mkdir("kubernetes-31") if cache is not None else tmp_path_factory.mktemp("k31")
    target = root / "site"
    marker = target / ".installed"
    if not marker.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-warn-conflicts",
                "--target",
                str(target),
                "--upgrade",
                _OLD_CLIENT,
            ],
            check=True,
            timeout=600,
        )
        marker.write_text(_OLD_CLIENT)
    return target


_OLD_CLIENT_SCRIPT = r"""
import json, sys, threading, time, urllib.request
import kubernetes
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

url, namespace = sys.argv[1], sys.argv[2]
configuration = client.Configuration()
configuration.host = url
core = client.CoreV1Api(client.ApiClient(configuration))
report = {"version": kubernetes.__version__}
core.create_namespaced_config_map(
    namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="old"), data={"a": "1"})
)
events = []

def run():
    for e in watch.Watch().stream(core.list_namespaced_config_map, namespace, timeout_seconds=3):
        events.append([e["type"], e["object"].metadata.name])

t = threading.Thread(target=run)
t.start()
# Write once the server has the watch open (its long-running request gauge says so).
deadline = time.monotonic() + 20
while not any(
    line.startswith("apiserver_longrunning_requests{") and 'verb="WATCH"' in line
    and 'resource="configmaps"' in line and not line.endswith(" 0")
    for line in urllib.request.urlopen(url + "/metrics").read().decode().splitlines()
):
    assert time.monotonic() < deadline, "the watch never opened"
    time.sleep(0.05)
core.create_namespaced_config_map(
    namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py2"), data={"a": "1"})
)
core.delete_namespaced_config_map("py2", namespace)
t.join()
report["events"] = events
status = core.delete_namespaced_config_map("old", namespace)
report["delete"] = status.status
try:
    core.read_namespaced_config_map("old", namespace)
except ApiException as exc:
    report["missing"] = [exc.status, json.loads(exc.body)["reason"]]
print(json.dumps(report))
"""


def test_python_client_31_watch_and_delete(
    old_client_path: Path, kstore_server: RunningServer, namespace: str, tmp_path: Path
) -> None:
    script = tmp_path / "old_client.py"
    script.write_text(_OLD_CLIENT_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(old_client_path)}
    done = subprocess.run(
        [sys.executable, "-W", "error", str(script), kstore_server.url, namespace],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["version"] == _OLD_CLIENT.split("==")[1]
    assert report["events"] == [["ADDED", "old"], ["ADDED", "py2"], ["DELETED", "py2"]]
    assert report["delete"] == "Success"
    assert report["missing"] == [404, "NotFound"]


def test_service_account_crud(core: client.CoreV1Api, namespace: str) -> None:
    body = client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="builder", labels={"team": "ci"}),
        secrets=[client.V1ObjectReference(name="token", namespace="ignored")],
        automount_service_account_token=False,
    )
    created = core.create_namespaced_service_account(namespace, body)
    assert isinstance(created, client.V1ServiceAccount)
    assert [s.to_dict()["name"] for s in created.secrets] == ["token"]
    assert created.secrets[0].namespace is None
    listed = core.list_namespaced_service_account(namespace, label_selector="team=ci")
    assert [sa.metadata.name for sa in listed.items] == ["builder"]
    core.patch_namespaced_service_account(
        "builder", namespace, {"imagePullSecrets": [{"name": "registry"}]}
    )
    read = core.read_namespaced_service_account("builder", namespace)
    assert [ref.name for ref in read.image_pull_secrets] == ["registry"]
    core.delete_namespaced_service_account("builder", namespace)
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_service_account("builder", namespace)
    assert _error(gone) == (404, "NotFound")


@pytest.fixture(scope="module")
def batch(api_client: client.ApiClient) -> client.BatchV1Api:
    return client.BatchV1Api(api_client)


def _pod_template(restart_policy: str) -> client.V1PodTemplateSpec:
    return client.V1PodTemplateSpec(
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="work", image="busybox")],
            restart_policy=restart_policy,
        )
    )


def test_job_crud_with_generated_selector(batch: client.BatchV1Api, namespace: str) -> None:
    body = client.V1Job(
        metadata=client.V1ObjectMeta(name="once", labels={"team": "ci"}),
        spec=client.V1JobSpec(template=_pod_template("Never"), backoff_limit=2),
    )
    created = batch.create_namespaced_job(namespace, body)
    assert isinstance(created, client.V1Job)
    uid = created.metadata.uid
    assert created.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": uid}
    assert created.spec.template.metadata.labels["job-name"] == "once"
    assert (created.spec.completions, created.spec.parallelism) == (1, 1)
    assert created.spec.backoff_limit == 2
    assert created.spec.pod_replacement_policy == "TerminatingOrFailed"
    listed = batch.list_namespaced_job(namespace, label_selector="team=ci")
    assert [j.metadata.name for j in listed.items] == ["once"]
    patched = batch.patch_namespaced_job_status(
        "once", namespace, {"status": {"active": 1, "ready": 0}}
    )
    assert patched.status.active == 1
    assert patched.metadata.generation == 1
    with pytest.raises(ApiException) as immutable:
        batch.patch_namespaced_job(
            "once", namespace, {"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}}
        )
    assert _error(immutable) == (422, "Invalid")
    # Without a propagation policy, batch/v1 orphans the pods: the delete puts the ``orphan``
    # finalizer on the Job, and the garbage collector takes it off (and the Job goes).
    response = batch.delete_namespaced_job("once", namespace, _preload_content=False)
    held = json.loads(response.data)["metadata"]
    assert held["finalizers"] == ["orphan"] and held["deletionTimestamp"]
    deadline = time.monotonic() + 15
    while True:
        try:
            batch.read_namespaced_job("once", namespace)
        except ApiException as gone:
            assert (gone.status, gone.reason) == (404, "Not Found")
            break
        assert time.monotonic() < deadline, "the orphan finalizer stayed"
        time.sleep(0.05)


def test_cron_job_crud(batch: client.BatchV1Api, namespace: str) -> None:
    body = client.V1CronJob(
        metadata=client.V1ObjectMeta(name="hourly"),
        spec=client.V1CronJobSpec(
            schedule="@hourly",
            job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(template=_pod_template("OnFailure"))
            ),
        ),
    )
    created = batch.create_namespaced_cron_job(namespace, body)
    assert isinstance(created, client.V1CronJob)
    assert created.spec.concurrency_policy == "Allow"
    assert created.spec.failed_jobs_history_limit == 1
    suspended = batch.patch_namespaced_cron_job("hourly", namespace, {"spec": {"suspend": True}})
    assert suspended.spec.suspend is True
    assert suspended.metadata.generation == 2
    with pytest.raises(ApiException) as invalid:
        batch.patch_namespaced_cron_job("hourly", namespace, {"spec": {"schedule": "61 * * * *"}})
    assert _error(invalid) == (422, "Invalid")
    assert "end of range (61) above maximum (59): 61" in json.loads(invalid.value.body)["message"]
    batch.delete_namespaced_cron_job("hourly", namespace)
    assert batch.list_namespaced_cron_job(namespace).items == []


@pytest.fixture(scope="module")
def policy(api_client: client.ApiClient) -> client.PolicyV1Api:
    return client.PolicyV1Api(api_client)


def test_pod_disruption_budget_crud(policy: client.PolicyV1Api, namespace: str) -> None:
    body = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available="50%",
            selector=client.V1LabelSelector(match_labels={"app": "web"}),
        ),
    )
    created = policy.create_namespaced_pod_disruption_budget(namespace, body)
    assert isinstance(created, client.V1PodDisruptionBudget)
    assert created.metadata.generation == 1
    assert created.spec.unhealthy_pod_eviction_policy is None
    assert created.status.expected_pods == 0
    patched = policy.patch_namespaced_pod_disruption_budget(
        "web", namespace, {"spec": {"unhealthyPodEvictionPolicy": "AlwaysAllow"}}
    )
    assert patched.spec.unhealthy_pod_eviction_policy == "AlwaysAllow"
    assert patched.metadata.generation == 2
    status = policy.patch_namespaced_pod_disruption_budget_status(
        "web", namespace, {"status": {"disruptionsAllowed": 1, "expectedPods": 2}}
    )
    assert status.status.disruptions_allowed == 1
    assert status.metadata.generation == 2
    with pytest.raises(ApiException) as invalid:
        policy.patch_namespaced_pod_disruption_budget(
            "web", namespace, {"spec": {"unhealthyPodEvictionPolicy": "Never"}}
        )
    assert _error(invalid) == (422, "Invalid")
    assert 'Unsupported value: "Never"' in json.loads(invalid.value.body)["message"]
    listed = policy.list_namespaced_pod_disruption_budget(namespace).items
    assert [p.metadata.name for p in listed] == ["web"]
    policy.delete_namespaced_pod_disruption_budget("web", namespace)
    assert policy.list_namespaced_pod_disruption_budget(namespace).items == []


@pytest.fixture(scope="module")
def networking(api_client: client.ApiClient) -> client.NetworkingV1Api:
    return client.NetworkingV1Api(api_client)


def test_ingress_crud_with_status(networking: client.NetworkingV1Api, namespace: str) -> None:
    backend = client.V1IngressBackend(
        service=client.V1IngressServiceBackend(
            name="web", port=client.V1ServiceBackendPort(number=80)
        )
    )
    path = client.V1HTTPIngressPath(path="/", path_type="Prefix", backend=backend)
    body = client.V1Ingress(
        metadata=client.V1ObjectMeta(name="web", labels={"app": "web"}),
        spec=client.V1IngressSpec(
            rules=[
                client.V1IngressRule(
                    host="www.example.com",
                    http=client.V1HTTPIngressRuleValue(paths=[path]),
                )
            ]
        ),
    )
    created = networking.create_namespaced_ingress(namespace, body)
    assert isinstance(created, client.V1Ingress)
    assert created.metadata.generation == 1
    assert created.spec.rules[0].http.paths[0].backend.service.port.number == 80
    listed = networking.list_namespaced_ingress(namespace, label_selector="app=web")
    assert [i.metadata.name for i in listed.items] == ["web"]
    patched = networking.patch_namespaced_ingress_status(
        "web", namespace, {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.7"}]}}}
    )
    assert patched.status.load_balancer.ingress[0].ip == "192.0.2.7"
    assert patched.metadata.generation == 1
    renamed = networking.patch_namespaced_ingress(
        "web", namespace, {"spec": {"ingressClassName": "nginx"}}
    )
    assert renamed.metadata.generation == 2
    with pytest.raises(ApiException) as invalid:
        networking.patch_namespaced_ingress(
            "web", namespace, {"spec": {"rules": [{"host": "192.0.2.1"}]}}
        )
    assert _error(invalid) == (422, "Invalid")
    assert "must be a DNS name, not an IP address" in json.loads(invalid.value.body)["message"]
    networking.delete_namespaced_ingress("web", namespace)
    assert networking.list_namespaced_ingress(namespace).items == []


def test_ingress_class_crud(networking: client.NetworkingV1Api) -> None:
    body = client.V1IngressClass(
        metadata=client.V1ObjectMeta(name="kstore-test-class"),
        spec=client.V1IngressClassSpec(
            controller="example.com/ingress",
            parameters=client.V1IngressClassParametersReference(kind="Params", name="p"),
        ),
    )
    created = networking.create_ingress_class(body)
    assert created.spec.parameters.scope == "Cluster"
    assert created.metadata.generation == 1
    with pytest.raises(ApiException) as immutable:
        networking.patch_ingress_class(
            "kstore-test-class", {"spec": {"controller": "example.com/other"}}
        )
    assert _error(immutable) == (422, "Invalid")
    networking.delete_ingress_class("kstore-test-class")
    names = [c.metadata.name for c in networking.list_ingress_class().items]
    assert "kstore-test-class" not in names
