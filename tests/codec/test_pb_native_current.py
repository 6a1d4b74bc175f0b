"""The compiled converters' sources are current, built, and cover the hot kinds.

``kstore/codec/_pb_native_{encode,decode}.pyx`` are generated from the message plans by
``scripts/gen-proto``; a difference from a fresh generation means a .proto or a converter
generator changed without it. The built extension modules must carry the plans' digests
(else they are unused, see kstore.codec._pb_native), so a stale build fails here too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import FunctionType

from kstore.api.proto_schema import kind_messages
from kstore.codec import _pb_native, _pb_native_source
from kstore.codec._pb_decode import decoder_for
from kstore.codec._pb_encode import encoder_for
from kstore.codec._pb_native_source import DECODE_PYX, ENCODE_PYX
from kstore.codec.protobuf import ProtobufSerializer
from tests.codec._pb_paths import compiled_missing

REPO = Path(__file__).resolve().parents[2]
PB = ProtobufSerializer()


def test_committed_pyx_sources_match_a_fresh_generation() -> None:
    assert ENCODE_PYX.read_text() == _pb_native_source.encode_source(), "run scripts/gen-proto"
    assert DECODE_PYX.read_text() == _pb_native_source.decode_source(), "run scripts/gen-proto"


def test_gen_proto_writes_the_same_pyx_sources(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen-proto"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for committed in (ENCODE_PYX, DECODE_PYX):
        assert (tmp_path / "kstore" / "codec" / committed.name).read_bytes() == (
            committed.read_bytes()
        )


def test_every_hot_kind_with_a_schema_is_compiled_and_no_cold_message() -> None:
    compiled = set(_pb_native_source.messages())
    hot = set(_pb_native_source.HOT_KINDS) & set(kind_messages())
    assert {"k8s.io.api.core.v1.Pod", "k8s.io.api.apps.v1.Deployment"} <= hot
    assert hot <= compiled
    assert not compiled & _pb_native_source.COLD


def test_messages_left_out_run_on_the_python_path_under_compiled_ones() -> None:
    # A compiled converter that nests a message left out calls the Python one for it.
    previous = _pb_native.enabled
    _pb_native.use_native(True)
    try:
        for name in _pb_native_source.python_messages():
            assert isinstance(encoder_for(name), FunctionType), name
            assert isinstance(decoder_for(name), FunctionType), name
        assert "k8s.io.api.core.v1.ISCSIVolumeSource" in _pb_native_source.python_messages()
        assert not isinstance(decoder_for("k8s.io.api.core.v1.VolumeSource"), FunctionType)
    finally:
        _pb_native.use_native(previous)


def test_a_pod_with_cold_parts_encodes_and_decodes_alike_on_both_paths() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "volumeDevices": [{"name": "d"}]}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
            "volumes": [
                {"name": "a", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 3}},
                {"name": "b", "nfs": {"server": "s", "path": "/x", "readOnly": True}},
                {"name": "c", "configMap": {"name": "cm", "defaultMode": 420}},
            ],
        },
    }
    results = []
    for native in (True, False):
        previous = _pb_native.enabled
        _pb_native.use_native(native)
        try:
            data = PB.encode(pod)
            results.append((data, PB.decode(data)))
        finally:
            _pb_native.use_native(previous)
    assert results[0] == results[1]
    spec = results[0][1]["spec"]
    assert spec["volumes"][0]["iscsi"]["lun"] == 3
    assert spec["ephemeralContainers"][0]["name"] == "debug"


def test_built_extension_modules_are_current_for_every_message() -> None:
    missing = compiled_missing()
    assert not missing, f"rebuild with pip install -e . (stale or missing: {missing[:3]})"
