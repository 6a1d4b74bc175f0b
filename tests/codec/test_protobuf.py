"""kstore's Kubernetes protobuf codec: envelope, Go JSON semantics, unknown fields, frames.

Wire structure is checked against protobuf's own parser (upb) over the generated messages, so
these tests do not trust kstore's decoder to judge kstore's encoder.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.api.pb import (
    coordination_v1_pb2,
    core_v1_pb2,
    meta_v1_pb2,
    policy_v1_pb2,
    runtime_pb2,
)
from kstore.codec.protobuf import (
    MEDIA_TYPE_PROTOBUF,
    PROTOBUF_MAGIC,
    ProtobufSerializer,
    decode_watch_event,
    encode_list,
    encode_watch_event,
    read_envelope,
    split_frames,
)
from kstore.codec.recognizer import serializer_for_content, serializer_for_media_type
from kstore.codec.serializer import Serializer
from kstore.errors import BadRequest
from tests.codec._pb_paths import converter_path

# Every test runs on the compiled converters and on the Python ones.
pytestmark = pytest.mark.usefixtures(converter_path.__name__)
PB = ProtobufSerializer()


# --- raw wire helpers (independent of kstore's encoder) --------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _wrap(api_version: str, kind: str, raw: bytes) -> bytes:
    unknown = runtime_pb2.Unknown(
        typeMeta=runtime_pb2.TypeMeta(apiVersion=api_version, kind=kind),
        raw=raw,
        contentEncoding="",
        contentType="",
    )
    return PROTOBUF_MAGIC + unknown.SerializeToString()


def _raw(data: bytes) -> bytes:
    return runtime_pb2.Unknown.FromString(data[len(PROTOBUF_MAGIC) :]).raw


def _config_map(**extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, **extra}


def _pod(containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": containers},
    }


# --- the serializer contract and the envelope ------------------------------------------------


def test_serializer_implements_the_contract_and_is_chosen_by_content() -> None:
    assert isinstance(PB, Serializer)
    assert PB.media_type == MEDIA_TYPE_PROTOBUF == "application/vnd.kubernetes.protobuf"
    data = PB.encode(_config_map())
    assert isinstance(serializer_for_content(data), ProtobufSerializer)
    assert isinstance(serializer_for_media_type(MEDIA_TYPE_PROTOBUF), ProtobufSerializer)


def test_encoding_writes_magic_and_an_unknown_envelope() -> None:
    data = PB.encode(_config_map())
    assert data[:4] == b"k8s\x00"
    envelope = runtime_pb2.Unknown.FromString(data[4:])
    assert (envelope.typeMeta.apiVersion, envelope.typeMeta.kind) == ("v1", "ConfigMap")
    assert envelope.HasField("contentEncoding") and envelope.contentEncoding == ""
    assert envelope.HasField("contentType") and envelope.contentType == ""
    assert core_v1_pb2.ConfigMap.FromString(envelope.raw).metadata.name == "cm"
    assert data.endswith(b"\x1a\x00\x22\x00")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty data"),
        (b'{"kind":"Pod"}', "expected prefix [107 56 115 0]"),
        (b"k8s\x00", "empty body"),
        (b"k8s\x00\x0a\x05\x0a\x02v1", "unable to decode"),
    ],
)
def test_malformed_envelopes_are_bad_requests(data: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message.replace("[", r"\[")):
        PB.decode(data)


def test_envelope_without_kind_or_with_an_unknown_kind_is_rejected() -> None:
    with pytest.raises(BadRequest, match="Kind"):
        PB.decode(_wrap("v1", "", b""))
    with pytest.raises(BadRequest, match='no kind "Widget" is registered for version "v1"'):
        PB.decode(_wrap("v1", "Widget", b""))


def test_encoding_a_kind_without_a_protobuf_message_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match='no kind "Widget"'):
        PB.encode({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {}})
    with pytest.raises(BadRequest, match="Kind"):
        PB.encode({"apiVersion": "v1", "metadata": {}})


def test_read_envelope_leaves_the_object_encoded() -> None:
    data = PB.encode(_config_map(data={"k": "v"}))
    envelope = read_envelope(data)
    assert envelope.raw == _raw(data)
    assert (envelope.api_version, envelope.kind) == ("v1", "ConfigMap")


# --- Go struct semantics ---------------------------------------------------------------------


def test_non_pointer_fields_are_written_even_when_absent() -> None:
    raw = _raw(PB.encode(_config_map()))
    meta = core_v1_pb2.ConfigMap.FromString(raw).metadata
    for name in ("generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation"):
        assert meta.HasField(name), name
    assert meta.HasField("creationTimestamp") and meta.creationTimestamp.ByteSize() == 0
    assert not meta.HasField("deletionTimestamp")  # a pointer
    assert not meta.HasField("deletionGracePeriodSeconds")
    assert not core_v1_pb2.ConfigMap.FromString(raw).HasField("immutable")


def test_decoding_gives_the_json_kubernetes_prints() -> None:
    obj = PB.decode(PB.encode(_config_map()))
    assert obj == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "cm", "creationTimestamp": None},
    }
    pod = PB.decode(PB.encode({"apiVersion": "v1", "kind": "Pod"}))
    assert pod["spec"] == {"containers": None}
    assert pod["status"] == {}


def test_pointer_fields_keep_their_zero_values() -> None:
    obj = _config_map(immutable=False)
    obj["metadata"]["deletionGracePeriodSeconds"] = 0
    back = PB.decode(PB.encode(obj))
    assert back["immutable"] is False
    assert back["metadata"]["deletionGracePeriodSeconds"] == 0


def test_omitempty_zero_values_are_left_out_and_others_kept() -> None:
    container = {"name": "c", "image": "", "ports": [{"containerPort": 0, "hostPort": 0}]}
    back = PB.decode(PB.encode(_pod([container])))
    assert back["spec"]["containers"][0] == {
        "name": "c",
        "ports": [{"containerPort": 0}],
        "resources": {},
    }


def test_inline_messages_are_members_of_their_parent() -> None:
    volume = {"name": "v", "configMap": {"name": "cm", "defaultMode": 420}}
    pod = _pod([{"name": "c"}])
    pod["spec"]["volumes"] = [volume]
    raw = _raw(PB.encode(pod))
    parsed = core_v1_pb2.Pod.FromString(raw).spec.volumes[0]
    assert parsed.volumeSource.configMap.localObjectReference.name == "cm"
    assert PB.decode(PB.encode(pod))["spec"]["volumes"] == [volume]


def test_maps_are_written_with_sorted_keys() -> None:
    one = PB.encode(_config_map(data={"b": "2", "a": "1", "c": ""}))
    other = PB.encode(_config_map(data={"c": "", "a": "1", "b": "2"}))
    assert one == other
    raw = _raw(one)
    first_a = raw.index(_len_field(1, b"a"))
    assert first_a < raw.index(_len_field(1, b"b")) < raw.index(_len_field(1, b"c"))


def test_map_of_times_writes_a_null_time_as_an_empty_timestamp() -> None:
    # PodDisruptionBudgetStatus.disruptedPods is a map<string, Time>: Go writes a zero Time as
    # an empty Timestamp message, and reads it back as null.
    pods = {"web-1": "2026-01-02T03:04:05Z", "web-0": None}
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "status": {"disruptedPods": pods},
    }
    raw = _raw(PB.encode(pdb))
    assert _len_field(2, _len_field(1, b"web-0") + _len_field(2, b"")) in raw
    parsed = policy_v1_pb2.PodDisruptionBudget.FromString(raw).status.disruptedPods
    assert parsed["web-1"].seconds == 1767323045
    assert PB.decode(PB.encode(pdb))["status"]["disruptedPods"] == pods


def test_encoding_is_independent_of_dict_order_and_does_not_mutate() -> None:
    obj = _pod([{"name": "c", "image": "i", "args": ["x"]}])
    snapshot = copy.deepcopy(obj)
    reordered = dict(reversed(list(obj.items())))
    assert PB.encode(obj) == PB.encode(reordered) == PB.encode(obj)
    assert obj == snapshot


def test_decoding_returns_fresh_objects() -> None:
    data = PB.encode({"apiVersion": "v1", "kind": "Pod"})
    first, second = PB.decode(data), PB.decode(data)
    assert first == second
    assert first["spec"] is not second["spec"]
    assert first["metadata"] is not second["metadata"]


def test_members_the_schema_does_not_know_are_ignored_when_encoding() -> None:
    assert PB.encode(_config_map(foo={"bar": 1})) == PB.encode(_config_map())


# --- value forms -----------------------------------------------------------------------------


def test_time_is_rfc3339_in_utc_with_whole_seconds() -> None:
    obj = _config_map()
    obj["metadata"]["creationTimestamp"] = "2020-01-01T02:30:00.75+01:00"
    raw = _raw(PB.encode(obj))
    stamp = core_v1_pb2.ConfigMap.FromString(raw).metadata.creationTimestamp
    assert (stamp.seconds, stamp.nanos) == (1577842200, 0)
    back = PB.decode(PB.encode(obj))
    assert back["metadata"]["creationTimestamp"] == "2020-01-01T01:30:00Z"


def test_micro_time_has_six_digits_and_truncates_nanoseconds() -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"renewTime": "2024-05-06T07:08:09.123456789Z", "acquireTime": None},
    }
    spec = coordination_v1_pb2.Lease.FromString(_raw(PB.encode(lease))).spec
    assert (spec.renewTime.seconds, spec.renewTime.nanos) == (1714979289, 123456000)
    assert not spec.HasField("acquireTime")
    back = PB.decode(PB.encode(lease))
    assert back["spec"] == {"renewTime": "2024-05-06T07:08:09.123456Z"}


def test_int_or_string_quantity_and_probe_ports() -> None:
    container = {
        "name": "c",
        "livenessProbe": {"httpGet": {"port": 8080}, "tcpSocket": {"port": "http"}},
        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
    }
    back = PB.decode(PB.encode(_pod([container])))["spec"]["containers"][0]
    assert back["livenessProbe"]["httpGet"]["port"] == 8080
    assert back["livenessProbe"]["tcpSocket"]["port"] == "http"
    assert back["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"}}
    raw = _raw(PB.encode(_pod([container])))
    probe = core_v1_pb2.Pod.FromString(raw).spec.containers[0].livenessProbe.handler
    assert (probe.httpGet.port.type, probe.httpGet.port.intVal) == (0, 8080)
    assert (probe.tcpSocket.port.type, probe.tcpSocket.port.strVal) == (1, "http")


def test_bytes_are_base64_in_json() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"key": "AAEC/w==", "empty": ""},
        "type": "Opaque",
    }
    raw = _raw(PB.encode(secret))
    assert dict(core_v1_pb2.Secret.FromString(raw).data) == {
        "key": b"\x00\x01\x02\xff",
        "empty": b"",
    }
    assert PB.decode(PB.encode(secret))["data"] == secret["data"]
    with pytest.raises(BadRequest, match="base64"):
        PB.encode({**secret, "data": {"key": "not base64!"}})


def test_fields_v1_holds_the_compact_json_document() -> None:
    fields = {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    obj = _config_map()
    obj["metadata"]["managedFields"] = [{"manager": "m", "fieldsV1": fields}]
    raw = _raw(PB.encode(obj))
    entry = core_v1_pb2.ConfigMap.FromString(raw).metadata.managedFields[0]
    assert entry.fieldsV1.Raw == orjson.dumps(fields)
    assert PB.decode(PB.encode(obj))["metadata"]["managedFields"][0]["fieldsV1"] == fields


def test_integers_keep_their_sign_and_range() -> None:
    for value in (-1, 2**63 - 1, -(2**63), 300):
        obj = _config_map()
        obj["metadata"]["generation"] = value
        assert PB.decode(PB.encode(obj))["metadata"]["generation"] == value
    obj["metadata"]["generation"] = 2**63
    with pytest.raises(BadRequest, match="int64"):
        PB.encode(obj)


def test_long_and_non_ascii_strings_round_trip() -> None:
    obj = _config_map(data={"long": "x" * 300, "unicode": "h\u00e9llo \u4e16\u754c \U0001f600"})
    assert PB.decode(PB.encode(obj))["data"] == obj["data"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"metadata": {"name": 5}}, "ConfigMap cannot be encoded"),
        ({"immutable": "yes"}, "expected a boolean"),
        ({"metadata": {"generation": "3"}}, "expected an integer"),
        ({"metadata": {"finalizers": "f"}}, "expected an array"),
        ({"data": ["a"]}, "expected an object"),
        ({"metadata": {"creationTimestamp": "yesterday"}}, "RFC 3339"),
    ],
)
def test_values_of_the_wrong_type_are_bad_requests(patch: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        PB.encode(_config_map(**patch))


# --- reading any valid encoding --------------------------------------------------------------


def test_fields_out_of_order_are_read() -> None:
    meta = _len_field(3, b"ns") + _len_field(1, b"n")
    body = _len_field(2, _len_field(1, b"k") + _len_field(2, b"v")) + _len_field(1, meta)
    obj = PB.decode(_wrap("v1", "ConfigMap", body))
    assert obj["metadata"]["name"] == "n" and obj["metadata"]["namespace"] == "ns"
    assert obj["data"] == {"k": "v"}
    assert obj["metadata"]["creationTimestamp"] is None


def test_packed_repeated_integers_are_read() -> None:
    packed = _len_field(4, _varint(1000) + _varint(2000))
    spec = _len_field(14, packed)  # PodSpec.securityContext.supplementalGroups
    obj = PB.decode(_wrap("v1", "Pod", _len_field(2, spec)))
    assert obj["spec"]["securityContext"]["supplementalGroups"] == [1000, 2000]


def test_a_known_field_with_the_wrong_wire_type_is_malformed() -> None:
    body = _len_field(1, _int_field(1, 5))  # metadata.name as a varint
    with pytest.raises(BadRequest, match="wire type"):
        PB.decode(_wrap("v1", "ConfigMap", body))


def test_truncated_and_invalid_utf8_data_are_bad_requests() -> None:
    body = _len_field(1, _len_field(1, b"abc"))
    with pytest.raises(BadRequest, match="ConfigMap"):
        PB.decode(_wrap("v1", "ConfigMap", body[:-1]))
    with pytest.raises(BadRequest, match="UTF-8"):
        PB.decode(_wrap("v1", "ConfigMap", _len_field(1, _len_field(1, b"\xff\xfe"))))


# --- unknown fields --------------------------------------------------------------------------


def _with_unknown_fields() -> bytes:
    container0 = _len_field(1, b"a")
    container1 = _len_field(1, b"b") + _int_field(97, 1)
    spec = _len_field(2, container0) + _len_field(2, container1)
    meta = _len_field(1, b"p") + _len_field(98, b"x")
    return _wrap("v1", "Pod", _len_field(1, meta) + _len_field(2, spec) + _int_field(99, 7))


def test_unknown_fields_are_skipped_when_decoding() -> None:
    obj = PB.decode(_with_unknown_fields())
    assert obj["metadata"]["name"] == "p"
    assert [c["name"] for c in obj["spec"]["containers"]] == ["a", "b"]


def test_strict_decoding_reports_unknown_fields_by_path() -> None:
    result = PB.decode_strict(_with_unknown_fields())
    assert result.obj == PB.decode(_with_unknown_fields())
    assert result.problems == [
        'unknown field "metadata.#98"',
        'unknown field "spec.containers[1].#97"',
        'unknown field "#99"',
    ]


def test_strict_decoding_of_a_clean_object_has_no_problems() -> None:
    assert PB.decode_strict(PB.encode(_config_map(data={"a": "b"}))).problems == []


# --- lists and watch frames ------------------------------------------------------------------


def test_list_kinds_round_trip() -> None:
    pod_list = {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "12"},
        "items": [_pod([{"name": "a"}]), _pod([{"name": "b"}])],
    }
    back = PB.decode(PB.encode(pod_list))
    assert back["metadata"] == {"resourceVersion": "12"}
    assert [item["spec"]["containers"][0]["name"] for item in back["items"]] == ["a", "b"]
    # Items carry no apiVersion/kind of their own on the wire.
    assert "kind" not in back["items"][0]


def test_encode_list_embeds_encoded_items_unchanged() -> None:
    items = [_pod([{"name": "a"}]), _pod([{"name": "b"}])]
    as_dict = PB.encode(
        {
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {"resourceVersion": "5"},
            "items": items,
        }
    )
    encoded = [PB.encode(item) for item in items]
    meta = {"resourceVersion": "5"}
    assert encode_list("v1", "PodList", encoded, metadata=meta) == as_dict
    assert encode_list("v1", "PodList", [encoded[0], items[1]], metadata=meta) == as_dict
    with pytest.raises(BadRequest, match="cannot be an item of PodList"):
        encode_list("v1", "PodList", [PB.encode(_config_map())])
    with pytest.raises(BadRequest, match="not a list kind"):
        encode_list("v1", "Pod", [])


def test_generic_list_items_are_raw_extensions() -> None:
    generic = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {},
        "items": [_config_map(data={"a": "b"})],
    }
    raw = _raw(PB.encode(generic))
    item = core_v1_pb2.List.FromString(raw).items[0]
    assert orjson.loads(item.raw) == generic["items"][0]
    assert PB.decode(PB.encode(generic))["items"] == generic["items"]
    # An item holding an encoded protobuf object is decoded too.
    embedded = core_v1_pb2.List(items=[runtime_pb2.RawExtension(raw=PB.encode(_config_map()))])
    back = PB.decode(_wrap("v1", "List", embedded.SerializeToString()))
    assert back["items"] == [PB.decode(PB.encode(_config_map()))]


def test_watch_events_are_length_delimited_frames() -> None:
    pod = _pod([{"name": "a"}])
    frame = encode_watch_event("ADDED", pod)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    event = meta_v1_pb2.WatchEvent.FromString(frame[4:])
    assert event.type == "ADDED"
    assert event.object.raw == PB.encode(pod)
    again = encode_watch_event("MODIFIED", PB.encode(pod))
    frames, rest = split_frames(frame + again + again[:7])
    assert frames == [frame[4:], again[4:]]
    assert rest == again[:7]
    event_type, obj = decode_watch_event(frames[1])
    assert event_type == "MODIFIED"
    assert obj == PB.decode(PB.encode(pod))


# --- round trips -----------------------------------------------------------------------------

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_keys = st.text("abcdefghijklmnopqrstuvwxyz-./", min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(
    name=_text,
    labels=st.dictionaries(_keys, _text, max_size=5),
    data=st.dictionaries(_keys, _text, max_size=5),
    generation=st.integers(-(2**63), 2**63 - 1),
    immutable=st.none() | st.booleans(),
)
def test_config_maps_round_trip(
    name: str,
    labels: dict[str, str],
    data: dict[str, str],
    generation: int,
    immutable: bool | None,
) -> None:
    obj = _config_map(data=data, immutable=immutable)
    obj["metadata"] = {"name": name, "labels": labels, "generation": generation}
    back = PB.decode(PB.encode(obj))
    expected_meta = {"name": name, "labels": labels, "generation": generation}
    expected_meta = {k: v for k, v in expected_meta.items() if v}
    assert back["metadata"] == {**expected_meta, "creationTimestamp": None}
    assert back.get("data", {}) == data
    assert back.get("immutable") == immutable
    assert PB.encode(back) == PB.encode(obj)


# --- leaf caches -----------------------------------------------------------------------------


def test_repeated_small_messages_decode_to_fresh_objects() -> None:
    data = PB.encode(_pod([{"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]))
    first, second = PB.decode(data), PB.decode(data)
    port = first["spec"]["containers"][0]["ports"][0]
    assert port == {"containerPort": 80, "name": "http"}
    assert second["spec"]["containers"][0]["ports"][0] == port
    port["containerPort"] = 81
    assert PB.decode(data)["spec"]["containers"][0]["ports"][0]["containerPort"] == 80


def test_an_unknown_field_in_a_small_message_is_reported_after_a_plain_decode() -> None:
    port = _int_field(3, 80) + _int_field(96, 1)  # ContainerPort.containerPort, then unknown
    container = _len_field(1, b"c") + _len_field(6, port)
    data = _wrap("v1", "Pod", _len_field(2, _len_field(2, container)))
    assert PB.decode(data)["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    assert PB.decode_strict(data).problems == ['unknown field "spec.containers[0].ports[0].#96"']


def test_values_that_compare_equal_but_differ_in_type_are_not_confused() -> None:
    good = _pod([{"name": "c", "ports": [{"containerPort": 1}]}])
    PB.encode(good)
    bad = _pod([{"name": "c", "ports": [{"containerPort": True}]}])
    with pytest.raises(BadRequest, match="expected an integer"):
        PB.encode(bad)
    as_float = _pod([{"name": "c", "ports": [{"containerPort": 1.0}]}])
    with pytest.raises(BadRequest, match="expected an integer"):
        PB.encode(as_float)


def test_converters_generated_from_several_threads_at_once() -> None:
    # A fresh interpreter, so that every thread races to generate the converters.
    script = """
