"""The committed protobuf modules (kstore/api/pb) are what scripts/gen-proto makes of proto/.

Regenerates into a temporary directory with the installed grpcio-tools and compares file by
file; a difference means someone edited a .proto (or a generated module) without running
``scripts/gen-proto``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "kstore" / "api" / "pb"


def test_generated_modules_match_their_proto_sources(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen-proto"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "kstore" / "api" / "pb").glob("*_pb2.py")}
    committed = {p.name: p.read_bytes() for p in COMMITTED.glob("*_pb2.py")}
    assert sorted(fresh) == sorted(committed), "run scripts/gen-proto: modules added or removed"
    stale = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not stale, f"run scripts/gen-proto: stale generated modules {stale}"


def test_every_proto_source_has_a_committed_module() -> None:
    sources = {p.stem for p in (REPO / "proto" / "kstore" / "api" / "pb").glob("*.proto")}
    modules = {p.name.removesuffix("_pb2.py") for p in COMMITTED.glob("*_pb2.py")}
    assert sources == modules
