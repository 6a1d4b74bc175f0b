"""The compiled converters and the Python ones agree, on valid objects and on damaged bytes.

The exactness tests run on each path against Kubernetes' fixtures; these property tests
compare the two paths with each other on inputs the fixtures do not hold: random Pods (every
value kind: strings, int32/int64 extremes, booleans, maps, Quantities, IntOrString, Time,
lists of flat and nested messages), values of the wrong type, and corrupted encodings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kstore.codec import _pb_native
from kstore.codec.protobuf import ProtobufSerializer
from kstore.errors import BadRequest
from tests.codec._pb_paths import compiled_missing

PB = ProtobufSerializer()

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_name = st.text("abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=12)
_int32 = st.integers(-(2**31), 2**31 - 1)
_int64 = st.integers(-(2**63), 2**63 - 1)
_time = st.sampled_from([None, "2026-12-02T16:00:00Z", "1970-01-01T00:00:00Z"])
_quantity = st.sampled_from(["1", "250m", "512Mi", "0", "1.5Gi"])
_port = st.fixed_dictionaries(
    {"containerPort": _int32},
    optional={"name": _name, "protocol": st.sampled_from(["TCP", "UDP"]), "hostPort": _int32},
)
_probe = st.fixed_dictionaries(
    {},
    optional={
        "httpGet": st.fixed_dictionaries(
            {"port": _int32 | _name}, optional={"path": _text, "scheme": st.just("HTTP")}
        ),
        "initialDelaySeconds": _int32,
        "periodSeconds": _int32,
        "terminationGracePeriodSeconds": _int64,
    },
)
_container = st.fixed_dictionaries(
    {"name": _name},
    optional={
        "image": _text,
        "command": st.lists(_text, max_size=3),
        "ports": st.lists(_port, max_size=3),
        "env": st.lists(
            st.fixed_dictionaries({"name": _name}, optional={"value": _text}), max_size=3
        ),
        "resources": st.fixed_dictionaries(
            {},
            optional={
                "limits": st.dictionaries(_name, _quantity, max_size=2),
                "requests": st.dictionaries(_name, _quantity, max_size=2),
            },
        ),
        "livenessProbe": _probe,
        "stdin": st.booleans(),
        "tty": st.none() | st.booleans(),
    },
)
_pod = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Pod"),
        "metadata": st.fixed_dictionaries(
            {"name": _name},
            optional={
                "labels": st.dictionaries(_name, _text, max_size=3),
                "annotations": st.dictionaries(_name, _text, max_size=3),
                "generation": _int64,
                "creationTimestamp": _time,
                "uid": _text,
            },
        ),
        "spec": st.fixed_dictionaries(
            {"containers": st.lists(_container, max_size=3)},
            optional={
                "nodeName": _text,
                "activeDeadlineSeconds": _int64,
                "hostNetwork": st.booleans(),
                "nodeSelector": st.dictionaries(_name, _text, max_size=2),
            },
        ),
    },
    optional={
        "status": st.fixed_dictionaries(
            {},
            optional={
                "phase": st.sampled_from(["Pending", "Running"]),
                "startTime": _time,
                "conditions": st.lists(
                    st.fixed_dictionaries(
                        {"type": _name, "status": st.sampled_from(["True", "False"])},
                        optional={"lastTransitionTime": _time},
                    ),
                    max_size=2,
                ),
            },
        )
    },
)


@pytest.fixture(autouse=True)
def _compiled_built() -> Iterator[None]:
    missing = compiled_missing()
    if missing:
        pytest.fail(f"the compiled protobuf converters are not built or stale: {missing[:3]}")
    previous = _pb_native.enabled
    yield
    _pb_native.use_native(previous)


def _outcome(run: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", run()
    except BadRequest as exc:
        return "error", str(exc)


def _both(run: Callable[[], Any]) -> tuple[tuple[str, Any], tuple[str, Any]]:
    _pb_native.use_native(True)
    compiled = _outcome(run)
    _pb_native.use_native(False)
    python = _outcome(run)
    return compiled, python


@settings(max_examples=150, deadline=None)
@given(pod=_pod)
def test_both_paths_encode_a_pod_to_the_same_bytes_and_decode_them_alike(
    pod: dict[str, Any],
) -> None:
    compiled, python = _both(lambda: PB.encode(pod))
    assert compiled == python
    assert compiled[0] == "ok"
    data = compiled[1]
    decoded_compiled, decoded_python = _both(lambda: PB.decode(data))
    assert decoded_compiled == decoded_python


@settings(max_examples=100, deadline=None)
@given(
    pod=_pod,
    where=st.sampled_from(["metadata", "spec", "containers", "port"]),
    value=st.sampled_from([1.5, "x", True, [], {}, None, -1, 2**70]),
)
def test_both_paths_agree_on_values_of_the_wrong_type(
    pod: dict[str, Any], where: str, value: Any
) -> None:
    if where == "metadata":
        pod["metadata"]["generation"] = value
    elif where == "spec":
        pod["spec"]["hostNetwork"] = value
    elif where == "containers":
        pod["spec"]["containers"] = value
    else:
        pod["spec"]["containers"] = [{"name": "c", "ports": [{"containerPort": value}]}]
    compiled, python = _both(lambda: PB.encode(pod))
    assert compiled[0] == python[0]
    if compiled[0] == "ok":
        assert compiled == python


@settings(max_examples=300, deadline=None)
@given(pod=_pod, data=st.data())
def test_both_paths_agree_on_corrupted_bytes(pod: dict[str, Any], data: st.DataObject) -> None:
    _pb_native.use_native(False)
    good = bytearray(PB.encode(pod))
    position = data.draw(st.integers(4, len(good) - 1))
    good[position] = data.draw(st.integers(0, 255))
    corrupted = bytes(good[: position + 1] if data.draw(st.booleans()) else good)
    compiled, python = _both(lambda: PB.decode(corrupted))
    assert compiled[0] == python[0]
    if compiled[0] == "ok":
        assert compiled == python
    strict_compiled, strict_python = _both(lambda: PB.decode_strict(corrupted))
    assert strict_compiled[0] == strict_python[0]
    if strict_compiled[0] == "ok":
        assert strict_compiled[1].obj == strict_python[1].obj
        assert strict_compiled[1].problems == strict_python[1].problems
