"""The manifests the scenarios apply, as a user would write them (YAML, no namespace: the
kubeconfig context names it)."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["configmap", "deployment", "to_yaml"]


def to_yaml(obj: dict[str, Any]) -> str:
    return yaml.safe_dump(obj, sort_keys=False)


def configmap(
    name: str = "",
    data: dict[str, str] | None = None,
    *,
    labels: dict[str, str] | None = None,
    generate_name: str = "",
) -> str:
    metadata: dict[str, Any] = {}
    if name:
        metadata["name"] = name
    if generate_name:
        metadata["generateName"] = generate_name
    if labels:
        metadata["labels"] = labels
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if data is not None:
        obj["data"] = data
    return to_yaml(obj)


def deployment(name: str, image: str, *, replicas: int = 2) -> str:
    """A Deployment with two containers, ports on the first: what strategic merge must keep
    apart (containers merge by name, ports by containerPort)."""
    labels = {"app": name}
    return to_yaml(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": image,
                                "ports": [{"containerPort": 80, "name": "http"}],
                            },
                            {
                                "name": "sidecar",
                                "image": "busybox:1.36",
                                "command": ["sleep", "infinity"],
                            },
                        ]
                    },
                },
            },
        }
    )
