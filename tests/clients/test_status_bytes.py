"""Status bodies and deprecation warnings as the real clients meet them, on LMDB and on etcd.

kubectl prints a Status's ``message`` after ``Error from server (<reason>):`` and each
``Warning`` header on a line of its own; the ``kubernetes`` Python client keeps the body of a
failed call as the text of ``ApiException.body`` (its own tests compare such bodies as
strings) and hands the response headers to whoever asks for them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.clients.kubectl import Kubectl

if TYPE_CHECKING:
    from kubernetes import client

_V1BETA1 = (
    "apps/v1beta1 Deployment is deprecated in v1.8+, unavailable in v1.16+; use apps/v1 Deployment"
)
_V1BETA2 = (
    "apps/v1beta2 Deployment is deprecated in v1.9+, unavailable in v1.16+; use apps/v1 Deployment"
)


def _deployment(api_version: str, name: str) -> str:
    labels = {"app": name}
    return json.dumps(
        {
            "apiVersion": api_version,
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        }
    )


def _warnings(stderr: str) -> list[str]:
    return [line.removeprefix("Warning: ") for line in stderr.splitlines() if "Warning" in line]


def test_kubectl_prints_the_deprecation_warning_of_each_old_version(k: Kubectl) -> None:
    created = k.run("create", "-f", "-", stdin=_deployment("apps/v1beta1", "old"))
    assert created.code == 0, created
    assert _warnings(created.stderr) == [_V1BETA1]
    listed = k.run("get", "deployments.v1beta2.apps", "-o", "name")
    assert listed.code == 0, listed
    assert listed.stdout == "deployment.apps/old\n"
    assert _warnings(listed.stderr) == [_V1BETA2]
    current = k.run("get", "deployments.v1.apps", "old", "-o", "name")
    assert current.code == 0 and current.stderr == "", current
    missing = k.run("get", "deployments.v1beta1.apps", "missing")
    assert missing.code == 1
    assert missing.stderr == (
        f'Warning: {_V1BETA1}\nError from server (NotFound): deployments.apps "missing" not found\n'
    )
    deleted = k.run("delete", "deployments.v1beta1.apps", "old")
    assert deleted.code == 0, deleted
    assert _warnings(deleted.stderr) == [_V1BETA1]


def test_kubectl_shows_the_status_messages(k: Kubectl, namespace: str) -> None:
    assert k.fails("get", "configmap", "missing").stderr == (
        'Error from server (NotFound): configmaps "missing" not found\n'
    )
    taken = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "taken"}})
    k.ok("create", "-f", "-", stdin=taken)
    assert k.fails("create", "-f", "-", stdin=taken).stderr == (
        'Error from server (AlreadyExists): error when creating "STDIN": '
        'configmaps "taken" already exists\n'
    )
    assert k.fails("get", "--raw", "/api/v1/nope").stderr == (
        "Error from server (NotFound): the server could not find the requested resource\n"
    )


def test_the_python_client_gets_the_status_bodies_byte_for_byte(
    core: client.CoreV1Api, namespace: str
) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("missing", namespace)
    assert missing.value.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
        '"details":{"name":"missing","kind":"configmaps"},"code":404}\n'
    )
    bad = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Not_OK"))
    with pytest.raises(ApiException) as invalid:
        core.create_namespaced_config_map(namespace, bad)
    status = json.loads(invalid.value.body)
    assert list(status) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "details",
        "code",
    ]
    assert invalid.value.body.endswith('"field":"metadata.name"}]},"code":422}\n')


def test_the_python_client_receives_the_deprecation_warning_header(
    api_client: client.ApiClient, namespace: str
) -> None:
    def call(method: str, path: str, body: object = None) -> tuple[int, str | None]:
        params = api_client.param_serialize(
            method=method,
            resource_path=path,
            path_params={"namespace": namespace},
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            body=body,
        )
        response = api_client.call_api(*params)
        response.read()
        return response.status, response.getheader("Warning")

    base = "/apis/apps/{version}/namespaces/{namespace}/deployments"
    created = call(
        "POST",
        base.replace("{version}", "v1beta2"),
        json.loads(_deployment("apps/v1beta2", "py")),
    )
    assert created == (201, f'299 - "{_V1BETA2}"')
    assert call("GET", base.replace("{version}", "v1beta1")) == (200, f'299 - "{_V1BETA1}"')
    assert call("GET", base.replace("{version}", "v1")) == (200, None)
