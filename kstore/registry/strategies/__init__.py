"""Per-kind strategies of the generic store (see :mod:`kstore.registry.strategies.base`).

:func:`strategy_for` picks the strategy of a kind: Kubernetes' own for the built-in kinds
kstore serves, the custom-resource behaviour (:class:`Strategy`) for every other kind. An
embedder may register its own factory per (group, kind) through the registry config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kstore.api.scheme import KindDefinition
from kstore.registry.strategies.admissionregistration import (
    AdmissionObjectStrategy,
    ValidatingAdmissionPolicyStrategy,
)
from kstore.registry.strategies.apiextensions import CustomResourceDefinitionStrategy
from kstore.registry.strategies.apiregistration import APIServiceStrategy
from kstore.registry.strategies.apps import DeploymentStrategy
from kstore.registry.strategies.base import BuiltinStrategy, Strategy
from kstore.registry.strategies.batch import CronJobStrategy, JobStrategy
from kstore.registry.strategies.certificates import CertificateSigningRequestStrategy
from kstore.registry.strategies.coordination import LeaseStrategy
from kstore.registry.strategies.core import (
    ConfigMapStrategy,
    EventStrategy,
    NamespaceStrategy,
    SecretStrategy,
    ServiceAccountStrategy,
    ServiceStrategy,
)
from kstore.registry.strategies.daemonset import DaemonSetStrategy
from kstore.registry.strategies.endpointslice import EndpointSliceStrategy
from kstore.registry.strategies.horizontalpodautoscaler import HorizontalPodAutoscalerStrategy
from kstore.registry.strategies.networking import IngressClassStrategy, IngressStrategy
from kstore.registry.strategies.networkpolicy import NetworkPolicyStrategy
from kstore.registry.strategies.node import NodeStrategy
from kstore.registry.strategies.persistentvolume import PersistentVolumeStrategy
from kstore.registry.strategies.persistentvolumeclaim import PersistentVolumeClaimStrategy
from kstore.registry.strategies.pod import PodStrategy
from kstore.registry.strategies.poddisruptionbudget import PodDisruptionBudgetStrategy
from kstore.registry.strategies.podtemplate import PodTemplateStrategy
from kstore.registry.strategies.priorityclass import PriorityClassStrategy
from kstore.registry.strategies.replicaset import ReplicaSetStrategy
from kstore.registry.strategies.replicationcontroller import ReplicationControllerStrategy
from kstore.registry.strategies.resourcequota import ResourceQuotaStrategy
from kstore.registry.strategies.runtimeclass import RuntimeClassStrategy
from kstore.registry.strategies.servicecidr import ServiceCIDRStrategy
from kstore.registry.strategies.statefulset import StatefulSetStrategy
from kstore.registry.strategies.storage import (
    CSIDriverStrategy,
    CSINodeStrategy,
    StorageClassStrategy,
    VolumeAttachmentStrategy,
)

__all__ = ["BuiltinStrategy", "Strategy", "StrategyFactory", "strategy_for"]

#: Builds the strategy of one kind; gets the registry's event TTL (seconds, 0 = none).
StrategyFactory = Callable[[KindDefinition, int], Strategy]

_BUILTIN: dict[tuple[str, str], StrategyFactory] = {
    ("", "Namespace"): lambda d, ttl: NamespaceStrategy(d),
    ("", "Pod"): lambda d, ttl: PodStrategy(d),
    ("", "Service"): lambda d, ttl: ServiceStrategy(d),
    ("", "Secret"): lambda d, ttl: SecretStrategy(d),
    ("", "ConfigMap"): lambda d, ttl: ConfigMapStrategy(d),
    ("", "ServiceAccount"): lambda d, ttl: ServiceAccountStrategy(d),
    ("", "Event"): lambda d, ttl: EventStrategy(d, ttl_seconds=ttl),
    ("", "PersistentVolumeClaim"): lambda d, ttl: PersistentVolumeClaimStrategy(d),
    ("", "PersistentVolume"): lambda d, ttl: PersistentVolumeStrategy(d),
    # Endpoints and LimitRanges carry no metadata.generation and reset nothing in Kubernetes.
    ("", "Endpoints"): lambda d, ttl: BuiltinStrategy(d),
    ("", "LimitRange"): lambda d, ttl: BuiltinStrategy(d),
    ("", "ResourceQuota"): lambda d, ttl: ResourceQuotaStrategy(d),
    ("", "Node"): lambda d, ttl: NodeStrategy(d),
    ("", "PodTemplate"): lambda d, ttl: PodTemplateStrategy(d),
    ("", "ReplicationController"): lambda d, ttl: ReplicationControllerStrategy(d),
    ("apps", "DaemonSet"): lambda d, ttl: DaemonSetStrategy(d),
    ("apps", "Deployment"): lambda d, ttl: DeploymentStrategy(d),
    ("apps", "ReplicaSet"): lambda d, ttl: ReplicaSetStrategy(d),
    ("apps", "StatefulSet"): lambda d, ttl: StatefulSetStrategy(d),
    # Kubernetes' ControllerRevision strategy changes nothing and keeps no generation.
    ("apps", "ControllerRevision"): lambda d, ttl: BuiltinStrategy(d),
    ("autoscaling", "HorizontalPodAutoscaler"): lambda d, ttl: HorizontalPodAutoscalerStrategy(d),
    ("batch", "Job"): lambda d, ttl: JobStrategy(d),
    ("batch", "CronJob"): lambda d, ttl: CronJobStrategy(d),
    ("coordination.k8s.io", "Lease"): lambda d, ttl: LeaseStrategy(d),
    ("discovery.k8s.io", "EndpointSlice"): lambda d, ttl: EndpointSliceStrategy(d),
    ("policy", "PodDisruptionBudget"): lambda d, ttl: PodDisruptionBudgetStrategy(d),
    ("networking.k8s.io", "Ingress"): lambda d, ttl: IngressStrategy(d),
    ("networking.k8s.io", "IngressClass"): lambda d, ttl: IngressClassStrategy(d),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): (
        lambda d, ttl: AdmissionObjectStrategy(d)
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): (
        lambda d, ttl: AdmissionObjectStrategy(d)
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): (
        lambda d, ttl: ValidatingAdmissionPolicyStrategy(d)
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): (
        lambda d, ttl: AdmissionObjectStrategy(d)
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): (
        lambda d, ttl: AdmissionObjectStrategy(d)
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): (
        lambda d, ttl: AdmissionObjectStrategy(d)
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): (
        lambda d, ttl: CertificateSigningRequestStrategy(d)
    ),
    # Kubernetes' IPAddress strategy changes nothing and keeps no generation.
    ("networking.k8s.io", "IPAddress"): lambda d, ttl: BuiltinStrategy(d),
    ("networking.k8s.io", "ServiceCIDR"): lambda d, ttl: ServiceCIDRStrategy(d),
    ("storage.k8s.io", "StorageClass"): lambda d, ttl: StorageClassStrategy(d),
    ("storage.k8s.io", "CSIDriver"): lambda d, ttl: CSIDriverStrategy(d),
    ("storage.k8s.io", "CSINode"): lambda d, ttl: CSINodeStrategy(d),
    ("storage.k8s.io", "VolumeAttachment"): lambda d, ttl: VolumeAttachmentStrategy(d),
    ("networking.k8s.io", "NetworkPolicy"): lambda d, ttl: NetworkPolicyStrategy(d),
    ("node.k8s.io", "RuntimeClass"): lambda d, ttl: RuntimeClassStrategy(d),
    ("scheduling.k8s.io", "PriorityClass"): lambda d, ttl: PriorityClassStrategy(d),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        lambda d, ttl: CustomResourceDefinitionStrategy(d)
    ),
    ("apiregistration.k8s.io", "APIService"): lambda d, ttl: APIServiceStrategy(d),
    # RBAC objects carry no metadata.generation in Kubernetes.
    ("rbac.authorization.k8s.io", "Role"): lambda d, ttl: BuiltinStrategy(d),
    ("rbac.authorization.k8s.io", "ClusterRole"): lambda d, ttl: BuiltinStrategy(d),
    ("rbac.authorization.k8s.io", "RoleBinding"): lambda d, ttl: BuiltinStrategy(d),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): lambda d, ttl: BuiltinStrategy(d),
}


def strategy_for(
    definition: KindDefinition,
    *,
    event_ttl_seconds: int,
    overrides: Mapping[tuple[str, str], StrategyFactory] | None = None,
) -> Strategy:
    """The strategy of ``definition``: an override, a built-in one, or the custom default."""
    key = (definition.group, definition.kind)
    factory = (overrides or {}).get(key) or _BUILTIN.get(key)
    if factory is None:
        return Strategy(definition)
    return factory(definition, event_ttl_seconds)
