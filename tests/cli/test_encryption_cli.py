"""Encryption at rest through the command line: ``kstore serve --encryption-provider-config``
and ``kstore encryption rewrite`` after a key rotation, on a real server process."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

from tests.server.harness import start_server

SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "db"},
    "stringData": {"password": "plain-text-password-123"},
}


def _config(path: Path, *keys: tuple[str, bytes]) -> Path:
    lines = [
        "apiVersion: apiserver.config.k8s.io/v1",
        "kind: EncryptionConfiguration",
        "resources:",
        "- resources: [secrets]",
        "  providers:",
        "  - aescbc:",
        "      keys:",
    ]
    for name, secret in keys:
        lines += [f"      - name: {name}", f"        secret: {base64.b64encode(secret).decode()}"]
    lines.append("  - identity: {}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _stored_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*.mdb"))


def test_secrets_are_encrypted_and_a_rotation_is_rewritten(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    old = _config(tmp_path / "old.yaml", ("key1", b"k" * 32))
    server = start_server(data_dir, "--encryption-provider-config", str(old))
    try:
        with server.client() as http:
            created = http.post("/api/v1/namespaces/default/secrets", json=SECRET)
            assert created.status_code == 201, created.text
    finally:
        assert server.stop() == 0
    stored = _stored_bytes(data_dir)
    assert b"k8s:enc:aescbc:v1:key1:" in stored
    assert b"plain-text-password-123" not in stored
    assert base64.b64encode(b"plain-text-password-123") not in stored

    rotated = _config(tmp_path / "rotated.yaml", ("key2", b"n" * 32), ("key1", b"k" * 32))
    rewrite = subprocess.run(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "encryption",
            "rewrite",
            "--data-dir",
            str(data_dir),
            "--encryption-provider-config",
            str(rotated),
        ],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert rewrite.returncode == 0, rewrite.stderr
    assert b"secrets: 1 examined, 1 rewritten, 0 gone" in rewrite.stdout
    assert b"k8s:enc:aescbc:v1:key2:" in _stored_bytes(data_dir)

    new_only = _config(tmp_path / "new.yaml", ("key2", b"n" * 32))
    server = start_server(data_dir, "--encryption-provider-config", str(new_only))
    try:
        with server.client() as http:
            got = http.get("/api/v1/namespaces/default/secrets/db")
            assert got.status_code == 200, got.text
            password = base64.b64decode(got.json()["data"]["password"])
            assert password == b"plain-text-password-123"
    finally:
        assert server.stop() == 0


def test_a_bad_encryption_config_stops_serve_before_the_store_opens(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
        "resources:\n- resources: [secrets]\n  providers:\n  - kms: {name: x}\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kstore.cli",
            "serve",
            "--workers",
            "1",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--encryption-provider-config",
            str(bad),
        ],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert b"kms" in result.stderr
    assert not (tmp_path / "data").exists()
