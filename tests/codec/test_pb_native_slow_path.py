"""The compiled decoders' slow path (fields out of order) in a process that only ran them.

A compiled decoder hands fields out of number order to the Python path's ``_slow``, which
decodes a nested message with the decoder ``decoder_for`` gives (it once read the Python path's
table, which only the Python path fills: a KeyError in a process that ran only compiled
decoders). The other codec tests run both paths in one process, so that table is always filled
there; here a fresh process uses only the compiled path, as a server does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.codec._pb_paths import compiled_missing

REPO = Path(__file__).resolve().parents[2]

_SCRIPT = """
from kstore.api.pb import core_v1_pb2
from kstore.codec._pb_values import uvarint
from kstore.codec.protobuf import ProtobufSerializer, read_envelope
from kstore.codec._pb_decode import decoder_for

pb = ProtobufSerializer()
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "i"}]}}
message = core_v1_pb2.Pod.FromString(read_envelope(pb.encode(pod)).raw)

def field(tag, body):
    return bytes([tag]) + uvarint(len(body)) + body

# spec (2) before metadata (1): valid protobuf, which Go's decoder accepts
body = field(0x12, message.spec.SerializeToString())
body += field(0x0A, message.metadata.SerializeToString())
r = {}
decoder_for("k8s.io.api.core.v1.Pod")(body, 0, len(body), r)
assert type(decoder_for("k8s.io.api.core.v1.Pod")).__name__ != "function"
assert r["metadata"]["name"] == "p", r
assert r["spec"]["containers"][0]["image"] == "i", r
"""


def test_compiled_decoder_reads_fields_out_of_order_in_a_fresh_process() -> None:
    assert not compiled_missing(), "build the compiled converters (pip install -e .)"
    env = {**os.environ, "KSTORE_PROTOBUF_PURE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
