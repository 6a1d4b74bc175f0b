"""CRD conversion webhooks against a real ``kstore serve`` (LMDB and etcd), with real kubectl
and the Python client, and a real HTTPS webhook on loopback with its own CA
(:mod:`tests.webhook_server`) converting ``Backend`` across three versions
(:mod:`tests.crd_conversion`: ``v1alpha1`` ``hostPort`` ↔ ``v1beta1`` ``host``/``port`` ↔
``v1`` ``hostname``/``port``, stored as ``v1``).

Objects created in one version are read, listed, patched and watched in the others; a webhook
that fails, hangs, answers garbage or presents a certificate of another CA fails the requests
that need it with kube-apiserver's messages, and never the others.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.servers import storage_args
from tests.crd_conversion import KIND, PLURAL, backend_crd, convert_review
from tests.server.harness import RunningServer, start_server
from tests.webhook_server import CertificateAuthority, Reply, WebhookServer, garbage, hang

BASE = "conversion.example.com"
#: How long the server waits on a conversion webhook here (kube-apiserver: 30 s).
TIMEOUT = 2


def _failure(review: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": review["request"]["uid"],
            "convertedObjects": [],
            "result": {"status": "Failure", "message": "the webhook refuses to convert"},
        },
    }


def _answer(review: Any) -> Reply | dict[str, Any]:
    return convert_review(review)


@pytest.fixture(scope="module")
def webhook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        server.route("/convert", _answer)
        server.route("/fail", _failure)
        server.route("/hang", hang)
        server.route("/garbage", garbage)
        yield server


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest,
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    webhook: WebhookServer,
) -> Iterator[RunningServer]:
    """The module's server, with a short conversion webhook timeout."""
    with storage_args(request.config, backend) as args:
        server = start_server(
            tmp_path_factory.mktemp(f"conversion-{backend}") / "data",
            *args,
            "--conversion-webhook-timeout",
            f"{TIMEOUT}s",
            # The well-behaved webhook is named as a service (no proxy here: a rule reaches it).
            "--webhook-service-resolver",
            f"default/webhook=127.0.0.1:{webhook.port}",
        )
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


def _group(mode: str) -> str:
    return BASE if mode == "convert" else f"{mode}.{BASE}"


@pytest.fixture(scope="module")
def crds(
    kstore_server: RunningServer, api_client: client.ApiClient, webhook: WebhookServer
) -> dict[str, str]:
    """One CRD per webhook behaviour (by group); returns their groups by behaviour."""
    api = client.ApiextensionsV1Api(api_client)
    other_ca = CertificateAuthority().ca_bundle
    groups: dict[str, str] = {}
    for mode in ("convert", "fail", "hang", "garbage", "bad-ca"):
        path = "/convert" if mode == "bad-ca" else f"/{mode}"
        config: dict[str, Any] = {
            "url": webhook.url(path),
            "caBundle": other_ca if mode == "bad-ca" else webhook.ca_bundle,
        }
        if mode == "convert":
            del config["url"]
            config["service"] = {"namespace": "default", "name": "webhook", "path": path}
        api.create_custom_resource_definition(backend_crd(config, group=_group(mode)))
        groups[mode] = _group(mode)
    objects = client.CustomObjectsApi(api_client)
    for group in groups.values():
        deadline = time.monotonic() + 10
        while True:
            try:
                objects.list_cluster_custom_object(group, "v1", PLURAL)
                break
            except ApiException as exc:
                assert exc.status == 404 and time.monotonic() < deadline, exc
                time.sleep(0.05)
    return groups


