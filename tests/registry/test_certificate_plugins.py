"""CertificateApproval, CertificateSigning and CertificateSubjectRestriction through the
generic store: the authorizer asked for ``approve`` and ``sign`` on ``signers`` (the signer's
name, then its domain's wildcard), what is let through without a check, and the client
signer's refusal of ``system:masters``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kstore.api.cel.admission import AuthorizationCheck, AuthorizationDecision
from kstore.api.gvk import GroupVersion
from kstore.api.kinds.csr_subject import request_organizations
from kstore.api.scheme import Scheme
from kstore.errors import Forbidden
from kstore.registry.admission.policy_source import set_registry_authorizer
from kstore.registry.interface import (
    CreateOptions,
    RequestContext,
    ResourceStore,
    UpdateOptions,
    UserInfo,
)
from kstore.registry.registry import StoreRegistry
from kstore.storage.lmdb import LmdbBackend
from tests.csr_pem import b64, certificate_pem, csr_pem
from tests.registry.conftest import make_registry
from tests.registry.objects import changed, hub

V1 = "certificates.k8s.io/v1"
PLUGINS = ("CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction")
ALICE = UserInfo(name="alice", uid="u-a", groups=("dev",))


class Grants:
    """An authorizer over a fixed set of (user, verb, resource, name) grants, recording every
    check it is asked."""

    def __init__(self) -> None:
        self.allowed: set[tuple[str, str, str, str]] = set()
        self.asked: list[AuthorizationCheck] = []

    def __call__(self, check: AuthorizationCheck) -> AuthorizationDecision:
        self.asked.append(check)
        key = (str(check.user.get("username")), check.verb, check.resource, check.name)
        return AuthorizationDecision(key in self.allowed)


@pytest.fixture
def grants(scheme: Scheme, backend: LmdbBackend) -> Iterator[tuple[StoreRegistry, Grants]]:
    registry = make_registry(scheme, backend, admission_plugins=PLUGINS)
    authorize = Grants()
    set_registry_authorizer(registry, authorize)
    try:
        yield registry, authorize
    finally:
        set_registry_authorizer(registry, None)
        registry.close()


def _as(user: UserInfo) -> RequestContext:
    return RequestContext(request_version=GroupVersion.parse(V1), user=user)


def _csr(name: str, signer: str, request: bytes | None = None) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": b64(request if request is not None else csr_pem()),
            "signerName": signer,
            "usages": ["client auth"],
        },
    }


def _store(registry: StoreRegistry) -> ResourceStore:
    return registry.store("certificates.k8s.io", "certificatesigningrequests")


def _approve(obj: dict[str, Any]) -> None:
    obj["status"] = {
        "conditions": [
            {"type": "Approved", "status": "True", "reason": "Test", "message": "approved"}
        ]
    }


def test_approval_asks_approve_on_the_signer_then_its_domain(
    grants: tuple[StoreRegistry, Grants], scheme: Scheme
) -> None:
    registry, authorize = grants
    store = _store(registry)
    store.create(_as(ALICE), hub(scheme, _csr("a", "example.com/team")), CreateOptions())
    approval = UpdateOptions(subresource="approval")
    with pytest.raises(Forbidden) as caught:
        store.update(_as(ALICE), "a", changed(_approve), approval)
    assert caught.value.message == (
        'certificatesigningrequests.certificates.k8s.io "a" is forbidden: user not permitted '
        'to approve requests with signerName "example.com/team"'
    )
    asked = [(c.verb, c.api_group, c.api_version, c.resource, c.name) for c in authorize.asked]
    assert asked == [
        ("approve", "certificates.k8s.io", "*", "signers", "example.com/team"),
        ("approve", "certificates.k8s.io", "*", "signers", "example.com/*"),
    ]
    assert authorize.asked[0].user == {"username": "alice", "uid": "u-a", "groups": ["dev"]}
    assert authorize.asked[0].resource_request
    # The domain's wildcard is enough; the refusal wrote nothing.
    authorize.allowed.add(("alice", "approve", "signers", "example.com/*"))
    approved = store.update(_as(ALICE), "a", changed(_approve), approval).object
    assert approved["status"]["conditions"][0]["type"] == "Approved"
    # So is the signer's own name; "sign" is not "approve".
    store.create(_as(ALICE), hub(scheme, _csr("b", "other.io/x")), CreateOptions())
    authorize.allowed.add(("alice", "sign", "signers", "other.io/x"))
    with pytest.raises(Forbidden):
        store.update(_as(ALICE), "b", changed(_approve), approval)
    authorize.allowed.add(("alice", "approve", "signers", "other.io/x"))
    store.update(_as(ALICE), "b", changed(_approve), approval)


def test_signing_asks_sign_when_certificate_or_conditions_change(
    grants: tuple[StoreRegistry, Grants], scheme: Scheme
) -> None:
    registry, authorize = grants
    store = _store(registry)
    store.create(_as(ALICE), hub(scheme, _csr("c", "example.com/team")), CreateOptions())
    status = UpdateOptions(subresource="status")

    def issue(obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["certificate"] = b64(certificate_pem())

    def fail(obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["conditions"] = [
            {"type": "Failed", "status": "True", "reason": "Test", "message": "no"}
        ]

    # A status write that changes neither is let through without asking.
    store.update(_as(ALICE), "c", changed(lambda o: o.setdefault("status", {})), status)
    assert authorize.asked == []
    for change in (issue, fail):
        with pytest.raises(Forbidden) as caught:
            store.update(_as(ALICE), "c", changed(change), status)
        assert caught.value.message.endswith(
            'user not permitted to sign requests with signerName "example.com/team"'
        )
    assert [c.verb for c in authorize.asked] == ["sign"] * 4
    authorize.allowed.add(("alice", "sign", "signers", "example.com/team"))
    signed = store.update(_as(ALICE), "c", changed(issue), status).object
    assert signed["status"]["certificate"]


def test_client_signer_refuses_system_masters(
    grants: tuple[StoreRegistry, Grants], scheme: Scheme
) -> None:
    registry, _ = grants
    store = _store(registry)
    client_signer = "kubernetes.io/kube-apiserver-client"
    masters = csr_pem("root", ("dev", "system:masters"))
    with pytest.raises(Forbidden) as caught:
        store.create(_as(ALICE), hub(scheme, _csr("m", client_signer, masters)), CreateOptions())
    assert caught.value.message == (
        'certificatesigningrequests.certificates.k8s.io "m" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )
    # Other groups, or system:masters for another signer, are fine.
    plain = csr_pem("bob", ("dev",))
    store.create(_as(ALICE), hub(scheme, _csr("ok", client_signer, plain)), CreateOptions())
    store.create(_as(ALICE), hub(scheme, _csr("other", "example.com/x", masters)), CreateOptions())


def test_disabled_plugins_check_nothing(scheme: Scheme, backend: LmdbBackend) -> None:
    registry = make_registry(scheme, backend, admission_plugins=("CertificateSigning",))
    authorize = Grants()
    set_registry_authorizer(registry, authorize)
    try:
        store = _store(registry)
        masters = csr_pem("root", ("system:masters",))
        csr = _csr("m", "kubernetes.io/kube-apiserver-client", masters)
        store.create(_as(ALICE), hub(scheme, csr), CreateOptions())
        store.update(_as(ALICE), "m", changed(_approve), UpdateOptions(subresource="approval"))
        assert authorize.asked == []
    finally:
        set_registry_authorizer(registry, None)
        registry.close()


def test_request_organizations_reads_every_relative_name() -> None:
    assert request_organizations(csr_pem("x")) == []
    assert request_organizations(csr_pem("x", ("a", "system:masters", "ü"))) == [
        "a",
        "system:masters",
        "ü",
    ]
    with pytest.raises(ValueError, match="PEM block type must be CERTIFICATE REQUEST"):
        request_organizations(certificate_pem())
    # SEQUENCE { INTEGER 0 }: no request info.
    truncated = (
        b"-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQA=\n-----END CERTIFICATE REQUEST-----\n"
    )
    with pytest.raises(ValueError, match="malformed"):
        request_organizations(truncated)
