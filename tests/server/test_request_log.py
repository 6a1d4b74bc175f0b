"""The request log of a real ``kstore serve``: quiet by default, every request with ``--v 2``."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from kstore.server.filters.httplog import go_duration
from tests.server.harness import RunningServer, start_server

_CONFIG_MAP = {"metadata": {"name": "logged"}, "data": {"a": "b"}}
_LINE = re.compile(
    r'"HTTP" verb="(?P<verb>[A-Z]+)" URI="(?P<uri>[^"]*)" latency="(?P<latency>[^"]+)" '
    r'userAgent="(?P<agent>[^"]*)" audit-ID="(?P<id>[^"]*)" srcIP="(?P<src>[^"]*)" '
    r"resp=(?P<code>\d+)"
)


def _traffic(server: RunningServer) -> None:
    with server.client(headers={"User-Agent": "log-test/1.0"}) as client:
        base = "/api/v1/namespaces/default/configmaps"
        assert client.post(base, json=_CONFIG_MAP).status_code == 201
        assert client.get(f"{base}/logged").status_code == 200
        assert client.get(base, params={"limit": "5"}).status_code == 200
        assert client.get(f"{base}/missing").status_code == 404
        assert client.get("/apis").status_code == 200


def _lines(server: RunningServer) -> list[dict[str, str]]:
    assert server.stop() == 0, server.log()
    return [m.groupdict() for m in _LINE.finditer(server.log())]


def _run(tmp_path: Path, *flags: str) -> list[dict[str, str]]:
    server = start_server(tmp_path / "data", *flags)
    try:
        _traffic(server)
        time.sleep(0.2)  # the log line is written as the response ends
    finally:
        lines = _lines(server)
    return lines


def test_v2_logs_every_request_as_kube_apiserver_httplog_does(tmp_path: Path) -> None:
    lines = _run(tmp_path, "--v", "2")
    seen = {(line["verb"], line["uri"], line["code"]) for line in lines}
    base = "/api/v1/namespaces/default/configmaps"
    assert ("POST", base, "201") in seen
    assert ("GET", f"{base}/logged", "200") in seen
    assert ("LIST", f"{base}?limit=5", "200") in seen
    assert ("GET", f"{base}/missing", "404") in seen
    assert ("GET", "/apis", "200") in seen
    for line in lines:
        if line["agent"] == "log-test/1.0":
            assert line["src"].startswith("127.0.0.1:")
            assert len(line["id"]) == 36  # the Audit-Id sent back
            assert re.fullmatch(r"[0-9.]+(µs|ms|s)", line["latency"])


def test_by_default_successful_reads_are_not_logged_but_writes_and_errors_are(
    tmp_path: Path,
) -> None:
    lines = _run(tmp_path)
    seen = {(line["verb"], line["code"]) for line in lines}
    assert ("POST", "201") in seen
    assert ("GET", "404") in seen
    assert not {("GET", "200"), ("LIST", "200")} & seen


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.00085, "850µs"),
        (0.0019234, "1.923ms"),
        (2.5, "2.5s"),
        (61.25, "1m1.25s"),
        (3725.0, "1h2m5s"),
    ],
)
def test_latency_is_printed_as_a_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text
