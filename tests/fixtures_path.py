"""Where Kubernetes' compatibility fixtures live: ``../shared/k8s-testdata`` beside the checkout.

On a machine without that directory, tests that need it skip and say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def k8s_testdata() -> Path:
    """The fixtures directory, or skip the calling test when it is absent."""
    path = (REPO_ROOT / ".." / "shared" / "k8s-testdata").resolve()
    if not (path / "HEAD").is_dir():
        pytest.skip(f"Kubernetes compatibility fixtures not found at {path}")
    return path


def fixture_files(suffix: str) -> list[Path]:
    """Every fixture with this suffix in HEAD and every release directory (empty when absent)."""
    root = (REPO_ROOT / ".." / "shared" / "k8s-testdata").resolve()
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob(f"*/*{suffix}") if p.parent.is_dir())


def crd_corpus() -> Path:
    """The real-world CRD corpus (``../shared/crd-corpus``), or skip the calling test."""
    path = (REPO_ROOT / ".." / "shared" / "crd-corpus").resolve()
    if not path.is_dir():
        pytest.skip(f"CRD corpus not found at {path}")
    return path
