"""The controllers that follow every object of a counted kind keep a small view of each: no
managedFields (often as large as the rest of the object, and read by no controller), only
what the controller reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore import open as open_store
from kstore.controllers.resource_quota import ResourceQuotaController
from kstore.controllers.volume_protection import PVCProtectionController
from kstore.embedded import Client
from tests.registry.objects import wait_for


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with open_store(
        f"lmdb://{tmp_path}/store", controllers="resourcequota,pvc-protection"
    ) as opened:
        assert wait_for(lambda: len(opened._controllers.running) == 2)
        accounts = opened.resource("v1", "serviceaccounts").namespace("default")
        accounts.create({"metadata": {"name": "default"}})
        yield opened


def test_quota_and_claim_protection_keep_pods_and_config_maps_without_managed_fields(
    client: Client,
) -> None:
    pods = client.resource("v1", "pods").namespace("default")
    created = pods.create(
        {
            "metadata": {"name": "p", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
        }
    )
    assert created["metadata"]["managedFields"]
    client.resource("v1", "configmaps").namespace("default").create({"metadata": {"name": "c"}})
    [quota] = [c for c in client._controllers.running if isinstance(c, ResourceQuotaController)]
    [claims] = [c for c in client._controllers.running if isinstance(c, PVCProtectionController)]
    held = [
        (quota.informers[("", "pods")], "default/p"),
        (quota.informers[("", "configmaps")], "default/c"),
        (claims.informers[("", "pods")], "default/p"),
    ]
    for informer, key in held:
        assert wait_for(lambda informer=informer, key=key: informer.get(key) is not None)
        kept = informer.get(key)
        assert kept is not None
        assert "managedFields" not in kept["metadata"], key
        assert kept["metadata"]["name"] == key.split("/")[1]
    # The quota controller keeps the key and a pod's phase: it recounts from the stores.
    assert quota.informers[("", "pods")].get("default/p") == {
        "metadata": {"name": "p", "namespace": "default"},
        "status": {"phase": "Pending"},
    }
    assert quota.informers[("", "configmaps")].get("default/c") == {
        "metadata": {"name": "c", "namespace": "default"}
    }
    # Claim protection keeps what tells it which claims a running pod holds: not the service
    # account's projected volume the ServiceAccount plugin added.
    pod_view = claims.informers[("", "pods")].get("default/p")
    assert pod_view is not None
    assert any("projected" in v for v in created["spec"]["volumes"])
    assert pod_view["spec"]["volumes"] == []
    assert pod_view["metadata"]["uid"] == created["metadata"]["uid"]
