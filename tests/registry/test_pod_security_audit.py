"""PodSecurity's audit level and exemptions through the generic store: the audit annotations
left on the request (``enforce-policy``, ``audit-violations``, ``exempt``) with Kubernetes'
wording, the configured defaults for unlabelled namespaces, and the exempt users, namespaces
and runtime classes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kstore.api.gvk import GroupVersion
from kstore.api.scheme import Scheme
from kstore.errors import BadRequest, Forbidden
from kstore.registry.interface import CreateOptions, RequestContext, UserInfo
from kstore.registry.plugins.podsecurity_config import (
    PodSecurityConfig,
    parse_pod_security_configuration,
)
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import hub

PREFIX = "pod-security.kubernetes.io/"
HOST_NETWORK = "host namespaces (hostNetwork=true)"
RESTRICTED = (
    'allowPrivilegeEscalation != false (container "c" must set '
    "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
    '(container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != '
    'true (pod or container "c" must set securityContext.runAsNonRoot=true), '
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to '
    '"RuntimeDefault" or "Localhost")'
)


def _registry(
    scheme: Scheme, backend: LmdbBackend, configuration: dict[str, Any] | None = None
) -> StoreRegistry:
    admission_configuration = {"PodSecurity": configuration} if configuration else {}
    return make_registry(
        scheme,
        backend,
        admission_plugins=("PodSecurity",),
        admission_configuration=admission_configuration,
    )


@pytest.fixture
def registry(scheme: Scheme, backend: LmdbBackend) -> Iterator[StoreRegistry]:
    r = _registry(scheme, backend)
    try:
        yield r
    finally:
        r.close()


def _namespace(registry: StoreRegistry, scheme: Scheme, name: str, **labels: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {PREFIX + k: v for k, v in labels.items()}},
    }
    registry.store("", "namespaces").create(RequestContext(), hub(scheme, body), CreateOptions())


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }


def _create(
    registry: StoreRegistry,
    scheme: Scheme,
    namespace: str,
    obj: dict[str, Any],
    user: str = "alice",
    resource: tuple[str, str] = ("", "pods"),
) -> dict[str, str]:
    """Create ``obj`` as ``user``; the audit annotations the request got, whether or not it
    was refused (a refusal is re-raised after they are read, as ``_Refused``)."""
    annotations: dict[str, str] = {}
    version = obj["apiVersion"]
    ctx = RequestContext(
        namespace=namespace,
        request_version=GroupVersion.parse(version),
        user=UserInfo(name=user),
        audit_annotations=annotations,
    )
    try:
        registry.store(*resource).create(ctx, hub(scheme, obj), CreateOptions())
    except Forbidden as exc:
        raise _Refused(annotations, exc.message) from exc
    return annotations


class _Refused(Exception):
    def __init__(self, annotations: dict[str, str], message: str) -> None:
        super().__init__(message)
        self.annotations = annotations
        self.message = message


def test_audit_violations_and_enforced_policy(registry: StoreRegistry, scheme: Scheme) -> None:
    _namespace(registry, scheme, "audited", audit="restricted", warn="baseline")
    annotations = _create(registry, scheme, "audited", _pod("plain"))
    assert annotations == {
        PREFIX + "enforce-policy": "privileged:latest",
        PREFIX + "audit-violations": f'would violate PodSecurity "restricted:latest": {RESTRICTED}',
    }
    # A version label is part of the policy's name.
    _namespace(registry, scheme, "pinned", enforce="baseline", **{"enforce-version": "v1.30"})
    with pytest.raises(_Refused) as caught:
        _create(registry, scheme, "pinned", _pod("host", hostNetwork=True))
    # The refused request's event still says which policy refused it.
    assert caught.value.annotations == {PREFIX + "enforce-policy": "baseline:v1.30"}
    assert caught.value.message.endswith(f'violates PodSecurity "baseline:v1.30": {HOST_NETWORK}')


def test_refused_pods_are_audited_too(registry: StoreRegistry, scheme: Scheme) -> None:
    _namespace(registry, scheme, "strict", enforce="baseline", audit="baseline")
    with pytest.raises(_Refused) as caught:
        _create(registry, scheme, "strict", _pod("host", hostNetwork=True))
    assert caught.value.annotations == {
        PREFIX + "enforce-policy": "baseline:latest",
        PREFIX + "audit-violations": f'would violate PodSecurity "baseline:latest": {HOST_NETWORK}',
    }


def test_templates_are_audited_without_an_enforced_policy(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "apps", audit="baseline")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, **_pod("t", hostNetwork=True)},
        },
    }
    deployment["spec"]["template"].pop("apiVersion")
    deployment["spec"]["template"].pop("kind")
    deployment["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    annotations = _create(registry, scheme, "apps", deployment, resource=("apps", "deployments"))
    assert annotations == {
        PREFIX + "audit-violations": f'would violate PodSecurity "baseline:latest": {HOST_NETWORK}'
    }


def test_unlabelled_namespaces_record_the_privileged_policy(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "open")
    annotations = _create(registry, scheme, "open", _pod("any", hostNetwork=True))
    assert annotations == {PREFIX + "enforce-policy": "privileged:latest"}


def test_configured_defaults_and_exemptions(scheme: Scheme, backend: LmdbBackend) -> None:
    configuration = {
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "baseline", "audit": "restricted", "audit-version": "v1.35"},
        "exemptions": {
            "usernames": ["ci-bot"],
            "namespaces": ["kube-tools"],
            "runtimeClasses": ["sandboxed"],
        },
    }
    registry = _registry(scheme, backend, configuration)
    try:
        for name in ("team", "kube-tools"):
            _namespace(registry, scheme, name)
        _namespace(registry, scheme, "relaxed", enforce="privileged")
        host = _pod("host", hostNetwork=True)
        with pytest.raises(_Refused) as caught:
            _create(registry, scheme, "team", host)
        assert caught.value.annotations[PREFIX + "enforce-policy"] == "baseline:latest"
        assert caught.value.annotations[PREFIX + "audit-violations"].startswith(
            'would violate PodSecurity "restricted:v1.35": '
        )
        # A label overrides its mode's default only.
        relaxed = _create(registry, scheme, "relaxed", host)
        assert relaxed[PREFIX + "enforce-policy"] == "privileged:latest"
        assert PREFIX + "audit-violations" in relaxed
        assert _create(registry, scheme, "team", host, user="ci-bot") == {PREFIX + "exempt": "user"}
        assert _create(registry, scheme, "kube-tools", host) == {PREFIX + "exempt": "namespace"}
        sandboxed = _pod("sandboxed", hostNetwork=True, runtimeClassName="sandboxed")
        assert _create(registry, scheme, "team", sandboxed) == {PREFIX + "exempt": "runtimeClass"}
    finally:
        registry.close()


def test_configuration_is_checked() -> None:
    group = "pod-security.admission.config.k8s.io"
    kind = "PodSecurityConfiguration"
    default = parse_pod_security_configuration({"apiVersion": f"{group}/v1beta1", "kind": kind})
    assert default == PodSecurityConfig.kubernetes_default()
    base = {"apiVersion": f"{group}/v1", "kind": kind}
    refusals = [
        ({"defaults": {"enforce": "strict"}}, 'defaults.enforce: Unsupported value: "strict"'),
        ({"defaults": {"warn-version": "1.30"}}, 'defaults.warn-version: Invalid value: "1.30"'),
        ({"exemptions": {"users": ["a"]}}, 'exemptions: unknown field "users"'),
        ({"exemptions": {"usernames": "a"}}, "exemptions.usernames: Invalid value"),
        ({"kind": "Other"}, 'kind "Other"'),
    ]
    for change, message in refusals:
        with pytest.raises(BadRequest) as caught:
            parse_pod_security_configuration({**base, **change})
        assert message in caught.value.message


def test_unparsable_labels_fail_closed_for_enforce_and_are_recorded(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "typo", enforce="strict", audit="loud", warn="baseline")
    with pytest.raises(_Refused) as caught:
        _create(registry, scheme, "typo", _pod("plain"))
    assert caught.value.message.endswith(f'violates PodSecurity "restricted:latest": {RESTRICTED}')
    assert caught.value.annotations == {
        PREFIX + "error": (
            "Failed to parse policy: ["
            'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": '
            "must be one of privileged, baseline, restricted, "
            'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "loud": '
            "must be one of privileged, baseline, restricted]"
        ),
        PREFIX + "enforce-policy": "restricted:latest",
    }
    # A bad version reads as latest; audit and warn fail open.
    _namespace(registry, scheme, "old", audit="nope", **{"enforce-version": "1.2"})
    annotations = _create(registry, scheme, "old", _pod("host", hostNetwork=True))
    assert annotations == {
        PREFIX + "error": (
            "Failed to parse policy: [metadata.labels[pod-security.kubernetes.io/enforce-version]"
            ': Invalid value: "1.2": must be "latest" or "v1.x", '
            'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "nope": '
            "must be one of privileged, baseline, restricted]"
        ),
        PREFIX + "enforce-policy": "privileged:latest",
    }