import threading
from kstore.codec.protobuf import ProtobufSerializer
pb = ProtobufSerializer()
objs = [
    {"apiVersion": "v1", "kind": k, "metadata": {"name": "x"}}
    for k in ("Pod", "Service", "ConfigMap", "Event", "Secret", "Namespace")
] + [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}]
errors = []
barrier = threading.Barrier(len(objs))
def run(obj):
    try:
        barrier.wait()
        for _ in range(20):
            assert pb.decode(pb.encode(obj))["metadata"]["name"] == "x"
    except BaseException as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=run, args=(o,)) for o in objs]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
"""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def test_strings_that_are_not_unicode_are_bad_requests() -> None:
    with pytest.raises(BadRequest, match="not valid Unicode"):
        PB.encode(_config_map(data={"k": "\ud800"}))
    with pytest.raises(BadRequest, match="not valid Unicode"):
        PB.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "\udfff"}})


_SAMPLE = PB.encode(
    _pod(
        [
            {
                "name": "c",
                "image": "i",
                "ports": [{"containerPort": 8080}],
                "resources": {"limits": {"cpu": "1"}},
                "livenessProbe": {"httpGet": {"port": "http"}},
            }
        ]
    )
)


@settings(max_examples=300, deadline=None)
@given(
    position=st.integers(4, len(_SAMPLE) - 1),
    value=st.integers(0, 255),
    cut=st.booleans(),
)
def test_corrupted_data_decodes_or_is_a_bad_request(position: int, value: int, cut: bool) -> None:
    data = bytearray(_SAMPLE)
    data[position] = value
    corrupted = bytes(data[: position + 1] if cut else data)
    # Any outcome but an exception other than BadRequest is fine.
    with contextlib.suppress(BadRequest):
        assert isinstance(PB.decode(corrupted), dict)
    with contextlib.suppress(BadRequest):
        assert isinstance(PB.decode_strict(corrupted).obj, dict)
