"""kubectl's long-running and paged reads against a real ``kstore serve`` (clients.md §6,
scenarios 13, 14 and 15), on LMDB and on etcd: ``get -w`` (bounded: started with a deadline,
changes made while it runs, its printed lines checked), ``wait`` (client-go's watch-list),
and a list of 1,200 objects in pages.

kubectl's REST client throttles itself to 5 requests per second after a burst of 10 (client-go's
defaults; kubectl prints "Waited ... due to client-side throttling"), so a list of 1,200 objects
at ``--chunk-size=7`` would spend half a minute waiting in the client. The paging checks use
chunk sizes that keep every list within the burst, and the smallest chunk size on a label
selection of the same objects (which also pages a filtered list).
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kubernetes import client

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import configmap
from tests.clients.servers import wait_for_watches

_WATCH_DEADLINE = 20.0


def _wait_for(path: Path, pattern: str, deadline: float) -> str:
    """The file's text once a line matches ``pattern`` (the watching kubectl printed it)."""
    regex = re.compile(pattern, re.MULTILINE)
    while True:
        text = path.read_text()
        if regex.search(text):
            return text
        assert time.monotonic() < deadline, f"no line matching {pattern!r} in:\n{text}"
        time.sleep(0.05)


# --------------------------------------------------------------------------- 14. get -w


def test_get_watch_prints_added_modified_deleted_in_order(k: Kubectl) -> None:
    k.write("cm0.yaml", configmap("cm0", {"a": "0"}))
    k.ok("create", "-f", "cm0.yaml")
    out = k.workdir / "watch.out"
    deadline = time.monotonic() + _WATCH_DEADLINE
    watcher = k.start(
        "get", "cm", "-w", "--output-watch-events", f"--request-timeout={_WATCH_DEADLINE}s",
        output=out,
    )  # fmt: skip
    try:
        # The initial list is printed before the watch starts; changes made from then on are
        # delivered because the watch starts at the list's resourceVersion.
        _wait_for(out, r"^ADDED\s+cm0\b", deadline)
        k.write("cm4.yaml", configmap("cm4", {"a": "1"}))
        k.ok("apply", "-f", "cm4.yaml")
        k.ok("label", "cm", "cm4", "env=prod")
        k.ok("delete", "cm", "cm4")
        text = _wait_for(out, r"^DELETED\s+cm4\b", deadline)
    finally:
        watcher.terminate()
        watcher.wait(10)
    rows = [line.split() for line in text.splitlines() if line.strip()]
    assert rows[0][:2] == ["EVENT", "NAME"]
    events = [(row[0], row[1]) for row in rows[1:]]
    assert events == [
        ("ADDED", "cm0"),
        ("ADDED", "cm4"),
        ("MODIFIED", "cm4"),
        ("DELETED", "cm4"),
    ]


