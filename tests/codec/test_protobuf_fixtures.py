"""Kubernetes' compatibility fixtures through kstore's protobuf codec, byte for byte.

For every served kind/version in ``HEAD`` and ``v1.33.0`` (in either fixture set): the ``.pb``
file decodes to the object of the ``.json`` file, and encoding that object gives the ``.pb``
file's bytes exactly (older releases lack the fields added since; absent fields are simply not
written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kstore.codec.protobuf import ProtobufSerializer, read_envelope
from tests.codec._pb_paths import converter_path
from tests.fixtures_path import fixture_files, k8s_testdata

PB_FIXTURES = fixture_files(".pb")
SERIALIZER = ProtobufSerializer()

# Every fixture is checked on the compiled converters and on the Python ones.
pytestmark = [pytest.mark.fixtures, pytest.mark.usefixtures(converter_path.__name__)]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_every_served_fixture_has_a_protobuf_form_in_each_release() -> None:
    k8s_testdata()
    jsons = {(p.parent.name, p.stem) for p in fixture_files(".json")}
    pbs = {(p.parent.name, p.stem) for p in PB_FIXTURES}
    assert {release for release, _ in jsons} >= {"HEAD", "v1.33.0"}
    assert jsons == pbs


@pytest.mark.parametrize("pb_path", PB_FIXTURES, ids=_id)
def test_fixture_decodes_to_the_json_object(pb_path: Path) -> None:
    expected = json.loads(pb_path.with_suffix(".json").read_bytes())
    assert SERIALIZER.decode(pb_path.read_bytes()) == expected


@pytest.mark.parametrize("pb_path", PB_FIXTURES, ids=_id)
def test_encoding_the_json_object_reproduces_the_fixture_bytes(pb_path: Path) -> None:
    obj = json.loads(pb_path.with_suffix(".json").read_bytes())
    assert SERIALIZER.encode(obj) == pb_path.read_bytes()


@pytest.mark.parametrize("pb_path", PB_FIXTURES, ids=_id)
def test_fixture_envelope_names_the_kind_of_the_json(pb_path: Path) -> None:
    expected = json.loads(pb_path.with_suffix(".json").read_bytes())
    envelope = read_envelope(pb_path.read_bytes())
    assert (envelope.api_version, envelope.kind) == (expected["apiVersion"], expected["kind"])
    assert (envelope.content_encoding, envelope.content_type) == ("", "")


@pytest.mark.parametrize("pb_path", PB_FIXTURES, ids=_id)
def test_fixture_decodes_without_unknown_fields(pb_path: Path) -> None:
    result = SERIALIZER.decode_strict(pb_path.read_bytes())
    assert result.problems == []
