"""Where Kubernetes keeps each resource in etcd: the resource prefix of a group/resource.

kube-apiserver stores a built-in resource under its lower-case plural name
(``/registry/deployments/<ns>/<name>``, ``/registry/leases/...``), with a few historical
exceptions kept for compatibility (Services under ``services/specs``, Endpoints under
``services/endpoints``, Nodes under ``minions``, ReplicationControllers under ``controllers``,
Ingresses under ``ingress``). Resources of the extension API servers (CustomResourceDefinitions,
APIServices) and custom resources keep their group: ``/registry/<group>/<resource>/...``.

Using these prefixes is what lets kstore and kube-apiserver read each other's etcd.
"""

from __future__ import annotations

__all__ = ["BUILTIN_GROUPS", "kubernetes_resource_prefix"]

#: API groups whose resources kube-apiserver itself stores (without the group in the key).
BUILTIN_GROUPS = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apps",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "extensions",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)

# Prefixes that differ from the resource name, kept by Kubernetes since before API groups.
_EXCEPTIONS = {
    ("", "services"): "services/specs",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "replicationcontrollers"): "controllers",
    ("networking.k8s.io", "ingresses"): "ingress",
    ("extensions", "ingresses"): "ingress",
}


def kubernetes_resource_prefix(group: str, resource: str) -> str:
    """The resource prefix (without the etcd prefix) Kubernetes stores ``group/resource``
    under: ``("", "pods")`` -> ``/pods``, ``("apps", "deployments")`` -> ``/deployments``,
    ``("", "services")`` -> ``/services/specs``, ``("example.com", "widgets")`` ->
    ``/example.com/widgets``."""
    resource = resource.lower()
    if not resource or "/" in resource:
        raise ValueError(f"invalid resource name {resource!r}")
    exception = _EXCEPTIONS.get((group, resource))
    if exception is not None:
        return "/" + exception
    if group in BUILTIN_GROUPS:
        return "/" + resource
    return f"/{group}/{resource}"
