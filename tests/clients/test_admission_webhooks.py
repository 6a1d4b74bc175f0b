"""Admission webhooks with real kubectl and the Python client, on LMDB and on etcd, called over
HTTPS on real loopback servers with their own CA (:mod:`tests.webhook_server`): denial,
warnings, patches, reinvocation, failure policies with a hanging webhook, bad certificates,
garbage answers, dry run and side effects, selectors, match policy, service references.

Configurations are cluster-wide, so each test's webhooks select its own namespace only, and
are deleted when it ends.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml
from tests.clients.servers import storage_args
from tests.server.harness import RunningServer, start_server
from tests.webhook_server import (
    CertificateAuthority,
    WebhookServer,
    admission_response,
    garbage,
    hang,
)

_CA = CertificateAuthority()


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    """The webhook server, also reached as the service ``webhooks/hooks``."""
    with WebhookServer(_CA, names=("hooks.webhooks.svc",)) as server:
        yield server


@pytest.fixture(scope="module")
def impostor() -> Iterator[WebhookServer]:
    """A server whose certificate (from the same CA) is for another name."""
    with WebhookServer(_CA, names=("someone-else.webhooks.svc",), ip=False) as server:
        yield server


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest,
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    hooks: WebhookServer,
    impostor: WebhookServer,
) -> Iterator[RunningServer]:
    """``kstore serve`` resolving the two services to the loopback webhook servers."""
    rules = f"webhooks/hooks=127.0.0.1:{hooks.port},webhooks/impostor=127.0.0.1:{impostor.port}"
    with storage_args(request.config, backend) as args:
        server = start_server(
            tmp_path_factory.mktemp(f"webhooks-{backend}") / "data",
            *args,
            "--webhook-service-resolver",
            rules,
        )
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


@pytest.fixture
def admission(api_client: client.ApiClient) -> Iterator[Callable[..., None]]:
    """Creates webhook configurations (dicts); deletes them after the test."""
    api = client.AdmissionregistrationV1Api(api_client)
    made: list[tuple[bool, str]] = []

    def create(config: dict[str, Any]) -> None:
        mutating = config["kind"] == "MutatingWebhookConfiguration"
        if mutating:
            api.create_mutating_webhook_configuration(config)
        else:
            api.create_validating_webhook_configuration(config)
        made.append((mutating, config["metadata"]["name"]))

    yield create
    for mutating, name in made:
        if mutating:
            api.delete_mutating_webhook_configuration(name)
        else:
            api.delete_validating_webhook_configuration(name)


def _webhook(
    name: str, namespace: str, client_config: dict[str, Any], **fields: Any
) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": f"{name}.example.com",
        "clientConfig": client_config,
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 5,
    }
    hook.update(fields)
    return hook


def _url(server: WebhookServer, path: str) -> dict[str, Any]:
    return {"url": server.url(path), "caBundle": server.ca_bundle}


def _configuration(kind: str, name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(webhooks),
    }


def _validating(name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return _configuration("ValidatingWebhookConfiguration", name, *webhooks)


def _mutating(name: str, *webhooks: dict[str, Any]) -> dict[str, Any]:
    return _configuration("MutatingWebhookConfiguration", name, *webhooks)


def _cm(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def _until(check: Callable[[], None], timeout: float = 10.0) -> None:
    """Retry ``check`` until it stops failing (a configuration takes effect through a watch)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            check()
            return
        except (AssertionError, ApiException, pytest.fail.Exception):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _await_calls(
    core: client.CoreV1Api,
    namespace: str,
    server: WebhookServer,
    path: str,
    labels: dict[str, str] | None = None,
) -> None:
    """Dry-run creates until the webhook at ``path`` has been called."""

    def called() -> None:
        with contextlib.suppress(ApiException):
            core.create_namespaced_config_map(namespace, _cm("probe", labels), dry_run="All")
        assert server.bodies(path)

    _until(called)


def _assert(condition: bool) -> None:
    assert condition


def _status(exc: ApiException) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(exc.body)
    return status


def _allow(review: Any) -> dict[str, Any]:
    return admission_response(review)


# -------------------------------------------------------------------------------- tests


