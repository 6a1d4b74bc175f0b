"""networking.k8s.io Ingress validation: Kubernetes' ``ValidateIngressCreate``,
``ValidateIngressUpdate`` and ``ValidateIngressStatusUpdate``
(``pkg/apis/networking/validation``), with its field paths and messages.

- metadata: namespaced, the name a DNS-1123 subdomain;
- spec: ``defaultBackend`` or at least one rule; a rule's ``host`` a DNS-1123 subdomain, or a
  wildcard one (``*.example.com``), never an IP address; an ``http`` rule value has paths, each
  with a ``pathType`` (``Exact``, ``Prefix`` or ``ImplementationSpecific``, not defaulted in v1)
  and, for ``Exact`` and ``Prefix``, an absolute path without ``//``, ``/./``, ``/../``, ``%2f``
  and not ending in ``/..`` or ``/.``; a backend names exactly one of a service (a DNS-1035
  label, with exactly one of a port name or number) or a typed resource; TLS hosts as rule hosts,
  TLS secret names DNS-1123 subdomains; ``ingressClassName`` a DNS-1123 subdomain; on create,
  the deprecated ``kubernetes.io/ingress.class`` annotation must agree with ``ingressClassName``;
- update: what an update of metadata allows, then the same spec rules, except that values the
  stored object already had wrong stay acceptable (invalid TLS secret names, invalid rule values
  under a wildcard host, service names that are DNS labels but not DNS-1035 labels), as
  Kubernetes keeps them for objects stored by older versions;
- status: load balancer ingress points with a valid IP and a DNS-name hostname.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kstore.api.validation._access import get_list, get_map, get_str, maps
from kstore.api.validation.field import JSONValue, Path, invalid, not_supported, required
from kstore.api.validation.names import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    byte_len,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_valid_port_name,
    is_valid_port_num,
    max_len_error,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    regex_error,
)
from kstore.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from kstore.errors import Cause

__all__ = [
    "INGRESS_CLASS_ANNOTATION",
    "PATH_TYPES",
    "is_wildcard_dns1123_subdomain",
    "parse_ip_sloppy",
    "validate_ingress",
    "validate_ingress_status_update",
    "validate_ingress_update",
]

#: The annotation that named an Ingress's class before ``spec.ingressClassName``.
INGRESS_CLASS_ANNOTATION: Final = "kubernetes.io/ingress.class"
#: ``supportedPathTypes``, sorted as Kubernetes lists them in its message.
PATH_TYPES: Final = ("Exact", "ImplementationSpecific", "Prefix")
_ABSOLUTE_PATH_TYPES: Final = ("Exact", "Prefix")
_INVALID_PATH_SEQUENCES: Final = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES: Final = ("/..", "/.")

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_WILDCARD_FMT: Final = "\\*\\." + _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_WILDCARD_RE: Final = re.compile(_WILDCARD_FMT)
_WILDCARD_MSG: Final = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character"
)
_NOT_IP: Final = "must be a DNS name, not an IP address"
_BAD_IP: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_IPV4_SLOPPY_RE: Final = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}")

_SPEC: Final = Path("spec")


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``: ``*.`` then a DNS-1123 subdomain, 253 characters in all."""
    errs = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _WILDCARD_RE.fullmatch(value):
        errs.append(regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def parse_ip_sloppy(value: str) -> bool:
    """Whether Go's ``netutils.ParseIPSloppy`` reads ``value`` as an IP address: IPv4 (leading
    zeros allowed, read as decimal) or IPv6, without a zone."""
    if "%" in value:
        return False
    if _IPV4_SLOPPY_RE.fullmatch(value):
        return all(int(octet) <= 255 for octet in value.split("."))
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, kw_only=True, slots=True)
class _Options:
    """``IngressValidationOptions``: leniencies an update grants to what was already stored."""

    allow_invalid_secret_name: bool = False
    allow_invalid_wildcard_host_rule: bool = False
    allow_relaxed_service_name: bool = False


def _host_problems(host: str) -> list[str]:
    if "*" in host:
        return is_wildcard_dns1123_subdomain(host)
    return is_dns1123_subdomain(host)


def _validate_typed_reference(ref: Mapping[str, Any], path: Path) -> list[Cause]:
    causes: list[Cause] = []
    api_group = ref.get("apiGroup")
    if isinstance(api_group, str):
        causes.extend(
            invalid(path.child("apiGroup"), api_group, msg)
            for msg in is_dns1123_subdomain(api_group)
        )
    for key in ("kind", "name"):
        value = get_str(ref, key)
        if not value:
            causes.append(required(path.child(key)))
        else:
            causes.extend(invalid(path.child(key), value, m) for m in is_path_segment_name(value))
    return causes


