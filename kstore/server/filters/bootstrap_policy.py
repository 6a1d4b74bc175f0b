"""The RBAC objects the API server creates at start in RBAC mode (``bootstrappolicy``).

A subset of kube-apiserver's bootstrap policy, with Kubernetes' names, rules and bindings:

- ``cluster-admin``: every verb on every resource and non-resource URL, bound to the group
  ``system:masters`` (which the authorizer also lets through before RBAC);
- ``system:discovery``: GET of the discovery, OpenAPI, health and version paths, bound to
  ``system:authenticated``;
- ``system:basic-user``: create self subject reviews, bound to ``system:authenticated``;
- ``system:public-info-viewer``: GET of the health and version paths, bound to
  ``system:authenticated`` and ``system:unauthenticated``;
- ``system:monitoring``: GET of the metrics and health paths, bound to ``system:monitoring``;
- ``system:certificates.k8s.io:<signer>-approver`` for the signers ``legacy-unknown``,
  ``kubelet-serving``, ``kube-apiserver-client`` and ``kube-apiserver-client-kubelet`` (of
  ``kubernetes.io/``): ``approve`` on that signer, bound to nobody (an administrator binds
  them to who approves such requests).

Every object carries the ``kubernetes.io/bootstrapping: rbac-defaults`` label and the
``rbac.authorization.kubernetes.io/autoupdate: "true"`` annotation. :func:`ensure_bootstrap_policy`
creates those that are missing and, as kube-apiserver reconciles them at each start, adds to
existing ones the rules (or subjects) they lack, unless an administrator set the annotation to
``"false"``. Nothing is ever removed: rules and subjects added by hand stay.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from kstore.api.kinds.rbac import GROUP
from kstore.errors import AlreadyExists
from kstore.registry.interface import CreateOptions, Registry, RequestContext, UpdateOptions
from kstore.server.filters.rbac_escalation import covers

__all__ = ["bootstrap_cluster_role_bindings", "bootstrap_cluster_roles", "ensure_bootstrap_policy"]

_API_VERSION: Final = f"{GROUP}/v1"
_HEALTH: Final = ["/healthz", "/livez", "/readyz"]
_AUTOUPDATE: Final = "rbac.authorization.kubernetes.io/autoupdate"
_MANAGER: Final = "kstore-bootstrap"
#: The roles that may approve certificate requests for one of Kubernetes' signers (the
#: CertificateApproval admission plugin asks for ``approve`` on ``signers``); bound to nobody.
_SIGNER_APPROVERS: Final = (
    ("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
    ("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
    ("kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"),
    ("kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet"),
)


def _metadata(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {_AUTOUPDATE: "true"},
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
        *(_signer_approver(role, signer) for role, signer in _SIGNER_APPROVERS),
    ]


def _signer_approver(role: str, signer: str) -> dict[str, Any]:
    return _cluster_role(
        f"system:certificates.k8s.io:{role}",
        [
            {
                "verbs": ["approve"],
                "apiGroups": ["certificates.k8s.io"],
                "resources": ["signers"],
                "resourceNames": [signer],
            }
        ],
    )


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


def _reconciled(current: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any] | None:
    """``current`` with what ``expected`` adds (missing rules, or missing subjects), or None
    when nothing is missing or the object opts out with ``autoupdate: "false"``."""
    meta = current.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict) and annotations.get(_AUTOUPDATE) == "false":
        return None
    key = "rules" if "rules" in expected else "subjects"
    have = current.get(key)
    have_list = list(have) if isinstance(have, list) else []
    if key == "rules":
        # A rule is missing when the current rules do not cover it (as Kubernetes compares).
        missing = [r for r in expected[key] if covers(have_list, [r])]
    else:
        missing = [s for s in expected[key] if s not in have_list]
    if not missing:
        return None
    return {**current, key: [*have_list, *missing]}


def _reconcile_or_keep(current: dict[str, Any], *, expected: dict[str, Any]) -> dict[str, Any]:
    return _reconciled(current, expected) or current


def ensure_bootstrap_policy(registry: Registry) -> list[str]:
    """Create the bootstrap objects that do not exist yet, and add to existing ones (unless
    annotated ``rbac.authorization.kubernetes.io/autoupdate: "false"``) the rules or subjects
    they lack, as kube-apiserver reconciles them at start; the names of the objects created
    or changed (``clusterroles/<name>``, ``clusterrolebindings/<name>``)."""
    changed: list[str] = []
    ctx = RequestContext()
    scheme = registry.scheme
    for resource, objects in (
        ("clusterroles", bootstrap_cluster_roles()),
        ("clusterrolebindings", bootstrap_cluster_role_bindings()),
    ):
        store = registry.store(GROUP, resource)
        for obj in objects:
            name = obj["metadata"]["name"]
            expected = scheme.to_hub(obj)
            try:
                store.create(ctx, expected, CreateOptions(field_manager=_MANAGER))
            except AlreadyExists:
                if _reconciled(store.get(ctx, name), expected) is None:
                    continue
                store.update(
                    ctx,
                    name,
                    partial(_reconcile_or_keep, expected=expected),
                    UpdateOptions(field_manager=_MANAGER),
                )
            changed.append(f"{resource}/{name}")
    return changed
