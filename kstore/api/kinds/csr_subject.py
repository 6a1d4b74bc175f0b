"""The subject organizations of a CertificateSigningRequest's PKCS#10 request, read from its
DER without an X.509 library (kstore's API layer has none).

``CertificationRequest`` is ``SEQUENCE { CertificationRequestInfo, algorithm, signature }`` and
``CertificationRequestInfo`` is ``SEQUENCE { version INTEGER, subject Name, ... }``; a ``Name``
is a SEQUENCE of relative names, each a SET of ``SEQUENCE { type OID, value }``. The
organizations are the values whose type is ``2.5.4.10``, in order, across every relative name,
as Go's ``pkix.Name`` collects ``Subject.Organization``; a value that is not one of the ASN.1
string types is skipped, as Go skips a value it cannot read as a string.

Raises :class:`ValueError` with the reason when the bytes are not a request of that shape.
"""

from __future__ import annotations

from typing import Final

from kstore.api.kinds.certificates import _der_element, _pem_blocks

__all__ = ["request_organizations"]

_SEQUENCE: Final = 0x30
_SET: Final = 0x31
_INTEGER: Final = 0x02
_OID: Final = 0x06
#: DER of the OID 2.5.4.10 (id-at-organizationName), without tag and length.
_ORGANIZATION: Final = bytes((0x55, 0x04, 0x0A))
#: The ASN.1 string types and how their bytes read as text.
_STRINGS: Final = {
    0x0C: "utf-8",  # UTF8String
    0x12: "ascii",  # NumericString
    0x13: "ascii",  # PrintableString
    0x14: "latin-1",  # T61String, read as Go reads it
    0x16: "ascii",  # IA5String
    0x1E: "utf-16-be",  # BMPString
}


def _children(der: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    """The DER elements laid end to end between ``start`` and ``end``."""
    found = []
    at = start
    while at < end:
        element = _der_element(der, at)
        if element is None or element[2] > end:
            raise ValueError("asn1: structure error: malformed certificate request")
        found.append(element)
        at = element[2]
    return found


def _expect(element: tuple[int, int, int] | None, tag: int) -> tuple[int, int, int]:
    if element is None or element[0] != tag:
        raise ValueError("asn1: structure error: malformed certificate request")
    return element


def request_organizations(request_pem: bytes) -> list[str]:
    """The subject's organization values of the first ``CERTIFICATE REQUEST`` PEM block."""
    blocks = _pem_blocks(request_pem)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST" or blocks[0][2] is None:
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    der = blocks[0][2]
    request = _expect(_der_element(der, 0), _SEQUENCE)
    info = _expect(_der_element(der, request[1]), _SEQUENCE)
    version = _expect(_der_element(der, info[1]), _INTEGER)
    subject = _expect(_der_element(der, version[2]), _SEQUENCE)
    organizations = []
    for relative in _children(der, subject[1], subject[2]):
        _expect(relative, _SET)
        for pair in _children(der, relative[1], relative[2]):
            _expect(pair, _SEQUENCE)
            parts = _children(der, pair[1], pair[2])
            kind = _expect(parts[0] if parts else None, _OID)
            if len(parts) < 2 or der[kind[1] : kind[2]] != _ORGANIZATION:
                continue
            value = parts[1]
            encoding = _STRINGS.get(value[0])
            if encoding is None:
                continue
            try:
                organizations.append(der[value[1] : value[2]].decode(encoding))
            except UnicodeDecodeError as exc:
                raise ValueError("asn1: syntax error: invalid string") from exc
    return organizations