def _validate_backend(backend: Mapping[str, Any], path: Path, opts: _Options) -> list[Cause]:
    resource = backend.get("resource")
    service = backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if isinstance(resource, Mapping):
        return _validate_typed_reference(resource, path.child("resource"))
    if not isinstance(service, Mapping):
        return [invalid(path, "", "resource or service backend is required")]
    causes: list[Cause] = []
    name = get_str(service, "name")
    if not name:
        causes.append(required(path.child("service", "name")))
    else:
        check = name_is_dns_label if opts.allow_relaxed_service_name else name_is_dns1035_label
        causes.extend(invalid(path.child("service", "name"), name, m) for m in check(name, False))
    port = get_map(service, "port")
    port_name = get_str(port, "name")
    number = port.get("number")
    port_number = number if isinstance(number, int) and not isinstance(number, bool) else 0
    if port_name and port_number:
        causes.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        causes.extend(
            invalid(path.child("service", "port", "name"), port_name, msg)
            for msg in is_valid_port_name(port_name)
        )
    elif port_number:
        causes.extend(
            invalid(path.child("service", "port", "number"), port_number, msg)
            for msg in is_valid_port_num(port_number)
        )
    else:
        causes.append(required(path, "port name or number is required"))
    return causes


def _validate_http_path(item: Mapping[str, Any], path: Path, opts: _Options) -> list[Cause]:
    path_type = item.get("pathType")
    if not isinstance(path_type, str):
        return [required(path.child("pathType"), "pathType must be specified")]
    causes: list[Cause] = []
    value = get_str(item, "path")
    where = path.child("path")
    if path_type in _ABSOLUTE_PATH_TYPES:
        if not value.startswith("/"):
            causes.append(invalid(where, value, "must be an absolute path"))
        if value:
            causes.extend(
                invalid(where, value, f"must not contain '{seq}'")
                for seq in _INVALID_PATH_SEQUENCES
                if seq in value
            )
            causes.extend(
                invalid(where, value, f"cannot end with '{suffix}'")
                for suffix in _INVALID_PATH_SUFFIXES
                if value.endswith(suffix)
            )
    elif path_type == "ImplementationSpecific":
        if value and not value.startswith("/"):
            causes.append(invalid(where, value, "must be an absolute path"))
    else:
        causes.append(not_supported(path.child("pathType"), path_type, PATH_TYPES))
    causes.extend(_validate_backend(get_map(item, "backend"), path.child("backend"), opts))
    return causes


def _validate_rule_value(rule: Mapping[str, Any], path: Path, opts: _Options) -> list[Cause]:
    http = rule.get("http")
    if not isinstance(http, Mapping):
        return []
    where = path.child("http", "paths")
    paths = maps(get_list(http, "paths"))
    causes: list[Cause] = [] if paths else [required(where)]
    for i, item in enumerate(paths):
        causes.extend(_validate_http_path(item, where.index(i), opts))
    return causes


def _validate_rules(rules: list[Mapping[str, Any]], path: Path, opts: _Options) -> list[Cause]:
    causes: list[Cause] = []
    for i, rule in enumerate(rules):
        host = get_str(rule, "host")
        wildcard = False
        if host:
            where = path.index(i).child("host")
            if parse_ip_sloppy(host):
                causes.append(invalid(where, host, _NOT_IP))
            wildcard = "*" in host
            causes.extend(invalid(where, host, msg) for msg in _host_problems(host))
        if not wildcard or not opts.allow_invalid_wildcard_host_rule:
            causes.extend(_validate_rule_value(rule, path.index(i), opts))
    return causes


def _secret_name_problems(name: str) -> list[str]:
    return name_is_dns_subdomain(name, False) if name else []


def _validate_tls(tls: list[Mapping[str, Any]], path: Path, opts: _Options) -> list[Cause]:
    causes: list[Cause] = []
    for i, entry in enumerate(tls):
        for j, host in enumerate(get_list(entry, "hosts")):
            if isinstance(host, str):
                where = path.index(i).child("hosts").index(j)
                causes.extend(invalid(where, host, msg) for msg in _host_problems(host))
        if not opts.allow_invalid_secret_name:
            secret = get_str(entry, "secretName")
            causes.extend(
                invalid(path.index(i).child("secretName"), secret, msg)
                for msg in _secret_name_problems(secret)
            )
    return causes


