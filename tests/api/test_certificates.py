"""certificates.k8s.io/v1 CertificateSigningRequest: validation as Kubernetes' certificates
validation words it (request PEM, usages, signer name, expiration, conditions, certificate),
the update rules per subresource, and the protobuf form of ``spec.extra``."""

from __future__ import annotations

import copy
from typing import Any

from kstore.api.kinds.certificates import validate_csr, validate_csr_update
from kstore.codec.protobuf import ProtobufSerializer
from kstore.errors import Cause
from tests.csr_pem import b64, certificate_pem, csr_pem

REQUEST = b64(csr_pem())


def _csr(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice", "resourceVersion": "1"},
        "spec": {
            "request": REQUEST,
            "signerName": "example.com/signer",
            "usages": ["client auth"],
            **spec,
        },
    }


def _rendered(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def _approved(csr: dict[str, Any], kind: str = "Approved") -> dict[str, Any]:
    new = copy.deepcopy(csr)
    condition = {"type": kind, "status": "True", "reason": "R", "lastUpdateTime": None}
    new.setdefault("status", {}).setdefault("conditions", []).append(condition)
    return new


def test_a_valid_request_passes() -> None:
    assert validate_csr(_csr()) == []
    assert validate_csr(_csr(expirationSeconds=600, usages=["digital signature"])) == []


def test_spec_messages() -> None:
    bad = _csr(
        request=b64(b"not a pem"),
        usages=["client auth", "flying", "client auth"],
        signerName="signer",
        expirationSeconds=599,
    )
    assert _rendered(validate_csr(bad)) == [
        'spec.request: Invalid value: "bm90IGEgcGVt": PEM block type must be CERTIFICATE REQUEST',
        'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", '
        '"client auth", "code signing", "content commitment", "crl sign", "data encipherment", '
        '"decipher only", "digital signature", "email protection", "encipher only", '
        '"ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", '
        '"key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", '
        '"server auth", "signing", "timestamping"',
        'spec.usages[2]: Duplicate value: "client auth"',
        'spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of '
        "the form 'example.com/signer-name'",
        "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 "
        "seconds (10 minutes)",
    ]
    assert _rendered(validate_csr(_csr(usages=[], signerName="kubernetes.io/legacy-unknown"))) == [
        "spec.usages: Required value",
        'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName '
        "is not allowed via this API version",
    ]
    assert _rendered(validate_csr(_csr(signerName="example/Bad_Path"))) == [
        'spec.signerName: Invalid value: "example": should be a domain with at least two '
        "segments separated by dots",
        'spec.signerName: Invalid value: "Bad_Path": validating label "Bad_Path": a lowercase '
        "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]
    certificate = b64(certificate_pem())
    assert _rendered(validate_csr(_csr(request=certificate))) == [
        f'spec.request: Invalid value: "{certificate}": PEM block type must be CERTIFICATE REQUEST'
    ]


def test_conditions_and_certificate() -> None:
    csr = _csr()
    csr["status"] = {
        "conditions": [
            {"type": "Approved", "status": "True"},
            {"type": "Denied", "status": "False"},
            {"type": "", "status": ""},
            {"type": "Approved", "status": "True"},
        ],
        "certificate": b64(csr_pem()),
    }
    assert _rendered(validate_csr(csr)) == [
        'status.conditions[1].status: Unsupported value: "False": supported values: "True"',
        'status.conditions: Invalid value: "Denied": Approved and Denied conditions are '
        "mutually exclusive",
        "status.conditions[2].type: Required value",
        "status.conditions[2].status: Required value",
        'status.conditions: Invalid value: "Approved": Approved and Denied conditions are '
        "mutually exclusive",
        'status.conditions[3].type: Duplicate value: "Approved"',
        'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks '
        'are allowed, found "CERTIFICATE REQUEST"',
    ]
    csr["status"] = {"certificate": b64(certificate_pem() + certificate_pem())}
    assert validate_csr(csr) == []


def test_updates_by_subresource() -> None:
    old = _csr()
    approved = _approved(old)
    assert _rendered(validate_csr_update(approved, old)) == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"'
    ]
    assert _rendered(validate_csr_update(approved, old, "status")) == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"'
    ]
    assert validate_csr_update(approved, old, "approval") == []
    assert _rendered(validate_csr_update(old, approved, "approval")) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
    ]
    issued = copy.deepcopy(approved)
    issued["status"]["certificate"] = b64(certificate_pem())
    assert validate_csr_update(issued, approved, "status") == []
    assert _rendered(validate_csr_update(issued, approved, "approval")) == [
        "status.certificate: Forbidden: updates may not set certificate content"
    ]
    reissued = copy.deepcopy(issued)
    reissued["status"]["certificate"] = b64(certificate_pem("bob"))
    assert _rendered(validate_csr_update(reissued, issued, "status")) == [
        "status.certificate: Forbidden: updates may not modify existing certificate content"
    ]
    denied_too = _approved(approved, "Denied")
    assert _rendered(validate_csr_update(denied_too, approved, "approval")) == [
        'status.conditions: Invalid value: "Denied": Approved and Denied conditions are '
        "mutually exclusive"
    ]


def test_extra_values_round_trip_through_protobuf() -> None:
    serializer = ProtobufSerializer()
    csr = _csr(extra={"scopes": ["a", "b"], "empty": None}, username="alice")
    decoded = serializer.decode(serializer.encode(csr))
    assert decoded["spec"]["extra"] == {"scopes": ["a", "b"], "empty": None}
    assert serializer.encode(decoded) == serializer.encode(csr)