def test_get_watch_of_deployments_as_json(k: Kubectl, api_client: client.ApiClient) -> None:
    out = k.workdir / "deploy-watch.out"
    deadline = time.monotonic() + _WATCH_DEADLINE
    watcher = k.start(
        "get", "deploy", "-w", "-o", "json", f"--request-timeout={_WATCH_DEADLINE}s", output=out
    )
    try:
        # Nothing to list: the server must have the watch open before the writes.
        wait_for_watches(k.server_url, "deployments")
        apps = client.AppsV1Api(api_client)
        body = {
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
                },
            },
        }
        apps.create_namespaced_deployment(k.namespace, body)
        apps.patch_namespaced_deployment("web", k.namespace, {"spec": {"replicas": 4}})
        _wait_for(out, r'"replicas": 4', deadline)
    finally:
        watcher.terminate()
        watcher.wait(10)
    decoder = json.JSONDecoder()
    text, objects, pos = out.read_text(), [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        obj, pos = decoder.raw_decode(text, pos)
        objects.append(obj)
    assert [o["kind"] for o in objects] == ["Deployment", "Deployment"]
    assert [o["spec"]["replicas"] for o in objects] == [1, 4]
    assert objects[0]["metadata"]["generation"] == 1
    assert objects[1]["metadata"]["generation"] == 2


# --------------------------------------------------------------------------- 15. wait


def test_wait_for_a_condition_and_for_deletion(k: Kubectl) -> None:
    k.write("cm1.yaml", configmap("cm1", {"a": "1"}))
    k.ok("create", "-f", "cm1.yaml")
    started = time.monotonic()
    met = k.ok("wait", "--for=jsonpath={.data.a}=1", "cm/cm1", "--timeout=10s")
    assert met.strip() == "configmap/cm1 condition met"
    # An immediate answer: a watch-list that never sent its initial-events-end bookmark
    # would only end at the timeout.
    assert time.monotonic() - started < 5

    # A condition that becomes true while kubectl waits.
    out = k.workdir / "wait.out"
    waiter = k.start("wait", "--for=jsonpath={.data.a}=2", "cm/cm1", "--timeout=20s", output=out)
    try:
        time.sleep(0.5)
        k.ok("patch", "cm", "cm1", "--type", "merge", "-p", '{"data":{"a":"2"}}')
        assert waiter.wait(20) == 0
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert out.read_text().strip() == "configmap/cm1 condition met"

    k.ok("delete", "cm", "cm1", "--wait=false")
    gone = k.run("wait", "--for=delete", "cm/cm1", "--timeout=10s")
    assert gone.code == 0, gone

    timed_out = k.run("wait", "--for=jsonpath={.data.a}=3", "cm/missing", "--timeout=1s")
    assert timed_out.code == 1
    assert 'configmaps "missing" not found' in timed_out.stderr


def test_wait_for_a_condition_a_controller_sets(
    k: Kubectl, api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
        },
    }
    apps.create_namespaced_deployment(namespace, body)
    out = k.workdir / "available.out"
    waiter = k.start("wait", "--for=condition=Available", "deploy/web", "--timeout=20s", output=out)
    try:
        wait_for_watches(k.server_url, "deployments")
        # What a deployment controller would write through the status subresource.
        condition = {
            "type": "Available",
            "status": "True",
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
        }
        apps.patch_namespaced_deployment_status(
            "web", namespace, {"status": {"observedGeneration": 1, "conditions": [condition]}}
        )
        assert waiter.wait(20) == 0, out.read_text()
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert out.read_text().strip() == "deployment.apps/web condition met"


# ---------------------------------------------------------------------- 13. pagination

_OBJECTS = 1200


def _create_many(core: client.CoreV1Api, namespace: str) -> None:
    def create(i: int) -> None:
        labels = {"sample": "yes"} if i % 24 == 0 else {}
        core.create_namespaced_config_map(
            namespace,
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=f"cm-{i:04d}", labels=labels),
                data={"i": str(i)},
            ),
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(_OBJECTS)))


def _continued_pages(log: str) -> int:
    """How many list requests with a continue token kubectl's ``-v=6`` log answers (its
    throttling notices name the same URLs, so only responses count)."""
    return sum(1 for line in log.splitlines() if '"Response"' in line and "continue=" in line)


def test_paging_through_1200_objects(k: Kubectl, core: client.CoreV1Api, namespace: str) -> None:
    _create_many(core, namespace)
    expected = [f"configmap/cm-{i:04d}" for i in range(_OBJECTS)]

    # The default chunk size (500): three pages.
    default = k.run("get", "cm", "-o", "name", "-v=6")
    assert default.code == 0, default
    assert default.stdout.split() == expected
    assert _continued_pages(default.stderr) == 2

    chunked = k.run("get", "cm", "-o", "name", "--chunk-size=130", "-v=6")
    assert chunked.stdout.split() == expected
    assert _continued_pages(chunked.stderr) == 9

    # The table printer merges the pages into one table.
    table = k.ok("get", "cm", "--chunk-size=400").splitlines()
    assert table[0].split()[0] == "NAME" and len(table) == _OBJECTS + 1

    sampled = k.run("get", "cm", "-l", "sample=yes", "--chunk-size=7", "-o", "name", "-v=6")
    assert sampled.stdout.split() == [f"configmap/cm-{i:04d}" for i in range(0, _OBJECTS, 24)]
    assert _continued_pages(sampled.stderr) == 7

    # The Python client pages with limit/continue as well.
    names: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map(namespace, limit=250, _continue=token)
        pages += 1
        names.extend(item.metadata.name for item in page.items)
        token = page.metadata.var_continue
        if not token:
            break
        assert page.metadata.remaining_item_count == _OBJECTS - len(names)
    assert pages == 5
    assert names == [name.split("/")[1] for name in expected]
