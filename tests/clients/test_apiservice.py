"""apiregistration.k8s.io/v1 APIService with real kubectl and the Python client: discovery, apply
--server-side, the columns ``kubectl get`` prints as the Available condition follows the Service
an APIService names, a refused name, status reads and writes, delete; on LMDB and on etcd."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.clients.manifests import to_yaml


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def _eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.fixture(scope="module")
def apireg(api_client: client.ApiClient) -> client.ApiregistrationV1Api:
    return client.ApiregistrationV1Api(api_client)


def _api_service(group: str, namespace: str | None, name: str = "backend") -> dict[str, Any]:
    service = None if namespace is None else {"namespace": namespace, "name": name}
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"v1beta1.{group}"},
        "spec": {
            "group": group,
            "version": "v1beta1",
            "service": service,
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "insecureSkipTLSVerify": namespace is not None,
        },
    }


def test_discovery_and_explain_name_api_services(kubectl: Kubectl) -> None:
    rows = _rows(kubectl.ok("api-resources", "--api-group=apiregistration.k8s.io"))
    assert ["apiservices", "apiregistration.k8s.io/v1", "false", "APIService"] in rows
    spec = _rows(kubectl.ok("explain", "apiservice.spec"))
    assert ["groupPriorityMinimum", "<integer>", "-required-"] in spec
    assert ["versionPriority", "<integer>", "-required-"] in spec
    assert ["service", "<ServiceReference>"] in spec
    assert ["caBundle", "<string>"] in spec


def test_api_services_with_kubectl_follow_their_service(k: Kubectl, namespace: str) -> None:
    group = f"{namespace}.example.com"
    name = f"v1beta1.{group}"
    k.write("apiservice.yaml", to_yaml(_api_service(group, namespace)))
    applied = k.ok("apply", "--server-side", "-f", "apiservice.yaml").strip()
    assert applied == f"apiservice.apiregistration.k8s.io/{name} serverside-applied"

    def row() -> list[str]:
        return _rows(k.ok("get", "apiservice", name))[1]

    assert _rows(k.ok("get", "apiservice", name))[0] == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert _eventually(lambda: row()[1:4] == [f"{namespace}/backend", "False", "(ServiceNotFound)"])
    message = k.ok("get", "apiservice", name, "-o", "jsonpath={.status.conditions[0].message}")
    assert message == f'service/backend in "{namespace}" is not present'

    k.ok("create", "service", "clusterip", "backend", "--tcp=443:8443")
    assert _eventually(lambda: row()[2:4] == ["False", "(EndpointsNotFound)"])
    wide = _rows(k.ok("get", "apiservices", "-o", "wide"))
    assert [name, f"{namespace}/backend", "False", "(EndpointsNotFound)"] == next(
        r for r in wide if r[0] == name
    )[:4]

    local = _api_service(f"local-{namespace}.example.com", None)
    k.write("local.yaml", to_yaml(local))
    k.ok("apply", "--server-side", "-f", "local.yaml")
    local_row = _rows(k.ok("get", "apiservice", local["metadata"]["name"]))[1]
    assert local_row[1:3] == ["Local", "True"]
    assert "apiservice" in k.ok("get", "api-extensions", "-o", "name")

    k.ok("delete", "service", "backend")
    assert _eventually(lambda: row()[2:4] == ["False", "(ServiceNotFound)"])
    deleted = k.ok("delete", "-f", "apiservice.yaml", "-f", "local.yaml").splitlines()
    assert deleted[0] == f'apiservice.apiregistration.k8s.io "{name}" deleted'
    assert (
        k.fails("get", "apiservice", name)
        .stderr.strip()
        .endswith(f'apiservices.apiregistration.k8s.io "{name}" not found')
    )


def test_a_name_that_is_not_version_dot_group_is_refused(k: Kubectl, namespace: str) -> None:
    bad = _api_service(f"{namespace}.example.com", namespace)
    bad["metadata"]["name"] = "metrics"
    k.write("bad.yaml", to_yaml(bad))
    result = k.fails("apply", "--server-side", "-f", "bad.yaml")
    assert (
        f'metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: '
        f'"v1beta1.{namespace}.example.com"' in result.stderr
    )


def test_api_services_with_the_python_client(
    apireg: client.ApiregistrationV1Api, namespace: str
) -> None:
    group = f"{namespace}.example.org"
    name = f"v1beta1.{group}"
    created = apireg.create_api_service(_api_service(group, namespace))
    assert created.spec.service.port == 443
    assert created.spec.group_priority_minimum == 100

    def condition() -> Any:
        conditions = apireg.read_api_service_status(name).status.conditions or []
        return conditions[0] if conditions else None

    assert _eventually(lambda: condition() is not None)
    assert (condition().type, condition().status, condition().reason) == (
        "Available",
        "False",
        "ServiceNotFound",
    )
    listed = apireg.list_api_service()
    assert name in [item.metadata.name for item in listed.items]

    patched = apireg.patch_api_service(name, {"spec": {"versionPriority": 15}})
    assert patched.spec.version_priority == 15
    assert patched.status.conditions[0].reason == "ServiceNotFound"

    with pytest.raises(ApiException) as caught:
        apireg.patch_api_service(name, {"spec": {"groupPriorityMinimum": 0}})
    assert caught.value.status == 422
    assert "must be positive and less than 20000" in caught.value.body

    apireg.delete_api_service(name)
    with pytest.raises(ApiException) as gone:
        apireg.read_api_service(name)
    assert gone.value.status == 404
