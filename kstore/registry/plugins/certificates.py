"""CertificateApproval, CertificateSigning and CertificateSubjectRestriction: who may approve
and sign CertificateSigningRequests, and which requests the API server's client signer may
never see.

- CertificateApproval: an UPDATE of ``certificatesigningrequests/approval`` needs the verb
  ``approve`` on the ``signers`` resource of ``certificates.k8s.io`` named by the stored
  request's ``spec.signerName`` (the stored one: a write through ``approval`` may not change
  it anyway), else 403 ``user not permitted to approve requests with signerName "<name>"``.
- CertificateSigning: an UPDATE of ``certificatesigningrequests/status`` that changes
  ``status.certificate`` or ``status.conditions`` needs ``sign`` likewise (``user not permitted
  to sign requests with signerName "<name>"``); a status write that changes neither is let
  through, as Kubernetes lets it.
- In both, the name asked first is the signer's own, then the wildcard ``<domain>/*`` (the
  part before the first ``/``), so a role may grant a whole domain of signers.
- CertificateSubjectRestriction: a CREATE of a request for ``kubernetes.io/kube-apiserver-client``
  whose subject has the organization ``system:masters`` is refused (403 ``use of
  kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed``): such
  a certificate would carry the group that every authorizer lets through. A request that cannot
  be parsed is 403 ``failed to parse CSR: <reason>``.

The authorizer asked is the server's (:func:`~kstore.registry.admission.policy_source.
authorizer_of`, what ``--authorization-mode`` builds, ``system:masters`` allowed first); a
store without one (``kstore.open``) allows everything, so the first two plugins then admit
every request.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from kstore.api.cel.admission import AuthorizationCheck, allow_all
from kstore.api.kinds.certificates import GROUP
from kstore.api.kinds.csr_subject import request_organizations
from kstore.registry.admission.policy_source import authorizer_of
from kstore.registry.interface import AdmissionAttributes, AdmissionHook, Operation, Registry
from kstore.registry.plugins._common import forbidden

__all__ = ["approval_hooks", "signing_hooks", "subject_restriction_hooks"]

_KIND: Final = "CertificateSigningRequest"
_CLIENT_SIGNER: Final = "kubernetes.io/kube-apiserver-client"
_MASTERS: Final = "system:masters"

Hooks = tuple[AdmissionHook | None, AdmissionHook | None]


def _about_csr(attributes: AdmissionAttributes, subresource: str, operation: Operation) -> bool:
    definition = attributes.definition
    return (
        definition.group == GROUP
        and definition.kind == _KIND
        and attributes.subresource == subresource
        and attributes.operation == operation
    )


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _signer_name(obj: Any) -> str:
    return str(_map(_map(obj).get("spec")).get("signerName") or "")


def _authorized_for_signer(registry: Registry, attributes: AdmissionAttributes, verb: str) -> bool:
    """Whether the request's user may ``verb`` the stored request's signer: its own name or
    the wildcard of its domain."""
    authorize = authorizer_of(registry) or allow_all
    user = attributes.user.fields() if attributes.user is not None else {}
    signer = _signer_name(attributes.old_object)
    for name in (signer, signer.split("/", 1)[0] + "/*"):
        check = AuthorizationCheck(
            user=user,
            verb=verb,
            resource_request=True,
            api_group=GROUP,
            api_version="*",
            resource="signers",
            name=name,
        )
        if authorize(check).allowed:
            return True
    return False


def approval_hooks(registry: Registry) -> Hooks:
    def validate(attributes: AdmissionAttributes) -> None:
        if not _about_csr(attributes, "approval", Operation.UPDATE):
            return
        if not _authorized_for_signer(registry, attributes, "approve"):
            signer = _signer_name(attributes.old_object)
            raise forbidden(
                attributes, f'user not permitted to approve requests with signerName "{signer}"'
            )

    return None, validate


def _status(obj: Any) -> dict[str, Any]:
    return _map(_map(obj).get("status"))


def signing_hooks(registry: Registry) -> Hooks:
    def validate(attributes: AdmissionAttributes) -> None:
        if not _about_csr(attributes, "status", Operation.UPDATE):
            return
        new, old = _status(attributes.object), _status(attributes.old_object)
        # Kubernetes compares with semantic equality: an absent list equals an empty one.
        same_certificate = (new.get("certificate") or "") == (old.get("certificate") or "")
        same_conditions = (new.get("conditions") or []) == (old.get("conditions") or [])
        if same_certificate and same_conditions:
            return
        if not _authorized_for_signer(registry, attributes, "sign"):
            signer = _signer_name(attributes.old_object)
            raise forbidden(
                attributes, f'user not permitted to sign requests with signerName "{signer}"'
            )

    return None, validate


def subject_restriction_hooks(registry: Registry) -> Hooks:
    def validate(attributes: AdmissionAttributes) -> None:
        if not _about_csr(attributes, "", Operation.CREATE):
            return
        if _signer_name(attributes.object) != _CLIENT_SIGNER:
            return
        encoded = _map(_map(attributes.object).get("spec")).get("request")
        try:
            organizations = request_organizations(_pem(encoded))
        except ValueError as exc:
            raise forbidden(attributes, f"failed to parse CSR: {exc}") from exc
        if _MASTERS in organizations:
            raise forbidden(
                attributes,
                f"use of {_CLIENT_SIGNER} signer with {_MASTERS} group is not allowed",
            )

    return None, validate


def _pem(encoded: Any) -> bytes:
    """``spec.request`` as bytes: base64 in the object's JSON shape."""
    if not isinstance(encoded, str):
        return b""
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return b""
