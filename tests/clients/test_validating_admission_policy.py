"""ValidatingAdmissionPolicy with real kubectl and the Python client, on LMDB and on etcd:
policies and bindings applied as users apply them take effect within a second and deny, warn
and audit with Kubernetes' messages; params, match conditions, variables, message
expressions and failure policies; and the published policies in
``../shared/admission-policies``, each installed with a Deny binding, admit and refuse their
objects as their expressions say.

Each test's bindings select the test's own namespace (``kubernetes.io/metadata.name``), so the
tests sharing the module's server never judge each other's requests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.clients.kubectl import Kubectl, Result
from tests.clients.servers import storage_args
from tests.fixtures_path import SHARED
from tests.server.harness import RunningServer, start_server

CORPUS = SHARED / "admission-policies"
#: Each published case: the object its policy admits, then the one it refuses.
CORPUS_CASES = {
    "check-deployment-labels": ("deployment1.yaml", "deployment2.yaml"),
    "check-deployments-replica": ("deployment1.yaml", "deployment2.yaml"),
    "disallow-host-path": ("pod1.yaml", "pod2.yaml"),
}
GROUP_VERSION = "admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def audit_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audit") / "audit.log"


@pytest.fixture(scope="module")
def kstore_server(
    request: pytest.FixtureRequest,
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
    audit_log: Path,
) -> Iterator[RunningServer]:
    """``kstore serve`` on the module's backend, auditing to ``audit_log``."""
    with storage_args(request.config, backend) as args:
        server = start_server(
            tmp_path_factory.mktemp(f"vap-{backend}") / "data",
            *args,
            "--audit-log-path",
            str(audit_log),
        )
        try:
            yield server
        finally:
            status = server.stop()
        assert status == 0, server.log()


def _policy(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    constraints = spec.pop("matchConstraints", None) or {
        "resourceRules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["configmaps"],
            }
        ]
    }
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"matchConstraints": constraints, **spec},
    }


def _binding(
    name: str, policy: str, namespace: str, actions: list[str], **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": policy,
            "validationActions": actions,
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
            **spec,
        },
    }


def _apply(k: Kubectl, name: str, *objects: dict[str, Any]) -> None:
    k.write(name, yaml.safe_dump_all(objects))
    k.ok("apply", "--server-side", "-f", name)


def _within_a_second(attempt: Callable[[], Result], done: Callable[[Result], bool]) -> Result:
    """Retry ``attempt`` until ``done`` holds; it must within a second."""
    started = time.monotonic()
    while True:
        result = attempt()
        if done(result):
            assert time.monotonic() - started < 1.0
            return result
        assert time.monotonic() - started < 1.0, str(result)
        time.sleep(0.05)


def _configmap(k: Kubectl, name: str, *data: str, dry_run: bool = True) -> Result:
    args = ["create", "configmap", name, *[f"--from-literal={d}" for d in data]]
    if dry_run:
        args.append("--dry-run=server")
    return k.run(*args)


def test_kubectl_deny_takes_effect_within_a_second(k: Kubectl) -> None:
    policy = f"{k.namespace}-replicas"
    rule = {
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["deployments"],
    }
    _apply(
        k,
        "deny.yaml",
        _policy(
            policy,
            k.namespace,
            {
                "matchConstraints": {"resourceRules": [rule]},
                "validations": [{"expression": "object.spec.replicas <= 5"}],
            },
        ),
        _binding(policy, policy, k.namespace, ["Deny"]),
    )
    refused = _within_a_second(
        lambda: k.run("create", "deployment", "web", "--image=nginx", "--replicas=6"),
        lambda r: r.code != 0,
    )
    assert refused.stderr == (
        'error: failed to create deployment: deployments.apps "web" is forbidden: '
        f"ValidatingAdmissionPolicy '{policy}' with binding '{policy}' denied request: "
        "failed expression: object.spec.replicas <= 5\n"
    )
    k.ok("create", "deployment", "web", "--image=nginx", "--replicas=2")
    patch = ("patch", "deployment", "web", "-p", '{"spec":{"replicas":9}}')
    result = k.fails(*patch)
    assert "denied request: failed expression: object.spec.replicas <= 5" in result.stderr
    # The scale subresource is another resource (deployments/scale): not matched.
    k.ok("scale", "deployment", "web", "--replicas=7")
    k.ok("delete", "validatingadmissionpolicybinding", policy)
    _within_a_second(lambda: k.run(*patch), lambda r: r.code == 0)
    k.ok("delete", "validatingadmissionpolicy", policy)


