"""admissionregistration.k8s.io through the generic store: cluster scope, generation, the
policy's status subresource, and updates that must name their resourceVersion."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, UpdateOptions
from kstore.registry.registry import StoreRegistry
from tests.registry.objects import changed, ctx, hub, replace_with

GROUP = "admissionregistration.k8s.io"
V1 = f"{GROUP}/v1"
STATUS = UpdateOptions(subresource="status")


def _webhook_configuration() -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hooks"},
        "webhooks": [
            {
                "name": "check.example.com",
                "clientConfig": {"url": "https://hooks.example.com/check"},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }


def _policy() -> dict[str, Any]:
    rule = {"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"]}
    rule["resources"] = ["deployments"]
    return {
        "apiVersion": V1,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "replicas"},
        "spec": {
            "matchConstraints": {"resourceRules": [rule]},
            "validations": [{"expression": "object.spec.replicas <= 5"}],
        },
        "status": {"observedGeneration": 9},
    }


def test_webhook_configurations_are_cluster_scoped_and_track_generation(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store(GROUP, "validatingwebhookconfigurations")
    created = store.create(ctx("", V1), hub(scheme, _webhook_configuration()), CreateOptions())
    obj = created.object
    assert "namespace" not in obj["metadata"]
    assert obj["metadata"]["generation"] == 1
    assert obj["webhooks"][0]["timeoutSeconds"] == 10
    labelled = store.update(
        ctx("", V1),
        "hooks",
        changed(lambda o: o["metadata"].update(labels={"a": "b"})),
        UpdateOptions(),
    ).object
    assert labelled["metadata"]["generation"] == 1
    retimed = store.update(
        ctx("", V1),
        "hooks",
        changed(lambda o: o["webhooks"][0].update(timeoutSeconds=5)),
        UpdateOptions(),
    ).object
    assert retimed["metadata"]["generation"] == 2
    # Kubernetes' strategy allows no unconditional update.
    body = hub(scheme, _webhook_configuration())
    with pytest.raises(Invalid) as caught:
        store.update(ctx("", V1), "hooks", replace_with(body), UpdateOptions())
    assert "metadata.resourceVersion: Invalid value: 0: must be specified for an update" in (
        caught.value.message
    )


def test_an_invalid_webhook_is_refused(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store(GROUP, "mutatingwebhookconfigurations")
    body = _webhook_configuration()
    body["kind"] = "MutatingWebhookConfiguration"
    body["webhooks"][0]["clientConfig"]["url"] = "http://hooks.example.com"
    with pytest.raises(Invalid) as caught:
        store.create(ctx("", V1), hub(scheme, body), CreateOptions())
    assert caught.value.message == (
        'MutatingWebhookConfiguration.admissionregistration.k8s.io "hooks" is invalid: '
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL "
        "scheme; desired format: https://host[/path]"
    )


def test_policy_status_is_a_subresource(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store(GROUP, "validatingadmissionpolicies")
    created = store.create(ctx("", V1), hub(scheme, _policy()), CreateOptions()).object
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {}
    assert created["spec"]["failurePolicy"] == "Fail"
    warning = {"fieldRef": "spec.validations[0].expression", "warning": "no such field"}
    written = store.update(
        ctx("", V1),
        "replicas",
        changed(
            lambda o: o.update(
                status={"observedGeneration": 1, "typeChecking": {"expressionWarnings": [warning]}},
                spec={**o["spec"], "failurePolicy": "Ignore"},
            )
        ),
        STATUS,
    ).object
    assert written["status"]["typeChecking"]["expressionWarnings"] == [warning]
    assert written["spec"]["failurePolicy"] == "Fail"
    assert written["metadata"]["generation"] == 1
    spec_write = store.update(
        ctx("", V1),
        "replicas",
        changed(lambda o: o.update(status={}, spec={**o["spec"], "failurePolicy": "Ignore"})),
        UpdateOptions(),
    ).object
    assert spec_write["metadata"]["generation"] == 2
    assert spec_write["status"]["observedGeneration"] == 1
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("", V1),
            "replicas",
            changed(lambda o: o.update(status={"conditions": [{"type": "Ready"}]})),
            STATUS,
        )
    assert 'status.conditions[0].status: Unsupported value: ""' in caught.value.message


def test_binding_generation_follows_its_spec(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store(GROUP, "validatingadmissionpolicybindings")
    body = {
        "apiVersion": V1,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "replicas"},
        "spec": {"policyName": "replicas", "validationActions": ["Deny"]},
    }
    created = store.create(ctx("", V1), hub(scheme, body), CreateOptions()).object
    assert created["metadata"]["generation"] == 1
    updated = store.update(
        ctx("", V1),
        "replicas",
        changed(lambda o: o["spec"].update(validationActions=["Warn", "Audit"])),
        UpdateOptions(),
    ).object
    assert updated["metadata"]["generation"] == 2
    with pytest.raises(Invalid) as caught:
        store.update(
            ctx("", V1),
            "replicas",
            changed(lambda o: o["spec"].update(validationActions=["Deny", "Warn"])),
            UpdateOptions(),
        )
    assert "must not contain both Deny and Warn" in caught.value.message
