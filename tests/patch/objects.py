"""Live objects and options shared by the patch tests, in the shapes kubectl works with."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import GroupVersionKind
from kstore.registry.patch import PatchOptions, record_update

DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
CONFIG_MAP = GroupVersionKind("", "v1", "ConfigMap")
POD = GroupVersionKind("", "v1", "Pod")

T0 = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 2, 12, 5, 0, tzinfo=UTC)

_RESOURCES = {DEPLOYMENT: "deployments.apps", CONFIG_MAP: "configmaps", POD: "pods"}


def options(gvk: GroupVersionKind, name: str, **kwargs: Any) -> PatchOptions:
    kwargs.setdefault("now", T0)
    return PatchOptions(gvk=gvk, name=name, namespace="default", resource=_RESOURCES[gvk], **kwargs)


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def live_config_map(**data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm3",
            "namespace": "default",
            "uid": "7c2a1f7e-0000-4000-8000-000000000001",
            "resourceVersion": "10",
            "creationTimestamp": "2026-12-02T11:00:00Z",
            "labels": {"app": "demo"},
        },
        "data": dict(data),
    }


def deployment_manifest(*, image: str = "nginx:1.25", replicas: int = 2) -> dict[str, Any]:
    """What a user writes in web.yaml."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": image,
                            "ports": [{"containerPort": 80}],
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        }
                    ]
                },
            },
        },
    }


def live_deployment(**kwargs: Any) -> dict[str, Any]:
    """The stored Deployment: the manifest as the server keeps it (defaults, system fields)."""
    obj = copy.deepcopy(deployment_manifest(**kwargs))
    obj["metadata"].update(
        {
            "uid": "7c2a1f7e-0000-4000-8000-000000000002",
            "resourceVersion": "20",
            "generation": 1,
            "creationTimestamp": "2026-12-02T11:00:00Z",
        }
    )
    spec = obj["spec"]
    spec["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    spec["revisionHistoryLimit"] = 10
    container = spec["template"]["spec"]["containers"][0]
    container["ports"][0]["protocol"] = "TCP"
    container["imagePullPolicy"] = "IfNotPresent"
    spec["template"]["spec"]["restartPolicy"] = "Always"
    obj["status"] = {"replicas": 2, "conditions": [{"type": "Available", "status": "True"}]}
    # Created by client-side apply, so its fields have an owner as on a real server.
    return record_update({}, obj, gvk=DEPLOYMENT, field_manager="kubectl-client-side-apply", now=T0)
