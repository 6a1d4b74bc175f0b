"""The official ``kubernetes`` Python client with a bearer token against RBAC."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.auth.conftest import ALICE, BOB
from tests.server.harness import RunningServer


def _core(server: RunningServer, token: str) -> client.CoreV1Api:
    configuration = client.Configuration()
    configuration.host = server.url
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return client.CoreV1Api(client.ApiClient(configuration))


def test_token_user_reads_where_bound(rbac_server: RunningServer) -> None:
    items = _core(rbac_server, ALICE).list_namespaced_config_map("team-a").items
    assert sorted(cm.metadata.name for cm in items) == ["cm1", "cm2"]


def test_token_user_is_forbidden_elsewhere(rbac_server: RunningServer) -> None:
    with pytest.raises(ApiException) as error:
        _core(rbac_server, ALICE).list_namespaced_config_map("team-b")
    assert error.value.status == 403
    status = json.loads(error.value.body)
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group ""'
        ' in the namespace "team-b"'
    )


def test_group_binding_allows_writes(rbac_server: RunningServer) -> None:
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-bob"), data={"a": "b"})
    created = _core(rbac_server, BOB).create_namespaced_config_map("team-b", body, dry_run="All")
    assert created.metadata.name == "py-bob"


def test_unknown_token_is_unauthorized(rbac_server: RunningServer) -> None:
    with pytest.raises(ApiException) as error:
        _core(rbac_server, "stolen").list_namespaced_config_map("team-a")
    assert error.value.status == 401
    assert json.loads(error.value.body)["message"] == "Unauthorized"
