"""Where Kubernetes' compatibility fixtures live, and which of them the tests check.

Two sets sit beside the checkout, with one layout (``<release>/<group>.<version>.<Kind>.{json,
yaml,pb}``, the core group spelled ``core``): ``../shared/k8s-testdata`` for the kinds kstore
serves, ``../shared/k8s-testdata-next`` for kinds still to come. A served kind's fixtures are
looked for in both, so a kind that starts being served is checked by every fixture test at once,
wherever its files are; the fixtures of kinds not served yet are left alone.

On a machine without these directories, tests that need them skip and say why.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from kstore.api.gvk import GroupVersionKind
from kstore.api.kinds import builtin_scheme

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = (REPO_ROOT / ".." / "shared").resolve()
#: The fixture sets, the served kinds' first.
FIXTURE_SETS = ("k8s-testdata", "k8s-testdata-next")


def fixture_name(gvk: GroupVersionKind) -> str:
    """The file stem Kubernetes gives a kind's fixtures: ``core.v1.Pod``, ``apps.v1.Deployment``."""
    return f"{gvk.group or 'core'}.{gvk.version}.{gvk.kind}"


@cache
def served_fixture_names() -> frozenset[str]:
    """The fixture stem of every group/version/kind the built-in Scheme serves."""
    return frozenset(fixture_name(r.gvk) for r in builtin_scheme().resources())


def k8s_testdata() -> Path:
    """The served kinds' fixture set, or skip the calling test when it is absent."""
    path = SHARED / FIXTURE_SETS[0]
    if not (path / "HEAD").is_dir():
        pytest.skip(f"Kubernetes compatibility fixtures not found at {path}")
    return path


def fixture_sets() -> list[Path]:
    """Every fixture set present (skip the calling test when there is none)."""
    k8s_testdata()
    return [SHARED / name for name in FIXTURE_SETS if (SHARED / name).is_dir()]


def served_fixture(release: str, stem: str, suffix: str = ".json") -> Path:
    """One served kind's fixture file, from whichever set holds it (skip when no set is present).

    A served kind whose file is in no set is an error, not a skip: its fixture checks would
    otherwise pass silently.
    """
    for root in fixture_sets():
        path = root / release / f"{stem}{suffix}"
        if path.is_file():
            return path
    raise AssertionError(f"no fixture {release}/{stem}{suffix} in any of {FIXTURE_SETS}")


def fixture_files(suffix: str) -> list[Path]:
    """Every fixture with this suffix, in every release of every set, of the kinds kstore serves
    (empty when no set is present)."""
    served = served_fixture_names()
    found: list[Path] = []
    for name in FIXTURE_SETS:
        root = SHARED / name
        if root.is_dir():
            found.extend(
                p for p in root.glob(f"*/*{suffix}") if p.name.removesuffix(suffix) in served
            )
    return sorted(found, key=lambda p: (p.parent.name, p.name))


def crd_corpus() -> Path:
    """The real-world CRD corpus (``../shared/crd-corpus``), or skip the calling test."""
    path = SHARED / "crd-corpus"
    if not path.is_dir():
        pytest.skip(f"CRD corpus not found at {path}")
    return path
