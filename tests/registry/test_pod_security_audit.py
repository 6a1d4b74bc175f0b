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
from kstore.errors import BadRequest, Forbidden, Invalid
from kstore.registry.interface import CreateOptions, RequestContext, UpdateOptions, UserInfo
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
    registry: StoreRegistry, scheme: Scheme, backend: LmdbBackend
) -> None:
    # Such labels are refused while PodSecurity runs: they were set while it did not.
    unchecked = make_registry(scheme, backend)
    try:
        _namespace(unchecked, scheme, "typo", enforce="strict", audit="loud", warn="baseline")
        _namespace(unchecked, scheme, "old", audit="nope", **{"enforce-version": "1.2"})
    finally:
        unchecked.close()
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


def _relabel(registry: StoreRegistry, name: str, **labels: str) -> list[str]:
    """Set the namespace's pod-security labels; the warnings of the update."""

    def relabelled(current: dict[str, Any]) -> dict[str, Any]:
        meta = dict(current["metadata"])
        meta["labels"] = {PREFIX + k: v for k, v in labels.items()}
        return {**current, "metadata": meta}

    result = registry.store("", "namespaces").update(
        RequestContext(), name, relabelled, UpdateOptions()
    )
    return list(result.warnings)


def test_namespaces_with_unparsable_labels_are_refused(
    registry: StoreRegistry, scheme: Scheme, backend: LmdbBackend
) -> None:
    with pytest.raises(Invalid) as caught:
        _namespace(registry, scheme, "bad", enforce="strict")
    assert caught.value.message == (
        'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: '
        'Invalid value: "strict": must be one of privileged, baseline, restricted'
    )
    assert caught.value.causes[0].field == "metadata.labels[pod-security.kubernetes.io/enforce]"
    _namespace(registry, scheme, "good", warn="baseline")
    with pytest.raises(Invalid) as caught:
        _relabel(registry, "good", warn="baseline", **{"warn-version": "1.30"})
    assert 'Invalid value: "1.30": must be "latest" or "v1.x"' in caught.value.message
    # Errors already there are kept through updates that leave them as they were.
    unchecked = make_registry(scheme, backend)
    try:
        _namespace(unchecked, scheme, "legacy", audit="loud")
    finally:
        unchecked.close()
    assert _relabel(registry, "legacy", audit="loud", warn="baseline") == []


def test_raising_the_enforce_level_warns_of_existing_pods(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    _namespace(registry, scheme, "busy")
    for name in ("web-b", "web-a", "web-c"):
        _create(registry, scheme, "busy", _pod(name))
    _create(registry, scheme, "busy", _pod("host", hostNetwork=True))
    assert _relabel(registry, "busy", enforce="baseline") == [
        'existing pods in namespace "busy" violate the new PodSecurity enforce level '
        '"baseline:latest"',
        "host: host namespaces",
    ]
    reasons = (
        "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile"
    )
    assert _relabel(registry, "busy", enforce="restricted") == [
        'existing pods in namespace "busy" violate the new PodSecurity enforce level '
        '"restricted:latest"',
        f"host: host namespaces, {reasons}",
        f"web-a (and 2 other pods): {reasons}",
    ]
    # Relaxing, keeping or dropping the level warns of nothing; a new version does.
    assert _relabel(registry, "busy", enforce="restricted") == []
    assert _relabel(registry, "busy", enforce="baseline") == []
    assert _relabel(registry, "busy", enforce="baseline", **{"enforce-version": "v1.30"}) == [
        'existing pods in namespace "busy" violate the new PodSecurity enforce level '
        '"baseline:v1.30"',
        "host: host namespaces",
    ]
    assert _relabel(registry, "busy") == []
