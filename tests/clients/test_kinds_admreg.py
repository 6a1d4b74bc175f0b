"""admissionregistration.k8s.io/v1 with real clients, on LMDB and on etcd: kubectl applies a
webhook configuration, a policy and its binding server-side as install bundles ship them, gets
them (tables, ``-o wide``, the ``api-extensions`` category), sees validation refuse a bad
webhook and an uncompilable expression, and deletes them; the Python client's
AdmissionregistrationV1Api does the same CRUD with its typed models. certificates.k8s.io/v1:
kubectl applies CertificateSigningRequests, approves and denies them (``kubectl certificate``,
through the approval subresource); the Python client writes approval and status."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl
from tests.csr_pem import b64, certificate_pem, csr_pem

_WEBHOOKS = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {name}
webhooks:
- name: validate.example.com
  clientConfig:
    service: {{namespace: hooks, name: webhook, path: /validate}}
  rules:
  - operations: [CREATE, UPDATE]
    apiGroups: [apps]
    apiVersions: [v1]
    resources: [deployments]
  sideEffects: None
  admissionReviewVersions: [v1]
  matchConditions:
  - name: not-system
    expression: "!object.metadata.name.startsWith('system-')"
"""

_MUTATING = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: {name}
webhooks:
- name: mutate.example.com
  clientConfig:
    url: https://hooks.example.com/mutate
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
- name: second.example.com
  clientConfig:
    url: https://hooks.example.com/second
  sideEffects: None
  admissionReviewVersions: [v1]
"""

_POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: {name}
spec:
  paramKind: {{apiVersion: v1, kind: ConfigMap}}
  matchConstraints:
    resourceRules:
    - operations: [CREATE, UPDATE]
      apiGroups: [apps]
      apiVersions: [v1]
      resources: [deployments]
  validations:
  - expression: "{expression}"
    message: too many replicas
"""

_BINDING = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: {name}
spec:
  policyName: {policy}
  paramRef: {{name: limits, namespace: default, parameterNotFoundAction: Deny}}
  validationActions: [Deny, Audit]