def test_a_denial_is_the_webhooks_status(
    k: Kubectl,
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/deny/{namespace}"
    hooks.route(path, _allow)
    admission(_validating(f"deny-{namespace}", _webhook("deny", namespace, _url(hooks, path))))
    _await_calls(core, namespace, hooks, path)
    hooks.route(
        path,
        lambda review: admission_response(
            review, allowed=False, status={"message": "no configmaps here", "code": 403}
        ),
    )
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, _cm("refused"))
    assert info.value.status == 403
    status = _status(info.value)
    assert status["message"] == (
        'admission webhook "deny.example.com" denied the request: no configmaps here'
    )
    assert "reason" not in status
    k.write("cm.yaml", to_yaml(_cm("by-kubectl")))
    result = k.fails("create", "-f", "cm.yaml")
    assert result.stderr.strip() == (
        'Error from server: error when creating "cm.yaml": admission webhook '
        '"deny.example.com" denied the request: no configmaps here'
    )
    # The review describes the request as Kubernetes does.
    review = hooks.bodies(path)[-1]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    request = review["request"]
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["requestKind"] == request["kind"]
    assert request["requestResource"] == request["resource"]
    assert (request["name"], request["namespace"], request["operation"]) == (
        "by-kubectl",
        namespace,
        "CREATE",
    )
    assert request["object"]["data"] == {"k": "v"}
    assert request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["options"]["kind"] == "CreateOptions"
    # A denial without a message or code: 400 and "without explanation".
    hooks.route(path, lambda review: admission_response(review, allowed=False))
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, _cm("refused-again"))
    assert info.value.status == 400
    assert _status(info.value)["message"] == (
        'admission webhook "deny.example.com" denied the request without explanation'
    )


