"""The compiled converters' sources are current, built, and cover every kind.

``kstore/codec/_pb_native_{encode,decode}.pyx`` are generated from the message plans by
``scripts/gen-proto``; a difference from a fresh generation means a .proto or a converter
generator changed without it. The built extension modules must carry the plans' digests
(else they are unused, see kstore.codec._pb_native), so a stale build fails here too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kstore.api.proto_schema import kind_messages
from kstore.codec import _pb_native_source
from kstore.codec._pb_native_source import DECODE_PYX, ENCODE_PYX
from tests.codec._pb_paths import compiled_missing

REPO = Path(__file__).resolve().parents[2]


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


def test_every_kind_is_covered_by_the_compiled_converters() -> None:
    assert set(kind_messages()) <= set(_pb_native_source.messages())


def test_built_extension_modules_are_current_for_every_message() -> None:
    missing = compiled_missing()
    assert not missing, f"rebuild with pip install -e . (stale or missing: {missing[:3]})"