"""


def _get(k: Kubectl, *args: str) -> Any:
    return json.loads(k.ok("get", *args, "-o", "json"))


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_kubectl_applies_gets_and_deletes_webhook_configurations(k: Kubectl) -> None:
    name = f"{k.namespace}-hooks"
    k.write("vwc.yaml", _WEBHOOKS.format(name=name))
    k.write("mwc.yaml", _MUTATING.format(name=name))
    applied = k.ok("apply", "--server-side", "-f", "vwc.yaml", "-f", "mwc.yaml")
    assert applied.splitlines() == [
        f"validatingwebhookconfiguration.admissionregistration.k8s.io/{name} serverside-applied",
        f"mutatingwebhookconfiguration.admissionregistration.k8s.io/{name} serverside-applied",
    ]
    hook = _get(k, "validatingwebhookconfiguration", name)["webhooks"][0]
    assert hook["failurePolicy"] == "Fail"
    assert hook["matchPolicy"] == "Equivalent"
    assert hook["timeoutSeconds"] == 10
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443
    mutating = _get(k, "mutatingwebhookconfiguration", name)
    assert [h["reinvocationPolicy"] for h in mutating["webhooks"]] == ["Never", "Never"]
    rows = _rows(k.ok("get", "validatingwebhookconfigurations", name))
    assert rows[0] == ["NAME", "WEBHOOKS", "AGE"]
    assert rows[1][:2] == [name, "1"]
    wide = _rows(k.ok("get", "mutatingwebhookconfiguration", name, "-o", "wide"))
    assert wide[0] == ["NAME", "WEBHOOKS", "AGE"]
    assert wide[1][:2] == [name, "2"]
    # A re-apply that changes a webhook merges by name and bumps the generation.
    k.write("mwc.yaml", _MUTATING.format(name=name).replace("NoneOnDryRun", "None"))
    k.ok("apply", "--server-side", "-f", "mwc.yaml")
    mutating = _get(k, "mutatingwebhookconfiguration", name)
    assert mutating["metadata"]["generation"] == 2
    assert [h["sideEffects"] for h in mutating["webhooks"]] == ["None", "None"]
    listed = k.ok("get", "api-extensions", "-o", "name").split()
    assert f"validatingwebhookconfiguration.admissionregistration.k8s.io/{name}" in listed
    assert k.ok("delete", "-f", "vwc.yaml", "-f", "mwc.yaml").splitlines() == [
        f'validatingwebhookconfiguration.admissionregistration.k8s.io "{name}" deleted',
        f'mutatingwebhookconfiguration.admissionregistration.k8s.io "{name}" deleted',
    ]


def test_kubectl_refuses_an_invalid_webhook(k: Kubectl) -> None:
    name = f"{k.namespace}-bad"
    manifest = _WEBHOOKS.format(name=name).replace("sideEffects: None", "sideEffects: Some")
    k.write("bad.yaml", manifest.replace("validate.example.com", "validate"))
    result = k.fails("apply", "--server-side", "-f", "bad.yaml")
    assert result.stderr.startswith(
        f'The ValidatingWebhookConfiguration "{name}" is invalid: \n* webhooks[0].name: '
    )
    assert (
        '* webhooks[0].name: Invalid value: "validate": should be a domain with at least three '
        "segments separated by dots" in result.stderr
    )
    assert (
        '* webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
        '"NoneOnDryRun"' in result.stderr
    )


def test_kubectl_applies_a_policy_and_its_binding(k: Kubectl) -> None:
    policy = f"{k.namespace}-replicas"
    k.write("vap.yaml", _POLICY.format(name=policy, expression="object.spec.replicas <= 5"))
    k.write("vapb.yaml", _BINDING.format(name=policy, policy=policy))
    k.ok("apply", "--server-side", "-f", "vap.yaml", "-f", "vapb.yaml")
    stored = _get(k, "validatingadmissionpolicy", policy)
    assert stored["spec"]["failurePolicy"] == "Fail"
    assert stored["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert stored["metadata"]["generation"] == 1
    rows = _rows(k.ok("get", "validatingadmissionpolicies", policy, "-o", "wide"))
    assert rows[0] == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert rows[1][:3] == [policy, "1", "v1/ConfigMap"]
    rows = _rows(k.ok("get", "validatingadmissionpolicybindings", policy))
    assert rows[0] == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert rows[1][:3] == [policy, policy, "default/limits"]
    # The expression is compiled when the policy is written.
    k.write("vap.yaml", _POLICY.format(name=policy, expression="object.spec.replicas <="))
    result = k.fails("apply", "--server-side", "-f", "vap.yaml")
    assert (
        'spec.validations[0].expression: Invalid value: "object.spec.replicas <=": '
        "compilation failed: ERROR: <input>:1:24: Syntax error:" in result.stderr
    )
    k.ok("delete", "-f", "vapb.yaml", "-f", "vap.yaml")
    assert k.fails("get", "validatingadmissionpolicy", policy).stderr.startswith(
        "Error from server (NotFound)"
    )


@pytest.fixture(scope="module")
def admission(api_client: client.ApiClient) -> client.AdmissionregistrationV1Api:
    return client.AdmissionregistrationV1Api(api_client)


def test_python_client_webhook_configuration_crud(
    admission: client.AdmissionregistrationV1Api, namespace: str
) -> None:
    name = f"{namespace}-py"
    hook = client.V1ValidatingWebhook(
        name="py.example.com",
        client_config=client.AdmissionregistrationV1WebhookClientConfig(
            url="https://hooks.example.com/py"
        ),
        side_effects="None",
        admission_review_versions=["v1"],
        rules=[
            client.V1RuleWithOperations(
                operations=["CREATE"], api_groups=[""], api_versions=["v1"], resources=["pods"]
            )
        ],
    )
    body = client.V1ValidatingWebhookConfiguration(
        metadata=client.V1ObjectMeta(name=name), webhooks=[hook]
    )
    created = admission.create_validating_webhook_configuration(body)
    assert created.metadata.generation == 1
    assert created.webhooks[0].timeout_seconds == 10
    assert created.webhooks[0].rules[0].scope == "*"
    listed = admission.list_validating_webhook_configuration()
    assert name in [item.metadata.name for item in listed.items]
    patched = admission.patch_validating_webhook_configuration(
        name, {"webhooks": [{"name": "py.example.com", "timeoutSeconds": 3}]}
    )
    assert patched.webhooks[0].timeout_seconds == 3
    assert patched.webhooks[0].side_effects == "None"
    with pytest.raises(ApiException) as invalid:
        admission.patch_validating_webhook_configuration(
            name, {"webhooks": [{"name": "py.example.com", "timeoutSeconds": 0}]}
        )
    assert invalid.value.status == 422
    assert (
        "the timeout value must be between 1 and 30 seconds"
        in json.loads(invalid.value.body)["message"]
    )
    admission.delete_validating_webhook_configuration(name)
    with pytest.raises(ApiException) as gone:
        admission.read_validating_webhook_configuration(name)
    assert gone.value.status == 404


def test_python_client_policy_status_and_binding(
    admission: client.AdmissionregistrationV1Api, namespace: str
) -> None:
    name = f"{namespace}-policy"
    policy = client.V1ValidatingAdmissionPolicy(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ValidatingAdmissionPolicySpec(
            match_constraints=client.V1MatchResources(
                resource_rules=[
                    client.V1NamedRuleWithOperations(
                        operations=["CREATE"],
                        api_groups=["apps"],
                        api_versions=["v1"],
                        resources=["deployments"],
                    )
                ]
            ),
            validations=[client.V1Validation(expression="object.spec.replicas <= 5")],
        ),
    )
    created = admission.create_validating_admission_policy(policy)
    assert created.spec.failure_policy == "Fail"
    assert created.spec.match_constraints.match_policy == "Equivalent"
    # The policy plugin's status writer records the generation it type-checked, as
    # kube-apiserver's does; a status written over it starts from that version.
    deadline = time.monotonic() + 5
    while created.status is None or created.status.observed_generation != 1:
        assert time.monotonic() < deadline, created.status
        time.sleep(0.05)
        created = admission.read_validating_admission_policy_status(name)
    created.status = client.V1ValidatingAdmissionPolicyStatus(
        observed_generation=1,
        type_checking=client.V1TypeChecking(
            expression_warnings=[
                client.V1ExpressionWarning(
                    field_ref="spec.validations[0].expression", warning="unknown field"
                )
            ]
        ),
    )
    written = admission.replace_validating_admission_policy_status(name, created)
    assert written.status.type_checking.expression_warnings[0].warning == "unknown field"
    assert admission.read_validating_admission_policy_status(name).status.observed_generation == 1
    binding = client.V1ValidatingAdmissionPolicyBinding(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1ValidatingAdmissionPolicyBindingSpec(
            policy_name=name, validation_actions=["Warn"]
        ),
    )
    assert admission.create_validating_admission_policy_binding(binding).spec.policy_name == name
    admission.delete_validating_admission_policy_binding(name)
    admission.delete_validating_admission_policy(name)
    assert name not in [
        item.metadata.name for item in admission.list_validating_admission_policy().items
    ]


# ------------------------------------------------------------------- certificates.k8s.io/v1

_CSR = """\
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: {name}
spec:
  request: {request}
  signerName: example.com/signer
  expirationSeconds: 86400
  usages: [client auth]