def test_warnings_reach_the_client(
    k: Kubectl,
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/warn/{namespace}"
    hooks.route(path, lambda review: admission_response(review, warnings=["mind the gap"]))
    admission(_validating(f"warn-{namespace}", _webhook("warn", namespace, _url(hooks, path))))
    _await_calls(core, namespace, hooks, path)
    k.write("cm.yaml", to_yaml(_cm("warned")))
    result = k.run("create", "-f", "cm.yaml")
    assert result.code == 0, result
    assert "Warning: mind the gap" in result.stderr


def test_a_mutating_webhook_patches_the_object(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/label/{namespace}"
    patch = [{"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}}]
    hooks.route(path, lambda review: admission_response(review, patch=patch))
    admission(_mutating(f"label-{namespace}", _webhook("label", namespace, _url(hooks, path))))
    _await_calls(core, namespace, hooks, path)
    created = core.create_namespaced_config_map(namespace, _cm("mutated"))
    assert created.metadata.labels == {"patched": "yes"}
    stored = core.read_namespaced_config_map("mutated", namespace)
    assert stored.metadata.labels == {"patched": "yes"}


def test_reinvocation_calls_an_earlier_webhook_again_after_a_later_change(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    first, second = f"/first/{namespace}", f"/second/{namespace}"

    def annotate(review: Any) -> dict[str, Any]:
        obj = review["request"]["object"]
        seen = sorted((obj["metadata"].get("labels") or {}).items())
        value = json.dumps(seen)
        op = {"op": "add", "path": "/metadata/annotations", "value": {"seen": value}}
        return admission_response(review, patch=[op])

    def label(review: Any) -> dict[str, Any]:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        if labels.get("second") == "ran":
            return admission_response(review)
        op = {"op": "add", "path": "/metadata/labels", "value": {"second": "ran"}}
        return admission_response(review, patch=[op])

    hooks.route(first, annotate)
    hooks.route(second, label)
    admission(
        _mutating(
            f"a-{namespace}",
            _webhook("first", namespace, _url(hooks, first), reinvocationPolicy="IfNeeded"),
        )
    )
    admission(_mutating(f"b-{namespace}", _webhook("second", namespace, _url(hooks, second))))
    _await_calls(core, namespace, hooks, second)
    _await_calls(core, namespace, hooks, first)
    before = len(hooks.bodies(first))
    created = core.create_namespaced_config_map(namespace, _cm("reinvoked"))
    assert created.metadata.labels == {"second": "ran"}
    # The first webhook ran again, and saw the second one's label.
    assert created.metadata.annotations == {"seen": '[["second", "ran"]]'}
    assert len(hooks.bodies(first)) - before == 2


def test_a_hanging_webhook_fails_closed_or_open_and_blocks_nothing_else(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    fail, ignore = f"/hang-fail/{namespace}", f"/hang-ignore/{namespace}"
    hooks.route(fail, _allow)
    hooks.route(ignore, _allow)
    selector = {"matchLabels": {"policy": "fail"}}
    admission(
        _validating(
            f"hang-{namespace}",
            _webhook(
                "hang-fail",
                namespace,
                _url(hooks, fail),
                timeoutSeconds=2,
                objectSelector=selector,
            ),
            _webhook(
                "hang-ignore",
                namespace,
                _url(hooks, ignore),
                timeoutSeconds=1,
                failurePolicy="Ignore",
                objectSelector={"matchLabels": {"policy": "ignore"}},
            ),
        )
    )
    _await_calls(core, namespace, hooks, fail, {"policy": "fail"})
    _await_calls(core, namespace, hooks, ignore, {"policy": "ignore"})
    hooks.route(fail, hang)
    hooks.route(ignore, hang)
    outcome: list[Any] = []

    def hung_create() -> None:
        try:
            core.create_namespaced_config_map(namespace, _cm("closed", {"policy": "fail"}))
        except ApiException as exc:
            outcome.append(exc)

    calls = len(hooks.bodies(fail))
    thread = threading.Thread(target=hung_create)
    thread.start()
    _until(lambda: _assert(len(hooks.bodies(fail)) > calls))
    # While the webhook holds that request, the server answers everyone else.
    core.create_namespaced_config_map(namespace, _cm("unaffected"))
    core.list_namespaced_config_map(namespace)
    assert thread.is_alive()
    thread.join(10)
    [error] = outcome
    assert error.status == 500
    url = hooks.url(fail)
    assert _status(error)["message"] == (
        'Internal error occurred: failed calling webhook "hang-fail.example.com": failed to '
        f'call webhook: Post "{url}?timeout=2s": context deadline exceeded'
    )
    created = core.create_namespaced_config_map(namespace, _cm("open", {"policy": "ignore"}))
    assert created.metadata.name == "open"


def test_a_certificate_for_another_name_fails_the_call(
    core: client.CoreV1Api,
    namespace: str,
    impostor: WebhookServer,
    admission: Callable[..., None],
) -> None:
    service = {
        "service": {"namespace": "webhooks", "name": "impostor", "path": "/x", "port": 443},
        "caBundle": impostor.ca_bundle,
    }
    admission(_validating(f"cert-{namespace}", _webhook("cert", namespace, service)))
    expected = (
        'Internal error occurred: failed calling webhook "cert.example.com": failed to call '
        'webhook: Post "https://impostor.webhooks.svc:443/x?timeout=5s": tls: failed to '
        "verify certificate: x509: certificate is valid for someone-else.webhooks.svc, not "
        "impostor.webhooks.svc"
    )

    def refused() -> None:
        with pytest.raises(ApiException) as info:
            core.create_namespaced_config_map(namespace, _cm("uncertain"), dry_run="All")
        assert _status(info.value)["message"] == expected

    _until(refused)
    assert not impostor.requests


def test_a_service_reference_is_called_at_its_resolved_address(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/svc/{namespace}"
    hooks.route(path, _allow)
    service = {
        "service": {"namespace": "webhooks", "name": "hooks", "path": path},
        "caBundle": hooks.ca_bundle,
    }
    admission(_validating(f"svc-{namespace}", _webhook("svc", namespace, service)))
    _await_calls(core, namespace, hooks, path)
    assert core.create_namespaced_config_map(namespace, _cm("via-service")).metadata.name


def test_a_garbage_answer_fails_the_call(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/garbage/{namespace}"
    hooks.route(path, garbage)
    admission(
        _validating(f"garbage-{namespace}", _webhook("garbage", namespace, _url(hooks, path)))
    )
    expected = (
        'Internal error occurred: failed calling webhook "garbage.example.com": failed to call '
        "webhook: couldn't get version/kind; json parse error: invalid character 'g' looking "
        "for beginning of value"
    )

    def refused() -> None:
        with pytest.raises(ApiException) as info:
            core.create_namespaced_config_map(namespace, _cm("junk"), dry_run="All")
        assert _status(info.value)["message"] == expected

    _until(refused)
    # A response for another request is no answer either.
    hooks.route(
        path,
        lambda review: {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "not-yours", "allowed": True},
        },
    )
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, _cm("junk"))
    assert (
        "received invalid webhook response: expected response.uid="
        in (_status(info.value)["message"])
    )
    assert 'got "not-yours"' in _status(info.value)["message"]


def test_a_dry_run_calls_webhooks_without_side_effects_and_stores_nothing(
    k: Kubectl,
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    # v1 admits only sideEffects None and NoneOnDryRun, both called on a dry run.
    path = f"/dry/{namespace}"
    patch = [{"op": "add", "path": "/metadata/labels/dry", "value": "seen"}]
    hooks.route(path, lambda review: admission_response(review, patch=patch))
    admission(
        _mutating(
            f"dry-{namespace}",
            _webhook(
                "dry",
                namespace,
                _url(hooks, path),
                sideEffects="NoneOnDryRun",
                objectSelector={"matchLabels": {"effects": "none"}},
            ),
        )
    )
    _await_calls(core, namespace, hooks, path, {"effects": "none"})
    k.write("cm.yaml", to_yaml(_cm("dry", {"effects": "none"})))
    out = json.loads(k.ok("create", "-f", "cm.yaml", "--dry-run=server", "-o", "json"))
    assert out["metadata"]["labels"] == {"effects": "none", "dry": "seen"}
    review = hooks.bodies(path)[-1]["request"]
    assert review["dryRun"] is True
    assert review["options"]["dryRun"] == ["All"]
    assert review["name"] == "dry"
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("dry", namespace)
    assert info.value.status == 404


def test_selectors_choose_the_requests(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/select/{namespace}"
    hooks.route(path, _allow)
    admission(
        _validating(
            f"select-{namespace}",
            _webhook(
                "select",
                namespace,
                _url(hooks, path),
                objectSelector={"matchLabels": {"app": "web"}},
            ),
        )
    )
    _await_calls(core, namespace, hooks, path, {"app": "web"})
    before = len(hooks.bodies(path))
    core.create_namespaced_config_map(namespace, _cm("db", {"app": "db"}))
    core.create_namespaced_config_map(namespace, _cm("web", {"app": "web"}))
    # An update is selected by the old object's labels too.
    core.patch_namespaced_config_map("web", namespace, {"metadata": {"labels": {"app": "x"}}})
    names = [(b["request"]["name"], b["request"]["operation"]) for b in hooks.bodies(path)]
    assert names[before:] == [("web", "CREATE"), ("web", "UPDATE")]
    # Another namespace is not selected by the namespace selector.
    other = f"{namespace}-other"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=other)))
    core.create_namespaced_config_map(other, _cm("web", {"app": "web"}))
    assert len(hooks.bodies(path)) == before + 2


def test_an_equivalent_version_is_matched_and_shown(
    api_client: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path, exact = f"/equivalent/{namespace}", f"/exact/{namespace}"
    hooks.route(path, _allow)
    hooks.route(exact, _allow)
    rule = {
        "operations": ["CREATE"],
        "apiGroups": ["autoscaling"],
        "apiVersions": ["v1"],
        "resources": ["horizontalpodautoscalers"],
    }
    admission(
        _validating(
            f"equivalent-{namespace}",
            _webhook("equivalent", namespace, _url(hooks, path), rules=[rule]),
            _webhook("exact", namespace, _url(hooks, exact), rules=[rule], matchPolicy="Exact"),
        )
    )
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "scaler"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
        },
    }
    scaling = client.AutoscalingV2Api(api_client)

    def called() -> None:
        scaling.create_namespaced_horizontal_pod_autoscaler(namespace, hpa, dry_run="All")
        assert hooks.bodies(path)

    _until(called)
    [review] = hooks.bodies(path)[-1:]
    request = review["request"]
    assert request["kind"] == {
        "group": "autoscaling",
        "version": "v1",
        "kind": "HorizontalPodAutoscaler",
    }
    assert request["requestKind"]["version"] == "v2"
    assert request["resource"]["version"] == "v1"
    assert request["requestResource"]["version"] == "v2"
    assert request["object"]["apiVersion"] == "autoscaling/v1"
    assert request["object"]["spec"]["maxReplicas"] == 3
    # The Exact webhook names v1 only: a v2 request is not for it.
    assert not hooks.bodies(exact)


def test_a_patch_on_delete_is_refused(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/delete/{namespace}"
    op = [{"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}]
    hooks.route(path, lambda review: admission_response(review, patch=op))
    core.create_namespaced_config_map(namespace, _cm("doomed"))
    hook = _webhook("delete", namespace, _url(hooks, path))
    hook["rules"][0]["operations"] = ["DELETE"]
    admission(_mutating(f"delete-{namespace}", hook))
    expected = (
        'Internal error occurred: admission webhook "delete.example.com" attempted to modify '
        "the object, which is not supported for this operation"
    )

    def refused() -> None:
        with pytest.raises(ApiException) as info:
            core.delete_namespaced_config_map("doomed", namespace, dry_run="All")
        assert _status(info.value)["message"] == expected

    _until(refused)
    review = hooks.bodies(path)[-1]["request"]
    assert review["operation"] == "DELETE"
    assert review["object"] is None
    assert review["oldObject"]["metadata"]["name"] == "doomed"
    assert review["options"]["kind"] == "DeleteOptions"


def test_match_conditions_choose_the_requests_and_their_errors_follow_the_failure_policy(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/conditions/{namespace}"
    hooks.route(path, _allow)
    conditions = [
        {"name": "named", "expression": 'object.metadata.name.startsWith("match-")'},
        {"name": "creates", "expression": 'request.operation == "CREATE"'},
        {"name": "user", "expression": '!request.userInfo.username.startsWith("system:node:")'},
    ]
    broken = [{"name": "broken", "expression": 'object.data.missing == "x"'}]
    admission(
        _validating(
            f"conditions-{namespace}",
            _webhook("conditions", namespace, _url(hooks, path), matchConditions=conditions),
            _webhook(
                "broken",
                namespace,
                _url(hooks, path),
                matchConditions=broken,
                objectSelector={"matchLabels": {"broken": "fail"}},
            ),
            _webhook(
                "broken-ignored",
                namespace,
                _url(hooks, path),
                matchConditions=broken,
                failurePolicy="Ignore",
                objectSelector={"matchLabels": {"broken": "ignore"}},
            ),
        )
    )

    def called() -> None:
        core.create_namespaced_config_map(namespace, _cm("match-probe"), dry_run="All")
        assert hooks.bodies(path)

    _until(called)
    before = len(hooks.bodies(path))
    core.create_namespaced_config_map(namespace, _cm("other"))
    core.create_namespaced_config_map(namespace, _cm("match-me"))
    names = [b["request"]["name"] for b in hooks.bodies(path)[before:]]
    assert names == ["match-me"]
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, _cm("bad", {"broken": "fail"}))
    assert info.value.status == 403
    status = _status(info.value)
    assert status["reason"] == "Forbidden"
    assert status["message"].startswith(
        'configmaps "bad" is forbidden: expression \'object.data.missing == "x"\' resulted in '
        "error: "
    )
    core.create_namespaced_config_map(namespace, _cm("fine", {"broken": "ignore"}))
    assert len(hooks.bodies(path)) == before + 1


def test_webhook_configurations_are_never_sent_to_webhooks(
    api_client: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/exempt/{namespace}"
    hooks.route(path, lambda review: admission_response(review, allowed=False))
    everything = {
        "operations": ["*"],
        "apiGroups": ["*"],
        "apiVersions": ["*"],
        "resources": ["*/*"],
    }
    hook = _webhook("exempt", namespace, _url(hooks, path), rules=[everything])
    del hook["namespaceSelector"]
    hook["objectSelector"] = {"matchLabels": {"exempt-test": namespace}}
    admission(_validating(f"exempt-{namespace}", hook))

    def refused() -> None:
        with pytest.raises(ApiException):
            core.create_namespaced_config_map(
                namespace, _cm("x", {"exempt-test": namespace}), dry_run="All"
            )

    _until(refused)
    calls = len(hooks.bodies(path))
    api = client.AdmissionregistrationV1Api(api_client)
    other = _webhook("other", namespace, _url(hooks, path))
    labelled = _validating(f"exempt-other-{namespace}", other)
    labelled["metadata"]["labels"] = {"exempt-test": namespace}
    api.create_validating_webhook_configuration(labelled, dry_run="All")
    assert len(hooks.bodies(path)) == calls


def test_a_patch_at_an_equivalent_version_is_converted_back(
    api_client: client.ApiClient,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/convert/{namespace}"
    patch = [{"op": "replace", "path": "/spec/targetCPUUtilizationPercentage", "value": 42}]
    hooks.route(path, lambda review: admission_response(review, patch=patch))
    rule = {
        "operations": ["CREATE"],
        "apiGroups": ["autoscaling"],
        "apiVersions": ["v1"],
        "resources": ["horizontalpodautoscalers"],
    }
    admission(
        _mutating(
            f"convert-{namespace}", _webhook("convert", namespace, _url(hooks, path), rules=[rule])
        )
    )
    scaling = client.AutoscalingV2Api(api_client)

    def hpa(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 3,
            },
        }

    def patched() -> None:
        created = scaling.create_namespaced_horizontal_pod_autoscaler(
            namespace, hpa("probe"), dry_run="All"
        )
        assert created.spec.metrics

    _until(patched)
    created = scaling.create_namespaced_horizontal_pod_autoscaler(namespace, hpa("scaler"))
    [metric] = created.spec.metrics
    assert metric.resource.name == "cpu"
    assert metric.resource.target.average_utilization == 42
    review = hooks.bodies(path)[-1]["request"]
    assert review["object"]["apiVersion"] == "autoscaling/v1"
    assert review["requestKind"]["version"] == "v2"


def test_a_webhook_accepting_only_v1beta1_gets_a_v1beta1_review(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/beta/{namespace}"

    def answer(review: Any) -> dict[str, Any]:
        reply = admission_response(review)
        reply["apiVersion"] = review["apiVersion"]
        return reply

    hooks.route(path, answer)
    webhook = _webhook("beta", namespace, _url(hooks, path), admissionReviewVersions=["v1beta1"])
    admission(_validating(f"beta-{namespace}", webhook))
    _await_calls(core, namespace, hooks, path)
    assert hooks.bodies(path)[-1]["apiVersion"] == "admission.k8s.io/v1beta1"
    assert core.create_namespaced_config_map(namespace, _cm("beta")).metadata.name == "beta"


def test_a_container_a_webhook_injects_gets_what_the_built_in_plugins_give_on_reinvocation(
    core: client.CoreV1Api,
    namespace: str,
    hooks: WebhookServer,
    admission: Callable[..., None],
) -> None:
    path = f"/sidecar/{namespace}"
    sidecar = {"name": "sidecar", "image": "busybox:1.36"}

    def inject(review: Any) -> dict[str, Any]:
        containers = review["request"]["object"]["spec"]["containers"]
        if any(c["name"] == "sidecar" for c in containers):
            return admission_response(review)
        op = {"op": "add", "path": "/spec/containers/-", "value": sidecar}
        return admission_response(review, patch=[op])

    hooks.route(path, inject)
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["pods"],
    }
    admission(
        _mutating(
            f"sidecar-{namespace}", _webhook("sidecar", namespace, _url(hooks, path), rules=[rule])
        )
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }

    def injected() -> None:
        created = core.create_namespaced_pod(namespace, pod, dry_run="All")
        assert len(created.spec.containers) == 2

    _until(injected)
    created = core.create_namespaced_pod(namespace, pod)
    assert [c.name for c in created.spec.containers] == ["app", "sidecar"]
    injected_container = created.spec.containers[1]
    # The ServiceAccount plugin ran again after the webhook: the sidecar has the token too.
    mounts = [m.mount_path for m in injected_container.volume_mounts or []]
    assert mounts == ["/var/run/secrets/kubernetes.io/serviceaccount"]
    assert injected_container.image_pull_policy == "IfNotPresent"