def _objects(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


def _body(group: str, version: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{version}",
        "kind": KIND,
        "metadata": {"name": name},
        "spec": spec,
    }


def _reviews(webhook: WebhookServer, desired: str) -> list[Any]:
    return [
        body
        for body in webhook.bodies("/convert")
        if body and body["request"]["desiredAPIVersion"] == desired
    ]


def test_created_in_one_version_read_listed_and_patched_in_the_others(
    crds: dict[str, str],
    api_client: client.ApiClient,
    k: Kubectl,
    namespace: str,
    webhook: WebhookServer,
) -> None:
    group = crds["convert"]
    objects = _objects(api_client)
    manifest = json.dumps(_body(group, "v1alpha1", "db", {"hostPort": "db.local:5432"}))
    assert k.ok("apply", "-f", "-", stdin=manifest).strip() == f"backend.{group}/db created"

    beta = json.loads(k.ok("get", f"{PLURAL}.v1beta1.{group}", "db", "-o", "json"))
    assert beta["apiVersion"] == f"{group}/v1beta1"
    assert beta["spec"] == {"host": "db.local", "port": 5432}
    stored = objects.get_namespaced_custom_object(group, "v1", namespace, PLURAL, "db")
    assert stored["spec"] == {"hostname": "db.local", "port": 5432}
    assert stored["metadata"]["generation"] == 1

    # Created in v1beta1 and v1 too; listed in v1alpha1, converted in one review.
    objects.create_namespaced_custom_object(
        group,
        "v1beta1",
        namespace,
        PLURAL,
        _body(group, "v1beta1", "cache", {"host": "c", "port": 6379}),
    )
    objects.create_namespaced_custom_object(
        group, "v1", namespace, PLURAL, _body(group, "v1", "web", {"hostname": "w", "port": 80})
    )
    before = len(_reviews(webhook, f"{group}/v1alpha1"))
    listed = objects.list_namespaced_custom_object(group, "v1alpha1", namespace, PLURAL)
    assert listed["apiVersion"] == f"{group}/v1alpha1"
    assert {i["metadata"]["name"]: i["spec"] for i in listed["items"]} == {
        "cache": {"hostPort": "c:6379"},
        "db": {"hostPort": "db.local:5432"},
        "web": {"hostPort": "w:80"},
    }
    reviews = _reviews(webhook, f"{group}/v1alpha1")[before:]
    assert [len(r["request"]["objects"]) for r in reviews] == [3]

    # Server-side apply in v1alpha1, then in v1beta1 by another manager, owning their fields.
    applied = json.dumps(_body(group, "v1alpha1", "ssa", {"hostPort": "s:1"}))
    k.ok("apply", "--server-side", "--field-manager", "alpha", "-f", "-", stdin=applied)
    reapplied = json.dumps(_body(group, "v1beta1", "ssa", {"port": 2}))
    k.ok("apply", "--server-side", "--field-manager", "beta", "-f", "-", stdin=reapplied)
    ssa = objects.get_namespaced_custom_object(group, "v1alpha1", namespace, PLURAL, "ssa")
    assert ssa["spec"] == {"hostPort": "s:2"}
    managers = {m["manager"]: m["apiVersion"] for m in ssa["metadata"]["managedFields"]}
    assert managers == {"alpha": f"{group}/v1alpha1", "beta": f"{group}/v1beta1"}
    objects.delete_namespaced_custom_object(group, "v1beta1", namespace, PLURAL, "ssa")

    # kubectl's table, in the version asked for.
    rows = k.ok("get", f"{PLURAL}.v1alpha1.{group}").split()
    assert rows[:2] == ["NAME", "AGE"] and {"cache", "db", "web"} <= set(rows)

    # A merge patch in v1beta1 (Python client), a JSON patch in v1alpha1 (kubectl).
    objects.patch_namespaced_custom_object(
        group, "v1beta1", namespace, PLURAL, "db", {"spec": {"port": 6543}}
    )
    alpha = objects.get_namespaced_custom_object(group, "v1alpha1", namespace, PLURAL, "db")
    assert alpha["spec"] == {"hostPort": "db.local:6543"}
    replace = '[{"op": "replace", "path": "/spec/hostPort", "value": "db2:7000"}]'
    k.ok("patch", f"{PLURAL}.v1alpha1.{group}", "db", "--type", "json", "-p", replace)
    assert objects.get_namespaced_custom_object(group, "v1", namespace, PLURAL, "db")["spec"] == {
        "hostname": "db2",
        "port": 7000,
    }
    stored = objects.get_namespaced_custom_object(group, "v1", namespace, PLURAL, "db")
    assert stored["metadata"]["generation"] == 3

    # A value the storage version's schema refuses is refused whatever version sends it.
    refused = k.fails(
        "patch",
        f"{PLURAL}.v1alpha1.{group}",
        "db",
        "--type",
        "merge",
        "-p",
        '{"spec":{"hostPort":"db:70000"}}',
    )
    assert (
        "spec.port: Invalid value: 70000: spec.port in body should be less than or equal to 65535"
        in refused.stderr
    )


def _watch(
    api_client: client.ApiClient,
    group: str,
    version: str,
    namespace: str,
    seen: list[tuple[str, str, dict[str, Any]]],
    started: threading.Event,
    done: Callable[[], bool],
) -> None:
    stream = watch.Watch()
    objects = _objects(api_client)
    started.set()
    for event in stream.stream(
        objects.list_namespaced_custom_object,
        group,
        version,
        namespace,
        PLURAL,
        timeout_seconds=20,
    ):
        obj = event["object"]
        seen.append((event["type"], obj["apiVersion"], obj.get("spec") or {}))
        if done():
            stream.stop()


def test_a_watch_in_each_version_sees_the_changes_converted(
    crds: dict[str, str], api_client: client.ApiClient, namespace: str
) -> None:
    group = crds["convert"]
    objects = _objects(api_client)
    seen: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
        v: [] for v in ("v1alpha1", "v1beta1", "v1")
    }
    threads = []
    for version, events in seen.items():
        started = threading.Event()
        thread = threading.Thread(
            target=_watch,
            args=(
                api_client,
                group,
                version,
                namespace,
                events,
                started,
                lambda e=events: len(e) >= 3,
            ),
            daemon=True,
        )
        thread.start()
        started.wait(5)
        threads.append(thread)
    time.sleep(0.5)  # the watches are open (the client opens them as it starts iterating)
    objects.create_namespaced_custom_object(
        group, "v1beta1", namespace, PLURAL, _body(group, "v1beta1", "w", {"host": "a", "port": 1})
    )
    objects.patch_namespaced_custom_object(
        group, "v1alpha1", namespace, PLURAL, "w", {"spec": {"hostPort": "b:2"}}
    )
    objects.delete_namespaced_custom_object(group, "v1", namespace, PLURAL, "w")
    for thread in threads:
        thread.join(20)
    assert seen["v1alpha1"] == [
        ("ADDED", f"{group}/v1alpha1", {"hostPort": "a:1"}),
        ("MODIFIED", f"{group}/v1alpha1", {"hostPort": "b:2"}),
        ("DELETED", f"{group}/v1alpha1", {"hostPort": "b:2"}),
    ]
    assert seen["v1beta1"] == [
        ("ADDED", f"{group}/v1beta1", {"host": "a", "port": 1}),
        ("MODIFIED", f"{group}/v1beta1", {"host": "b", "port": 2}),
        ("DELETED", f"{group}/v1beta1", {"host": "b", "port": 2}),
    ]
    assert seen["v1"] == [
        ("ADDED", f"{group}/v1", {"hostname": "a", "port": 1}),
        ("MODIFIED", f"{group}/v1", {"hostname": "b", "port": 2}),
        ("DELETED", f"{group}/v1", {"hostname": "b", "port": 2}),
    ]


