"""admissionregistration.k8s.io/v1: ValidatingWebhookConfiguration,
MutatingWebhookConfiguration, ValidatingAdmissionPolicy (with a ``status`` subresource),
ValidatingAdmissionPolicyBinding, MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding
(v1 in Kubernetes v1.36; its v1beta1 is off by default there, and not served here); one
external version each, with the hub's shape, all
cluster-scoped, in the ``api-extensions`` category as Kubernetes serves them.

They are stored and validated here (:mod:`kstore.api.kinds._admission_validation`); calling
the webhooks and evaluating the policies is the admission chain's work, not the store's.

Defaults (Kubernetes' ``SetDefaults_*`` of admissionregistration/v1):

- a webhook: ``failurePolicy`` Fail, ``matchPolicy`` Equivalent, empty ``namespaceSelector``
  and ``objectSelector``, ``timeoutSeconds`` 10; a mutating one ``reinvocationPolicy`` Never;
  ``sideEffects`` and ``admissionReviewVersions`` have no default in v1;
- a rule: ``scope`` ``*``; a service reference: ``port`` 443;
- a policy (validating or mutating): ``failurePolicy`` Fail (a mutating one's
  ``reinvocationPolicy`` has no default); match resources (a policy's constraints, a binding's
  ``matchResources``): ``matchPolicy`` Equivalent and empty selectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._admission_validation import (
    create_options,
    update_options,
    validate_binding,
    validate_policy,
    validate_policy_update,
    validate_webhook_configuration,
)
from kstore.api.kinds._lists import list_definition
from kstore.api.kinds._mutating_policy_validation import (
    validate_mutating_binding,
    validate_mutating_policy,
)
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.errors import Cause

__all__ = [
    "DEFINITIONS",
    "GROUP",
    "MUTATING_ADMISSION_POLICY",
    "MUTATING_ADMISSION_POLICY_BINDING",
    "MUTATING_WEBHOOK_CONFIGURATION",
    "VALIDATING_ADMISSION_POLICY",
    "VALIDATING_ADMISSION_POLICY_BINDING",
    "VALIDATING_WEBHOOK_CONFIGURATION",
    "default_mutating_webhook_configuration",
    "default_validating_admission_policy",
    "default_validating_admission_policy_binding",
    "default_validating_webhook_configuration",
]

GROUP: Final = "admissionregistration.k8s.io"
_CATEGORIES: Final = ("api-extensions",)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _default_rules(rules: Any) -> None:
    # SetDefaults_Rule, on the rule inlined into each RuleWithOperations.
    for rule in _dicts(rules):
        if rule.get("scope") is None:
            rule["scope"] = "*"


def _default_match_resources(match: Any) -> None:
    if not isinstance(match, dict):
        return
    if match.get("matchPolicy") is None:
        match["matchPolicy"] = "Equivalent"
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            match[key] = {}
    _default_rules(match.get("resourceRules"))
    _default_rules(match.get("excludeResourceRules"))


def _default_webhooks(obj: Object, *, mutating: bool) -> None:
    for hook in _dicts(obj.get("webhooks")):
        if hook.get("failurePolicy") is None:
            hook["failurePolicy"] = "Fail"
        if hook.get("matchPolicy") is None:
            hook["matchPolicy"] = "Equivalent"
        for key in ("namespaceSelector", "objectSelector"):
            if hook.get(key) is None:
                hook[key] = {}
        if hook.get("timeoutSeconds") is None:
            hook["timeoutSeconds"] = 10
        if mutating and hook.get("reinvocationPolicy") is None:
            hook["reinvocationPolicy"] = "Never"
        _default_rules(hook.get("rules"))
        config = hook.get("clientConfig")
        service = config.get("service") if isinstance(config, dict) else None
        if isinstance(service, dict) and service.get("port") is None:
            service["port"] = 443


def default_validating_webhook_configuration(obj: Object) -> None:
    """``SetDefaults_ValidatingWebhook`` (and its rules and service), in place."""
    _default_webhooks(obj, mutating=False)


def default_mutating_webhook_configuration(obj: Object) -> None:
    """``SetDefaults_MutatingWebhook`` (and its rules and service), in place."""
    _default_webhooks(obj, mutating=True)


def default_validating_admission_policy(obj: Object) -> None:
    """``SetDefaults_ValidatingAdmissionPolicySpec`` and its match constraints', in place."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    _default_match_resources(spec.get("matchConstraints"))


