"""Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) as v1.36 enables them for CRD
rules: regex ``find``/``findAll``, URLs, quantities, IP addresses and CIDRs, named formats and
semantic versions. The lists and strings extensions live in :mod:`._stdlib`.

The opaque values (:class:`Quantity`, :class:`URL`, :class:`IP`, :class:`CIDR`,
:class:`Semver`, :class:`NamedFormat`) carry ``cel_type_name`` so that ``type(x)`` names them
as Kubernetes does. Error texts are the libraries' own (``invalid quantity``...).
"""

from __future__ import annotations

import datetime
import ipaddress
import re
import urllib.parse
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from kstore.api.cel._format import format_string
from kstore.api.cel._stdlib import regex
from kstore.api.cel._values import NONE, EvalError, NoOverload, Optional
from kstore.api.quantity import parse_quantity
from kstore.api.validation import names

__all__ = ["CIDR", "FUNCTIONS", "IP", "URL", "NamedFormat", "Quantity", "Semver"]


def _text(v: Any) -> str:
    if type(v) is not str:
        raise NoOverload()
    return str(v)


# --- regex ------------------------------------------------------------------------------------


def _find(s: Any, pattern: Any) -> str:
    m = regex(_text(pattern)).search(_text(s))
    return m.group(0) if m else ""


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list[str]:
    if type(limit) is not int:
        raise NoOverload()
    if limit == 0:
        return []
    found = [m.group(0) for m in regex(_text(pattern)).finditer(_text(s))]
    return found if limit < 0 else found[:limit]


# --- quantity ---------------------------------------------------------------------------------


class Quantity:
    cel_type_name = "kubernetes.Quantity"
    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Fraction) -> None:
        self.text, self.value = text, value

    def compare_to(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


_QUANTITY_RE: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)


def _quantity(v: Any) -> Quantity:
    text = _text(v)
    value = parse_quantity(text) if _QUANTITY_RE.fullmatch(text) else None
    if value is None:
        raise EvalError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    return Quantity(text, value)


def _is_quantity(v: Any) -> bool:
    text = _text(v)
    return bool(_QUANTITY_RE.fullmatch(text)) and parse_quantity(text) is not None


def _q(v: Any) -> Quantity:
    if type(v) is not Quantity:
        raise NoOverload()
    return v


def _q_add(a: Any, b: Any) -> Quantity:
    other = Fraction(b) if type(b) is int else _q(b).value
    value = _q(a).value + other
    return Quantity(str(value), value)


def _q_sub(a: Any, b: Any) -> Quantity:
    other = Fraction(b) if type(b) is int else _q(b).value
    value = _q(a).value - other
    return Quantity(str(value), value)


def _q_as_integer(q: Any) -> int:
    value = _q(q).value
    if value.denominator != 1 or not -(1 << 63) <= value <= (1 << 63) - 1:
        raise EvalError("cannot convert value to integer")
    return int(value)


# --- URL ----------------------------------------------------------------------------------------


class URL:
    cel_type_name = "kubernetes.URL"
    __slots__ = ("parts",)

    def __init__(self, parts: urllib.parse.SplitResult) -> None:
        self.parts = parts

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and other.parts == self.parts

    def __hash__(self) -> int:
        return hash(self.parts)


_PORT: Final = re.compile(r"[0-9]*")


def _parse_url(text: str) -> URL | None:
    """Go's ``url.ParseRequestURI``: an absolute URI or an absolute path; a ``#`` is not a
    fragment marker; control characters, a bad port or an unbracketed IPv6 host fail."""
    if not text or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return None
    scheme, sep, rest = text.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        if not text.startswith("/"):
            return None
        scheme, rest = "", text
    elif not rest.startswith("/") and not rest:
        return None
    path_part, _, query = rest.partition("?")
    netloc = ""
    if path_part.startswith("//"):
        netloc, slash, path = path_part[2:].partition("/")
        path = slash + path
        host = netloc.rpartition("@")[2]
        if host.startswith("["):
            close = host.find("]")
            if close < 0 or not _PORT.fullmatch(host[close + 1 :].removeprefix(":")):
                return None
        elif ":" in host and not _PORT.fullmatch(host.split(":", 1)[1]):
            return None
        if " " in host:
            return None
    else:
        path = path_part
    return URL(urllib.parse.SplitResult(scheme, netloc, path, query, ""))


def _url(v: Any) -> URL:
    found = _parse_url(_text(v))
    if found is None:
        raise EvalError(
            f'URL parse error during conversion from string: parse "{v}": invalid URI for request'
        )
    return found


def _u(v: Any) -> urllib.parse.SplitResult:
    if type(v) is not URL:
        raise NoOverload()
    return v.parts


