"""The custom kind of ``kstore bench rest --kind custom``: a CRD whose schema carries 20 CEL
validation rules of the shapes real CRDs use (comparisons, string functions, regular
expressions, list quantifiers, optional fields, a transition rule), and the object its
creates post (which satisfies every rule, so each rule runs to the end)."""

from __future__ import annotations

from typing import Any

__all__ = ["BENCH_CRD", "BENCH_GROUP", "BENCH_PLURAL", "bench_object"]

BENCH_GROUP = "bench.kstore.io"
BENCH_PLURAL = "gadgets"

_RULES: list[dict[str, str]] = [
    {"rule": "self.minReplicas <= self.maxReplicas", "message": "min above max"},
    {"rule": "self.replicas >= self.minReplicas && self.replicas <= self.maxReplicas"},
    {"rule": "self.name.startsWith('gadget-')"},
    {"rule": "size(self.name) <= 63"},
    {"rule": "self.name.matches('^[a-z0-9-]+$')"},
    {"rule": "self.mode in ['Fast', 'Safe', 'Off']"},
    {"rule": "!has(self.paused) || !self.paused || self.mode != 'Fast'"},
    {"rule": "self.ports.all(p, p.port > 0 && p.port < 65536)"},
    {"rule": "self.ports.all(p, p.protocol in ['TCP', 'UDP'])"},
    {"rule": "self.ports.exists(p, p.name == 'http')"},
    {"rule": "size(self.ports) <= 16"},
    {"rule": "self.labels.all(k, size(k) <= 63)"},
    {"rule": "self.tags.all(t, t.lowerAscii() == t)"},
    {"rule": "self.tags.exists_one(t, t == 'primary')"},
    {"rule": "self.endpoint.startsWith('https://')"},
    {"rule": "self.timeoutSeconds * 1000 <= self.deadlineMillis"},
    {"rule": "self.weight >= 0.0 && self.weight <= 1.0"},
    {"rule": "self.owner.split('@').size() == 2"},
    {"rule": "self.?description.orValue('').size() < 256"},
    {"rule": "self.mode == oldSelf.mode || oldSelf.mode != 'Off'", "message": "Off is final"},
]

_SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "replicas", "minReplicas", "maxReplicas", "mode", "ports"],
    "properties": {
        "name": {"type": "string", "maxLength": 63},
        "replicas": {"type": "integer"},
        "minReplicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "mode": {"type": "string", "enum": ["Fast", "Safe", "Off"]},
        "paused": {"type": "boolean"},
        "ports": {
            "type": "array",
            "maxItems": 16,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name", "port"],
                "properties": {
                    "name": {"type": "string", "maxLength": 15},
                    "port": {"type": "integer"},
                    "protocol": {"type": "string", "default": "TCP", "maxLength": 3},
                },
            },
        },
        "labels": {
            "type": "object",
            "maxProperties": 32,
            "additionalProperties": {"type": "string", "maxLength": 63},
        },
        "tags": {
            "type": "array",
            "maxItems": 16,
            "x-kubernetes-list-type": "set",
            "items": {"type": "string", "maxLength": 32},
        },
        "endpoint": {"type": "string", "maxLength": 256},
        "timeoutSeconds": {"type": "integer", "maximum": 3600},
        "deadlineMillis": {"type": "integer"},
        "weight": {"type": "number"},
        "owner": {"type": "string", "maxLength": 128},
        "description": {"type": "string", "maxLength": 1024},
    },
    "x-kubernetes-validations": _RULES,
}

BENCH_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{BENCH_PLURAL}.{BENCH_GROUP}"},
    "spec": {
        "group": BENCH_GROUP,
        "scope": "Namespaced",
        "names": {"plural": BENCH_PLURAL, "kind": "Gadget", "listKind": "GadgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": _SPEC_SCHEMA,
                            "status": {
                                "type": "object",
                                "properties": {"ready": {"type": "integer"}},
                            },
                        },
                    }
                },
                "subresources": {"status": {}},
            }
        ],
    },
}


def bench_object(namespace: str, name: str, label: str, index: int) -> dict[str, Any]:
    """A Gadget that passes all 20 rules."""
    return {
        "apiVersion": f"{BENCH_GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": namespace, "labels": {"run": label}},
        "spec": {
            "name": f"gadget-{index}",
            "replicas": 3,
            "minReplicas": 1,
            "maxReplicas": 5,
            "mode": "Safe",
            "ports": [
                {"name": "http", "port": 8080, "protocol": "TCP"},
                {"name": "metrics", "port": 9090},
            ],
            "labels": {"app": "gadget", "tier": "backend"},
            "tags": ["primary", "blue"],
            "endpoint": "https://gadget.example.com/api",
            "timeoutSeconds": 30,
            "deadlineMillis": 60000,
            "weight": 0.5,
            "owner": "team@example.com",
        },
    }
