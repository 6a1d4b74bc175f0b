"""``kstore serve`` as a process: startup output, SIGTERM ends watches and exits 0, data
survives a restart, flags are validated."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import orjson

from .harness import start_server

CMS = "/api/v1/namespaces/default/configmaps"


def test_startup_prints_the_url_and_a_kubectl_line(tmp_path: Path) -> None:
    started = time.monotonic()
    server = start_server(tmp_path / "data")
    try:
        elapsed = time.monotonic() - started
        assert server.stdout_lines[0].startswith("kstore serving on http://127.0.0.1:")
        assert f"kubectl --server {server.url}" in server.stdout_lines[1]
        with server.client() as c:
            assert c.get("/readyz").text == "ok"
        # Generous bound for a shared CI machine; about a second when idle.
        assert elapsed < 15, elapsed
    finally:
        assert server.stop() == 0, server.log()


def test_sigterm_ends_watches_and_the_store_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    ended = threading.Event()
    lines: list[bytes] = []

    def watch() -> None:
        with (
            httpx.Client(base_url=server.url, timeout=60) as c,
            c.stream("GET", CMS, params={"watch": "true"}) as r,
        ):
            for line in r.iter_lines():
                lines.append(line.encode())
        ended.set()

    with server.client() as c:
        r = c.post(CMS, content=orjson.dumps({"metadata": {"name": "kept"}}))
        assert r.status_code == 201
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.5)
    started = time.monotonic()
    assert server.stop() == 0, server.log()
    assert ended.wait(10), "the watch stream did not end on SIGTERM"
    assert time.monotonic() - started < 10
    assert any(b'"kept"' in line for line in lines)
    assert "store closed" in server.log()

    again = start_server(data)
    try:
        with again.client() as c:
            assert c.get(f"{CMS}/kept").status_code == 200
    finally:
        assert again.stop() == 0, again.log()


def test_bad_flags_exit_with_a_message(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kstore.cli", "serve", "--event-ttl", "soon"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "invalid duration" in result.stderr
