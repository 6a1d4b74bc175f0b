"""Structural schemas on the custom-resource path: prune + default per object, build per CRD.

Run: ``pytest bench/bench_structural.py --benchmark-only``. Rows:

- ``copy``: ``copy.deepcopy`` of the object, the floor every row below pays (each round works
  on a fresh copy, since pruning and defaulting change the object);
- ``prune``, ``prune+default`` and ``decode path`` (prune, drop_nulls, default, as on every
  request and storage read) for a custom resource of about 30 fields (nested objects, a
  list-map, a label map, an embedded resource, defaults to apply and unknown fields to drop);
- ``list types``: the set/map uniqueness walk of the same object;
- ``build``: ``build_structural`` of the largest corpus schema (Kyverno's ClusterPolicy,
  1.4 MB of YAML), skipped when ``../shared/crd-corpus`` is absent.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kstore.api.structural import (
    build_structural,
    default,
    drop_nulls,
    prune,
    validate_list_types,
)

pytestmark = pytest.mark.benchmark(group="structural")

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "crd-corpus"

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
B = {"type": "boolean"}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": S,
        "kind": S,
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "paused": {"type": "boolean", "default": False},
                "image": S,
                "imagePullPolicy": {"type": "string", "default": "IfNotPresent"},
                "schedule": S,
                "suspend": B,
                "timeoutSeconds": {"type": "integer", "default": 60},
                "labels": {"type": "object", "additionalProperties": S},
                "resources": {
                    "type": "object",
                    "properties": {
                        "cpu": {"x-kubernetes-int-or-string": True},
                        "memory": {"x-kubernetes-int-or-string": True},
                    },
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": S,
                            "port": I,
                            "protocol": {"type": "string", "default": "TCP"},
                        },
                    },
                },
                "hosts": {"type": "array", "x-kubernetes-list-type": "set", "items": S},
                "tls": {
                    "type": "object",
                    "properties": {
                        "enabled": {"type": "boolean", "default": True},
                        "secretName": S,
                        "issuer": {"type": "object", "properties": {"name": S, "kind": S}},
                    },
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "observedGeneration": {"type": "integer", "default": -1},
                "phase": S,
                "conditions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"type": S, "status": S, "reason": S, "message": S},
                    },
                },
            },
        },
    },
}

OBJECT: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "App",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "uid": "u1"},
    "spec": {
        "replicas": 3,
        "image": "nginx:1.27",
        "schedule": "*/5 * * * *",
        "suspend": False,
        "labels": {"tier": "frontend", "team": "web"},
        "resources": {"cpu": "500m", "memory": "256Mi"},
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        "hosts": ["a.example.com", "b.example.com"],
        "tls": {"secretName": "web-tls", "issuer": {"name": "le", "kind": "ClusterIssuer"}},
        "template": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
        "unknownField": {"dropped": True},
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "reason": "Up", "message": "ok"}],
    },
}

TREE = build_structural(SCHEMA)


def _prune(obj: Any) -> Any:
    prune(obj, TREE)
    return obj


def _prune_default(obj: Any) -> Any:
    prune(obj, TREE)
    default(obj, TREE)
    return obj


def _decode_path(obj: Any) -> Any:
    prune(obj, TREE)
    drop_nulls(obj, TREE)
    default(obj, TREE)
    return obj


def _fresh() -> tuple[tuple[Any], dict[str, Any]]:
    return (copy.deepcopy(OBJECT),), {}


def test_copy(benchmark: Any) -> None:
    benchmark(copy.deepcopy, OBJECT)


def test_prune(benchmark: Any) -> None:
    out = benchmark.pedantic(_prune, setup=_fresh, rounds=2000)
    assert "unknownField" not in out["spec"]


def test_prune_default(benchmark: Any) -> None:
    out = benchmark.pedantic(_prune_default, setup=_fresh, rounds=2000)
    assert out["spec"]["ports"][0]["protocol"] == "TCP"


def test_decode_path(benchmark: Any) -> None:
    out = benchmark.pedantic(_decode_path, setup=_fresh, rounds=2000)
    assert out["status"]["observedGeneration"] == -1


def test_list_types(benchmark: Any) -> None:
    assert benchmark(validate_list_types, OBJECT, TREE) == []


def test_build_largest_corpus_schema(benchmark: Any) -> None:
    path = CORPUS / "kyverno" / "crds" / "kyverno.io_clusterpolicies.yaml"
    if not path.is_file():
        pytest.skip(f"CRD corpus not found at {CORPUS}")
    crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    benchmark.group = "structural build"
    benchmark.pedantic(build_structural, args=(schema,), rounds=20)
