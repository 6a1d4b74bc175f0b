"""Fixtures of the real-client suite: one ``kstore serve`` process per test module and backend,
kubectl with a throwaway HOME and kubeconfig, the ``kubernetes`` Python client.

Every module's tests run twice, against a server on LMDB and against one on a real
single-member etcd (``kstore_server`` is parametrised; pytest groups a module's tests by
backend, so each module starts two servers in all). Tests share their module's server, so each
test works in a namespace of its own (``namespace``), and its kubectl (``k``) defaults to that
namespace through its kubeconfig — scenarios read as a user types them (``kubectl get cm``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.clients.kubectl import Kubectl, kubectl_binary
from tests.clients.servers import BACKENDS, storage_args
from tests.server.harness import RunningServer, start_server

if TYPE_CHECKING:
    # Imported where used: without the client installed only this suite fails (its modules
    # import it), not every test session that loads this conftest.
    from kubernetes import client

_namespaces = itertools.count()


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest, backend: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """``kstore serve`` with its defaults (watch cache on) on the module's backend."""
    with storage_args(request.config, backend) as args:
        server = start_server(tmp_path_factory.mktemp(f"clients-{backend}") / "data", *args)
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


@pytest.fixture(scope="module")
def kubectl(kstore_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl with the module's own HOME (so its own discovery cache), namespace default."""
    return Kubectl(kubectl_binary(), tmp_path_factory.mktemp("kubectl-home"), kstore_server.url)


@pytest.fixture(scope="module")
def api_client(kstore_server: RunningServer) -> Iterator[client.ApiClient]:
    """The kubernetes Python client, configured for the module's server (no credentials)."""
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = kstore_server.url
    with client.ApiClient(configuration) as api:
        yield api


@pytest.fixture(scope="module")
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    from kubernetes import client

    return client.CoreV1Api(api_client)


@pytest.fixture
def namespace(core: client.CoreV1Api, request: pytest.FixtureRequest) -> str:
    """A fresh namespace for one test, created through the Python client, with the
    ``default`` ServiceAccount a cluster's service account controller gives every namespace
    (the ServiceAccount admission plugin refuses pods whose account does not exist)."""
    test_name = request.node.name.split("[")[0].removeprefix("test_")
    name = f"t{next(_namespaces)}-{test_name}".replace("_", "-")[:63].rstrip("-")
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="default"))
    try:
        core.create_namespaced_service_account(name, account)
    except ApiException as exc:
        if exc.status != 409:  # the service account controller was first
            raise
    return name


@pytest.fixture
def k(kubectl: Kubectl, namespace: str) -> Kubectl:
    """kubectl whose kubeconfig context defaults to the test's namespace."""
    return kubectl.in_namespace(namespace)