"""


def test_kubectl_certificate_approve_and_deny(k: Kubectl) -> None:
    approved, denied = f"{k.namespace}-approved", f"{k.namespace}-denied"
    for name in (approved, denied):
        k.write(f"{name}.yaml", _CSR.format(name=name, request=b64(csr_pem(name))))
        assert k.ok("apply", "--server-side", "-f", f"{name}.yaml").strip() == (
            f"certificatesigningrequest.certificates.k8s.io/{name} serverside-applied"
        )
    rows = _rows(k.ok("get", "csr", approved, "-o", "wide"))
    assert rows[0] == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    # The requestor column is the requesting user's name (none for anonymous requests).
    assert rows[1][2] == "example.com/signer"
    assert rows[1][-2:] == ["24h", "Pending"]
    requestor = _get(k, "csr", approved)["spec"].get("username", "")
    assert k.ok("certificate", "approve", approved).strip() == (
        f"certificatesigningrequest.certificates.k8s.io/{approved} approved"
    )
    assert k.ok("certificate", "deny", denied).strip() == (
        f"certificatesigningrequest.certificates.k8s.io/{denied} denied"
    )
    condition = _get(k, "csr", approved)["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Approved",
        "True",
        "KubectlApprove",
    )
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    rows = _rows(k.ok("get", "csr", approved, denied))
    assert [row[-1] for row in rows[1:]] == ["Approved", "Denied"]
    assert _get(k, "csr", approved)["spec"].get("username", "") == requestor
    # kubectl refuses a second decision itself (the server's rule is checked below).
    assert f'"{approved}" is already Approved' in k.fails("certificate", "deny", approved).stderr
    k.write("bad-csr.yaml", _CSR.format(name=f"{k.namespace}-bad", request=b64(b"nope")))
    bad = k.fails("apply", "--server-side", "-f", "bad-csr.yaml")
    assert "spec.request: Invalid value: " in bad.stderr
    assert "PEM block type must be CERTIFICATE REQUEST" in bad.stderr
    k.ok("delete", "csr", approved, denied)


@pytest.fixture(scope="module")
def certificates(api_client: client.ApiClient) -> client.CertificatesV1Api:
    return client.CertificatesV1Api(api_client)


def test_python_client_csr_approval_and_status(
    certificates: client.CertificatesV1Api, namespace: str
) -> None:
    name = f"{namespace}-py"
    body = client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CertificateSigningRequestSpec(
            request=b64(csr_pem(name)), signer_name="example.com/signer", usages=["client auth"]
        ),
    )
    created = certificates.create_certificate_signing_request(body)
    assert created.status.conditions is None
    created.status = client.V1CertificateSigningRequestStatus(
        conditions=[
            client.V1CertificateSigningRequestCondition(
                type="Approved", status="True", reason="ByPython"
            )
        ]
    )
    with pytest.raises(ApiException) as refused:
        certificates.replace_certificate_signing_request_status(name, created)
    assert refused.value.status == 422
    approved = certificates.replace_certificate_signing_request_approval(name, created)
    assert approved.status.conditions[0].reason == "ByPython"
    assert approved.status.conditions[0].last_update_time is not None
    both = client.V1CertificateSigningRequestCondition(type="Denied", status="True")
    approved.status.conditions.append(both)
    with pytest.raises(ApiException) as exclusive:
        certificates.replace_certificate_signing_request_approval(name, approved)
    assert (
        "Approved and Denied conditions are mutually exclusive"
        in json.loads(exclusive.value.body)["message"]
    )
    approved.status.conditions.pop()
    approved.status.certificate = b64(certificate_pem(name))
    issued = certificates.replace_certificate_signing_request_status(name, approved)
    assert issued.status.certificate == approved.status.certificate
    read = certificates.read_certificate_signing_request_approval(name)
    assert [c.type for c in read.status.conditions] == ["Approved"]
    certificates.delete_certificate_signing_request(name)
