"""Strict request decoding on the write path, beside raw orjson and the full re-parse it avoids.

Run: ``pytest bench/bench_strict_decode.py --benchmark-only``. Rows, for a realistic 5.8 KiB
Pod written compactly and indented:

- ``orjson.loads``: the floor;
- ``decode_strict``: kstore's strict JSON decode (int64 scan, duplicate-key pre-check);
- ``full parse for duplicates``: what ``decode_strict`` ran on every body before the pre-check
  (the stdlib parser with a pairs hook), still the path taken when a body may repeat a key;
- ``unknown_fields`` and ``check_fields``: the schema walk without and with the type checks.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest

from bench.objects import realistic_pod
from kstore.api.gvk import GroupVersionKind
from kstore.api.proto_schema import message_for_gvk, schema_for_gvk
from kstore.codec.json import JsonSerializer, _duplicate_fields
from kstore.codec.strict import check_fields, unknown_fields

pytestmark = pytest.mark.benchmark(group="strict decode")

POD = GroupVersionKind("", "v1", "Pod")
BODIES = {
    "compact": lambda: orjson.dumps(realistic_pod()),
    "indented": lambda: json.dumps(realistic_pod(), indent=2).encode(),
}


@pytest.mark.parametrize("layout", sorted(BODIES))
def test_orjson_loads(benchmark: Any, layout: str) -> None:
    benchmark.group = f"strict decode {layout}"
    benchmark(orjson.loads, BODIES[layout]())


@pytest.mark.parametrize("layout", sorted(BODIES))
def test_decode_strict(benchmark: Any, layout: str) -> None:
    benchmark.group = f"strict decode {layout}"
    result = benchmark(JsonSerializer().decode_strict, BODIES[layout]())
    assert result.problems == []


@pytest.mark.parametrize("layout", sorted(BODIES))
def test_full_parse_for_duplicates(benchmark: Any, layout: str) -> None:
    benchmark.group = f"strict decode {layout}"
    assert benchmark(_duplicate_fields, BODIES[layout]()) == []


def test_unknown_fields_walk(benchmark: Any) -> None:
    schema = schema_for_gvk(POD)
    assert schema is not None
    pod = realistic_pod()
    benchmark.group = "schema walk"
    assert benchmark(unknown_fields, pod, schema, prune=False) == []


def test_check_fields_walk(benchmark: Any) -> None:
    schema = schema_for_gvk(POD)
    assert schema is not None
    message = message_for_gvk(POD)
    pod = copy.deepcopy(realistic_pod())
    benchmark.group = "schema walk"
    result = benchmark(lambda: check_fields(pod, schema, prune=False, message=message))
    assert result.unknown == [] and result.type_error is None
