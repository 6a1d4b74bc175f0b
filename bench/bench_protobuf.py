"""Kubernetes protobuf codec benchmarks, beside raw orjson and json_format in the same run.

Run: ``pytest bench/bench_protobuf.py --benchmark-only``. Objects: Kubernetes' Pod fixture and a
realistic ~5 KiB Deployment-managed Pod (:func:`bench.objects.realistic_pod`). For each, kstore's
protobuf encode (dict -> bytes) and decode (bytes -> dict) on both converter paths (``compiled``:
the Cython extension modules; ``python``: the same converters generated and run as Python, see
``kstore/codec/_pb_native.py``), raw ``orjson`` dumps/loads of the same object, and
``google.protobuf.json_format`` (ParseDict + SerializeToString, FromString + MessageToDict, on
the message's proto-JSON form). Goals (issue 3): a protobuf round trip within 5x of an orjson
round trip, and at least 8x faster than json_format. The medians and ratios are printed at the
end of the run, per path; the compiled rows are missing when the extension is not built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from bench.objects import fixture, realistic_pod
from kstore.api.pb import core_v1_pb2
from kstore.codec import _pb_native
from kstore.codec._pb_decode import decoder_for
from kstore.codec.protobuf import ProtobufSerializer, read_envelope

OBJECTS: dict[str, Callable[[], dict[str, Any]]] = {
    "pod-fixture": lambda: fixture("core.v1.Pod.json"),
    "pod-5k": realistic_pod,
}
PATHS = ("compiled", "python")
PB = ProtobufSerializer()
_medians: dict[tuple[str, str, str], float] = {}
_minimums: dict[tuple[str, str, str], float] = {}


def _message(obj: dict[str, Any]) -> Message:
    message: Message = core_v1_pb2.Pod.FromString(read_envelope(PB.encode(obj)).raw)
    return message


def _group(benchmark: Any, name: str, op: str) -> None:
    benchmark.group = f"protobuf {op} {name}"


def _record(benchmark: Any, name: str, op: str, codec: str) -> None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        _medians[(name, op, codec)] = stats.stats.median
        _minimums[(name, op, codec)] = stats.stats.min


@pytest.fixture(scope="module", autouse=True)
def _print_ratios(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not _medians:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line("protobuf codec: round trip = encode + decode, in us")
        for label, table in (("median", _medians), ("min", _minimums)):
            for name in sorted(OBJECTS):
                for path in PATHS:
                    line = _ratios(name, path, table)
                    if line:
                        reporter.write_line(f"{label:>6} {line}")


def _ratios(name: str, path: str, table: dict[tuple[str, str, str], float]) -> str:
    t = {(op, codec): v * 1e6 for (n, op, codec), v in table.items() if n == name}
    ours = f"kstore-{path}"
    needed = [(op, codec) for op in ("encode", "decode") for codec in (ours, "orjson")]
    if not all(k in t for k in needed):
        return ""
    kstore = t["encode", ours] + t["decode", ours]
    raw = t["encode", "orjson"] + t["decode", "orjson"]
    line = (
        f"{name} {path}: kstore {t['encode', ours]:.1f} + {t['decode', ours]:.1f} = "
        f"{kstore:.1f}; orjson {raw:.1f}; {kstore / raw:.2f}x orjson (goal <= 5x)"
    )
    if ("encode", "json_format") in t and ("decode", "json_format") in t:
        slow = t["encode", "json_format"] + t["decode", "json_format"]
        line += f"; json_format {slow:.1f}, {slow / kstore:.1f}x slower (goal >= 8x)"
    return line


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Select a converter path for one benchmark (the compiled one only where it is built)."""
    chosen: str = request.param
    previous = _pb_native.enabled
    _pb_native.use_native(chosen == "compiled")
    if chosen == "compiled" and type(decoder_for("k8s.io.api.core.v1.Pod")).__name__ == "function":
        _pb_native.use_native(previous)
        pytest.skip("the compiled converters are not built (pip install -e .)")
    yield chosen
    _pb_native.use_native(previous)


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_encode_kstore(benchmark: Any, name: str, path: str) -> None:
    _group(benchmark, name, "encode")
    obj = OBJECTS[name]()
    PB.encode(obj)  # the converters are generated on first use: not what is measured
    data = benchmark(PB.encode, obj)
    _record(benchmark, name, "encode", f"kstore-{path}")
    assert PB.decode(data)["metadata"]["name"] == obj["metadata"]["name"]


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_decode_kstore(benchmark: Any, name: str, path: str) -> None:
    _group(benchmark, name, "decode")
    data = PB.encode(OBJECTS[name]())
    PB.decode(data)
    obj = benchmark(PB.decode, data)
    _record(benchmark, name, "decode", f"kstore-{path}")
    assert PB.encode(obj) == data


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_encode_raw_orjson(benchmark: Any, name: str) -> None:
    _group(benchmark, name, "encode")
    obj = OBJECTS[name]()
    data = benchmark(orjson.dumps, obj)
    _record(benchmark, name, "encode", "orjson")
    assert orjson.loads(data) == obj


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_decode_raw_orjson(benchmark: Any, name: str) -> None:
    _group(benchmark, name, "decode")
    data = orjson.dumps(OBJECTS[name]())
    obj = benchmark(orjson.loads, data)
    _record(benchmark, name, "decode", "orjson")
    assert orjson.dumps(obj) == data


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_encode_json_format(benchmark: Any, name: str) -> None:
    _group(benchmark, name, "encode")
    message = _message(OBJECTS[name]())
    proto_json = json_format.MessageToDict(message, preserving_proto_field_name=True)

    def encode() -> bytes:
        out: bytes = json_format.ParseDict(proto_json, core_v1_pb2.Pod()).SerializeToString()
        return out

    data = benchmark(encode)
    _record(benchmark, name, "encode", "json_format")
    assert core_v1_pb2.Pod.FromString(data) == message


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_decode_json_format(benchmark: Any, name: str) -> None:
    _group(benchmark, name, "decode")
    message = _message(OBJECTS[name]())
    raw = message.SerializeToString()

    def decode() -> dict[str, Any]:
        out: dict[str, Any] = json_format.MessageToDict(
            core_v1_pb2.Pod.FromString(raw), preserving_proto_field_name=True
        )
        return out

    proto_json = benchmark(decode)
    _record(benchmark, name, "decode", "json_format")
    assert proto_json["metadata"]["name"] == message.metadata.name