def default_validating_admission_policy_binding(obj: Object) -> None:
    """``SetDefaults_MatchResources`` of the binding's ``matchResources``, in place."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _default_match_resources(spec.get("matchResources"))


def _validate_validating(obj: Mapping[str, Any]) -> list[Cause]:
    return validate_webhook_configuration(obj, create_options(), mutating=False)


def _validate_validating_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_webhook_configuration(new, update_options(new, old), mutating=False)


def _validate_mutating(obj: Mapping[str, Any]) -> list[Cause]:
    return validate_webhook_configuration(obj, create_options(), mutating=True)


def _validate_mutating_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_webhook_configuration(new, update_options(new, old), mutating=True)


def _validate_binding_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_binding(new)


VALIDATING_WEBHOOK_CONFIGURATION: Final = KindDefinition(
    group=GROUP,
    kind="ValidatingWebhookConfiguration",
    versions=(KindVersion(version="v1", default=default_validating_webhook_configuration),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="validatingwebhookconfigurations",
        singular="validatingwebhookconfiguration",
        namespaced=False,
        categories=_CATEGORIES,
    ),
    validate=_validate_validating,
    validate_update=_validate_validating_update,
    list_kind="ValidatingWebhookConfigurationList",
)

MUTATING_WEBHOOK_CONFIGURATION: Final = KindDefinition(
    group=GROUP,
    kind="MutatingWebhookConfiguration",
    versions=(KindVersion(version="v1", default=default_mutating_webhook_configuration),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="mutatingwebhookconfigurations",
        singular="mutatingwebhookconfiguration",
        namespaced=False,
        categories=_CATEGORIES,
    ),
    validate=_validate_mutating,
    validate_update=_validate_mutating_update,
    list_kind="MutatingWebhookConfigurationList",
)

VALIDATING_ADMISSION_POLICY: Final = KindDefinition(
    group=GROUP,
    kind="ValidatingAdmissionPolicy",
    versions=(KindVersion(version="v1", default=default_validating_admission_policy),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="validatingadmissionpolicies",
        singular="validatingadmissionpolicy",
        namespaced=False,
        categories=_CATEGORIES,
        subresources=("status",),
    ),
    validate=validate_policy,
    validate_update=validate_policy_update,
    list_kind="ValidatingAdmissionPolicyList",
)

VALIDATING_ADMISSION_POLICY_BINDING: Final = KindDefinition(
    group=GROUP,
    kind="ValidatingAdmissionPolicyBinding",
    versions=(KindVersion(version="v1", default=default_validating_admission_policy_binding),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="validatingadmissionpolicybindings",
        singular="validatingadmissionpolicybinding",
        namespaced=False,
        categories=_CATEGORIES,
    ),
    validate=validate_binding,
    validate_update=_validate_binding_update,
    list_kind="ValidatingAdmissionPolicyBindingList",
)


def _validate_mutating_policy_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_mutating_policy(new)


def _validate_mutating_binding_update(
    new: Mapping[str, Any], old: Mapping[str, Any]
) -> list[Cause]:
    return validate_mutating_binding(new)


MUTATING_ADMISSION_POLICY: Final = KindDefinition(
    group=GROUP,
    kind="MutatingAdmissionPolicy",
    # Kubernetes' SetDefaults of the spec are those of a ValidatingAdmissionPolicy's.
    versions=(KindVersion(version="v1", default=default_validating_admission_policy),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="mutatingadmissionpolicies",
        singular="mutatingadmissionpolicy",
        namespaced=False,
        categories=_CATEGORIES,
    ),
    validate=validate_mutating_policy,
    validate_update=_validate_mutating_policy_update,
    list_kind="MutatingAdmissionPolicyList",
)

MUTATING_ADMISSION_POLICY_BINDING: Final = KindDefinition(
    group=GROUP,
    kind="MutatingAdmissionPolicyBinding",
    versions=(KindVersion(version="v1", default=default_validating_admission_policy_binding),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="mutatingadmissionpolicybindings",
        singular="mutatingadmissionpolicybinding",
        namespaced=False,
        categories=_CATEGORIES,
    ),
    validate=validate_mutating_binding,
    validate_update=_validate_mutating_binding_update,
    list_kind="MutatingAdmissionPolicyBindingList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    VALIDATING_WEBHOOK_CONFIGURATION,
    list_definition(VALIDATING_WEBHOOK_CONFIGURATION),
    MUTATING_WEBHOOK_CONFIGURATION,
    list_definition(MUTATING_WEBHOOK_CONFIGURATION),
    VALIDATING_ADMISSION_POLICY,
    list_definition(VALIDATING_ADMISSION_POLICY),
    VALIDATING_ADMISSION_POLICY_BINDING,
    list_definition(VALIDATING_ADMISSION_POLICY_BINDING),
    MUTATING_ADMISSION_POLICY,
    list_definition(MUTATING_ADMISSION_POLICY),
    MUTATING_ADMISSION_POLICY_BINDING,
    list_definition(MUTATING_ADMISSION_POLICY_BINDING),
)
