"""What the watch cache trusts of its feed: an object a storage decoder made holds JSON's types
only, so its JSON bytes decode back to an equal object.

A Cacher's entries skip that check (``fed_by_storage``, see :mod:`kstore.cache.compact`); a
default or a conversion that put a tuple, a NaN or an enum into a decoded object would make a
cached read differ from a read of the store. Every served kind's Kubernetes fixture (JSON and
protobuf, every release, old versions converted to the hub) is decoded here as storage decodes
it, defaults included, and must survive the round trip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from kstore.api.kinds import builtin_scheme
from kstore.benchmarks.storage import sample_pod
from kstore.cache.compact import compact, expand
from kstore.cache.watch_cache import WatchCache
from kstore.codec.protobuf import ProtobufSerializer
from kstore.codec.versioning import storage_codec
from kstore.storage.interface import EventType
from tests.fixtures_path import fixture_files

SCHEME = builtin_scheme()
STORAGE_CODEC = storage_codec(SCHEME)
FIXTURES = fixture_files(".json") + fixture_files(".pb")


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _survives_json(obj: Any) -> bool:
    return bool(orjson.loads(orjson.dumps(obj)) == obj)


@pytest.mark.fixtures
@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_a_fixture_decoded_as_storage_decodes_it_holds_json_types_only(path: Path) -> None:
    obj = STORAGE_CODEC.decode(path.read_bytes())
    assert _survives_json(obj)
    # The entry the cache makes of it without the check reads back as the decoded object.
    assert expand(compact(obj, checked=False)) == obj


def test_a_stored_pod_decoded_holds_json_types_only() -> None:
    """The same property without the shared fixtures: a defaulted Pod, written and read back
    in JSON and in protobuf."""
    pod = sample_pod("default", "web-0")
    for encoded in (
        STORAGE_CODEC.encode(pod),
        ProtobufSerializer().encode(STORAGE_CODEC.to_external(pod)),
    ):
        decoded = STORAGE_CODEC.decode(encoded)
        assert decoded["spec"]["containers"] and _survives_json(decoded)


def test_only_a_cache_fed_by_storage_skips_the_check() -> None:
    """Fed directly, a cache still keeps an object JSON cannot carry as it is."""
    odd = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "odd", "namespace": "ns", "resourceVersion": "3"},
        "data": {"ports": (1, 2)},
    }

    def attrs(obj: Any) -> tuple[dict[str, str], dict[str, str]]:
        return {}, {"metadata.name": obj["metadata"]["name"]}

    checked = WatchCache(resource_prefix="/configmaps/", get_attrs=attrs)
    trusting = WatchCache(resource_prefix="/configmaps/", get_attrs=attrs, fed_by_storage=True)
    for cache in (checked, trusting):
        cache.replace([], revision=1)
        cache.apply(EventType.ADDED, odd, 3)
    kept, _ = checked.get("/configmaps/ns/odd")
    trusted, _ = trusting.get("/configmaps/ns/odd")
    assert kept is not None and kept.object["data"]["ports"] == (1, 2)
    assert trusted is not None and trusted.object["data"]["ports"] == [1, 2]