def _status(exc: ApiException) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(exc.body)
    return status


def test_a_failing_webhook_fails_cross_version_requests_with_kubernetes_message(
    crds: dict[str, str], api_client: client.ApiClient, k: Kubectl, namespace: str
) -> None:
    group = crds["fail"]
    objects = _objects(api_client)
    # The storage version never calls the webhook.
    objects.create_namespaced_custom_object(
        group, "v1", namespace, PLURAL, _body(group, "v1", "x", {"hostname": "h", "port": 1})
    )
    assert objects.get_namespaced_custom_object(group, "v1", namespace, PLURAL, "x")["spec"] == {
        "hostname": "h",
        "port": 1,
    }
    failed = "failed: the webhook refuses to convert"
    with pytest.raises(ApiException) as get:
        objects.get_namespaced_custom_object(group, "v1beta1", namespace, PLURAL, "x")
    status = _status(get.value)
    assert get.value.status == 500 and status["reason"] == "InternalError"
    assert status["message"] == (
        f"Internal error occurred: conversion webhook for {group}/v1, Kind={KIND} {failed}"
    )
    with pytest.raises(ApiException) as listed:
        objects.list_namespaced_custom_object(group, "v1beta1", namespace, PLURAL)
    assert _status(listed.value)["message"] == (
        f"Internal error occurred: conversion webhook for {group}/v1, Kind={KIND}List {failed}"
    )
    # kubectl creates in v1alpha1: the object is converted to v1 before it is stored.
    manifest = json.dumps(_body(group, "v1alpha1", "y", {"hostPort": "h:2"}))
    refused = k.fails("create", "-f", "-", stdin=manifest)
    assert (
        f'Error from server (InternalError): error when creating "STDIN": Internal error '
        f"occurred: conversion webhook for {group}/v1alpha1, Kind={KIND} {failed}"
    ) in refused.stderr
    assert [
        i["metadata"]["name"]
        for i in objects.list_namespaced_custom_object(group, "v1", namespace, PLURAL)["items"]
    ] == ["x"]


