"""JSON codec and conversion benchmarks, each beside raw orjson in the same run.

Run: ``pytest bench/bench_codec.py --benchmark-only``. The goal is kstore's JSON codec within
1.3x of raw orjson for a decode + encode round trip.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.objects import fixture, realistic_pod
from kstore.api.kinds import builtin_scheme
from kstore.codec.json import JsonSerializer

pytestmark = pytest.mark.benchmark(group="json")

OBJECTS = {
    "pod-fixture": lambda: fixture("core.v1.Pod.json"),
    "pod-5k": realistic_pod,
}


def _round_trip_raw(data: bytes) -> bytes:
    return orjson.dumps(orjson.loads(data))


def _round_trip_kstore(serializer: JsonSerializer, data: bytes) -> bytes:
    return serializer.encode(serializer.decode(data))


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_json_round_trip_raw_orjson(benchmark: Any, name: str) -> None:
    data = orjson.dumps(OBJECTS[name]())
    benchmark.group = f"json round trip {name}"
    assert benchmark(_round_trip_raw, data) == data


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_json_round_trip_kstore(benchmark: Any, name: str) -> None:
    data = orjson.dumps(OBJECTS[name]())
    benchmark.group = f"json round trip {name}"
    assert benchmark(_round_trip_kstore, JsonSerializer(), data) == data


def test_convert_deployment_v1beta1_to_v1(benchmark: Any) -> None:
    scheme = builtin_scheme()
    obj = fixture("apps.v1beta1.Deployment.json")
    benchmark.group = "conversion"
    out = benchmark(lambda: scheme.from_hub(scheme.to_hub(obj), "v1"))
    assert out["apiVersion"] == "apps/v1"
