"""core/v1 Endpoints: the resource, defaulting, validation and the printed endpoints."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.endpoints import (
    parse_ip_sloppy,
    validate_endpoints,
    validate_endpoints_update,
)
from kstore.server.printers import printer_for

SCHEME = builtin_scheme()


def _endpoints(*subsets: dict[str, Any]) -> dict[str, Any]:
    obj = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "4"},
        "subsets": list(subsets),
    }
    SCHEME.default(obj)
    return obj


def test_resource_and_protocol_default() -> None:
    info = SCHEME.resource(GroupVersion("", "v1"), "endpoints").info
    assert (info.singular, info.short_names, info.subresources) == ("endpoints", ("ep",), ())
    obj = _endpoints({"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]})
    assert obj["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert validate_endpoints(obj) == []


def test_sloppy_ip_parsing() -> None:
    assert str(parse_ip_sloppy("010.001.0.1")) == "10.1.0.1"
    assert str(parse_ip_sloppy("::ffff:10.0.0.1")) == "10.0.0.1"
    assert parse_ip_sloppy("10.0.0.256") is None
    assert parse_ip_sloppy("fe80::1%eth0") is None
    assert parse_ip_sloppy("web") is None


def test_validation_messages() -> None:
    obj = _endpoints(
        {},
        {
            "addresses": [
                {"ip": "127.0.0.1", "hostname": "Host"},
                {"ip": "nope", "nodeName": "Node_1"},
            ],
            "notReadyAddresses": [{"ip": "169.254.1.1"}, {"ip": "ff02::1"}, {"ip": "0.0.0.0"}],
            "ports": [{"port": 0, "protocol": "HTTP"}, {"name": "b", "port": 80}],
        },
    )
    rendered = [c.render() for c in validate_endpoints(obj)]
    assert rendered == [
        "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
        'subsets[1].addresses[0].hostname: Invalid value: "Host": a lowercase RFC 1123 label '
        "must consist of lower case alphanumeric characters or '-', and must start and end "
        "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": '
        "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        'subsets[1].addresses[1].ip: Invalid value: "nope": '
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        'subsets[1].addresses[1].nodeName: Invalid value: "Node_1": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address',
        'subsets[1].notReadyAddresses[0].ip: Invalid value: "169.254.1.1": '
        "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        'subsets[1].notReadyAddresses[1].ip: Invalid value: "ff02::1": '
        "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        'subsets[1].notReadyAddresses[2].ip: Invalid value: "0.0.0.0": '
        "may not be unspecified (0.0.0.0)",
        "subsets[1].ports[0].name: Required value",
        "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        'subsets[1].ports[0].protocol: Unsupported value: "HTTP": '
        'supported values: "SCTP", "TCP", "UDP"',
    ]
    old = _endpoints({"addresses": [{"ip": "10.0.0.1"}]})
    new = copy.deepcopy(old)
    new["subsets"][0]["ports"] = [{"port": 8080, "protocol": "TCP", "appProtocol": "not a name"}]
    assert [c.render() for c in validate_endpoints_update(new, old)] == [
        'subsets[0].ports[0].appProtocol: Invalid value: "not a name": name part must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def _printed(obj: dict[str, Any]) -> str:
    printer = printer_for("", "Endpoints")
    assert printer is not None
    assert [c.name for c in printer.columns] == ["Name", "Endpoints", "Age"]
    cell: str = printer.cells(obj, datetime(2030, 1, 1, tzinfo=UTC))[1]
    return cell


def test_printed_endpoints() -> None:
    assert _printed(_endpoints()) == "<none>"
    four = [{"ip": f"10.0.0.{i}"} for i in range(1, 5)]
    assert (
        _printed(_endpoints({"addresses": four, "ports": [{"port": 80}]}))
        == "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."
    )
    headless = _endpoints({"addresses": four[:2]}, {"addresses": [{"ip": "2001:db8::1"}]})
    assert _printed(headless) == "10.0.0.1,10.0.0.2,2001:db8::1"
    v6 = _endpoints({"addresses": [{"ip": "2001:db8::1"}], "ports": [{"port": 443}]})
    assert _printed(v6) == "[2001:db8::1]:443"
