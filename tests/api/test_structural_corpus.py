"""Real CRDs (Flux, cert-manager, Kyverno) are structural, and their samples survive pruning.

Reads ``../shared/crd-corpus`` (see its README); skips, saying where it looked, when absent.
Every version's schema of every CRD there is served by real clusters, so it must build, pass
every structural rule and default check; each Flux sample is an object its project expects a
cluster to accept, so pruning must find nothing unknown in it and its lists no duplicates.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path as FilePath
from typing import Any

import pytest
import yaml

from kstore.api.structural import (
    build_structural,
    default,
    drop_nulls,
    prune,
    validate_crd_schema,
    validate_embedded_object_meta,
    validate_list_types,
)
from kstore.api.validation.field import Path
from tests.fixtures_path import crd_corpus


def _documents(path: FilePath) -> Iterator[dict[str, Any]]:
    for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
        if isinstance(doc, dict):
            yield doc


def _crds(root: FilePath) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(root.glob("*/crds/*.yaml")):
        for doc in _documents(path):
            if doc.get("kind") == "CustomResourceDefinition":
                yield path.name, doc


def _keeps(big: Any, small: Any) -> bool:
    """Every field set in ``small`` is in ``big`` with the same value (defaults only add)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _keeps(big[k], v) for k, v in small.items()
        )
    if isinstance(small, list):
        return isinstance(big, list) and len(big) == len(small) and all(map(_keeps, big, small))
    return bool(big == small)


def test_every_corpus_crd_version_is_structural_with_valid_defaults() -> None:
    root = crd_corpus()
    checked = 0
    for name, crd in _crds(root):
        for i, version in enumerate(crd["spec"]["versions"]):
            schema = version["schema"]["openAPIV3Schema"]
            path = Path("spec", "versions").index(i).child("schema", "openAPIV3Schema")
            causes = validate_crd_schema(schema, path)
            assert causes == [], f"{name} {version['name']}: {[c.render() for c in causes]}"
            checked += 1
    # Flux, cert-manager and Kyverno: dozens of CRDs, several versions each.
    assert checked >= 30


def test_flux_samples_lose_nothing_to_pruning() -> None:
    root = crd_corpus()
    schemas: dict[tuple[str, str], Any] = {}
    for _, crd in _crds(root):
        spec = crd["spec"]
        for version in spec["versions"]:
            key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
            schemas[key] = build_structural(version["schema"]["openAPIV3Schema"])
    samples = sorted((root / "flux-source-controller" / "samples").glob("*.yaml"))
    assert samples
    for sample in samples:
        for obj in _documents(sample):
            tree = schemas[(obj["apiVersion"], obj["kind"])]
            kept = copy.deepcopy(obj)
            assert prune(kept, tree) == [], sample.name
            assert kept == obj
            drop_nulls(kept, tree)
            default(kept, tree)
            assert _keeps(kept, obj), f"{sample.name}: defaulting changed a set field"
            assert validate_list_types(kept, tree) == []
            assert validate_embedded_object_meta(kept, tree, None, True) == []


@pytest.mark.parametrize("unknown", ["spec.bogus", "spec.interval2"])
def test_unknown_sample_fields_are_reported(unknown: str) -> None:
    root = crd_corpus()
    crd = next(
        doc for name, doc in _crds(root) if name == "source.toolkit.fluxcd.io_gitrepositories.yaml"
    )
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    tree = build_structural(version["schema"]["openAPIV3Schema"])
    obj = next(
        _documents(root / "flux-source-controller" / "samples" / "source_v1_gitrepository.yaml")
    )
    obj["spec"][unknown.split(".")[1]] = "x"
    assert prune(obj, tree) == [unknown]
