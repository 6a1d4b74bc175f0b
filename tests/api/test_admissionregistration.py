"""admissionregistration.k8s.io/v1: the defaults of the webhook configurations, policies and
bindings, and their validation as Kubernetes' admissionregistration validation words it,
including the compile check of their CEL expressions."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds import builtin_scheme
from kstore.api.kinds._admission_validation import validate_policy_status
from kstore.api.kinds.admissionregistration import DEFINITIONS
from kstore.api.scheme import KindDefinition
from kstore.errors import Cause

SCHEME = builtin_scheme()
GROUP = "admissionregistration.k8s.io/v1"


def _hook(**fields: Any) -> dict[str, Any]:
    return {
        "name": "check.example.com",
        "clientConfig": {"service": {"namespace": "hooks", "name": "svc"}},
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"],
            }
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **fields,
    }


def _configuration(kind: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": GROUP,
        "kind": kind,
        "metadata": {"name": "hooks", "resourceVersion": "2"},
        "webhooks": list(hooks),
    }


def _policy(**spec: Any) -> dict[str, Any]:
    rules = [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"]}]
    rules[0]["resources"] = ["deployments"]
    return {
        "apiVersion": GROUP,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "replicas.example.com"},
        "spec": {
            "matchConstraints": {"resourceRules": rules},
            "validations": [{"expression": "object.spec.replicas <= 5"}],
            **spec,
        },
    }


def _binding(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": GROUP,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "replicas-binding"},
        "spec": {"policyName": "replicas.example.com", "validationActions": ["Deny"], **spec},
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _definition(obj: dict[str, Any]) -> KindDefinition:
    return next(d for d in DEFINITIONS if d.kind == obj["kind"])


def _validate(obj: dict[str, Any]) -> list[str]:
    check = _definition(obj).validate
    assert check is not None
    return _rendered(check(obj))


def _errors(obj: dict[str, Any]) -> list[str]:
    SCHEME.default(obj)
    return _validate(obj)


def _update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    SCHEME.default(new)
    SCHEME.default(old)
    check = _definition(new).validate_update
    assert check is not None
    return _rendered(check(new, old))


def test_webhook_defaults_as_v1_sets_them() -> None:
    validating = _configuration("ValidatingWebhookConfiguration", _hook())
    SCHEME.default(validating)
    hook = validating["webhooks"][0]
    assert hook["failurePolicy"] == "Fail"
    assert hook["matchPolicy"] == "Equivalent"
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["timeoutSeconds"] == 10
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443
    assert "reinvocationPolicy" not in hook
    mutating = _configuration("MutatingWebhookConfiguration", _hook(sideEffects=None))
    del mutating["webhooks"][0]["sideEffects"]
    del mutating["webhooks"][0]["admissionReviewVersions"]
    SCHEME.default(mutating)
    hook = mutating["webhooks"][0]
    assert hook["reinvocationPolicy"] == "Never"
    # v1 defaults neither side effects nor review versions: both are required.
    assert "sideEffects" not in hook and "admissionReviewVersions" not in hook
    assert _validate(mutating) == [
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
    ]


def test_a_valid_configuration_passes() -> None:
    assert _errors(_configuration("ValidatingWebhookConfiguration", _hook())) == []
    url_hook = _hook(clientConfig={"url": "https://hooks.example.com/check"})
    assert _errors(_configuration("MutatingWebhookConfiguration", url_hook)) == []


def test_webhook_fields_are_checked_with_kubernetes_messages() -> None:
    bad = _hook(
        name="check",
        failurePolicy="Sometimes",
        sideEffects="Some",
        timeoutSeconds=31,
        admissionReviewVersions=["v2", "v2"],
        clientConfig={},
        rules=[
            {
                "operations": ["CREATE", "*"],
                "apiGroups": ["*", "apps"],
                "apiVersions": [""],
                "resources": ["*", "pods"],
                "scope": "Everywhere",
            }
        ],
    )
    assert _errors(_configuration("ValidatingWebhookConfiguration", bad)) == [
        'webhooks[0].name: Invalid value: "check": should be a domain with at least three '
        "segments separated by dots",
        'webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: '
        "if '*' is present, must not specify other operations",
        'webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: '
        "if '*' is present, must not specify other API groups",
        "webhooks[0].rules[0].apiVersions[0]: Required value",
        'webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: '
        "if '*' is present, must not specify other resources without subresources",
        'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: '
        '"*", "Cluster", "Namespaced"',
        'webhooks[0].failurePolicy: Unsupported value: "Sometimes": supported values: '
        '"Fail", "Ignore"',
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: '
        '"None", "NoneOnDryRun"',
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 "
        "and 30 seconds",
        "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
        'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'webhooks[0].admissionReviewVersions: Invalid value: ["v2","v2"]: '
        "must include at least one of v1, v1beta1",
    ]


def test_webhook_names_and_match_conditions() -> None:
    conditions = [
        {"name": "ok", "expression": "object.metadata.name != ''"},
        {"name": "ok", "expression": "object.x =="},
        {"name": "", "expression": "params.x"},
    ]
    obj = _configuration(
        "MutatingWebhookConfiguration",
        _hook(matchConditions=conditions, reinvocationPolicy="Always"),
        _hook(),
    )
    errors = _errors(obj)
    assert errors[0] == (
        'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: '
        '"IfNeeded", "Never"'
    )
    assert errors[1].startswith(
        'webhooks[0].matchConditions[1].expression: Invalid value: "object.x ==": '
        "compilation failed: ERROR: <input>:1:12: Syntax error:"
    )
    assert errors[2] == 'webhooks[0].matchConditions[1].name: Duplicate value: "ok"'
    # Webhooks have no params: a reference to them does not compile.
    assert errors[3] == (
        'webhooks[0].matchConditions[2].expression: Invalid value: "params.x": '
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' "
        "(in container '')\n | params.x\n | ^"
    )
    assert errors[4:] == [
        "webhooks[0].matchConditions[2].name: Required value",
        'webhooks[1].name: Duplicate value: "check.example.com"',
    ]


def test_updates_keep_what_older_rules_allowed() -> None:
    old = _configuration("ValidatingWebhookConfiguration", _hook(sideEffects="Unknown"))
    new = copy.deepcopy(old)
    new["webhooks"][0]["timeoutSeconds"] = 5
    # Stored with side effects Unknown: an update may keep them.
    assert _update_errors(new, old) == []
    assert _errors(copy.deepcopy(new)) == [
        'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: '
        '"None", "NoneOnDryRun"'
    ]
    # Unchanged match conditions are not compiled again.
    stored = _configuration(
        "ValidatingWebhookConfiguration",
        _hook(matchConditions=[{"name": "a", "expression": "nope("}]),
    )
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert _update_errors(relabelled, stored) == []


def test_policy_defaults_and_a_valid_policy() -> None:
    policy = _policy()
    SCHEME.default(policy)
    assert policy["spec"]["failurePolicy"] == "Fail"
    constraints = policy["spec"]["matchConstraints"]
    assert constraints["matchPolicy"] == "Equivalent"
    assert constraints["namespaceSelector"] == {} and constraints["objectSelector"] == {}
    assert constraints["resourceRules"][0]["scope"] == "*"
    assert _errors(_policy()) == []
    with_params = _policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        variables=[{"name": "limit", "expression": "int(params.data.limit)"}],
        validations=[
            {
                "expression": "object.spec.replicas <= variables.limit",
                "messageExpression": "'at most ' + string(variables.limit)",
                "reason": "Forbidden",
            }
        ],
        auditAnnotations=[{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}],
        matchConditions=[{"name": "has-params", "expression": "params != null"}],
    )
    assert _errors(with_params) == []


def test_policy_validation_messages() -> None:
    policy = _policy(
        failurePolicy="Sometimes",
        paramKind={"apiVersion": "a/b/c", "kind": "Config_Map"},
        variables=[{"name": "in", "expression": "1"}],
        validations=[
            {
                "expression": "params.limit > 1 &&",
                "message": "two\nlines",
                "reason": "Teapot",
                "messageExpression": " ",
            }
        ],
        auditAnnotations=[
            {"key": "a", "valueExpression": "'x'"},
            {"key": "a", "valueExpression": ""},
        ],
    )
    policy["spec"]["matchConstraints"] = {"matchPolicy": "Exact"}
    errors = _errors(policy)
    assert errors[:4] == [
        'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
        'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should '
        "otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters "
        "or '-', start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.matchConstraints.resourceRules: Required value",
    ]
    assert (
        errors[4]
        == 'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier'
    )
    assert errors[5].startswith(
        'spec.validations[0].expression: Invalid value: "params.limit > 1 &&": '
        "compilation failed: ERROR: <input>:1:"
    )
    assert errors[6:] == [
        'spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified',
        'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain '
        "line breaks",
        'spec.validations[0].reason: Unsupported value: "Teapot": supported values: '
        '"Forbidden", "Invalid", "RequestEntityTooLarge"',
        "spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not "
        "specified",
        'spec.auditAnnotations[1].key: Duplicate value: "a"',
    ]
    empty = _policy(validations=[])
    assert _errors(empty) == [
        "spec.validations: Required value: validations or auditAnnotations must contain at "
        "least one item",
        "spec.auditAnnotations: Required value: validations or auditAnnotations must contain "
        "at least one item",
    ]


def test_policy_status_writes_check_warnings_and_conditions() -> None:
    status = {
        "typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]},
        "conditions": [{"type": "Ready", "status": "Maybe", "reason": "", "message": "m"}],
    }
    assert _rendered(validate_policy_status({"status": status}, {})) == [
        "status.typeChecking.expressionWarnings[0].warning: Required value",
        "status.typeChecking.expressionWarnings[0].fieldRef: Required value",
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: '
        '"False", "True", "Unknown"',
        "status.conditions[0].lastTransitionTime: Required value: must be set",
        "status.conditions[0].reason: Required value: must be set",
    ]


def test_binding_validation_messages() -> None:
    assert _errors(_binding()) == []
    by_selector = _binding(
        paramRef={"selector": {"matchLabels": {"app": "x"}}, "parameterNotFoundAction": "Allow"}
    )
    assert _errors(by_selector) == []
    bad = _binding(
        policyName="Not_A_Name",
        paramRef={"name": "a", "selector": {}, "parameterNotFoundAction": "Maybe"},
        matchResources={"matchPolicy": "Exact", "namespaceSelector": {}, "objectSelector": {}},
        validationActions=["Deny", "Warn", "Deny", "Log"],
    )
    errors = _errors(bad)
    assert errors[0].startswith('spec.policyName: Invalid value: "Not_A_Name": a lowercase RFC')
    assert errors[1:] == [
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
        "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
        'spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: '
        '"Deny", "Allow"',
        'spec.validationActions[2]: Duplicate value: "Deny"',
        'spec.validationActions[3]: Unsupported value: "Log": supported values: '
        '"Audit", "Deny", "Warn"',
        'spec.validationActions: Invalid value: ["Deny","Warn","Deny","Log"]: must '
        "not contain both Deny and Warn (repeating the same validation failure information in "
        "the API response and headers serves no purpose)",
    ]
    assert _errors(_binding(policyName="", validationActions=[], paramRef={})) == [
        "spec.policyName: Required value",
        "spec.paramRef: Required value: one of name or selector must be specified",
        "spec.paramRef.parameterNotFoundAction: Required value",
        "spec.validationActions: Required value: at least one validation action is required",
    ]
