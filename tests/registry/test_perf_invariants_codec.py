"""The versioning codec remembers, per (apiVersion, kind), which version an object is written
in: objects of several kinds and versions through one codec still come out each in its own
storage version (or the codec's fixed one), converted through the hub when they are not in it,
and an object without a kind is refused every time."""

from __future__ import annotations

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.codec.json import JsonSerializer
from kstore.codec.versioning import VersioningCodec
from kstore.errors import BadRequest

_SCHEME = builtin_scheme()


def _deployment(api_version: str) -> dict[str, object]:
    return {
        "apiVersion": api_version,
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        },
    }


def _config_map() -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}


def test_each_kind_and_version_is_written_in_its_own_storage_version() -> None:
    codec = VersioningCodec(_SCHEME, JsonSerializer())
    hub_deployment = _SCHEME.to_hub(_deployment("apps/v1"))
    hub_config_map = _SCHEME.to_hub(_config_map())
    for _ in range(2):  # first computed, then remembered
        assert codec.to_external(hub_deployment)["apiVersion"] == "apps/v1"
        assert codec.to_external(hub_config_map)["apiVersion"] == "v1"
        beta = _deployment("apps/v1beta2")
        assert codec.to_external(beta)["apiVersion"] == "apps/v1"
        external = _deployment("apps/v1")
        assert codec.to_external(external) is external


def test_a_fixed_version_codec_writes_that_version() -> None:
    codec = VersioningCodec(_SCHEME, JsonSerializer(), encode_version="v1beta2")
    for _ in range(2):
        out = codec.to_external(_SCHEME.to_hub(_deployment("apps/v1")))
        assert out["apiVersion"] == "apps/v1beta2"
        assert codec.to_external(_deployment("apps/v1"))["apiVersion"] == "apps/v1beta2"


def test_an_object_without_a_kind_is_refused_every_time() -> None:
    codec = VersioningCodec(_SCHEME, JsonSerializer())
    for _ in range(2):
        with pytest.raises(BadRequest):
            codec.encode({"apiVersion": "v1", "metadata": {"name": "x"}})