def test_kubectl_warn_and_audit(k: Kubectl, audit_log: Path) -> None:
    policy = f"{k.namespace}-keys"
    _apply(
        k,
        "warn.yaml",
        _policy(
            policy,
            k.namespace,
            {
                "validations": [
                    {
                        "expression": "size(object.data) <= 1",
                        "messageExpression": "'too many keys: ' + string(size(object.data))",
                    }
                ],
                "auditAnnotations": [
                    {"key": "keys", "valueExpression": "string(size(object.data))"}
                ],
            },
        ),
        _binding(policy, policy, k.namespace, ["Warn", "Audit"]),
    )
    warning = (
        f"Warning: Validation failed for ValidatingAdmissionPolicy '{policy}' with binding "
        f"'{policy}': too many keys: 2\n"
    )
    result = _within_a_second(
        lambda: _configmap(k, "probe", "a=1", "b=2"), lambda r: warning in r.stderr
    )
    assert result.code == 0
    created = _configmap(k, "two", "a=1", "b=2", dry_run=False)
    assert created.code == 0 and created.stderr == warning
    assert _configmap(k, "one", "a=1", dry_run=False).stderr == ""
    events = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        events = [
            json.loads(line)
            for line in audit_log.read_text().splitlines()
            if f'"/api/v1/namespaces/{k.namespace}/configmaps' in line
        ]
        if any(e["objectRef"].get("name") == "two" for e in events if e.get("objectRef")):
            break
        time.sleep(0.1)
    two = next(
        e
        for e in events
        if e["verb"] == "create"
        and e.get("responseStatus", {}).get("code") == 201
        and "keys" in json.dumps(e.get("annotations", {}))
        and json.loads(e["annotations"]["validation.policy.admission.k8s.io/validation_failure"])[
            0
        ]["message"]
        == "too many keys: 2"
    )
    failure = json.loads(
        two["annotations"]["validation.policy.admission.k8s.io/validation_failure"]
    )
    assert failure == [
        {
            "message": "too many keys: 2",
            "policy": policy,
            "binding": policy,
            "expressionIndex": 0,
            "validationActions": ["Warn", "Audit"],
        }
    ]
    assert two["annotations"][f"{policy}/keys"] == "2"


@pytest.fixture(scope="module")
def admission(api_client: client.ApiClient) -> client.AdmissionregistrationV1Api:
    return client.AdmissionregistrationV1Api(api_client)


def _create_pair(
    admission: client.AdmissionregistrationV1Api,
    policy: dict[str, Any],
    binding: dict[str, Any],
) -> None:
    admission.create_validating_admission_policy(policy)
    admission.create_validating_admission_policy_binding(binding)


def _eventually_refused(create: Callable[[], Any]) -> ApiException:
    started = time.monotonic()
    while True:
        try:
            create()
        except ApiException as exc:
            assert time.monotonic() - started < 1.0
            return exc
        assert time.monotonic() - started < 1.0, "never refused"
        time.sleep(0.05)


def _cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, **meta}, "data": data or {}}


def _message(exc: ApiException) -> tuple[int, str, str]:
    body = json.loads(exc.body)
    return exc.status, body["reason"], body["message"]