def _hostname(v: Any) -> str:
    host = _u(v).netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1 : host.index("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


def _port(v: Any) -> str:
    host = _u(v).netloc.rpartition("@")[2]
    if host.startswith("["):
        rest = host[host.index("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    return host.rsplit(":", 1)[1] if ":" in host else ""


def _query(v: Any) -> dict[str, list[str]]:
    return {
        k: list(vs) for k, vs in urllib.parse.parse_qs(_u(v).query, keep_blank_values=True).items()
    }


# --- IP and CIDR ----------------------------------------------------------------------------


class IP:
    cel_type_name = "net.IP"
    __slots__ = ("addr",)

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr

    def cel_string(self) -> str:
        return str(self.addr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)


class CIDR:
    cel_type_name = "net.CIDR"
    __slots__ = ("iface",)

    def __init__(self, iface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> None:
        self.iface = iface

    def cel_string(self) -> str:
        return str(self.iface)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and other.iface == self.iface

    def __hash__(self) -> int:
        return hash(self.iface)


def _parse_ip(text: str) -> IP | None:
    # Kubernetes rejects zones and IPv4-mapped IPv6 and leading zeros (netip.ParseAddr).
    if "%" in text:
        return None
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return None
    return IP(addr)


def _ip(v: Any) -> IP:
    found = _parse_ip(_text(v))
    if found is None:
        raise EvalError(
            f"IP Address {v!r} parse error during conversion from string: "
            f"ParseAddr({v!r}): unable to parse IP"
        )
    return found


def _ip_of(v: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if type(v) is IP:
        return v.addr
    if type(v) is str:
        return _ip(v).addr
    raise NoOverload()


def _parse_cidr(text: str) -> CIDR | None:
    if "/" not in text or "%" in text:
        return None
    try:
        iface = ipaddress.ip_interface(text)
    except ValueError:
        return None
    return CIDR(iface)


def _cidr(v: Any) -> CIDR:
    found = _parse_cidr(_text(v))
    if found is None:
        raise EvalError(
            f"network address parse error during conversion from string: "
            f"network address parse error during conversion from string: {v}"
        )
    return found


def _cidr_of(v: Any) -> CIDR:
    if type(v) is CIDR:
        return v
    if type(v) is str:
        return _cidr(v)
    raise NoOverload()


def _ip_member(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def member(v: Any) -> Any:
        if type(v) is not IP:
            raise NoOverload()
        return fn(v.addr)

    return member


def _is_canonical(v: Any) -> bool:
    ip = _ip(v)
    return bool(str(ip.addr) == v)


def _global_unicast(a: Any) -> bool:
    return not (
        a.is_unspecified
        or a.is_loopback
        or a.is_multicast
        or a.is_link_local
        or (isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"))
    )


# --- semver -----------------------------------------------------------------------------------

_SEMVER_RE: Final = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


class Semver:
    cel_type_name = "kubernetes.Semver"
    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: str) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    def compare_to(self, other: Semver) -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return 1 if a > b else -1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:
            return 1 if not self.pre else -1
        return _compare_pre(self.pre, other.pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare_to(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch))


def _compare_pre(a: str, b: str) -> int:
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return 1 if int(x) > int(y) else -1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return 1 if x > y else -1
    return (len(a.split(".")) > len(b.split("."))) - (len(a.split(".")) < len(b.split(".")))


def _parse_semver(text: str, normalize: bool = False) -> Semver | None:
    if normalize:
        text = text.removeprefix("v")
        m = re.match(r"([^-+]*)(.*)", text, re.S)
        assert m is not None
        core, tail = m.group(1), m.group(2)
        nums = core.split(".")
        if 0 < len(nums) < 3:
            nums += ["0"] * (3 - len(nums))
        nums = [n.lstrip("0") or "0" for n in nums]
        text = ".".join(nums) + tail
    m = _SEMVER_RE.fullmatch(text)
    if m is None:
        return None
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or "")


def _semver(v: Any, normalize: Any = False) -> Semver:
    found = _parse_semver(_text(v), bool(normalize))
    if found is None:
        raise EvalError("Semver parse error during conversion from string: " + str(v))
    return found


def _sv(v: Any) -> Semver:
    if type(v) is not Semver:
        raise NoOverload()
    return v


def _compare(a: Any, b: Any) -> int:
    if type(a) is not type(b) or type(a) not in (Quantity, Semver):
        raise NoOverload()
    return int(a.compare_to(b))


# --- named formats ----------------------------------------------------------------------------
# Kubernetes' format library: the apimachinery name validators (kstore.api.validation.names
# words them identically) and kube-openapi's strfmt checks.

_UUID: Final = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
_BASE64: Final = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


def _uri(s: str) -> list[str]:
    if _parse_url(s) is None:
        return [f'parse "{s}": invalid URI for request']
    return []


def _date_check(s: str) -> list[str]:
    try:
        datetime.date.fromisoformat(s)
    except ValueError:
        return ["invalid date"]
    return [] if _DATE.fullmatch(s) else ["invalid date"]


def _datetime_check(s: str) -> list[str]:
    try:
        parsed = datetime.datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return ["invalid datetime"]
    return [] if parsed.tzinfo is not None else ["invalid datetime"]


_FORMATS: Final[dict[str, Callable[[str], list[str]]]] = {
    "dns1123Label": lambda s: names.name_is_dns_label(s, False),
    "dns1123Subdomain": lambda s: names.name_is_dns_subdomain(s, False),
    "dns1035Label": lambda s: names.name_is_dns1035_label(s, False),
    "qualifiedName": names.is_qualified_name,
    "dns1123LabelPrefix": lambda s: names.name_is_dns_label(s, True),
    "dns1123SubdomainPrefix": lambda s: names.name_is_dns_subdomain(s, True),
    "dns1035LabelPrefix": lambda s: names.name_is_dns1035_label(s, True),
    "labelValue": names.is_label_value,
    "uri": _uri,
    "uuid": lambda s: [] if _UUID.fullmatch(s) else ["does not match the UUID format"],
    "byte": lambda s: [] if _BASE64.fullmatch(s) else ["invalid base64"],
    "date": _date_check,
    "datetime": _datetime_check,
}


class NamedFormat:
    cel_type_name = "kubernetes.NamedFormat"
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _validate_format(fmt: Any, value: Any) -> Optional:
    if type(fmt) is not NamedFormat:
        raise NoOverload()
    check = _FORMATS.get(fmt.name)
    if check is None:
        raise EvalError(f"format {fmt.name} is not supported")
    errs = check(_text(value))
    return Optional(errs) if errs else NONE


def _named(name: Any) -> Optional:
    return Optional(NamedFormat(name)) if _text(name) in _FORMATS else NONE


FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "format": format_string,
    "find": _find,
    "findAll": _find_all,
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "sign": lambda q: (_q(q).value > 0) - (_q(q).value < 0),
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "compareTo": _compare,
    "add": _q_add,
    "sub": _q_sub,
    "asInteger": _q_as_integer,
    "isInteger": lambda q: _q(q).value.denominator == 1,
    "asApproximateFloat": lambda q: float(_q(q).value),
    "url": _url,
    "isURL": lambda v: _parse_url(_text(v)) is not None,
    "getScheme": lambda u: _u(u).scheme,
    "getHost": lambda u: _u(u).netloc.rpartition("@")[2],
    "getHostname": _hostname,
    "getPort": _port,
    "getEscapedPath": lambda u: urllib.parse.quote(_u(u).path, safe="/!$&'()*+,;=:@%~"),
    "getQuery": _query,
    "ip": lambda v: IP(_cidr_of(v).iface.ip) if type(v) is CIDR else _ip(v),
    "isIP": lambda v: _parse_ip(_text(v)) is not None,
    "ip.isCanonical": _is_canonical,
    "family": _ip_member(lambda a: a.version),
    "isUnspecified": _ip_member(lambda a: a.is_unspecified),
    "isLoopback": _ip_member(lambda a: a.is_loopback),
    "isLinkLocalMulticast": _ip_member(
        lambda a: a in ipaddress.ip_network("224.0.0.0/24" if a.version == 4 else "ff02::/16")
    ),
    "isLinkLocalUnicast": _ip_member(lambda a: a.is_link_local and not a.is_multicast),
    "isGlobalUnicast": _ip_member(_global_unicast),
    "cidr": _cidr,
    "isCIDR": lambda v: _parse_cidr(_text(v)) is not None,
    "containsIP": lambda c, ip: _ip_of(ip) in _cidr_of(c).iface.network,
    "containsCIDR": lambda c, o: (
        _cidr_of(o).iface.network.subnet_of(_cidr_of(c).iface.network)  # type: ignore[arg-type]
        if _cidr_of(o).iface.version == _cidr_of(c).iface.version
        else False
    ),
    "masked": lambda c: CIDR(ipaddress.ip_interface(str(_cidr_of(c).iface.network))),
    "prefixLength": lambda c: _cidr_of(c).iface.network.prefixlen,
    "semver": _semver,
    "isSemver": lambda v, n=False: _parse_semver(_text(v), bool(n)) is not None,
    "major": lambda s: _sv(s).major,
    "minor": lambda s: _sv(s).minor,
    "patch": lambda s: _sv(s).patch,
    "format.named": _named,
    "validate": _validate_format,
    **{f"format.{name}": (lambda n=name: NamedFormat(n)) for name in _FORMATS},
}
