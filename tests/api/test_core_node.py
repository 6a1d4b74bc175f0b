"""core/v1 Node: the resource, defaulting, validation and the kubectl columns."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kstore.api.gvk import GroupVersion
from kstore.api.kinds import builtin_scheme
from kstore.api.kinds.node import node_fields, validate_node, validate_node_and_update
from kstore.server.printers import printer_for

SCHEME = builtin_scheme()


def _node(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> Any:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-1", "resourceVersion": "5"},
        "spec": spec or {},
        "status": status or {},
    }
    SCHEME.default(obj)
    return obj


def test_resource_and_defaults() -> None:
    info = SCHEME.resource(GroupVersion("", "v1"), "nodes").info
    assert (info.namespaced, info.short_names, info.subresources) == (False, ("no",), ("status",))
    obj = _node(status={"capacity": {"cpu": "4", "pods": "110"}})
    assert obj["status"]["allocatable"] == {"cpu": "4", "pods": "110"}
    # The Go structs' fields without omitempty are written as their zero values.
    assert obj["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    assert obj["status"]["nodeInfo"]["machineID"] == ""
    assert len(obj["status"]["nodeInfo"]) == 10
    kept = _node(status={"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}})
    assert kept["status"]["allocatable"] == {"cpu": "3"}
    assert validate_node(obj) == []
    assert node_fields(_node({"unschedulable": True})) == {"spec.unschedulable": "true"}


def test_validation_messages() -> None:
    obj = _node(
        {
            "podCIDRs": ["10.244.0.0/24", "10.245.0.0/24", "bad"],
            "taints": [
                {"key": "dedicated", "value": "a b", "effect": "NoSchedule"},
                {"key": "dedicated", "effect": "NoSchedule"},
                {"key": "x", "effect": "Never"},
                {"key": "y"},
            ],
        },
        {"capacity": {"pods": "1.5"}},
    )
    assert [c.render() for c in validate_node(obj)] == [
        'metadata.taints[0].value: Invalid value: "a b": a valid label must be an empty string '
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        'metadata.taints[1]: Duplicate value: {"key":"dedicated","effect":"NoSchedule"}: '
        "taints must be unique by key and effect pair",
        'metadata.taints[2].effect: Unsupported value: "Never": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        "metadata.taints[3].effect: Required value",
        'status.capacity.pods: Invalid value: "1.5": must be an integer',
        'status.allocatable.pods: Invalid value: "1.5": must be an integer',
        'spec.podCIDRs[2]: Invalid value: "bad": '
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        'spec.podCIDRs: Invalid value: ["10.244.0.0/24","10.245.0.0/24","bad"]: '
        "may specify no more than one CIDR for each IP family",
    ]
    dual = _node({"podCIDRs": ["10.244.0.0/24", "fd00::/64"]})
    assert validate_node(dual) == []


def test_update_rules() -> None:
    old = _node(
        {"podCIDRs": ["10.244.0.0/24"], "providerID": "kind://a"},
        {"addresses": [{"type": "InternalIP", "address": "10.0.0.5"}]},
    )
    new = copy.deepcopy(old)
    new["spec"]["podCIDRs"] = ["10.244.1.0/24"]
    new["spec"]["providerID"] = "kind://b"
    new["spec"]["externalID"] = "x"
    new["status"]["addresses"].append({"type": "InternalIP", "address": "10.0.0.5"})
    assert [c.render() for c in validate_node_and_update(new, old)] == [
        'status.addresses[1]: Duplicate value: {"type":"InternalIP","address":"10.0.0.5"}',
        'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
        "spec.providerID: Forbidden: node updates may not change providerID except from "
        '"" to valid',
        "spec.externalID: Forbidden: may not be updated",
    ]
    first = _node()
    assigned = copy.deepcopy(first)
    assigned["spec"]["podCIDRs"] = ["10.244.2.0/24"]
    assigned["spec"]["providerID"] = "kind://c"
    assert validate_node_and_update(assigned, first) == []


def test_columns() -> None:
    printer = printer_for("", "Node")
    assert printer is not None
    assert [c.name for c in printer.columns] == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "Internal-IP",
        "External-IP",
        "OS-Image",
        "Kernel-Version",
        "Container-Runtime",
    ]
    obj = _node(
        {"unschedulable": True},
        {
            "conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
            "nodeInfo": {"kubeletVersion": "v1.36.0", "osImage": "Debian"},
        },
    )
    obj["metadata"]["creationTimestamp"] = "2029-12-30T00:00:00Z"
    obj["metadata"]["labels"] = {
        "node-role.kubernetes.io/control-plane": "",
        "node-role.kubernetes.io/": "x",
        "kubernetes.io/role": "edge",
    }
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert printer.cells(obj, now) == [
        "worker-1",
        "NotReady,SchedulingDisabled",
        "control-plane,edge",
        "2d",
        "v1.36.0",
        "10.0.0.5",
        "<none>",
        "Debian",
        "<unknown>",
        "<unknown>",
    ]
    assert printer.cells(_node(), now)[1:3] == ["Unknown", "<none>"]
