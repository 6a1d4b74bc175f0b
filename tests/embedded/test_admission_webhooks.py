"""Admission webhooks through ``kstore.open``: the same plugins as ``kstore serve`` (a service
reference resolved by a ``webhook_service_resolver`` rule, denial, patch, warnings), and writes
leave the event loop only while a webhook is configured."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kstore.embedded import Client, open
from kstore.errors import KStoreError
from kstore.registry.registry import RegistryConfig
from tests.webhook_server import WebhookServer, admission_response

_GROUP = "admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    with WebhookServer(names=("hooks.system.svc",)) as server:
        yield server


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def client(tmp_path: Path, hooks: WebhookServer, warnings: list[str]) -> Iterator[Client]:
    with open(
        f"lmdb://{tmp_path / 'store'}?durable=false",
        webhook_service_resolver=[f"system/hooks=127.0.0.1:{hooks.port}"],
        on_warning=warnings.append,
        controllers=(),
        # As kstore serve on LMDB, so that writes could run on an event loop.
        config=RegistryConfig(reads_are_local=True),
    ) as c:
        yield c


def _configuration(kind: str, path: str, hooks: WebhookServer, **fields: Any) -> dict[str, Any]:
    webhook = {
        "name": f"{path.strip('/')}.example.com",
        "clientConfig": {
            "service": {"namespace": "system", "name": "hooks", "path": path},
            "caBundle": hooks.ca_bundle,
        },
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }
    return {"metadata": {"name": path.strip("/")}, "webhooks": [webhook]}


def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the configuration did not take effect"
        time.sleep(0.05)


def test_webhooks_apply_to_embedded_clients(
    client: Client, hooks: WebhookServer, warnings: list[str]
) -> None:
    registry: Any = client._registry
    assert registry.writes_on_loop  # no webhook configured: LMDB writes may run on a loop
    patch = [{"op": "add", "path": "/data/added", "value": "by-webhook"}]
    hooks.route(
        "/embedded-mutate",
        lambda review: admission_response(review, patch=patch, warnings=["patched"]),
    )
    mutating = client.resource(_GROUP, "mutatingwebhookconfigurations")
    mutating.create(_configuration("Mutating", "/embedded-mutate", hooks))
    _until(lambda: not registry.writes_on_loop)
    configmaps = client.resource("v1", "configmaps").namespace("default")
    probe = {"metadata": {"generateName": "cm-"}, "data": {"p": "1"}}
    _until(lambda: "added" in configmaps.create(probe)["data"])
    created = configmaps.create({"metadata": {"name": "cm"}, "data": {"own": "x"}})
    assert created["data"] == {"own": "x", "added": "by-webhook"}
    assert "patched" in warnings
    review = hooks.bodies("/embedded-mutate")[-1]["request"]
    assert review["namespace"] == "default"
    assert review["object"]["apiVersion"] == "v1"

    hooks.route(
        "/embedded-deny",
        lambda review: admission_response(
            review, allowed=False, status={"message": "not today", "code": 409}
        ),
    )
    client.resource(_GROUP, "validatingwebhookconfigurations").create(
        _configuration("Validating", "/embedded-deny", hooks)
    )

    def denied() -> bool:
        try:
            configmaps.create(probe)
        except KStoreError as exc:
            assert exc.code == 409
            assert exc.message == (
                'admission webhook "embedded-deny.example.com" denied the request: not today'
            )
            return True
        return False

    _until(denied)
    # Without configurations, writes may run on the loop again.
    mutating.delete("embedded-mutate")
    client.resource(_GROUP, "validatingwebhookconfigurations").delete("embedded-deny")
    _until(lambda: registry.writes_on_loop)
