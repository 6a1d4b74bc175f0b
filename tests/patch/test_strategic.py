"""Strategic merge patch with the bodies kubectl 1.37 sends (client-side ``apply``, ``edit``,
``patch``), every directive, and Kubernetes' error mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.patch_meta import type_for_gvk
from kstore.errors import BadRequest, InternalError, Invalid, UnsupportedMediaType
from kstore.registry.patch import PatchOptions, PatchType, apply_patch
from kstore.registry.patch.strategic import strategic_merge
from tests.patch.objects import (
    CONFIG_MAP,
    DEPLOYMENT,
    POD,
    body,
    live_config_map,
    live_deployment,
    options,
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _smp(live: dict[str, Any], patch: dict[str, Any], gvk: GroupVersionKind = DEPLOYMENT) -> Any:
    node = type_for_gvk(gvk)
    assert node is not None
    return strategic_merge(live, patch, node)


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def test_client_side_apply_of_a_changed_config_map() -> None:
    last = json.dumps({"apiVersion": "v1", "data": {"a": "1", "c": "3"}, "kind": "ConfigMap"})
    patch = {"data": {"b": None, "c": "3"}, "metadata": {"annotations": {LAST_APPLIED: last}}}
    out = apply_patch(
        live_config_map(a="1", b="2"),
        body(patch),
        "application/strategic-merge-patch+json",
        options(CONFIG_MAP, "cm3", field_manager="kubectl-client-side-apply"),
    ).object
    assert out["data"] == {"a": "1", "c": "3"}
    assert out["metadata"]["annotations"][LAST_APPLIED] == last
    assert out["metadata"]["labels"] == {"app": "demo"}


def test_client_side_apply_of_a_new_image_keeps_the_container_ports() -> None:
    # What kubectl apply sends when only the image changed; a plain merge would drop ports.
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [{"image": "nginx:1.26", "name": "nginx"}],
                }
            }
        }
    }
    live = live_deployment()
    out = _smp(live, patch)
    (container,) = _containers(out)
    assert container["image"] == "nginx:1.26"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert [e["name"] for e in container["env"]] == ["A", "B"]
    assert out["status"] == live["status"]
    assert _containers(live)[0]["image"] == "nginx:1.25"  # the live object is untouched


def test_apply_removing_an_env_var_deletes_it_by_name() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "A"}],
                            "env": [{"$patch": "delete", "name": "B"}],
                            "name": "nginx",
                        }
                    ],
                }
            }
        }
    }
    (container,) = _containers(_smp(live_deployment(), patch))
    assert container["env"] == [{"name": "A", "value": "1"}]


def test_a_new_container_goes_where_set_element_order_puts_it() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}],
                    "containers": [{"image": "busybox", "name": "sidecar"}],
                }
            }
        }
    }
    out = _smp(live_deployment(), patch)
    assert [c["name"] for c in _containers(out)] == ["sidecar", "nginx"]
    assert _containers(out)[1]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_ports_merge_by_container_port() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [
                        {
                            "$setElementOrder/ports": [
                                {"containerPort": 80},
                                {"containerPort": 443},
                            ],
                            "name": "nginx",
                            "ports": [{"containerPort": 443}],
                        }
                    ],
                }
            }
        }
    }
    (container,) = _containers(_smp(live_deployment(), patch))
    assert container["ports"] == [
        {"containerPort": 80, "protocol": "TCP"},
        {"containerPort": 443},
    ]


def test_a_strategy_change_retains_only_the_listed_keys() -> None:
    patch = {
        "spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": None, "type": "Recreate"}}
    }
    assert _smp(live_deployment(), patch)["spec"]["strategy"] == {"type": "Recreate"}


def test_retain_keys_refuses_a_patch_key_it_does_not_list() -> None:
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}}
    with pytest.raises(BadRequest, match=r"^invalid patch format of retainKeys$"):
        _smp(live_deployment(), patch)


def test_finalizers_merge_as_a_set_with_delete_from_primitive_list() -> None:
    live = live_config_map(a="1")
    live["metadata"]["finalizers"] = ["a", "b"]
    patch = {
        "metadata": {
            "$deleteFromPrimitiveList/finalizers": ["b"],
            "$setElementOrder/finalizers": ["a", "c"],
            "finalizers": ["c"],
        }
    }
    assert _smp(live, patch, CONFIG_MAP)["metadata"]["finalizers"] == ["a", "c"]


def test_primitive_merge_lists_are_deduplicated_unions() -> None:
    live = live_config_map()
    live["metadata"]["finalizers"] = ["a", "b"]
    out = _smp(live, {"metadata": {"finalizers": ["b", "c"]}}, CONFIG_MAP)
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]


def test_patch_replace_directive_replaces_a_map() -> None:
    patch = {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "tier": "x"}}}}}
    out = _smp(live_deployment(), patch)
    assert out["spec"]["template"]["metadata"]["labels"] == {"tier": "x"}


def test_patch_replace_element_makes_the_patch_the_whole_list() -> None:
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}
            }
        }
    }
    assert _containers(_smp(live_deployment(), patch)) == [{"name": "only", "image": "x"}]


def test_patch_delete_directive_removes_a_container() -> None:
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "$patch": "delete"}]}}}
    }
    assert _containers(_smp(live_deployment(), patch)) == []


def test_delete_and_add_with_set_element_order_keep_kubernetes_order() -> None:
    # Kubernetes orders by the live list as its in-place deletion left it: [b, d, c].
    live = live_deployment()
    _containers(live)[:] = [{"name": "a"}, {"name": "b", "image": "b"}, {"name": "d", "image": "d"}]
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "b"}, {"name": "c"}],
                    "containers": [{"name": "c"}, {"name": "a", "$patch": "delete"}],
                }
            }
        }
    }
    names = [c["name"] for c in _containers(_smp(live, patch))]
    assert names == ["b", "d", "c"]


def test_lists_without_merge_strategy_are_replaced() -> None:
    live = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"tolerations": [{"key": "a", "operator": "Exists"}], "containers": []},
    }
    out = _smp(live, {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}}, POD)
    assert out["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_status_conditions_merge_by_type() -> None:
    patch = {"status": {"conditions": [{"type": "Progressing", "status": "True"}]}}
    out = _smp(live_deployment(), patch)
    # Without $setElementOrder, Kubernetes puts new elements before the ones only the live
    # object has.
    assert [c["type"] for c in out["status"]["conditions"]] == ["Progressing", "Available"]
    assert out["status"]["conditions"][1] == {"type": "Available", "status": "True"}


def test_null_deletes_and_directive_keys_never_reach_the_object() -> None:
    patch = {
        "spec": {
            "revisionHistoryLimit": None,
            "template": {
                "spec": {
                    "initContainers": [
                        {
                            "name": "init",
                            "image": "busybox",
                            "$setElementOrder/env": [],
                            "tty": None,
                        }
                    ]
                }
            },
        }
    }
    out = _smp(live_deployment(), patch)
    assert "revisionHistoryLimit" not in out["spec"]
    assert out["spec"]["template"]["spec"]["initContainers"] == [
        {"name": "init", "image": "busybox"}
    ]


def test_kubectl_edit_body() -> None:
    patch = {
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [{"image": "nginx:1.27", "name": "nginx"}],
                }
            },
        }
    }
    out = apply_patch(
        live_deployment(),
        body(patch),
        PatchType.STRATEGIC,
        options(DEPLOYMENT, "web", field_manager="kubectl-edit"),
    ).object
    assert out["spec"]["replicas"] == 3
    assert _containers(out)[0]["image"] == "nginx:1.27"
    managers = [(e["manager"], e["operation"]) for e in out["metadata"]["managedFields"]]
    assert managers == [("kubectl-client-side-apply", "Update"), ("kubectl-edit", "Update")]


@pytest.mark.parametrize(
    ("patch", "error", "message"),
    [
        (
            {"spec": {"$setElementOrderX/containers": []}},
            BadRequest,
            "invalid patch format of setElementOrder list",
        ),
        (
            {"metadata": {"$deleteFromPrimitiveListX/finalizers": ["a"]}},
            BadRequest,
            "invalid patch format of primitive list",
        ),
        (
            {"spec": {"strategy": {"$retainKeys": "type"}}},
            BadRequest,
            "invalid patch format of retainKeys",
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"$patch": "merge", "name": "x"}]}}}},
            InternalError,
            "merging lists cannot yet be specified in the patch",
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
            InternalError,
            "map: map[image:x] does not contain declared merge key: name",
        ),
        (
            {"spec": {"strategy": {"$patch": "foo", "type": "x"}}},
            InternalError,
            "unknown patch type: foo in map: map[$patch:foo type:x]",
        ),
        (
            {"metadata": {"finalizers": ["b", ["a"]]}},
            InternalError,
            "list element types are not identical: [[a] [b [a]]]",
        ),
    ],
)
def test_errors_are_mapped_as_kubernetes_maps_them(
    patch: dict[str, Any], error: type[Exception], message: str
) -> None:
    live = live_deployment()
    live["metadata"]["finalizers"] = ["a"]
    with pytest.raises(error) as info:
        _smp(live, patch)
    assert info.value.message == message  # type: ignore[attr-defined]


def test_lists_of_lists_are_a_422_with_the_generic_message() -> None:
    live = live_deployment()
    live["metadata"]["finalizers"] = []
    with pytest.raises(Invalid) as info:
        _smp(live, {"metadata": {"finalizers": [["a"]]}})
    assert info.value.message == "the server rejected our request due to an error in our request"
    assert str(info.value.__cause__) == "lists of lists are not supported"


def test_custom_kinds_refuse_strategic_merge_patch_with_415() -> None:
    gvk = GroupVersionKind("example.com", "v1", "Widget")
    live = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "uid": "u"}}
    with pytest.raises(UnsupportedMediaType) as info:
        apply_patch(live, b"{}", PatchType.STRATEGIC, PatchOptions(gvk=gvk, name="w"))
    assert info.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


@pytest.mark.parametrize("payload", [b"[1]", b'"x"', b"not json"])
def test_a_body_that_is_not_an_object_is_a_bad_request(payload: bytes) -> None:
    with pytest.raises(BadRequest):
        apply_patch(live_deployment(), payload, PatchType.STRATEGIC, options(DEPLOYMENT, "web"))
