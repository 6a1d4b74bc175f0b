"""Server-side apply scenarios, checked against what Kubernetes does: create by apply, re-apply
that drops a field, two managers in conflict, force, kubectl edit then apply, list types, the
client-side-apply upgrade path, and the rejections."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.errors import BadRequest, Conflict, InternalError, Invalid, to_status
from kstore.registry.patch import PatchOptions, PatchType, apply_patch, record_update
from tests.patch.objects import (
    DEPLOYMENT,
    T0,
    T1,
    body,
    deployment_manifest,
    options,
)

CONTAINER = '.spec.template.spec.containers[name="nginx"]'


def _apply(
    live: dict[str, Any],
    config: dict[str, Any],
    manager: str = "kubectl",
    *,
    force: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    out = apply_patch(
        live,
        body(config),
        PatchType.APPLY,
        options(DEPLOYMENT, "web", field_manager=manager, force=force, **kwargs),
    ).object
    out["metadata"].setdefault("uid", "uid-web")  # the registry fills it on create
    return out


def _entries(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"]]


def _fields(obj: dict[str, Any], manager: str) -> Any:
    (entry,) = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return entry["fieldsV1"]


def _conflict(live: dict[str, Any], config: dict[str, Any], manager: str = "kubectl") -> Conflict:
    with pytest.raises(Conflict) as info:
        _apply(live, config, manager)
    return info.value


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def test_apply_creates_the_object_and_records_the_applier() -> None:
    config = deployment_manifest()
    result = apply_patch(
        {},
        body(config),
        "application/apply-patch+yaml",
        options(DEPLOYMENT, "web", field_manager="kubectl", force=False),
    )
    assert result.created
    obj = result.object
    assert obj["spec"] == config["spec"]
    assert obj["metadata"]["namespace"] == "default"
    (entry,) = obj["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "time": "2026-12-02T12:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"nginx"}': {
                                ".": {},
                                "f:env": {
                                    'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}},
                                    'k:{"name":"B"}': {".": {}, "f:name": {}, "f:value": {}},
                                },
                                "f:image": {},
                                "f:name": {},
                                "f:ports": {
                                    'k:{"containerPort":80,"protocol":"TCP"}': {
                                        ".": {},
                                        "f:containerPort": {},
                                    }
                                },
                            }
                        }
                    },
                },
            }
        },
    }


def test_reapplying_the_same_configuration_changes_nothing() -> None:
    live = _apply({}, deployment_manifest())
    again = _apply(live, deployment_manifest(), now=T1)
    assert again == live  # same content, same managedFields time


def test_reapply_without_a_field_removes_it() -> None:
    live = _apply({}, deployment_manifest())
    config = deployment_manifest()
    del config["spec"]["replicas"]
    env = _containers(config)[0]["env"]
    env.pop()  # B
    out = _apply(live, config, now=T1)
    assert "replicas" not in out["spec"]
    assert _containers(out)[0]["env"] == [{"name": "A", "value": "1"}]
    assert "f:replicas" not in _fields(out, "kubectl")["f:spec"]
    assert out["metadata"]["managedFields"][0]["time"] == "2026-12-02T12:05:00Z"


def test_a_dropped_field_another_manager_also_applies_is_kept() -> None:
    live = _apply({}, deployment_manifest())
    shared = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 2},
    }
    live = _apply(live, shared, "autoscaler")  # same value: shared ownership, no conflict
    config = deployment_manifest()
    del config["spec"]["replicas"]
    out = _apply(live, config)
    assert out["spec"]["replicas"] == 2
    assert _fields(out, "autoscaler") == {"f:spec": {"f:replicas": {}}}


def test_two_appliers_conflict_over_a_changed_value() -> None:
    live = _apply({}, deployment_manifest())
    scaler = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5},
    }
    error = _conflict(live, scaler, "autoscaler")
    assert error.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    assert to_status(error) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
        "reason": "Conflict",
        "code": 409,
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "kubectl"',
                    "field": ".spec.replicas",
                }
            ]
        },
    }


def test_force_takes_ownership_of_conflicting_fields() -> None:
    live = _apply({}, deployment_manifest())
    scaler = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5},
    }
    out = _apply(live, scaler, "autoscaler", force=True)
    assert out["spec"]["replicas"] == 5
    assert _fields(out, "autoscaler") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in _fields(out, "kubectl")["f:spec"]
    # The former owner's next apply conflicts in turn.
    error = _conflict(out, deployment_manifest())
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "autoscaler": .spec.replicas'
    )


def test_kubectl_edit_then_apply_conflicts_with_the_editor() -> None:
    live = _apply({}, deployment_manifest())
    edit = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}],
                    "containers": [{"image": "nginx:1.27", "name": "nginx"}],
                }
            }
        }
    }
    edited = apply_patch(
        live,
        body(edit),
        PatchType.STRATEGIC,
        options(DEPLOYMENT, "web", field_manager="kubectl-edit", now=T1),
    ).object
    assert _entries(edited) == [("kubectl", "Apply"), ("kubectl-edit", "Update")]
    assert _fields(edited, "kubectl-edit") == {
        "f:spec": {
            "f:template": {"f:spec": {"f:containers": {'k:{"name":"nginx"}': {"f:image": {}}}}}
        }
    }
    error = _conflict(edited, deployment_manifest(image="nginx:1.26"))
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: '
        f"{CONTAINER}.image"
    )
    assert error.causes[0].message == 'conflict with "kubectl-edit" using apps/v1'
    # Applying the value the editor set is no conflict: both own it.
    _apply(edited, deployment_manifest(image="nginx:1.27"))


def test_conflicts_with_several_managers_are_grouped_per_manager() -> None:
    live = _apply({}, deployment_manifest())
    live = apply_patch(
        live,
        body({"spec": {"replicas": 7}}),
        PatchType.MERGE,
        options(DEPLOYMENT, "web", field_manager="kubectl-scale"),
    ).object
    other = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "template": {"spec": {"containers": [{"name": "nginx", "image": "busybox"}]}},
        },
    }
    error = _conflict(live, other, "ci")
    assert error.message == (
        "Apply failed with 2 conflicts: "
        'conflicts with "kubectl":\n'
        f"- {CONTAINER}.image\n"
        'conflicts with "kubectl-scale" using apps/v1:\n'
        "- .spec.replicas"
    )
    assert [c.field for c in error.causes] == [f"{CONTAINER}.image", ".spec.replicas"]


def test_keyed_list_elements_are_owned_by_whoever_applies_them() -> None:
    live = _apply({}, deployment_manifest())
    sidecar = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "proxy", "image": "envoy"}]}}},
    }
    out = _apply(live, sidecar, "mesh")
    assert [c["name"] for c in _containers(out)] == ["nginx", "proxy"]
    # The first applier re-applies: the sidecar is not its to remove.
    again = _apply(out, deployment_manifest())
    assert [c["name"] for c in _containers(again)] == ["nginx", "proxy"]
    # The mesh stops applying its container: it goes.
    empty_sidecar = copy.deepcopy(sidecar)
    del empty_sidecar["spec"]
    gone = _apply(again, empty_sidecar, "mesh")
    assert [c["name"] for c in _containers(gone)] == ["nginx"]


def test_set_lists_merge_per_element() -> None:
    def finalizers(*names: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "finalizers": list(names)},
        }

    live = _apply({}, deployment_manifest())
    live = _apply(live, finalizers("a.io/x"), "a")
    live = _apply(live, finalizers("b.io/y"), "b")
    assert live["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert _fields(live, "b") == {"f:metadata": {"f:finalizers": {'v:"b.io/y"': {}}}}
    out = _apply(live, finalizers(), "a")
    assert out["metadata"]["finalizers"] == ["b.io/y"]


def test_atomic_fields_conflict_as_a_whole() -> None:
    live = _apply({}, deployment_manifest())
    other = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web", "tier": "x"}}},
    }
    error = _conflict(live, other, "other")
    assert error.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.selector'


def test_an_untracked_object_is_owned_by_before_first_apply() -> None:
    created = record_update({}, deployment_manifest(), gvk=DEPLOYMENT, field_manager="x")
    untracked = copy.deepcopy(created)
    del untracked["metadata"]["managedFields"]
    untracked["metadata"]["uid"] = "uid-web"
    error = _conflict(untracked, deployment_manifest(replicas=4))
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: '
        ".spec.replicas"
    )
    out = _apply(untracked, deployment_manifest())
    assert _entries(out) == [("kubectl", "Apply"), ("before-first-apply", "Update")]


def test_kubectl_takes_over_from_client_side_apply_where_values_still_agree() -> None:
    manifest = deployment_manifest()
    last_applied = json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n"
    config = copy.deepcopy(manifest)
    config["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": last_applied
    }
    live = record_update(
        {}, config, gvk=DEPLOYMENT, field_manager="kubectl-client-side-apply", now=T0
    )
    live["metadata"]["uid"] = "uid-web"
    # kubectl apply --server-side of a changed image: the image was last applied client-side
    # with the value it still has, so kubectl may take it over.
    out = _apply(live, deployment_manifest(image="nginx:1.26"))
    assert _containers(out)[0]["image"] == "nginx:1.26"
    annotation = out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation) == deployment_manifest(image="nginx:1.26")
    # Any other manager still conflicts with the client-side applier.
    error = _conflict(live, deployment_manifest(image="nginx:1.26"), "ci")
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using '
        f"apps/v1: {CONTAINER}.image"
    )


def test_reset_fields_are_never_owned() -> None:
    config = deployment_manifest()
    config["status"] = {"replicas": 9}
    out = apply_patch(
        {},
        body(config),
        PatchType.APPLY,
        options(DEPLOYMENT, "web", field_manager="kubectl", reset_fields=[("status",)]),
    ).object
    assert "f:status" not in out["metadata"]["managedFields"][0]["fieldsV1"]


def test_null_in_a_configuration_removes_the_field_and_counts_as_a_change() -> None:
    live = _apply({}, deployment_manifest())
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": None},
    }
    error = _conflict(live, config, "other")
    assert error.message == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    out = _apply(live, config, "other", force=True)
    assert "replicas" not in out["spec"]


def test_a_yaml_configuration_is_accepted() -> None:
    yaml_body = b"""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
