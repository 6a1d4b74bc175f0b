"""The RBAC objects the API server creates at start in RBAC mode (``bootstrappolicy``).

A subset of kube-apiserver's bootstrap policy, with Kubernetes' names, rules and bindings:

- ``cluster-admin``: every verb on every resource and non-resource URL, bound to the group
  ``system:masters`` (which the authorizer also lets through before RBAC);
- ``system:discovery``: GET of the discovery, OpenAPI, health and version paths, bound to
  ``system:authenticated``;
- ``system:basic-user``: create self subject reviews, bound to ``system:authenticated``;
- ``system:public-info-viewer``: GET of the health and version paths, bound to
  ``system:authenticated`` and ``system:unauthenticated``;
- ``system:monitoring``: GET of the metrics and health paths, bound to ``system:monitoring``.

Every object carries the ``kubernetes.io/bootstrapping: rbac-defaults`` label and the
``rbac.authorization.kubernetes.io/autoupdate: "true"`` annotation. :func:`ensure_bootstrap_policy`
creates those that are missing and leaves existing ones alone (kube-apiserver would also add
missing rules to auto-updated ones; kstore does not yet).
"""

from __future__ import annotations

from typing import Any, Final

from kstore.api.kinds.rbac import GROUP
from kstore.errors import AlreadyExists
from kstore.registry.interface import CreateOptions, Registry, RequestContext

__all__ = ["bootstrap_cluster_role_bindings", "bootstrap_cluster_roles", "ensure_bootstrap_policy"]

_API_VERSION: Final = f"{GROUP}/v1"
_HEALTH: Final = ["/healthz", "/livez", "/readyz"]


def _metadata(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    }


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": _API_VERSION,
        "kind": "ClusterRole",
        "metadata": _metadata(name),
        "rules": rules,
    }


def _binding(name: str, role: str, *groups: str) -> dict[str, Any]:
    return {
        "apiVersion": _API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": _metadata(name),
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups],
    }


def bootstrap_cluster_roles() -> list[dict[str, Any]]:
    """The bootstrap ClusterRoles (fresh objects on each call)."""
    return [
        _cluster_role(
            "cluster-admin",
            [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]},
            ],
        ),
        _cluster_role(
            "system:discovery",
            [
                {
                    "verbs": ["get"],
                    "nonResourceURLs": [
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        *_HEALTH,
                        "/openapi",
                        "/openapi/*",
                        "/version",
                        "/version/",
                    ],
                }
            ],
        ),
        _cluster_role(
            "system:basic-user",
            [
                {
                    "verbs": ["create"],
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                },
                {
                    "verbs": ["create"],
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                },
            ],
        ),
        _cluster_role(
            "system:public-info-viewer",
            [{"verbs": ["get"], "nonResourceURLs": [*_HEALTH, "/version", "/version/"]}],
        ),
        _cluster_role(
            "system:monitoring",
            [
                {
                    "verbs": ["get"],
                    "nonResourceURLs": [
                        *_HEALTH,
                        "/healthz/*",
                        "/livez/*",
                        "/readyz/*",
                        "/metrics",
                        "/metrics/slis",
                    ],
                }
            ],
        ),
    ]


def bootstrap_cluster_role_bindings() -> list[dict[str, Any]]:
    """The bootstrap ClusterRoleBindings (fresh objects on each call)."""
    return [
        _binding("cluster-admin", "cluster-admin", "system:masters"),
        _binding("system:discovery", "system:discovery", "system:authenticated"),
        _binding("system:basic-user", "system:basic-user", "system:authenticated"),
        _binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            "system:authenticated",
            "system:unauthenticated",
        ),
        _binding("system:monitoring", "system:monitoring", "system:monitoring"),
    ]


def ensure_bootstrap_policy(registry: Registry) -> list[str]:
    """Create the bootstrap objects that do not exist yet; the names of those created
    (``clusterroles/<name>``, ``clusterrolebindings/<name>``)."""
    created: list[str] = []
    ctx = RequestContext()
    scheme = registry.scheme
    for resource, objects in (
        ("clusterroles", bootstrap_cluster_roles()),
        ("clusterrolebindings", bootstrap_cluster_role_bindings()),
    ):
        store = registry.store(GROUP, resource)
        for obj in objects:
            try:
                hub = scheme.to_hub(obj)
                store.create(ctx, hub, CreateOptions(field_manager="kstore-bootstrap"))
            except AlreadyExists:
                continue
            created.append(f"{resource}/{obj['metadata']['name']}")
    return created
