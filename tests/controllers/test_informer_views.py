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
    for informer in (quota.informers[("", "pods")], quota.informers[("", "configmaps")]):
        assert wait_for(lambda informer=informer: len(informer.keys()) == 1)
    assert wait_for(lambda: claims.informers[("", "pods")].get("default/p") is not None)
    claim_view = claims.informers[("", "pods")].get("default/p")
    assert claim_view is not None and "managedFields" not in claim_view["metadata"]
    assert claim_view["metadata"]["name"] == "p"
    # The quota controller keeps a pod's phase alone (the informer's key names the object; it
    # recounts from the stores), one view shared by every object of a phase, or of none.
    assert quota.informers[("", "pods")].get("default/p") == {"status": {"phase": "Pending"}}
    assert quota.informers[("", "configmaps")].get("default/c") == {}
    configmaps = client.resource("v1", "configmaps").namespace("default")
    configmaps.create({"metadata": {"name": "d"}})
    held = quota.informers[("", "configmaps")]
    assert wait_for(lambda: held.get("default/d") is not None)
    assert held.get("default/d") is held.get("default/c")
    # Claim protection keeps what tells it which claims a running pod holds: not the service
    # account's projected volume the ServiceAccount plugin added.
    pod_view = claims.informers[("", "pods")].get("default/p")
    assert pod_view is not None
    assert any("projected" in v for v in created["spec"]["volumes"])
    assert pod_view["spec"]["volumes"] == []
    assert pod_view["metadata"]["uid"] == created["metadata"]["uid"]
