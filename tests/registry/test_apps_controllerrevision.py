"""apps/v1 ControllerRevision through the generic store: no generation, no status, data kept
immutable."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub

APPS = "apps/v1"


def _revision() -> dict[str, Any]:
    return {
        "apiVersion": APPS,
        "kind": "ControllerRevision",
        "metadata": {"name": "web-1"},
        "data": {"spec": {"replicas": 1}},
        "revision": 1,
    }


def test_create_update_and_immutable_data(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("apps", "controllerrevisions")
    request = ctx("default", APPS)
    created = store.create(request, hub(scheme, _revision()), CreateOptions()).object
    assert "generation" not in created["metadata"]
    assert "status" not in created
    assert created["data"] == {"spec": {"replicas": 1}}
    bumped = store.update(
        request, "web-1", changed(lambda o: o.update(revision=2)), UpdateOptions()
    ).object
    assert bumped["revision"] == 2
    with pytest.raises(Invalid) as caught:
        store.update(
            request, "web-1", changed(lambda o: o.update(data={"spec": {}})), UpdateOptions()
        )
    assert 'data: Invalid value: {"spec":{}}: field is immutable' in caught.value.message
