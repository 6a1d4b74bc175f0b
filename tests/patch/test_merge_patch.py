"""JSON merge patch (RFC 7386): the RFC's examples, json-patch's extra pruning, and the bodies
``kubectl label``, ``annotate``, ``scale`` and ``patch --type merge`` send."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.errors import BadRequest
from kstore.registry.patch import PatchType, apply_patch
from kstore.registry.patch.merge_patch import apply_merge_patch
from tests.patch.objects import (
    CONFIG_MAP,
    DEPLOYMENT,
    body,
    live_config_map,
    live_deployment,
    options,
)

# RFC 7386 Appendix A, the rows whose target is an object (Kubernetes objects always are).
RFC_EXAMPLES: list[tuple[dict[str, Any], Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), RFC_EXAMPLES)
def test_rfc7386_appendix_a(target: dict[str, Any], patch: Any, expected: Any) -> None:
    assert apply_merge_patch(target, patch) == expected


@pytest.mark.parametrize("patch", [None, "bar", 5])
def test_a_null_or_scalar_patch_is_invalid_as_in_kubernetes(patch: Any) -> None:
    # RFC 7386 would replace the document; json-patch (and so Kubernetes) refuses.
    with pytest.raises(BadRequest, match="Invalid JSON Patch"):
        apply_merge_patch({"a": "foo"}, patch)


def test_nulls_inside_arrays_put_in_place_are_pruned_from_their_objects() -> None:
    patch = {"a": [{"x": None, "y": 1}, None]}
    assert apply_merge_patch({}, patch) == {"a": [{"y": 1}, None]}


def test_the_target_is_not_modified() -> None:
    target = {"a": {"b": "c"}}
    apply_merge_patch(target, {"a": {"b": None}})
    assert target == {"a": {"b": "c"}}


def test_kubectl_label_adds_and_removes_a_label() -> None:
    live = live_config_map(a="1")
    labelled = apply_patch(
        live,
        body({"metadata": {"labels": {"env": "prod"}}}),
        PatchType.MERGE,
        options(CONFIG_MAP, "cm3", field_manager="kubectl-label"),
    ).object
    assert labelled["metadata"]["labels"] == {"app": "demo", "env": "prod"}
    unlabelled = apply_patch(
        labelled,
        body({"metadata": {"labels": {"env": None}}}),
        PatchType.MERGE,
        options(CONFIG_MAP, "cm3", field_manager="kubectl-label"),
    ).object
    assert unlabelled["metadata"]["labels"] == {"app": "demo"}


def test_kubectl_annotate_sets_an_annotation() -> None:
    out = apply_patch(
        live_config_map(a="1"),
        body({"metadata": {"annotations": {"note": "hi"}}}),
        "application/merge-patch+json",
        options(CONFIG_MAP, "cm3", field_manager="kubectl-annotate"),
    ).object
    assert out["metadata"]["annotations"] == {"note": "hi"}
    assert out["data"] == {"a": "1"}


def test_kubectl_scale_body_sets_replicas() -> None:
    out = apply_patch(
        live_deployment(),
        body({"spec": {"replicas": 3}}),
        PatchType.MERGE,
        options(DEPLOYMENT, "web", field_manager="kubectl-scale"),
    ).object
    assert out["spec"]["replicas"] == 3
    assert out["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}
    ]


def test_a_merge_patch_replaces_lists_whole() -> None:
    # Unlike strategic merge patch: the container list is the patch's.
    out = apply_patch(
        live_deployment(),
        body({"spec": {"template": {"spec": {"containers": [{"name": "x", "image": "y"}]}}}}),
        PatchType.MERGE,
        options(DEPLOYMENT, "web", field_manager="kubectl-patch"),
    ).object
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "x", "image": "y"}]