def test_python_client_params_by_name_and_selector(
    admission: client.AdmissionregistrationV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    core.create_namespaced_config_map(namespace, _cm("limits", {"max": "1"}))
    core.create_namespaced_config_map(
        namespace, _cm("deny-x", {"name": "x"}, labels={"rule": "names"})
    )
    core.create_namespaced_config_map(
        namespace, _cm("deny-y", {"name": "y"}, labels={"rule": "names"})
    )
    sized = f"{namespace}-sized"
    _create_pair(
        admission,
        _policy(
            sized,
            namespace,
            {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConditions": [
                    {
                        "name": "checked",
                        "expression": "object.metadata.?labels.checked == optional.of('yes')",
                    }
                ],
                "validations": [
                    {
                        "expression": "size(object.data) <= int(params.data.max)",
                        "messageExpression": "'at most ' + params.data.max + ' key(s)'",
                        "reason": "Forbidden",
                    }
                ],
            },
        ),
        _binding(
            sized,
            sized,
            namespace,
            ["Deny"],
            paramRef={"name": "limits", "parameterNotFoundAction": "Deny"},
        ),
    )
    checked = {"checked": "yes"}
    exc = _eventually_refused(
        lambda: core.create_namespaced_config_map(
            namespace, _cm("two", {"a": "1", "b": "2"}, labels=checked)
        )
    )
    assert _message(exc) == (
        403,
        "Forbidden",
        f"configmaps \"two\" is forbidden: ValidatingAdmissionPolicy '{sized}' with binding "
        f"'{sized}' denied request: at most 1 key(s)",
    )
    core.create_namespaced_config_map(namespace, _cm("one", {"a": "1"}, labels=checked))
    # Unchecked configmaps are skipped by the match condition.
    core.create_namespaced_config_map(namespace, _cm("many", {"a": "1", "b": "2"}))
    names = f"{namespace}-names"
    _create_pair(
        admission,
        _policy(
            names,
            namespace,
            {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "variables": [{"name": "name", "expression": "object.metadata.name"}],
                "validations": [
                    {
                        "expression": "variables.name != params.data.name",
                        "messageExpression": "'refused by ' + params.metadata.name",
                    }
                ],
            },
        ),
        _binding(
            names,
            names,
            namespace,
            ["Deny"],
            paramRef={
                "selector": {"matchLabels": {"rule": "names"}},
                "parameterNotFoundAction": "Allow",
            },
        ),
    )
    exc = _eventually_refused(lambda: core.create_namespaced_config_map(namespace, _cm("y")))
    assert _message(exc)[:2] == (422, "Invalid")
    assert _message(exc)[2].endswith("denied request: refused by deny-y")
    exc = _eventually_refused(lambda: core.create_namespaced_config_map(namespace, _cm("x")))
    assert _message(exc)[2].endswith("denied request: refused by deny-x")
    core.create_namespaced_config_map(namespace, _cm("z"))
    for name in (sized, names):
        admission.delete_validating_admission_policy_binding(name)
        admission.delete_validating_admission_policy(name)


def test_python_client_missing_param_and_failure_policies(
    admission: client.AdmissionregistrationV1Api, core: client.CoreV1Api, namespace: str
) -> None:
    missing = f"{namespace}-missing"
    _create_pair(
        admission,
        _policy(
            missing,
            namespace,
            {
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "validations": [{"expression": "object.metadata.name != params.data.name"}],
            },
        ),
        _binding(
            missing,
            missing,
            namespace,
            ["Deny"],
            paramRef={"name": "absent", "parameterNotFoundAction": "Deny"},
        ),
    )
    exc = _eventually_refused(lambda: core.create_namespaced_config_map(namespace, _cm("a")))
    assert _message(exc)[2].endswith(
        f"ValidatingAdmissionPolicy '{missing}' with binding '{missing}' denied request: "
        "failed to configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"
    )
    admission.delete_validating_admission_policy_binding(missing)
    ignored = f"{namespace}-ignored"
    failing = f"{namespace}-failing"
    for name, failure_policy in ((ignored, "Ignore"), (failing, "Fail")):
        _create_pair(
            admission,
            _policy(
                name,
                namespace,
                {
                    "failurePolicy": failure_policy,
                    "validations": [{"expression": "object.data.nothing == 'x'"}],
                },
            ),
            _binding(name, name, namespace, ["Deny"]),
        )
    exc = _eventually_refused(lambda: core.create_namespaced_config_map(namespace, _cm("b")))
    assert _message(exc)[2] == (
        f"configmaps \"b\" is forbidden: ValidatingAdmissionPolicy '{failing}' with binding "
        f"'{failing}' denied request: expression 'object.data.nothing == 'x'' resulted in "
        "error: no such key: nothing"
    )
    admission.delete_validating_admission_policy_binding(failing)
    started = time.monotonic()
    while True:
        try:
            core.create_namespaced_config_map(namespace, _cm("c"))
            break
        except ApiException:
            assert time.monotonic() - started < 1.0
            time.sleep(0.05)
    policy = admission.read_validating_admission_policy(ignored)
    assert policy.status.observed_generation == 1