def _validate_spec(spec: Mapping[str, Any], opts: _Options) -> list[Cause]:
    causes: list[Cause] = []
    rules = maps(get_list(spec, "rules"))
    default_backend = spec.get("defaultBackend")
    if not rules and default_backend is None:
        causes.append(
            invalid(
                _SPEC,
                JSONValue(spec.get("rules")),
                "either `defaultBackend` or `rules` must be specified",
            )
        )
    if isinstance(default_backend, Mapping):
        causes.extend(_validate_backend(default_backend, _SPEC.child("defaultBackend"), opts))
    if rules:
        causes.extend(_validate_rules(rules, _SPEC.child("rules"), opts))
    tls = maps(get_list(spec, "tls"))
    if tls:
        causes.extend(_validate_tls(tls, _SPEC.child("tls"), opts))
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        causes.extend(
            invalid(_SPEC.child("ingressClassName"), class_name, msg)
            for msg in name_is_dns_subdomain(class_name, False)
        )
    return causes


def _relaxed_service_names(old: Mapping[str, Any]) -> bool:
    """Whether the stored Ingress names a service that is a DNS label but not a DNS-1035 label
    (then such names stay allowed; Kubernetes' RelaxedServiceNameValidation gate is off)."""
    spec = get_map(old, "spec")
    backends = [get_map(spec, "defaultBackend")]
    for rule in maps(get_list(spec, "rules")):
        backends.extend(
            get_map(item, "backend") for item in maps(get_list(get_map(rule, "http"), "paths"))
        )
    for backend in backends:
        name = get_str(get_map(backend, "service"), "name")
        if (
            "service" in backend
            and not name_is_dns_label(name, False)
            and name_is_dns1035_label(name, False)
        ):
            return True
    return False


def _update_options(old: Mapping[str, Any]) -> _Options:
    spec = get_map(old, "spec")
    invalid_secret = any(
        _secret_name_problems(get_str(entry, "secretName")) for entry in maps(get_list(spec, "tls"))
    )
    invalid_wildcard_rule = any(
        "*" in get_str(rule, "host") and _validate_rule_value(rule, Path("rules"), _Options())
        for rule in maps(get_list(spec, "rules"))
    )
    return _Options(
        allow_invalid_secret_name=invalid_secret,
        allow_invalid_wildcard_host_rule=invalid_wildcard_rule,
        allow_relaxed_service_name=_relaxed_service_names(old),
    )


def validate_ingress(obj: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIngressCreate``."""
    causes = validate_object_meta(obj, True, name_is_dns_subdomain)
    spec = get_map(obj, "spec")
    causes.extend(_validate_spec(spec, _Options()))
    annotations = get_map(get_map(obj, "metadata"), "annotations")
    annotation = annotations.get(INGRESS_CLASS_ANNOTATION)
    class_name = spec.get("ingressClassName")
    if isinstance(annotation, str) and isinstance(class_name, str) and annotation != class_name:
        # Kubernetes' path for this one starts at "annotations", not "metadata.annotations".
        causes.append(
            invalid(
                Path("annotations").child(INGRESS_CLASS_ANNOTATION),
                annotation,
                "must match `ingressClassName` when both are specified",
            )
        )
    return causes


def validate_ingress_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIngressUpdate``: the metadata rules of an update, then the spec, lenient
    where the stored object already broke a rule."""
    causes = validate_object_meta_update(new, old)
    causes.extend(validate_object_meta(new, True, name_is_dns_subdomain))
    causes.extend(_validate_spec(get_map(new, "spec"), _update_options(old)))
    return causes


def validate_ingress_status_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """``ValidateIngressStatusUpdate``: the load balancer's ingress points. IPs are read as
    Kubernetes reads legacy IP fields while StrictIPCIDRValidation is off (leading zeros and
    IPv4-mapped IPv6 addresses pass)."""
    causes = validate_object_meta_update(new, old)
    path = Path("status", "loadBalancer", "ingress")
    points = maps(get_list(get_map(get_map(new, "status"), "loadBalancer"), "ingress"))
    for i, point in enumerate(points):
        ip = get_str(point, "ip")
        if ip and not parse_ip_sloppy(ip):
            causes.append(invalid(path.index(i).child("ip"), ip, _BAD_IP))
        hostname = get_str(point, "hostname")
        if hostname:
            where = path.index(i).child("hostname")
            causes.extend(invalid(where, hostname, msg) for msg in is_dns1123_subdomain(hostname))
            if parse_ip_sloppy(hostname):
                causes.append(invalid(where, hostname, _NOT_IP))
    return causes
