"""An admission plugin that has to wait never holds the event loop: a pod created in a brand-new
namespace, whose default ServiceAccount does not exist yet, waits for it on a worker thread,
while every other request (on LMDB, where writes run on the loop) is answered meanwhile."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import RunningServer, start_server

_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "first"},
    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    # No service account controller: the test makes the default account itself, when it
    # chooses to.
    running = start_server(
        tmp_path_factory.mktemp("sa-wait") / "data", "--controllers=*,-serviceaccount"
    )
    try:
        yield running
    finally:
        assert running.stop() == 0, running.log()


def _new_namespace(c: httpx.Client, name: str) -> None:
    r = c.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert r.status_code == 201, r.text


def test_other_requests_are_answered_while_a_pod_waits_for_its_account(
    server: RunningServer,
) -> None:
    with server.client() as c:
        _new_namespace(c, "fresh")
        answered: dict[str, httpx.Response] = {}

        def create_pod() -> None:
            with server.client() as own:
                answered["pod"] = own.post("/api/v1/namespaces/fresh/pods", json=_POD)

        waiting = threading.Thread(target=create_pod)
        waiting.start()
        time.sleep(0.2)  # the pod's create is waiting for the account by now
        timings = []
        for i in range(3):
            before = time.monotonic()
            r = c.post(
                "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": f"cm-{i}"}}
            )
            assert r.status_code == 201, r.text
            assert c.get("/version").status_code == 200
            timings.append(time.monotonic() - before)
        # The account the pod waits for, made while it waits (were the loop held, this
        # create would be answered only after the pod's tries ran out, and the pod refused).
        r = c.post(
            "/api/v1/namespaces/fresh/serviceaccounts", json={"metadata": {"name": "default"}}
        )
        assert r.status_code == 201, r.text
        waiting.join(30)
        # Held by the loop, each would have waited out the plugin's 1-2 s of tries.
        assert max(timings) < 0.5, timings
        pod = answered["pod"]
        assert pod.status_code == 201, pod.text
        spec = pod.json()["spec"]
        assert spec["serviceAccountName"] == "default"
        assert spec["volumes"][0]["name"].startswith("kube-api-access-")


def test_a_pod_whose_account_never_comes_is_refused_after_the_wait(
    server: RunningServer,
) -> None:
    with server.client() as c:
        _new_namespace(c, "never")
        before = time.monotonic()
        r = c.post("/api/v1/namespaces/never/pods", json=_POD)
        waited = time.monotonic() - before
        assert r.status_code == 403, r.text
        assert r.json()["message"] == (
            'pods "first" is forbidden: error looking up service account never/default: '
            'serviceaccount "default" not found'
        )
        assert waited > 0.8  # the plugin's tries, 100-200 ms apart
        # Nothing of the first attempt (on the loop) was stored.
        assert c.get("/api/v1/namespaces/never/pods/first").status_code == 404


def test_a_pod_made_by_server_side_apply_waits_off_the_loop_too(server: RunningServer) -> None:
    with server.client() as c:
        _new_namespace(c, "applied")
        answered: dict[str, httpx.Response] = {}

        def apply_pod() -> None:
            with server.client() as own:
                answered["pod"] = own.patch(
                    "/api/v1/namespaces/applied/pods/first",
                    params={"fieldManager": "test"},
                    content=json.dumps(_POD),
                    headers={"Content-Type": "application/apply-patch+yaml"},
                )

        waiting = threading.Thread(target=apply_pod)
        waiting.start()
        time.sleep(0.2)
        before = time.monotonic()
        assert c.get("/version").status_code == 200
        r = c.post(
            "/api/v1/namespaces/applied/serviceaccounts", json={"metadata": {"name": "default"}}
        )
        assert r.status_code == 201, r.text
        assert time.monotonic() - before < 0.5
        waiting.join(30)
        pod = answered["pod"]
        assert pod.status_code == 201, pod.text
        assert pod.json()["spec"]["serviceAccountName"] == "default"
