"""kube-apiserver's admission plugins: their names, their order and which are on by default.

``--enable-admission-plugins`` and ``--disable-admission-plugins`` take kube-apiserver's plugin
names; :func:`resolve_plugins` turns them into the plugins that run, in kube-apiserver's fixed
order (the order of :data:`ORDERED_PLUGINS`, whatever order the flags give). A name that is not
one of kube-apiserver's is refused, as is a name both enabled and disabled.

Each plugin is a small module here with one job; :func:`install_plugins` adds the hooks of those
that run to a registry's admission chain, mutating hooks then validating hooks, each in order.
A plugin that takes a configuration (PodSecurity: :mod:`.podsecurity_config`) gets the one the
admission configuration file gives it (:mod:`.admission_config`), else Kubernetes' default.
The webhook plugins call the webhook configurations in force
(:mod:`kstore.registry.admission.webhooks`); ValidatingAdmissionPolicy is
:mod:`kstore.registry.admission.policy`, MutatingAdmissionPolicy
:mod:`kstore.registry.admission.mutating_policy`. Names kube-apiserver knows but kstore has no
work for (the node plugins, plugins behind feature gates that are off) are
accepted and do nothing. Namespace lifecycle is the stores' own check and always on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from kstore.errors import BadRequest
from kstore.registry.admission import mutating_policy, policy, webhooks
from kstore.registry.interface import AdmissionHook, Registry
from kstore.registry.plugins import (
    certificates,
    ingressclass,
    inuseprotection,
    limitranger,
    podsecurity,
    priority,
    resourcequota,
    runtimeclass,
    serviceaccount,
    storageclass,
    tolerationseconds,
)
from kstore.registry.plugins.podsecurity_config import parse_pod_security_configuration

__all__ = [
    "CONFIGURABLE_PLUGINS",
    "DEFAULT_ON_PLUGINS",
    "ORDERED_PLUGINS",
    "check_plugin_configurations",
    "install_plugins",
    "resolve_plugins",
]

#: Every plugin name kube-apiserver v1.36 knows, in the order its chain runs them.
ORDERED_PLUGINS: Final = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PodGroupProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "PodGroupWorkloadExists",
    "NodeDeclaredFeatureValidator",
    "JobValidation",
    "PodResizeValidator",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)

#: The plugins kube-apiserver v1.36 runs when no flag names them.
DEFAULT_ON_PLUGINS: Final = frozenset(
    {
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "DefaultStorageClass",
        "PersistentVolumeClaimResize",
        "DefaultTolerationSeconds",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
        "StorageObjectInUseProtection",
        "PodGroupProtection",
        "Priority",
        "TaintNodesByCondition",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodSecurity",
        "PodTopologyLabels",
        "MutatingAdmissionPolicy",
        "ValidatingAdmissionPolicy",
        "PodGroupWorkloadExists",
        "NodeDeclaredFeatureValidator",
        "JobValidation",
        "PodResizeValidator",
    }
)

#: A plugin's hooks for one registry: (mutating, validating), either may be None.
Hooks = tuple[AdmissionHook | None, AdmissionHook | None]

_INSTALLERS: Final[dict[str, Callable[[Registry], Hooks]]] = {
    "CertificateApproval": certificates.approval_hooks,
    "CertificateSigning": certificates.signing_hooks,
    "CertificateSubjectRestriction": certificates.subject_restriction_hooks,
    "DefaultIngressClass": ingressclass.hooks,
    "DefaultStorageClass": storageclass.default_hooks,
    "DefaultTolerationSeconds": tolerationseconds.hooks,
    "LimitRanger": limitranger.hooks,
    "MutatingAdmissionPolicy": mutating_policy.hooks,
    "MutatingAdmissionWebhook": webhooks.mutating_hooks,
    "PersistentVolumeClaimResize": storageclass.resize_hooks,
    "PodSecurity": podsecurity.hooks,
    "Priority": priority.hooks,
    "ResourceQuota": resourcequota.hooks,
    "RuntimeClass": runtimeclass.hooks,
    "ServiceAccount": serviceaccount.hooks,
    "StorageObjectInUseProtection": inuseprotection.hooks,
    "ValidatingAdmissionPolicy": policy.hooks,
    "ValidatingAdmissionWebhook": webhooks.validating_hooks,
}


#: The plugins that take a configuration (``--admission-control-config-file``): how it is
#: parsed, and the installer given the parsed configuration.
_CONFIGURED: Final[dict[str, tuple[Callable[[Any], Any], Callable[[Registry, Any], Hooks]]]] = {
    "PodSecurity": (parse_pod_security_configuration, podsecurity.hooks),
}
#: The plugins whose configuration kstore reads.
CONFIGURABLE_PLUGINS: Final = tuple(sorted(_CONFIGURED))


def check_plugin_configurations(configurations: Mapping[str, Any]) -> dict[str, Any]:
    """Each plugin's configuration parsed by its plugin; BadRequest for a plugin kstore
    configures not, or a configuration its plugin refuses."""
    parsed = {}
    for name, configuration in configurations.items():
        if name not in _CONFIGURED:
            raise BadRequest(f'kstore does not read the configuration of admission plugin "{name}"')
        parsed[name] = _CONFIGURED[name][0](configuration)
    return parsed


def resolve_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> tuple[str, ...]:
    """The plugins that run, in order: the default-on set plus ``enable`` less ``disable``.
    BadRequest for an unknown name or one in both lists (kube-apiserver's messages)."""
    enabled = [n for n in enable if n]
    disabled = [n for n in disable if n]
    known = set(ORDERED_PLUGINS)
    for flag, names in (("enable", enabled), ("disable", disabled)):
        for name in names:
            if name not in known:
                raise BadRequest(f'{flag}-admission-plugins plugin "{name}" is unknown')
    both = sorted(set(enabled) & set(disabled))
    if both:
        raise BadRequest(
            f"{both} in enable-admission-plugins and disable-admission-plugins overlapped"
        )
    on = (DEFAULT_ON_PLUGINS | set(enabled)) - set(disabled)
    return tuple(n for n in ORDERED_PLUGINS if n in on)


def install_plugins(
    registry: Registry, names: Iterable[str], configurations: Mapping[str, Any] | None = None
) -> None:
    """Add the hooks of the plugins ``names`` (resolved, in order) to ``registry``: every
    mutating hook before every validating one, as kube-apiserver's chain runs them; a plugin
    named in ``configurations`` (plugin name -> configuration object, as the admission
    configuration file gives them) is built with its configuration. The
    plugins only read through the stores (consistent reads the watch cache answers), which
    is local where writes may run on the event loop (LMDB), so they are added as
    non-blocking, except the webhook plugins, which block while any webhook is configured.
    (ServiceAccount may wait up to about 1.5 s for a namespace's default account in the
    moment between the namespace's creation and its controller's making the account: on the
    loop it raises NeedsWorkerThread instead, and the write runs again on a worker thread,
    which waits.) Their validating hooks only read the object, so they are given it
    uncopied."""
    parsed = check_plugin_configurations(configurations or {})
    hooks = [
        _CONFIGURED[n][1](registry, parsed[n]) if n in parsed else _INSTALLERS[n](registry)
        for n in names
        if n in _INSTALLERS
    ]
    for mutating, _ in hooks:
        if mutating is not None:
            registry.add_admission(mutating=mutating, blocking=_blocking(mutating))
    for _, validating in hooks:
        if validating is not None:
            registry.add_admission(
                validating=validating, blocking=_blocking(validating), reads_only=True
            )


def _blocking(hook: AdmissionHook) -> bool | Callable[[], bool]:
    """A hook bound to an object with a ``blocking()`` probe (the webhook plugins) may block
    while the probe says so; the other plugins' hooks never block."""
    probe = getattr(getattr(hook, "__self__", None), "blocking", None)
    return probe if callable(probe) else False
