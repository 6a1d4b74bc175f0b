"""IP addresses and CIDRs parsed as Kubernetes parses its legacy fields (k8s.io/utils/net's
``ParseIPSloppy`` and ``ParseCIDRSloppy``, Go's parser before 1.17, while the
``StrictIPCIDRValidation`` gate is off): IPv4 parts may have leading zeros, read as decimal; a
CIDR's host bits are cleared."""

from __future__ import annotations

import ipaddress

__all__ = ["IP", "Network", "parse_cidr_sloppy", "parse_ip_sloppy"]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ipv4(text: str) -> ipaddress.IPv4Address | None:
    parts = text.split(".")
    if len(parts) != 4 or any(not p.isascii() or not p.isdigit() for p in parts):
        return None
    values = [int(p) for p in parts]
    if any(v > 255 for v in values):
        return None
    return ipaddress.IPv4Address(".".join(str(v) for v in values))


def _ip(text: str) -> IP | None:
    ip = _ipv4(text)
    if ip is not None:
        return ip
    if "%" in text:  # Go's parser takes no zone
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def parse_ip_sloppy(text: str) -> IP | None:
    """``ParseIPSloppy``: the address, or None. An IPv4-mapped IPv6 address is returned as the
    IPv4 address it maps (Go's ``To4`` finds one in it)."""
    ip = _ip(text)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse_cidr_sloppy(text: str) -> Network | None:
    """``ParseCIDRSloppy``: the network of ``text`` (host bits cleared), or None."""
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit():
        return None
    ip = _ip(address)
    if ip is None:
        return None
    bits = int(prefix)
    if bits > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{bits}", strict=False)
