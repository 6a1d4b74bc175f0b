"""apiregistration.k8s.io/v1 APIService: its default, validation with the aggregator's paths
and messages, and its table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kstore.api.kinds.apiregistration import (
    default_api_service,
    validate_api_service,
    validate_api_service_status_update,
    validate_api_service_update,
)
from kstore.server.printers import printer_for


def _api_service(name: str = "v1beta1.metrics.k8s.io", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "group": "metrics.k8s.io",
        "version": "v1beta1",
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
        "service": {"namespace": "kube-system", "name": "metrics-server"},
    }
    body.update(spec)
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": body,
    }


def _messages(causes: list[Any]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_a_named_service_gets_port_443() -> None:
    obj = _api_service()
    default_api_service(obj)
    assert obj["spec"]["service"] == {
        "namespace": "kube-system",
        "name": "metrics-server",
        "port": 443,
    }
    local = _api_service(service=None)
    default_api_service(local)
    assert local["spec"]["service"] is None


def test_a_valid_api_service_passes() -> None:
    assert validate_api_service(_api_service()) == []
    assert validate_api_service(_api_service("v1.", group="", version="v1", service=None)) == []


def test_the_name_must_be_version_dot_group() -> None:
    assert _messages(validate_api_service(_api_service("metrics"))) == [
        'metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: '
        '"v1beta1.metrics.k8s.io"'
    ]
    assert _messages(validate_api_service(_api_service("a/b"))) == [
        "metadata.name: Invalid value: \"a/b\": may not contain '/'"
    ]


def test_group_version_and_priorities_are_checked() -> None:
    obj = _api_service(
        "v1_x.", group="", version="v1_x", groupPriorityMinimum=0, versionPriority=1001
    )
    assert _messages(validate_api_service(obj)) == [
        "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
        'spec.version: Invalid value: "v1_x": a DNS-1035 label must consist of lower case '
        "alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
        "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
    ]
    bad_group = _api_service("v1.Bad_Group", group="Bad_Group", version="v1")
    assert [c.field for c in validate_api_service(bad_group)] == ["spec.group"]


def test_local_api_services_take_no_tls_settings() -> None:
    obj = _api_service(service=None, caBundle="Y2E=", insecureSkipTLSVerify=True)
    assert _messages(validate_api_service(obj)) == [
        'spec.caBundle: Invalid value: "2 bytes": local APIServices may not have a caBundle',
        "spec.insecureSkipTLSVerify: Invalid value: true: "
        "local APIServices may not have insecureSkipTLSVerify",
    ]


def test_a_service_reference_is_complete_and_verifies_one_way() -> None:
    obj = _api_service(service={}, caBundle="Y2E=", insecureSkipTLSVerify=True)
    assert _messages(validate_api_service(obj)) == [
        "spec.service.namespace: Required value",
        "spec.service.name: Required value",
        "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
    ]


def test_updates_check_metadata_then_the_object() -> None:
    old = _api_service()
    old["metadata"].update(uid="u1", resourceVersion="1")
    new = _api_service(versionPriority=0)
    new["metadata"].update(uid="u2", resourceVersion="1")
    assert [c.field for c in validate_api_service_update(new, old)] == [
        "metadata.uid",
        "spec.versionPriority",
    ]


def test_status_writes_check_the_condition_statuses() -> None:
    old = _api_service()
    old["metadata"]["resourceVersion"] = "1"
    new = _api_service()
    new["metadata"]["resourceVersion"] = "1"
    new["status"] = {"conditions": [{"type": "Available", "status": "Maybe"}]}
    assert _messages(validate_api_service_status_update(new, old)) == [
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: '
        '"True", "False", "Unknown"'
    ]


@pytest.mark.parametrize(
    ("service", "conditions", "cells"),
    [
        (None, [{"type": "Available", "status": "True", "reason": "Local"}], ["Local", "True"]),
        (
            {"namespace": "kube-system", "name": "metrics-server"},
            [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}],
            ["kube-system/metrics-server", "False (ServiceNotFound)"],
        ),
        (
            {"namespace": "ns", "name": "s"},
            [{"type": "Available", "status": "False"}],
            ["ns/s", "False"],
        ),
        ({"namespace": "ns", "name": "s"}, [], ["ns/s", "Unknown"]),
    ],
)
def test_the_table_shows_the_service_and_availability(
    service: Any, conditions: list[Any], cells: list[str]
) -> None:
    obj = _api_service(service=service)
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    obj["status"] = {"conditions": conditions}
    printer = printer_for("apiregistration.k8s.io", "APIService")
    assert printer is not None
    assert [c.name for c in printer.columns] == ["Name", "Service", "Available", "Age"]
    row = printer.cells(obj, datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC))
    assert row == ["v1beta1.metrics.k8s.io", *cells, "5s"]
