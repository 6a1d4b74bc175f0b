"""kubectl and CustomResourceDefinitions against a real ``kstore serve``: Flux
source-controller's published CRDs (``../shared/crd-corpus``) apply, list as kubectl lists them,
re-apply unchanged, and delete. The custom resources they describe are not served yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clients.kubectl import Kubectl
from tests.fixtures_path import REPO_ROOT

FLUX = (REPO_ROOT / ".." / "shared" / "crd-corpus" / "flux-source-controller" / "crds").resolve()
FLUX_NAMES = sorted(
    f"{p.name.split('_')[1].removesuffix('.yaml')}.source.toolkit.fluxcd.io"
    for p in FLUX.glob("*.yaml")
)


@pytest.fixture
def flux() -> Path:
    if not FLUX.is_dir():
        pytest.skip(f"the CRD corpus is not at {FLUX}")
    return FLUX


def test_apply_flux_crds_then_get_and_delete_them(kubectl: Kubectl, flux: Path) -> None:
    created = kubectl.ok("apply", "-f", str(flux)).splitlines()
    assert sorted(created) == sorted(
        f"customresourcedefinition.apiextensions.k8s.io/{n} created" for n in FLUX_NAMES
    )
    again = kubectl.ok("apply", "-f", str(flux)).splitlines()
    assert sorted(again) == sorted(
        f"customresourcedefinition.apiextensions.k8s.io/{n} unchanged" for n in FLUX_NAMES
    )
    rows = [line.split() for line in kubectl.ok("get", "crds").splitlines()]
    assert rows[0] == ["NAME", "CREATED", "AT"]
    assert [r[0] for r in rows[1:]] == FLUX_NAMES
    git = json.loads(
        kubectl.ok("get", "crd", "gitrepositories.source.toolkit.fluxcd.io", "-o", "json")
    )
    assert git["spec"]["names"]["shortNames"] == ["gitrepo"]
    assert git["status"]["storedVersions"] == ["v1"]
    served = [v["name"] for v in git["spec"]["versions"] if v["served"]]
    assert "v1" in served
    assert kubectl.ok("delete", "-f", str(flux)).count("deleted") == len(FLUX_NAMES)
    assert kubectl.ok("get", "crds", "-o", "name").strip() == ""
