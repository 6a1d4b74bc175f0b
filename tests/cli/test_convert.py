"""``kstore convert`` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_path import REPO_ROOT, k8s_testdata


def _kstore(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kstore.cli", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=60,
    )


def test_v1beta1_deployment_fixture_converts_to_v1_and_back_identically(tmp_path: Path) -> None:
    source = k8s_testdata() / "HEAD" / "apps.v1beta1.Deployment.json"
    to_v1 = _kstore("convert", "-f", str(source), "--output-version", "apps/v1")
    assert to_v1.returncode == 0, to_v1.stderr
    v1 = json.loads(to_v1.stdout)
    assert v1["apiVersion"] == "apps/v1"
    assert "rollbackTo" not in v1["spec"]
    (tmp_path / "v1.json").write_bytes(to_v1.stdout)
    back = _kstore("convert", "-f", str(tmp_path / "v1.json"), "--output-version", "apps/v1beta1")
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout) == json.loads(source.read_bytes())


def test_example_in_the_readme_converts() -> None:
    result = _kstore(
        "convert",
        "-f",
        str(REPO_ROOT / "examples" / "deployment-v1beta1.yaml"),
        "--output-version",
        "apps/v1",
        "-o",
        "json",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["apiVersion"] == "apps/v1"
    assert "rollbackTo" not in out["spec"]


def test_yaml_from_stdin_defaults_to_yaml_output() -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n"
    result = _kstore("convert", "-f", "-", stdin=body)
    assert result.returncode == 0, result.stderr
    assert b"kind: ConfigMap" in result.stdout


@pytest.mark.parametrize(
    ("stdin", "args", "reason"),
    [
        (b'{"apiVersion": "v1", "kind": "Nope"}', (), "no kind"),
        (b"garbage: [", (), "invalid YAML"),
        (b'{"apiVersion": "v1"', (), "invalid JSON"),
        (b"", (), "no object"),
        (b'{"kind": "Pod"}', (), "apiVersion"),
        (b'{"apiVersion": "v1", "kind": "Pod"}', ("--output-version", "apps/v1"), "cannot"),
    ],
)
def test_bad_input_exits_1_with_a_one_line_reason(
    stdin: bytes, args: tuple[str, ...], reason: str
) -> None:
    result = _kstore("convert", "-f", "-", *args, stdin=stdin)
    assert result.returncode == 1
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert reason in lines[0]


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = _kstore("convert", "-f", str(tmp_path / "absent.yaml"))
    assert result.returncode == 1
    assert b"cannot read" in result.stderr


def test_protobuf_pod_fixture_prints_as_its_json_twin() -> None:
    head = k8s_testdata() / "HEAD"
    result = _kstore("convert", "-f", str(head / "core.v1.Pod.pb"), "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads((head / "core.v1.Pod.json").read_bytes())


def test_json_pod_fixture_encodes_to_the_protobuf_fixture_bytes() -> None:
    head = k8s_testdata() / "HEAD"
    result = _kstore("convert", "-f", str(head / "core.v1.Pod.json"), "-o", "protobuf")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (head / "core.v1.Pod.pb").read_bytes()
