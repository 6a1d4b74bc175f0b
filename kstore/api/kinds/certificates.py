"""certificates.k8s.io/v1 CertificateSigningRequest: one external version with the hub's
shape; cluster-scoped ``certificatesigningrequests``, short name ``csr``, ``status`` and
``approval`` subresources, field selector ``spec.signerName``. No defaults in v1 (``signerName``
and ``usages`` are required).

Validation is Kubernetes' ``validateCertificateSigningRequest`` with its field paths and
messages: ``spec.request`` a PEM ``CERTIFICATE REQUEST`` block, ``usages`` required, known
and without duplicates, ``signerName`` a ``domain/path`` signer name (``ValidateSignerName``;
``kubernetes.io/legacy-unknown`` refused), ``expirationSeconds`` at least 600; conditions with
a type and a status (``Approved``, ``Denied`` and ``Failed`` only ``True``), no duplicate
types, never both ``Approved`` and ``Denied``; ``status.certificate`` only ``CERTIFICATE`` PEM
blocks without headers. Updates relax, as Kubernetes does, what the stored object already
broke, and refuse removing Approved/Denied/Failed conditions, adding or changing
Approved/Denied ones outside the ``approval`` subresource, and setting the certificate outside
``status`` (:func:`validate_csr_update`).

Difference from Kubernetes: the request's and the certificates' DER is checked for its ASN.1
shape only (a SEQUENCE of info, algorithm and signature BIT STRING, nothing after it); the
request's signature is not verified, kstore's API layer has no X.509 library.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kstore.api.gvk import Object
from kstore.api.kinds._lists import list_definition
from kstore.api.scheme import KindDefinition, KindVersion, ResourceInfo
from kstore.api.validation._access import get_list, get_map, get_str, maps, opt_int
from kstore.api.validation.field import (
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kstore.api.validation.names import byte_len, is_dns1123_label, is_dns1123_subdomain
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "APPROVAL",
    "CERTIFICATE_SIGNING_REQUEST",
    "DEFINITIONS",
    "GROUP",
    "KEY_USAGES",
    "validate_csr",
    "validate_csr_update",
]

GROUP: Final = "certificates.k8s.io"
APPROVAL: Final = "approval"
LEGACY_UNKNOWN_SIGNER: Final = "kubernetes.io/legacy-unknown"

#: ``allValidUsages``, sorted as Kubernetes lists them.
KEY_USAGES: Final = tuple(
    sorted(
        (
            "signing",
            "digital signature",
            "content commitment",
            "key encipherment",
            "key agreement",
            "data encipherment",
            "cert sign",
            "crl sign",
            "encipher only",
            "decipher only",
            "any",
            "server auth",
            "client auth",
            "code signing",
            "email protection",
            "s/mime",
            "ipsec end system",
            "ipsec tunnel",
            "ipsec user",
            "timestamping",
            "ocsp signing",
            "microsoft sgc",
            "netscape sgc",
        )
    )
)
_TRUE_ONLY_TYPES: Final = ("Approved", "Denied", "Failed")
_ALL_STATUSES: Final = ("False", "True", "Unknown")
_SPEC: Final = Path("spec")
_CONDITIONS: Final = Path("status", "conditions")
_CERTIFICATE: Final = Path("status", "certificate")
_DNS1123_SUBDOMAIN_MAX: Final = 253
_DNS1123_LABEL_MAX: Final = 63
_PEM: Final = re.compile(
    rb"-----BEGIN (?P<type>[^\r\n-]*)-----\r?\n(?P<body>.*?)-----END (?P=type)-----", re.S
)


# --------------------------------------------------------------------------------- DER / PEM


def _der_element(data: bytes, at: int) -> tuple[int, int, int] | None:
    """(tag, content start, end) of the DER element at ``at``, or None when malformed."""
    if at + 2 > len(data):
        return None
    tag, first = data[at], data[at + 1]
    start = at + 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or start + count > len(data):
            return None
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    end = start + length
    return (tag, start, end) if end <= len(data) else None


def _signed_structure_end(data: bytes, at: int) -> int | None:
    """The end of a signed X.509 structure (SEQUENCE { SEQUENCE, SEQUENCE, BIT STRING }) at
    ``at``, or None when the bytes are not one."""
    outer = _der_element(data, at)
    if outer is None or outer[0] != 0x30:
        return None
    _, pos, end = outer
    for tag in (0x30, 0x30, 0x03):
        inner = _der_element(data, pos)
        if inner is None or inner[0] != tag or inner[2] > end:
            return None
        pos = inner[2]
    return end if pos == end else None


def _pem_blocks(data: bytes) -> list[tuple[str, bool, bytes | None]]:
    """Each PEM block: its type, whether it has headers, its decoded body (None: bad base64)."""
    blocks = []
    for match in _PEM.finditer(data):
        lines = match["body"].splitlines()
        headers = any(b":" in line for line in lines)
        body = b"".join(line.strip() for line in lines if b":" not in line)
        try:
            decoded: bytes | None = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            decoded = None
        blocks.append((match["type"].decode("latin-1"), headers, decoded))
    return blocks


def _bytes_field(value: Any) -> bytes:
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _request_error(request: bytes) -> str | None:
    """``ParseCSR``'s error for the request's PEM, or None when it has the shape of one."""
    blocks = _pem_blocks(request)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST" or blocks[0][2] is None:
        return "PEM block type must be CERTIFICATE REQUEST"
    der = blocks[0][2]
    end = _signed_structure_end(der, 0)
    if end is None:
        return "asn1: structure error: malformed certificate request"
    if end != len(der):
        return "asn1: syntax error: trailing data"
    return None


def _certificate_error(pem: bytes) -> str | None:
    """``validateCertificate``: CERTIFICATE blocks only, no headers, each holding
    certificates."""
    if not pem:
        return None
    blocks = _pem_blocks(pem)
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for kind, headers, der in blocks:
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        if headers:
            return "no PEM block headers are permitted"
        if not der:
            return "found CERTIFICATE PEM block containing 0 certificates"
        pos = 0
        while pos < len(der):
            end = _signed_structure_end(der, pos)
            if end is None:
                return "x509: malformed certificate"
            pos = end
    return None


# ------------------------------------------------------------------------------ validation


def validate_signer_name(name: str, path: Path) -> list[Cause]:
    """``ValidateSignerName``: ``<domain>/<path>``, the domain of DNS labels with two at
    least, the path of DNS subdomains, within Kubernetes' lengths."""
    if not name:
        return [required(path)]
    segments = name.split("/")
    if len(segments) != 2:
        return [
            invalid(
                path,
                name,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        ]
    domain, rest = segments
    causes: list[Cause] = []
    if byte_len(domain) > _DNS1123_SUBDOMAIN_MAX:
        causes.append(too_long(path, _DNS1123_SUBDOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        errs = is_dns1123_label(label)
        if errs:
            causes.extend(invalid(path, domain, f'validating label "{label}": {e}') for e in errs)
            break
    if len(labels) < 2:
        causes.append(
            invalid(path, domain, "should be a domain with at least two segments separated by dots")
        )
    for label in rest.split("."):
        errs = is_dns1123_subdomain(label)
        if errs:
            causes.extend(invalid(path, rest, f'validating label "{label}": {e}') for e in errs)
            break
    limit = _DNS1123_SUBDOMAIN_MAX + (_DNS1123_SUBDOMAIN_MAX + _DNS1123_LABEL_MAX + 1) + 1
    if byte_len(name) > limit:
        causes.append(too_long(path, limit))
    return causes


def _conditions(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return maps(get_list(get_map(obj, "status"), "conditions"))


def _usages(obj: Mapping[str, Any]) -> list[str]:
    usages = get_list(get_map(obj, "spec"), "usages")
    return [u if isinstance(u, str) else "" for u in usages]


def _certificate(obj: Mapping[str, Any]) -> bytes:
    return _bytes_field(get_map(obj, "status").get("certificate"))


class _Options:
    """``certificateValidationOptions``: what an update tolerates because the stored object
    already had it, and what the subresource being written may set."""

    def __init__(self, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> None:
        old_types = [get_str(c, "type") for c in _conditions(old)] if old is not None else []
        old_usages = _usages(old) if old is not None else []
        self.allow_setting_approval = False
        self.allow_setting_certificate = False
        self.allow_both_approved_and_denied = {"Approved", "Denied"} <= set(old_types)
        self.allow_legacy_signer = (
            old is not None and get_str(get_map(old, "spec"), "signerName") == LEGACY_UNKNOWN_SIGNER
        )
        self.allow_duplicate_types = len(set(old_types)) != len(old_types)
        self.allow_empty_type = "" in old_types
        self.allow_arbitrary_certificate = old is not None and (
            _certificate(new) == _certificate(old)
            or _certificate_error(_certificate(old)) is not None
        )
        self.allow_duplicate_usages = len(set(old_usages)) != len(old_usages)
        self.allow_unknown_usages = any(u not in KEY_USAGES for u in old_usages)


def _validate(obj: Mapping[str, Any], opts: _Options) -> list[Cause]:
    causes = validate_object_meta(obj, False, lambda name, prefix: [])
    spec = get_map(obj, "spec")
    request = spec.get("request")
    error = _request_error(_bytes_field(request))
    if error is not None:
        causes.append(invalid(_SPEC.child("request"), request if request else "", error))
    usages = _usages(obj)
    where = _SPEC.child("usages")
    if not usages:
        causes.append(required(where))
    if not opts.allow_unknown_usages:
        causes.extend(
            not_supported(where.index(i), u, KEY_USAGES)
            for i, u in enumerate(usages)
            if u not in KEY_USAGES
        )
    if not opts.allow_duplicate_usages:
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                causes.append(duplicate(where.index(i), usage))
            seen.add(usage)
    signer = get_str(spec, "signerName")
    if not opts.allow_legacy_signer and signer == LEGACY_UNKNOWN_SIGNER:
        causes.append(
            invalid(
                _SPEC.child("signerName"),
                signer,
                "the legacy signerName is not allowed via this API version",
            )
        )
    else:
        causes.extend(validate_signer_name(signer, _SPEC.child("signerName")))
    expiration = opt_int(spec, "expirationSeconds")
    if expiration is not None and expiration < 600:
        causes.append(
            invalid(
                _SPEC.child("expirationSeconds"),
                expiration,
                "may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    causes.extend(_validate_conditions(_conditions(obj), opts))
    if not opts.allow_arbitrary_certificate:
        error = _certificate_error(_certificate(obj))
        if error is not None:
            causes.append(invalid(_CERTIFICATE, "<certificate data>", error))
    return causes


def _validate_conditions(conditions: Sequence[Mapping[str, Any]], opts: _Options) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    approved = denied = False
    for i, condition in enumerate(conditions):
        kind = get_str(condition, "type")
        where = _CONDITIONS.index(i)
        if not opts.allow_empty_type and not kind:
            causes.append(required(where.child("type")))
        allowed = ("True",) if kind in _TRUE_ONLY_TYPES else _ALL_STATUSES
        status = get_str(condition, "status")
        if not status:
            causes.append(required(where.child("status")))
        elif status not in allowed:
            causes.append(not_supported(where.child("status"), status, allowed))
        if not opts.allow_both_approved_and_denied:
            exclusive = "Approved and Denied conditions are mutually exclusive"
            if kind == "Approved":
                approved = True
                if denied:
                    causes.append(invalid(_CONDITIONS, kind, exclusive))
            elif kind == "Denied":
                denied = True
                if approved:
                    causes.append(invalid(_CONDITIONS, kind, exclusive))
        if not opts.allow_duplicate_types:
            if kind in seen:
                causes.append(duplicate(where.child("type"), kind))
            seen.add(kind)
    return causes


def validate_csr(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateCertificateSigningRequestCreate``."""
    return _validate(obj, _Options(None, obj))


def _of_type(obj: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    return [c for c in _conditions(obj) if get_str(c, "type") == kind]


def validate_csr_update(
    new: Mapping[str, Any], old: Mapping[str, Any], subresource: str = ""
) -> list[Cause]:
    """``ValidateCertificateSigningRequest{,Status,Approval}Update`` for ``subresource``
    ("", "status" or "approval")."""
    opts = _Options(old, new)
    opts.allow_setting_certificate = subresource == "status"
    opts.allow_setting_approval = subresource == APPROVAL
    causes = _validate(new, opts)
    for kind in _TRUE_ONLY_TYPES:
        if len(_of_type(new, kind)) < len(_of_type(old, kind)):
            causes.append(
                forbidden(_CONDITIONS, f'updates may not remove a condition of type "{kind}"')
            )
    if not opts.allow_setting_approval:
        for kind in ("Approved", "Denied"):
            before, after = _of_type(old, kind), _of_type(new, kind)
            if len(after) > len(before):
                causes.append(
                    forbidden(_CONDITIONS, f'updates may not add a condition of type "{kind}"')
                )
            elif len(after) == len(before) and after != before:
                causes.append(
                    forbidden(_CONDITIONS, f'updates may not modify a condition of type "{kind}"')
                )
    if _certificate(new) != _certificate(old):
        if not opts.allow_setting_certificate:
            causes.append(forbidden(_CERTIFICATE, "updates may not set certificate content"))
        elif _certificate(old):
            causes.append(
                forbidden(_CERTIFICATE, "updates may not modify existing certificate content")
            )
    causes.extend(validate_object_meta_update(new, old))
    return causes


def _validate_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return validate_csr_update(new, old)


def csr_fields(obj: Object) -> Mapping[str, str]:
    """The field selector's ``spec.signerName``."""
    return {"spec.signerName": get_str(get_map(obj, "spec"), "signerName")}


CERTIFICATE_SIGNING_REQUEST: Final = KindDefinition(
    group=GROUP,
    kind="CertificateSigningRequest",
    versions=(KindVersion(version="v1"),),
    storage_version="v1",
    resource=ResourceInfo(
        plural="certificatesigningrequests",
        singular="certificatesigningrequest",
        namespaced=False,
        short_names=("csr",),
        subresources=(APPROVAL, "status"),
    ),
    validate=validate_csr,
    validate_update=_validate_update,
    field_labels=csr_fields,
    list_kind="CertificateSigningRequestList",
)

DEFINITIONS: tuple[KindDefinition, ...] = (
    CERTIFICATE_SIGNING_REQUEST,
    list_definition(CERTIFICATE_SIGNING_REQUEST),
)
