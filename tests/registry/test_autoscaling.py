"""autoscaling HorizontalPodAutoscaler through the generic store: the zero status, no
generation, the status subresource and the strategic-merge keys of Kubernetes' strategy."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.patch_meta import type_for_gvk
from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.patch.strategic import strategic_merge
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub

V2 = "autoscaling/v2"
STATUS = UpdateOptions(subresource="status")


def _hpa(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V2,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            **spec,
        },
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    store = registry.store("autoscaling", "horizontalpodautoscalers")
    return store.create(ctx("default", V2), hub(scheme, obj), CreateOptions()).object


def test_create_defaults_and_starts_with_a_zero_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = _hpa()
    body["status"] = {"currentReplicas": 3, "desiredReplicas": 4}
    hpa = _create(registry, scheme, body)
    assert hpa["status"] == {"desiredReplicas": 0}
    assert "generation" not in hpa["metadata"]
    assert hpa["spec"]["minReplicas"] == 1
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80


def test_updates_keep_status_and_status_writes_keep_spec(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, _hpa())
    store = registry.store("autoscaling", "horizontalpodautoscalers")
    request = ctx("default", V2)

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = {"currentReplicas": 2, "desiredReplicas": 3}
        o["spec"]["maxReplicas"] = 50  # ignored by a status write

    stored = store.update(request, "web", changed(set_status), STATUS).object
    assert stored["status"] == {"currentReplicas": 2, "desiredReplicas": 3}
    assert stored["spec"]["maxReplicas"] == 5

    def set_spec(o: dict[str, Any]) -> None:
        o["spec"]["maxReplicas"] = 8
        o["status"] = {"desiredReplicas": 9}  # ignored by a write of the main resource

    updated = store.update(request, "web", changed(set_spec), UpdateOptions()).object
    assert updated["spec"]["maxReplicas"] == 8
    assert updated["status"] == {"currentReplicas": 2, "desiredReplicas": 3}
    assert "generation" not in updated["metadata"]


def test_status_writes_are_validated(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, _hpa())
    store = registry.store("autoscaling", "horizontalpodautoscalers")
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", V2),
            "web",
            changed(lambda o: o.update(status={"desiredReplicas": -1})),
            STATUS,
        )
    assert "status.desiredReplicas: Invalid value: -1: must be greater than or equal to 0" in (
        caught.value.message
    )


def test_an_invalid_autoscaler_is_refused(registry: StoreRegistry, scheme: Scheme) -> None:
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, _hpa(minReplicas=6))
    assert "spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`" in (
        caught.value.message
    )


def test_a_strategic_merge_patch_merges_conditions_and_replaces_metrics() -> None:
    node = type_for_gvk(GroupVersionKind("autoscaling", "v2", "HorizontalPodAutoscaler"))
    assert node is not None
    original = _hpa(metrics=[{"type": "Resource", "resource": {"name": "cpu"}}])
    original["status"] = {
        "desiredReplicas": 1,
        "conditions": [
            {"type": "AbleToScale", "status": "True"},
            {"type": "ScalingActive", "status": "True"},
        ],
    }
    patch = {
        "spec": {"metrics": [{"type": "Resource", "resource": {"name": "memory"}}]},
        "status": {"conditions": [{"type": "ScalingActive", "status": "False"}]},
    }
    patched = strategic_merge(original, patch, node)
    assert patched["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "memory"}}]
    assert patched["status"]["conditions"] == [
        {"type": "AbleToScale", "status": "True"},
        {"type": "ScalingActive", "status": "False"},
    ]
