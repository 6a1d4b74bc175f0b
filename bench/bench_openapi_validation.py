"""OpenAPI validation of a custom object on the write path.

Run: ``pytest bench/bench_openapi_validation.py --benchmark-only``. The object is a typical
custom resource of about 30 fields (strings with patterns and formats, integers with bounds,
enums, a list of objects, a string map); rows:

- ``valid``: the common case, no cause built;
- ``invalid``: five fields wrong, causes rendered.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kstore.api.openapi_validation import compile_validator

pytestmark = pytest.mark.benchmark(group="openapi validation")

_PORT = {
    "type": "object",
    "required": ["name", "port"],
    "properties": {
        "name": {"type": "string", "maxLength": 15, "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"},
        "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
        "protocol": {"type": "string", "enum": ["TCP", "UDP", "SCTP"]},
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["image", "replicas"],
            "properties": {
                "image": {"type": "string", "minLength": 1},
                "replicas": {"type": "integer", "format": "int32", "minimum": 0},
                "paused": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["Active", "Standby", "Maintenance"]},
                "host": {"type": "string", "format": "hostname"},
                "id": {"type": "string", "format": "uuid"},
                "schedule": {"type": "string", "pattern": "^(@every [0-9]+[smh])$"},
                "timeout": {"type": "string", "format": "duration"},
                "cpu": {"x-kubernetes-int-or-string": True},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "ports": {"type": "array", "maxItems": 16, "items": _PORT},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "owner": {"type": "string", "format": "email"},
                "url": {"type": "string", "format": "uri"},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string", "enum": ["Pending", "Ready", "Failed"]},
                "observedGeneration": {"type": "integer", "format": "int64"},
                "readyReplicas": {"type": "integer", "minimum": 0},
                "since": {"type": "string", "format": "date-time"},
                "message": {"type": "string", "maxLength": 1024},
            },
        },
    },
}

OBJECT: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default"},
    "spec": {
        "image": "registry.example.com/widget:1.2.3",
        "replicas": 3,
        "paused": False,
        "mode": "Active",
        "host": "widget.example.com",
        "id": "123e4567-e89b-12d3-a456-426614174000",
        "schedule": "@every 5m",
        "timeout": "30s",
        "cpu": "500m",
        "ratio": 0.5,
        "ports": [
            {"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "https", "port": 443, "protocol": "TCP"},
        ],
        "labels": {"app": "widget", "tier": "web"},
        "owner": "ops@example.com",
        "url": "https://example.com/widget",
    },
    "status": {
        "phase": "Ready",
        "observedGeneration": 7,
        "readyReplicas": 3,
        "since": "2026-01-02T15:04:05Z",
        "message": "all good",
    },
}


def _invalid() -> dict[str, Any]:
    obj = copy.deepcopy(OBJECT)
    obj["spec"]["replicas"] = "three"
    obj["spec"]["mode"] = "Sleeping"
    obj["spec"]["ports"][1]["port"] = 70000
    obj["spec"]["host"] = "-bad-"
    del obj["spec"]["image"]
    return obj


def test_valid(benchmark: Any) -> None:
    validator = compile_validator(SCHEMA)
    assert benchmark(validator.validate, OBJECT) == []


def test_invalid(benchmark: Any) -> None:
    validator = compile_validator(SCHEMA)
    obj = _invalid()
    assert len(benchmark(validator.validate, obj)) == 5