def _corpus_object(path: Path) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(path.read_text())
    # A container without a name would be refused by the Pod's own validation before any
    # admission policy runs; it is given one so that the policy is what judges the pod.
    for container in obj.get("spec", {}).get("containers", []) or []:
        if not container.get("name"):
            container["name"] = "main"
    return obj


def test_published_policies_admit_and_refuse_their_objects(k: Kubectl) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent")
    assert sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) == sorted(CORPUS_CASES)
    for case, (admitted, refused) in CORPUS_CASES.items():
        policy = yaml.safe_load((CORPUS / case / "policy.yaml").read_text())
        name = policy["metadata"]["name"]
        binding = _binding(f"{k.namespace}-{case}", name, k.namespace, ["Deny"])
        _apply(k, f"{case}.yaml", policy, binding)
        good = k.write(
            f"{case}-good.yaml", yaml.safe_dump(_corpus_object(CORPUS / case / admitted))
        )
        bad = k.write(f"{case}-bad.yaml", yaml.safe_dump(_corpus_object(CORPUS / case / refused)))
        message = next(v["message"] for v in policy["spec"]["validations"])
        result = _within_a_second(
            lambda bad=bad: k.run("create", "--dry-run=server", "-f", bad.name),
            lambda r: r.code != 0,
        )
        assert (
            f"ValidatingAdmissionPolicy '{name}' with binding '{binding['metadata']['name']}' "
            f"denied request: {message}\n"
        ) in result.stderr
        k.ok("create", "-f", good.name)
        k.ok("delete", "-f", good.name)
        k.ok("delete", "-f", f"{case}.yaml")


@pytest.mark.etcd
def test_a_policy_written_through_one_server_judges_on_another(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two ``kstore serve`` on one etcd, as two kube-apiservers: a policy and binding created
    through one refuse requests made to the other within a second, and stop when deleted."""
    with storage_args(request.config, "etcd") as args:
        one = start_server(tmp_path / "one", *args)
        two = start_server(tmp_path / "two", *args)
        try:
            with one.client() as a, two.client() as b:
                policy = _policy("across", "default", {"validations": [{"expression": "false"}]})
                binding = _binding("across", "across", "default", ["Deny"])
                base = "/apis/admissionregistration.k8s.io/v1"
                assert a.post(f"{base}/validatingadmissionpolicies", json=policy).status_code == 201
                assert (
                    a.post(f"{base}/validatingadmissionpolicybindings", json=binding).status_code
                    == 201
                )
                started = time.monotonic()
                n = 0

                def create() -> int:
                    nonlocal n
                    n += 1
                    path = "/api/v1/namespaces/default/configmaps"
                    return int(b.post(path, json=_cm(f"probe-{n}")).status_code)

                while create() != 422:
                    assert time.monotonic() - started < 1.0, "the policy did not reach two"
                    time.sleep(0.02)
                assert (
                    a.delete(f"{base}/validatingadmissionpolicybindings/across").status_code == 200
                )
                started = time.monotonic()
                while create() != 201:
                    assert time.monotonic() - started < 1.0, "the deletion did not reach two"
                    time.sleep(0.02)
        finally:
            assert one.stop() == 0, one.log()
            assert two.stop() == 0, two.log()