def test_a_webhook_answering_garbage_or_with_another_cas_certificate_fails(
    crds: dict[str, str], api_client: client.ApiClient, namespace: str, webhook: WebhookServer
) -> None:
    objects = _objects(api_client)
    cases = {
        "garbage": "failed: couldn't get version/kind; json parse error: invalid character 'g' "
        "looking for beginning of value",
        "bad-ca": f'failed: Post "{webhook.url("/convert")}?timeout={TIMEOUT}s": tls: failed to '
        "verify certificate: x509: certificate signed by unknown authority",
    }
    for mode, reason in cases.items():
        group = crds[mode]
        with pytest.raises(ApiException) as created:
            objects.create_namespaced_custom_object(
                group,
                "v1beta1",
                namespace,
                PLURAL,
                _body(group, "v1beta1", "z", {"host": "h", "port": 3}),
            )
        assert created.value.status == 500
        assert _status(created.value)["message"] == (
            f"Internal error occurred: conversion webhook for {group}/v1beta1, Kind={KIND} {reason}"
        )


def test_a_hanging_webhook_fails_after_the_timeout_and_holds_up_nothing_else(
    crds: dict[str, str], api_client: client.ApiClient, namespace: str, webhook: WebhookServer
) -> None:
    group = crds["hang"]
    objects = _objects(api_client)
    objects.create_namespaced_custom_object(
        group, "v1", namespace, PLURAL, _body(group, "v1", "slow", {"hostname": "h", "port": 1})
    )
    outcome: list[Any] = []

    def read() -> None:
        started = time.monotonic()
        try:
            objects.get_namespaced_custom_object(group, "v1alpha1", namespace, PLURAL, "slow")
        except ApiException as exc:
            outcome.append((exc.status, _status(exc)["message"], time.monotonic() - started))

    readers = [threading.Thread(target=read, daemon=True) for _ in range(4)]
    for reader in readers:
        reader.start()
    time.sleep(0.3)
    # Meanwhile the server answers everything else at once, this kind's storage version too.
    started = time.monotonic()
    for _ in range(5):
        objects.get_namespaced_custom_object(group, "v1", namespace, PLURAL, "slow")
        client.CoreV1Api(api_client).list_namespaced_config_map(namespace)
    assert time.monotonic() - started < TIMEOUT
    for reader in readers:
        reader.join(TIMEOUT + 10)
    assert len(outcome) == 4
    for code, message, elapsed in outcome:
        assert code == 500
        assert message == (
            f"Internal error occurred: conversion webhook for {group}/v1, Kind={KIND} failed: "
            f'Post "{webhook.url("/hang")}?timeout={TIMEOUT}s": context deadline exceeded'
        )
        assert TIMEOUT - 0.5 <= elapsed < TIMEOUT + 5
