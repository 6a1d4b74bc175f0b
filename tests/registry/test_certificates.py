"""certificates.k8s.io CertificateSigningRequest through the generic store: the requester
recorded on create, spec and status kept by updates of the object, the approval and status
subresources and their condition timestamps."""

from __future__ import annotations

from typing import Any

import pytest

from kstore.api.gvk import GroupVersion
from kstore.api.scheme import Scheme
from kstore.errors import Invalid
from kstore.registry.interface import CreateOptions, RequestContext, UpdateOptions, UserInfo
from kstore.registry.registry import StoreRegistry
from tests.csr_pem import b64, certificate_pem, csr_pem
from tests.registry.objects import changed, ctx, hub

V1 = "certificates.k8s.io/v1"
APPROVAL = UpdateOptions(subresource="approval")
STATUS = UpdateOptions(subresource="status")


def _csr() -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice"},
        "spec": {
            "request": b64(csr_pem()),
            "signerName": "example.com/signer",
            "usages": ["client auth"],
            "username": "mallory",
            "groups": ["system:masters"],
        },
        "status": {"conditions": [{"type": "Approved", "status": "True"}]},
    }


def _condition(kind: str) -> dict[str, Any]:
    return {"type": kind, "status": "True", "reason": "KubectlApprove", "message": "ok"}


def test_create_records_the_requester_and_clears_status(
    registry: StoreRegistry, scheme: Scheme
) -> None:
    store = registry.store("certificates.k8s.io", "certificatesigningrequests")
    user = UserInfo(name="alice", uid="u-1", groups=("dev",), extra=(("scopes", ("a",)),))
    request = RequestContext(request_version=GroupVersion.parse(V1), user=user)
    created = store.create(request, hub(scheme, _csr()), CreateOptions()).object
    assert created["status"] == {}
    spec = created["spec"]
    assert (spec["username"], spec["uid"], spec["groups"]) == ("alice", "u-1", ["dev"])
    assert spec["extra"] == {"scopes": ["a"]}
    assert "generation" not in created["metadata"]


def test_approval_status_and_object_updates(registry: StoreRegistry, scheme: Scheme) -> None:
    store = registry.store("certificates.k8s.io", "certificatesigningrequests")
    store.create(ctx("", V1), hub(scheme, _csr()), CreateOptions())

    def approve(obj: dict[str, Any]) -> None:
        obj["status"] = {"conditions": [_condition("Approved")]}
        obj["spec"]["usages"] = ["server auth"]

    # The object itself changes metadata only: spec and status are kept.
    kept = store.update(
        ctx("", V1),
        "alice",
        changed(lambda o: (approve(o), o["metadata"].update(labels={"a": "b"}))),
        UpdateOptions(),
    ).object
    assert kept["metadata"]["labels"] == {"a": "b"}
    assert kept["status"] == {}
    assert kept["spec"]["usages"] == ["client auth"]
    # A status write may not approve.
    with pytest.raises(Invalid) as caught:
        store.update(ctx("", V1), "alice", changed(approve), STATUS)
    assert 'updates may not add a condition of type "Approved"' in caught.value.message
    approved = store.update(ctx("", V1), "alice", changed(approve), APPROVAL).object
    assert approved["spec"]["usages"] == ["client auth"]
    condition = approved["status"]["conditions"][0]
    assert condition["type"] == "Approved"
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    certificate = b64(certificate_pem())

    def issue(obj: dict[str, Any]) -> None:
        obj["status"]["certificate"] = certificate

    # The approval subresource cannot issue; status can.
    unissued = store.update(ctx("", V1), "alice", changed(issue), APPROVAL).object
    assert "certificate" not in unissued["status"]
    issued = store.update(ctx("", V1), "alice", changed(issue), STATUS).object
    assert issued["status"]["certificate"] == certificate
    assert issued["status"]["conditions"] == approved["status"]["conditions"]
    with pytest.raises(Invalid) as removed:
        store.update(
            ctx("", V1), "alice", changed(lambda o: o["status"].update(conditions=[])), APPROVAL
        )
    assert 'updates may not remove a condition of type "Approved"' in removed.value.message
