"""The webhook client against a real HTTPS server with its own CA: url and service targets,
CA verification and server names, timeouts, error answers, garbage, connection reuse."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import BadRequest, InternalError, NotFound, Unavailable
from kstore.registry.admission.webhook_client import (
    ServiceResolver,
    WebhookCallError,
    WebhookClient,
    parse_service_resolver_rules,
    rule_resolver,
)
from kstore.registry.interface import CreateOptions, RequestContext
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.webhook_server import CertificateAuthority, Reply, WebhookServer, garbage, hang


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return CertificateAuthority()


@pytest.fixture(scope="module")
def server(ca: CertificateAuthority) -> Iterator[WebhookServer]:
    with WebhookServer(ca, names=("hooks.tests.svc",)) as srv:
        srv.route("/echo", lambda body: {"echo": body})
        srv.route("/hang", hang)
        srv.route("/garbage", garbage)
        srv.route("/boom", lambda body: Reply(status=500, body=b"boom", content_type="text/plain"))
        srv.route(
            "/status",
            lambda body: Reply(
                status=403,
                json={"kind": "Status", "apiVersion": "v1", "message": "nope", "code": 403},
            ),
        )
        yield srv


_open: list[WebhookClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _open:
        _open.pop().close()


def _new(resolver: ServiceResolver | None = None) -> WebhookClient:
    client = WebhookClient(resolver)
    _open.append(client)
    return client


def _client(server: WebhookServer) -> WebhookClient:
    rules = parse_service_resolver_rules([f"tests/hooks=127.0.0.1:{server.port}"])
    return _new(rule_resolver(rules, None))


def test_posts_json_to_a_url_and_sends_the_timeout(server: WebhookServer) -> None:
    client = _new()
    config = {"url": server.url("/echo"), "caBundle": server.ca_bundle}
    assert client.post(config, {"a": 1}, timeout=10) == {"echo": {"a": 1}}
    assert server.requests[-1] == ("/echo?timeout=10s", {"a": 1})


def test_a_service_is_reached_through_the_resolver_and_verified_for_its_svc_name(
    server: WebhookServer,
) -> None:
    client = _client(server)
    config = {
        "service": {"namespace": "tests", "name": "hooks", "path": "/echo", "port": 443},
        "caBundle": server.ca_bundle,
    }
    assert client.post(config, [1, 2], timeout=2.5) == {"echo": [1, 2]}
    assert server.requests[-1][0] == "/echo?timeout=3s"
    assert client.target(config).url == "https://hooks.tests.svc:443/echo"


def test_a_service_without_a_rule_or_fallback_is_not_found(server: WebhookServer) -> None:
    config = {"service": {"namespace": "x", "name": "y", "port": 443}}
    with pytest.raises(WebhookCallError) as info:
        _client(server).post(config, {}, timeout=1)
    assert str(info.value) == 'services "y" not found'
    assert isinstance(info.value.status, NotFound)


def test_a_certificate_for_another_name_is_refused(server: WebhookServer) -> None:
    rules = parse_service_resolver_rules([f"other/name=127.0.0.1:{server.port}"])
    client = _new(rule_resolver(rules, None))
    config = {
        "service": {"namespace": "other", "name": "name", "path": "/echo", "port": 8443},
        "caBundle": server.ca_bundle,
    }
    with pytest.raises(WebhookCallError) as info:
        client.post(config, {}, timeout=5)
    assert str(info.value) == (
        'Post "https://name.other.svc:8443/echo?timeout=5s": tls: failed to verify '
        "certificate: x509: certificate is valid for hooks.tests.svc, not name.other.svc"
    )
    assert isinstance(info.value.status, Unavailable)


def test_a_certificate_from_another_ca_is_refused(server: WebhookServer) -> None:
    config = {"url": server.url("/echo"), "caBundle": CertificateAuthority().ca_bundle}
    with pytest.raises(WebhookCallError) as info:
        _new().post(config, {}, timeout=5)
    assert str(info.value) == (
        f'Post "{server.url("/echo")}?timeout=5s": tls: failed to verify certificate: '
        "x509: certificate signed by unknown authority"
    )


def test_a_hanging_webhook_times_out_and_blocks_no_other_call(server: WebhookServer) -> None:
    client = _new()
    hung = {"url": server.url("/hang"), "caBundle": server.ca_bundle}
    echo = {"url": server.url("/echo"), "caBundle": server.ca_bundle}
    errors: list[str] = []

    def call() -> None:
        try:
            client.post(hung, {}, timeout=1)
        except WebhookCallError as exc:
            errors.append(str(exc))

    started = time.monotonic()
    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.1)
    assert client.post(echo, {"b": 2}, timeout=5) == {"echo": {"b": 2}}
    assert time.monotonic() - started < 0.9
    thread.join(5)
    assert errors == [f'Post "{server.url("/hang")}?timeout=1s": context deadline exceeded']
    assert time.monotonic() - started < 3


def test_garbage_is_a_json_parse_error(server: WebhookServer) -> None:
    config = {"url": server.url("/garbage"), "caBundle": server.ca_bundle}
    with pytest.raises(WebhookCallError) as info:
        _new().post(config, {}, timeout=5)
    assert str(info.value) == (
        "couldn't get version/kind; json parse error: "
        "invalid character 'g' looking for beginning of value"
    )


def test_an_error_answer_is_kubernetes_generic_response(server: WebhookServer) -> None:
    config = {"url": server.url("/boom"), "caBundle": server.ca_bundle}
    with pytest.raises(WebhookCallError) as info:
        _new().post(config, {}, timeout=5)
    assert str(info.value) == (
        'an error on the server ("boom") has prevented the request from succeeding'
    )
    assert isinstance(info.value.status, InternalError)
    missing = {"url": server.url("/nowhere"), "caBundle": server.ca_bundle}
    with pytest.raises(WebhookCallError) as info:
        _new().post(missing, {}, timeout=5)
    assert str(info.value) == "the server could not find the requested resource"


def test_an_error_answer_with_a_status_is_that_status(server: WebhookServer) -> None:
    config = {"url": server.url("/status"), "caBundle": server.ca_bundle}
    with pytest.raises(WebhookCallError) as info:
        _new().post(config, {}, timeout=5)
    assert str(info.value) == "nope"
    assert info.value.status.code == 403


def test_connection_refused_names_the_address() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(WebhookCallError) as info:
        _new().post({"url": f"https://127.0.0.1:{port}/x"}, {}, timeout=2)
    assert str(info.value) == (
        f'Post "https://127.0.0.1:{port}/x?timeout=2s": dial tcp 127.0.0.1:{port}: '
        "connect: connection refused"
    )


def test_connections_are_reused(server: WebhookServer) -> None:
    client = _new()
    config = {"url": server.url("/echo"), "caBundle": server.ca_bundle}
    for i in range(5):
        assert client.post(config, i, timeout=5) == {"echo": i}
    idle: Any = client._idle  # one connection served all five calls
    assert [len(v) for v in idle.values()] == [1]


def test_resolver_rules_are_checked() -> None:
    assert parse_service_resolver_rules(["ns/name=10.0.0.1:8443"]) == {
        ("ns", "name"): ("10.0.0.1", 8443)
    }
    for bad in ("ns/name", "name=1.2.3.4:1", "ns/name=1.2.3.4", "ns/name=host:port"):
        with pytest.raises(BadRequest):
            parse_service_resolver_rules([bad])


def test_a_registry_resolves_services_by_rule_then_by_cluster_ip(
    scheme: Scheme, backend: LmdbBackend, server: WebhookServer
) -> None:
    rules = (f"tests/hooks=127.0.0.1:{server.port}",)
    registry = make_registry(scheme, backend, webhook_service_resolver=rules)
    try:
        client = registry.webhook_client
        hook = {
            "service": {"namespace": "tests", "name": "hooks", "path": "/echo", "port": 443},
            "caBundle": server.ca_bundle,
        }
        assert client.post(hook, {"c": 3}, timeout=5) == {"echo": {"c": 3}}
        services = registry.store("", "services")
        ctx = RequestContext(namespace="default")
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "hooks", "namespace": "default"},
            "spec": {
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
                "ports": [{"port": 8443, "protocol": "TCP", "targetPort": 8443}],
            },
        }
        created = services.create(ctx, service, CreateOptions()).object
        cluster_ip = created["spec"]["clusterIP"]
        found = client.target({"service": {"namespace": "default", "name": "hooks", "port": 8443}})
        assert (found.host, found.port) == (cluster_ip, 8443)
        assert found.server_name == "hooks.default.svc"
        with pytest.raises(WebhookCallError, match='no service port 443 found for service "hooks"'):
            client.target({"service": {"namespace": "default", "name": "hooks", "port": 443}})
        with pytest.raises(WebhookCallError, match='services "nothere" not found'):
            client.target({"service": {"namespace": "default", "name": "nothere", "port": 443}})
    finally:
        registry.close()
