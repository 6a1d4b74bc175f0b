"""policy PodDisruptionBudget through the generic store: the zero status, generation and the
status subresource of Kubernetes' strategy."""

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

POLICY = "policy/v1"
STATUS = UpdateOptions(subresource="status")
ZERO_STATUS = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


def _pdb(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": POLICY,
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def _create(registry: StoreRegistry, scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    store = registry.store("policy", "poddisruptionbudgets")
    return store.create(ctx("default", POLICY), hub(scheme, obj), CreateOptions()).object


def test_create_starts_with_a_zero_status_and_generation_one(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    body = _pdb(minAvailable=1)
    body["status"] = {"disruptionsAllowed": 5, "currentHealthy": 5}
    pdb = _create(registry, scheme, body)
    assert pdb["status"] == ZERO_STATUS
    assert pdb["metadata"]["generation"] == 1
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}


def test_generation_follows_the_spec_and_status_writes_keep_it(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _create(registry, scheme, _pdb(minAvailable=1))
    store = registry.store("policy", "poddisruptionbudgets")
    request = ctx("default", POLICY)
    labelled = store.update(
        request, "web", changed(lambda o: o["metadata"].update(labels={"a": "b"})), UpdateOptions()
    ).object
    assert labelled["metadata"]["generation"] == 1
    updated = store.update(
        request, "web", changed(lambda o: o["spec"].update(minAvailable="50%")), UpdateOptions()
    ).object
    assert updated["metadata"]["generation"] == 2

    def set_status(o: dict[str, Any]) -> None:
        o["status"] = {**ZERO_STATUS, "disruptionsAllowed": 1, "expectedPods": 3}
        o["spec"]["minAvailable"] = 3  # ignored by a status write

    stored = store.update(request, "web", changed(set_status), STATUS).object
    assert stored["status"]["disruptionsAllowed"] == 1
    assert stored["spec"]["minAvailable"] == "50%"
    assert stored["metadata"]["generation"] == 2
    # The main resource never writes status.
    again = store.update(
        request,
        "web",
        changed(lambda o: o.update(status={**ZERO_STATUS, "expectedPods": 9})),
        UpdateOptions(),
    ).object
    assert again["status"]["expectedPods"] == 3


def test_status_writes_are_validated(registry: StoreRegistry, scheme: Scheme) -> None:
    _create(registry, scheme, _pdb(maxUnavailable=1))
    store = registry.store("policy", "poddisruptionbudgets")
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("default", POLICY),
            "web",
            changed(lambda o: o.update(status={**ZERO_STATUS, "currentHealthy": -1})),
            STATUS,
        )
    assert "status.currentHealthy: Invalid value: -1: must be greater than or equal to 0" in (
        caught.value.message
    )


def test_both_limits_are_refused(registry: StoreRegistry, scheme: Scheme) -> None:
    with pytest.raises(Invalid) as caught:
        _create(registry, scheme, _pdb(minAvailable=1, maxUnavailable=1))
    assert "minAvailable and maxUnavailable cannot be both set" in caught.value.message


def test_a_strategic_merge_patch_replaces_the_selector() -> None:
    node = type_for_gvk(GroupVersionKind("policy", "v1", "PodDisruptionBudget"))
    assert node is not None
    original = _pdb(maxUnavailable=1)
    original["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "front"}}
    patch = {"spec": {"selector": {"matchLabels": {"app": "api"}}}}
    patched = strategic_merge(original, patch, node)
    assert patched["spec"]["selector"] == {"matchLabels": {"app": "api"}}
    assert patched["spec"]["maxUnavailable"] == 1
