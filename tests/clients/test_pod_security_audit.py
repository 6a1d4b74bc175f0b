"""PodSecurity's audit level, defaults and exemptions with real kubectl against ``kstore serve
--admission-control-config-file ... --audit-log-path ...``: the audit log's events carry
kube-apiserver's ``pod-security.kubernetes.io/*`` annotations, the configured defaults apply
to namespaces without labels, an exempt namespace is not checked, and a configuration file
kstore would not follow stops the start."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clients.kubectl import Kubectl, kubectl_binary
from tests.clients.manifests import to_yaml
from tests.server.harness import RunningServer, start_server

PREFIX = "pod-security.kubernetes.io/"
HOST_NETWORK = "host namespaces (hostNetwork=true)"

ADMISSION_CONFIGURATION = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: pod-security.yaml
"""
POD_SECURITY_CONFIGURATION = """\
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  audit: baseline
exemptions:
  namespaces: [tools]
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kubectl, Path]]:
    root = tmp_path_factory.mktemp("pod-security-audit")
    (root / "admission.yaml").write_text(ADMISSION_CONFIGURATION)
    (root / "pod-security.yaml").write_text(POD_SECURITY_CONFIGURATION)
    audit_log = root / "audit.log"
    server: RunningServer = start_server(
        root / "data",
        "--admission-control-config-file",
        str(root / "admission.yaml"),
        "--audit-log-path",
        str(audit_log),
    )
    try:
        k = Kubectl(kubectl_binary(), root / "home", server.url)
        for namespace in ("team", "tools"):
            k.ok("create", "namespace", namespace)
            # The account the ServiceAccount plugin wants, unless its controller made it.
            k.run("create", "serviceaccount", "default", "-n", namespace)
        k.ok("create", "namespace", "strict")
        k.run("create", "serviceaccount", "default", "-n", "strict")
        k.ok("label", "namespace", "strict", f"{PREFIX}enforce=baseline")
        yield k, audit_log
    finally:
        server.stop()


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def _creates(audit_log: Path, namespace: str, count: int) -> list[dict[str, Any]]:
    """The audit events of the first ``count`` pod creates in ``namespace``, in order (a
    create's ``objectRef`` names no object, as in Kubernetes)."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    deadline = time.monotonic() + 10
    while True:
        events = [
            event
            for event in map(json.loads, audit_log.read_text().splitlines())
            if event["verb"] == "create" and event["requestURI"].startswith(path)
        ]
        if len(events) >= count:
            return events[:count]
        assert time.monotonic() < deadline, f"{len(events)} pod creates audited in {namespace}"
        time.sleep(0.1)


def _apply(k: Kubectl, namespace: str, pod: dict[str, Any]) -> None:
    manifest = k.write(f"{namespace}-{pod['metadata']['name']}.yaml", to_yaml(pod))
    k.ok("apply", "-n", namespace, "-f", str(manifest))


def test_the_default_audit_level_annotates_the_event(served: tuple[Kubectl, Path]) -> None:
    k, audit_log = served
    _apply(k, "team", _pod("host", hostNetwork=True))
    annotations = _creates(audit_log, "team", 1)[0]["annotations"]
    assert annotations[PREFIX + "audit-violations"] == (
        f'would violate PodSecurity "baseline:latest": {HOST_NETWORK}'
    )
    assert annotations[PREFIX + "enforce-policy"] == "privileged:latest"
    _apply(k, "team", _pod("plain"))
    annotations = _creates(audit_log, "team", 2)[1]["annotations"]
    assert PREFIX + "audit-violations" not in annotations


def test_a_refused_pod_is_audited_with_the_enforced_policy(served: tuple[Kubectl, Path]) -> None:
    k, audit_log = served
    manifest = k.write("strict-host.yaml", to_yaml(_pod("host", hostNetwork=True)))
    refused = k.fails("apply", "-n", "strict", "-f", str(manifest))
    assert f'violates PodSecurity "baseline:latest": {HOST_NETWORK}' in refused.stderr
    (event,) = _creates(audit_log, "strict", 1)
    assert event["responseStatus"]["code"] == 403
    assert event["annotations"][PREFIX + "enforce-policy"] == "baseline:latest"
    assert event["annotations"][PREFIX + "audit-violations"].startswith(
        'would violate PodSecurity "baseline:latest": '
    )


def test_an_exempt_namespace_is_not_checked(served: tuple[Kubectl, Path]) -> None:
    k, audit_log = served
    k.ok("label", "namespace", "tools", f"{PREFIX}enforce=restricted")
    _apply(k, "tools", _pod("host", hostNetwork=True))
    (event,) = _creates(audit_log, "tools", 1)
    assert event["annotations"] == {PREFIX + "exempt": "namespace"}


def test_kubectl_label_checks_the_labels_and_warns_of_existing_pods(
    served: tuple[Kubectl, Path],
) -> None:
    k, _ = served
    k.ok("create", "namespace", "labelled")
    k.run("create", "serviceaccount", "default", "-n", "labelled")
    _apply(k, "labelled", _pod("host", hostNetwork=True))
    refused = k.fails("label", "namespace", "labelled", f"{PREFIX}enforce=strict")
    assert (
        'Namespace "labelled" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: '
        'Invalid value: "strict": must be one of privileged, baseline, restricted'
    ) in refused.stderr
    labelled = k.run("label", "namespace", "labelled", f"{PREFIX}enforce=baseline")
    assert labelled.code == 0, labelled
    assert labelled.stderr.splitlines() == [
        'Warning: existing pods in namespace "labelled" violate the new PodSecurity enforce '
        'level "baseline:latest"',
        "Warning: host: host namespaces",
    ]


@pytest.mark.parametrize(
    ("configuration", "message"),
    [
        (
            "plugins:\n- name: Bogus\n  configuration: {}\n",
            'plugins[0]: admission plugin "Bogus" is unknown',
        ),
        (
            "plugins:\n- name: EventRateLimit\n  path: limits.yaml\n",
            'kstore does not read the configuration of "EventRateLimit"',
        ),
        (
            "plugins:\n- name: PodSecurity\n  configuration:\n"
            "    apiVersion: pod-security.admission.config.k8s.io/v1\n"
            "    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n",
            'defaults.enforce: Unsupported value: "strict"',
        ),
    ],
    ids=["unknown-plugin", "unread-configuration", "bad-pod-security"],
)
def test_a_configuration_kstore_would_not_follow_stops_the_start(
    tmp_path: Path, configuration: str, message: str
) -> None:
    path = tmp_path / "admission.yaml"
    path.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n" + configuration
    )
    with pytest.raises(RuntimeError) as caught:
        start_server(tmp_path / "data", "--admission-control-config-file", str(path))
    assert message in str(caught.value)
