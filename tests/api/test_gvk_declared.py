"""``gvk_of`` answers as parsing does, whether or not it has seen the pair before."""

from __future__ import annotations

import pytest

from kstore.api import gvk as gvk_module
from kstore.api.gvk import GroupVersionKind, gvk_of
from kstore.errors import BadRequest


@pytest.mark.parametrize(
    ("api_version", "kind", "want"),
    [
        ("v1", "ConfigMap", GroupVersionKind("", "v1", "ConfigMap")),
        ("apps/v1", "Deployment", GroupVersionKind("apps", "v1", "Deployment")),
        ("x.example.com/v1beta2", "Thing", GroupVersionKind("x.example.com", "v1beta2", "Thing")),
    ],
)
def test_a_pair_seen_again_gives_the_same_kind(
    api_version: str, kind: str, want: GroupVersionKind
) -> None:
    first = gvk_of({"apiVersion": api_version, "kind": kind})
    again = gvk_of({"apiVersion": api_version, "kind": kind})
    assert first == again == want
    assert want.api_version == api_version
    assert want.group_version.api_version == api_version


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "a/b/c", "kind": "X"},
        {"apiVersion": "apps/", "kind": "X"},
        {"apiVersion": "", "kind": "X"},
        {"apiVersion": "v1", "kind": ""},
        {"apiVersion": "v1"},
        {"kind": "X"},
        {"apiVersion": 1, "kind": "X"},
    ],
)
def test_a_malformed_pair_is_refused_every_time(obj: dict[str, object]) -> None:
    for _ in range(2):
        with pytest.raises(BadRequest):
            gvk_of(obj)


def test_the_remembered_pairs_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gvk_module, "_declared", {})
    monkeypatch.setattr(gvk_module, "_DECLARED_SIZE", 3)
    for i in range(10):
        assert gvk_of({"apiVersion": f"g{i}.example.com/v1", "kind": "K"}).group == (
            f"g{i}.example.com"
        )
    assert len(gvk_module._declared) == 3