"""
    out = apply_patch(
        {}, yaml_body, PatchType.APPLY, options(DEPLOYMENT, "web", field_manager="me")
    ).object
    assert out["spec"] == {"replicas": 3}


def test_custom_kinds_apply_with_deduced_types() -> None:
    gvk = GroupVersionKind("example.com", "v1", "Widget")

    def widget(**spec: Any) -> bytes:
        return body(
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w"},
                "spec": spec,
            }
        )

    opts = PatchOptions(gvk=gvk, name="w", namespace="default", field_manager="a", now=T0)
    live = apply_patch({}, widget(size=1, tags=["x"]), PatchType.APPLY, opts).object
    live["metadata"]["uid"] = "uid-w"
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {".": {}, "f:size": {}, "f:tags": {}}
    }
    other = PatchOptions(gvk=gvk, name="w", namespace="default", field_manager="b", now=T0)
    with pytest.raises(Conflict):
        apply_patch(live, widget(tags=["y"]), PatchType.APPLY, other)  # lists are atomic
    # A null where the live object has a map merges as an empty map: nothing changes.
    nulled = body(
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": None}
    )
    out = apply_patch(live, nulled, PatchType.APPLY, other).object
    assert out["spec"] == {"size": 1, "tags": ["x"]}


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        (
            {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "web"}},
            BadRequest,
            "invalid object type: apps/v1beta1, Kind=Deployment",
        ),
        (
            {"kind": "Deployment", "metadata": {"name": "web"}},
            BadRequest,
            "invalid object type: /, Kind=Deployment",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "managedFields": []},
            },
            BadRequest,
            "metadata.managedFields must be nil",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {"foo": 1},
            },
            InternalError,
            "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
            ".spec.foo: field not declared in schema",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": [{"image": "x"}]}}},
            },
            InternalError,
            "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
            ".spec.template.spec.containers: element 0: associative list with keys has an "
            'element that omits all key fields ["name"] (and doesn\'t have default values for '
            "any key fields)",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}},
            },
            InternalError,
            "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
            '.spec.template.spec.containers: duplicate entries for key [name="a"]',
        ),
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "other"}},
            BadRequest,
            "the name of the object (other) does not match the name on the URL (web)",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "prod"},
            },
            BadRequest,
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "uid": "u"},
            },
            Conflict,
            'Operation cannot be fulfilled on deployments.apps "web": uid mismatch: the provided '
            "object specified uid u, and no existing object was found",
        ),
    ],
)
def test_rejected_configurations(
    config: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        _apply({}, config)
    assert info.value.message == message  # type: ignore[attr-defined]


def test_apply_requires_a_field_manager() -> None:
    with pytest.raises(Invalid) as info:
        apply_patch({}, body(deployment_manifest()), PatchType.APPLY, options(DEPLOYMENT, "web"))
    assert info.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
        "apply patch"
    )
