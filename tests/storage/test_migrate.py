"""kstore migrate (LMDB to a real 3-member etcd while a real kstore serve keeps writing),
kstore storage migrate interrupted by kill -9 and resumed, kstore check and kstore defrag."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

import kstore
from kstore.codec.recognizer import PROTOBUF_MAGIC
from kstore.embedded import Client
from kstore.errors import Conflict, Timeout
from kstore.registry.registry import RegistryConfig
from kstore.storage.etcd import EtcdConfig
from kstore.storage.lmdb import LmdbConfig
from kstore.storage.maintenance import stored_values
from kstore.testing.etcd_cluster import EtcdCluster
from tests.clients.kubectl import Kubectl, kubectl_binary
from tests.conftest_etcd import RawEtcd, require_etcd, shared_cluster
from tests.server.harness import RunningServer, start_server

_CM = "/api/v1/namespaces/default/configmaps"


def _kstore(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kstore.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _configmap(name: str, value: str = "v") -> dict[str, object]:
    return {"metadata": {"name": name}, "data": {"k": value * 64}}


class _Writer:
    """Creates, updates and deletes ConfigMaps over HTTP until the server goes away (or
    ``limit`` rounds); remembers what the server acknowledged, and the name whose request was
    in flight when it stopped (its outcome is unknown)."""

    def __init__(self, url: str, limit: int) -> None:
        self._url = url
        self._limit = limit
        self.present: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.in_flight = ""
        self.rounds = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self._url, timeout=30) as http:
            try:
                for i in range(self._limit):
                    self._round(http, i)
                    self.rounds += 1
            except httpx.HTTPError:
                return

    def _round(self, http: httpx.Client, i: int) -> None:
        name = self.in_flight = f"w-{i}"
        r = http.post(_CM, json=_configmap(name, "a"))
        if r.status_code != 201:
            raise httpx.HTTPError(f"create answered {r.status_code}")
        self.present[name] = "a" * 64
        if i % 3 == 1:
            cm = r.json()
            cm["data"]["k"] = "b" * 64
            if http.put(f"{_CM}/{name}", json=cm).status_code == 200:
                self.present[name] = "b" * 64
        if i % 5 == 2 and http.delete(f"{_CM}/{name}").status_code == 200:
            del self.present[name]
            self.deleted.add(name)
        self.in_flight = ""


@pytest.mark.etcd
def test_migrate_lmdb_to_three_member_etcd_while_serving(tmp_path: Path) -> None:
    require_etcd()
    data = tmp_path / "lmdb"
    with kstore.open(f"lmdb://{data}", controllers=()) as client:
        cms = client.resource("v1", "configmaps", namespace="default")
        for i in range(300):
            cms.create(_configmap(f"before-{i}"))
    with EtcdCluster(3) as cluster:
        server = start_server(data, "--controllers", "")
        new: RunningServer | None = None
        try:
            writer = _Writer(server.url, 100_000)
            writer.thread.start()
            time.sleep(0.3)
            migration = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kstore.cli",
                    "migrate",
                    "--from",
                    f"lmdb://{data}",
                    "--to",
                    _etcd_url(cluster, "/registry"),
                    "--follow",
                    "--verify",
                    "--work-dir",
                    str(tmp_path),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            lines: list[tuple[float, str]] = []

            def read() -> None:
                assert migration.stdout is not None
                for line in migration.stdout:
                    lines.append((time.monotonic(), line))

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            deadline = time.monotonic() + 120
            while not lines:
                assert time.monotonic() < deadline and migration.poll() is None
                time.sleep(0.05)
            assert lines[0][1].startswith("copied "), lines
            # Writes go on while the migration follows the source.
            time.sleep(2.0)
            assert writer.thread.is_alive()
            # The move: stop the old server (its writes stop); the migration notices, catches
            # up and ends; the new server starts on etcd. Downtime: from the stop to the
            # first write the new server accepts.
            stopped_at = time.monotonic()
            server.stop()
            server_gone = time.monotonic()
            writer.thread.join(30)
            _out, err = migration.communicate(timeout=120)
            reader.join(10)
            out = "".join(line for _at, line in lines)
            assert migration.returncode == 0, out + err
            assert "source released" in out, out
            assert "verified" in out, out
            caught_up = next(at for at, line in lines if line.startswith("applied "))
            migrated_at = time.monotonic()
            new = start_server(
                tmp_path / "unused",
                "--controllers",
                "",
                "--storage-backend",
                "etcd",
                "--etcd-servers",
                ",".join(cluster.endpoints),
            )
            with httpx.Client(base_url=new.url, timeout=30) as http:
                assert http.post(_CM, json=_configmap("after")).status_code == 201
            downtime = time.monotonic() - stopped_at
            print(
                f"\n{writer.rounds} writer rounds; old server stopped in "
                f"{server_gone - stopped_at:.2f}s, migration caught up "
                f"{caught_up - stopped_at:.2f}s and verified {migrated_at - stopped_at:.2f}s "
                f"after the stop; write downtime {downtime:.2f}s"
            )
            unknown = {writer.in_flight} - {""}
            kubectl = Kubectl(kubectl_binary(), tmp_path / "kubectl-home", new.url)
            names = set(kubectl.ok("get", "configmaps", "-n", "default", "-o", "name").split())
            expected = {f"configmap/before-{i}" for i in range(300)}
            expected |= {f"configmap/{n}" for n in set(writer.present) - unknown}
            assert expected | {"configmap/after"} <= names
            assert not {f"configmap/{n}" for n in writer.deleted} & names
            with httpx.Client(base_url=new.url, timeout=30) as http:
                for name, value in writer.present.items():
                    if name not in unknown:
                        assert http.get(f"{_CM}/{name}").json()["data"]["k"] == value
        finally:
            server.stop()
            if new is not None:
                new.stop()


def test_migrate_refuses_a_non_empty_target_and_copies_lmdb_to_lmdb(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    with kstore.open(f"lmdb://{source}", controllers=()) as client:
        cms = client.resource("v1", "configmaps", namespace="default")
        for i in range(20):
            cms.create(_configmap(f"cm-{i}"))
        cms.delete("cm-3")
    done = _kstore("migrate", "--from", f"lmdb://{source}", "--to", f"lmdb://{target}", "--verify")
    assert done.returncode == 0, done.stderr
    assert "verified" in done.stdout
    again = _kstore("migrate", "--from", f"lmdb://{source}", "--to", f"lmdb://{target}")
    assert again.returncode == 1
    assert "not empty" in again.stderr
    with kstore.open(f"lmdb://{target}", controllers=()) as client:
        names = {
            cm["metadata"]["name"]
            for cm in client.resource("v1", "configmaps", namespace="default").list()["items"]
        }
    assert names == {f"cm-{i}" for i in range(20)} - {"cm-3"}


def _media_types(data: Path) -> tuple[int, int]:
    """(protobuf, other) values among the store's ConfigMaps."""
    protobuf = other = 0
    for key, value in stored_values(("lmdb", LmdbConfig(path=data))):
        if key.startswith(b"/configmaps/"):
            if value.startswith(PROTOBUF_MAGIC):
                protobuf += 1
            else:
                other += 1
    return protobuf, other


def test_storage_migration_killed_and_resumed_rewrites_everything(tmp_path: Path) -> None:
    data = tmp_path / "lmdb"
    count = 3000
    with kstore.open(f"lmdb://{data}?durable=false", controllers=()) as client:
        cms = client.resource("v1", "configmaps", namespace="default")
        for i in range(count):
            cms.create(_configmap(f"cm-{i}", str(i % 10)))
    assert _media_types(data) == (0, count)
    args = [
        sys.executable,
        "-m",
        "kstore.cli",
        "storage",
        "migrate",
        "--data-dir",
        str(data),
        "--storage-media-type",
        "application/vnd.kubernetes.protobuf",
        "--resource",
        "configmaps",
    ]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while _media_types(data)[0] < count // 10:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partly = _media_types(data)
    assert 0 < partly[0] < count, partly
    done = _kstore(*args[3:])
    assert done.returncode == 0, done.stderr
    assert f"configmaps: {count} examined" in done.stdout
    assert _media_types(data) == (count, 0)
    config = RegistryConfig(storage_media_type="application/vnd.kubernetes.protobuf")
    with kstore.open(f"lmdb://{data}", controllers=(), config=config) as client:
        items = client.resource("v1", "configmaps", namespace="default").list()["items"]
    assert {cm["metadata"]["name"]: cm["data"]["k"] for cm in items} == {
        f"cm-{i}": str(i % 10) * 64 for i in range(count)
    }
    # Once more: nothing left to rewrite.
    again = _kstore(*args[3:])
    assert f"configmaps: {count} examined, 0 rewritten" in again.stdout


_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": version,
                "served": True,
                "storage": version == "v1",
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
            for version in ("v1", "v2")
        ],
    },
}


def test_storage_migration_moves_custom_resources_and_sets_stored_versions(
    tmp_path: Path,
) -> None:
    data = tmp_path / "lmdb"
    with kstore.open(f"lmdb://{data}") as client:
        crds = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions")
        crds.create(_CRD)
        deadline = time.monotonic() + 30
        while True:
            try:
                widgets = client.resource("example.com/v1", "widgets", namespace="default")
                widgets.create({"metadata": {"name": "w0"}, "size": 1})
                break
            except Exception:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        for i in range(1, 10):
            widgets.create({"metadata": {"name": f"w{i}"}, "size": i})
        crd = crds.get("widgets.example.com")
        for version in crd["spec"]["versions"]:
            version["storage"] = version["name"] == "v2"
        crd = crds.update(crd)
        assert crd["status"]["storedVersions"] == ["v1", "v2"]
    stored = [v for k, v in stored_values(("lmdb", LmdbConfig(path=data))) if b"/widgets/" in k]
    assert len(stored) == 10 and all(b'"example.com/v1"' in v for v in stored)
    done = _kstore("storage", "migrate", "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    assert "widgets.example.com: 10 examined, 10 rewritten" in done.stdout, done.stdout
    assert "status.storedVersions set to [v2]" in done.stdout
    stored = [v for k, v in stored_values(("lmdb", LmdbConfig(path=data))) if b"/widgets/" in k]
    assert len(stored) == 10 and all(b'"example.com/v2"' in v for v in stored)
    with kstore.open(f"lmdb://{data}", controllers=()) as client:
        crd = client.resource("apiextensions.k8s.io/v1", "customresourcedefinitions").get(
            "widgets.example.com"
        )
    assert crd["status"]["storedVersions"] == ["v2"]


def test_check_and_defrag(tmp_path: Path) -> None:
    data = tmp_path / "lmdb"
    with kstore.open(f"lmdb://{data}", controllers=()) as client:
        cms = client.resource("v1", "configmaps", namespace="default")
        for i in range(500):
            cms.create(_configmap(f"cm-{i}", "x" * 20))
        for i in range(450):
            cms.delete(f"cm-{i}")
    checked = _kstore("check", "--data-dir", str(data))
    assert checked.returncode == 0, checked.stderr
    assert "configmaps" in checked.stdout and " 50\n" in checked.stdout
    assert "0 undecodable, 0 outside the layout" in checked.stdout
    before = (data / "data.mdb").stat().st_size
    server = start_server(data, "--controllers", "")
    try:
        refused = _kstore("defrag", "--data-dir", str(data))
        assert refused.returncode == 1
        assert f"process {server.process.pid}" in refused.stderr
    finally:
        server.stop()
    defragged = _kstore("defrag", "--data-dir", str(data))
    assert defragged.returncode == 0, defragged.stderr
    assert (data / "data.mdb").stat().st_size <= before
    with kstore.open(f"lmdb://{data}", controllers=()) as client:
        items = client.resource("v1", "configmaps", namespace="default").list()["items"]
    assert len([cm for cm in items if cm["metadata"]["name"].startswith("cm-")]) == 50


def test_check_reports_a_value_that_does_not_decode(tmp_path: Path) -> None:
    data = tmp_path / "lmdb"
    with kstore.open(f"lmdb://{data}", controllers=()) as client:
        client.resource("v1", "configmaps", namespace="default").create(_configmap("good"))
    # Garbage bytes as the value of one key, written as a migration writes changes.
    from kstore.storage._lmdb_migrate import LmdbChangeTarget
    from kstore.storage.migrate import Change

    target = LmdbChangeTarget(data)
    try:
        target.apply([Change(b"/configmaps/default/bad", 0, b"{not json")])
    finally:
        target.close()
    checked = _kstore("check", "--data-dir", str(data))
    assert checked.returncode == 1
    assert "undecodable: /configmaps/default/bad" in checked.stdout


@pytest.mark.etcd
def test_defrag_of_an_etcd_member(tmp_path: Path) -> None:
    require_etcd()
    with EtcdCluster(1) as cluster:
        done = _kstore("defrag", "--etcd-servers", ",".join(cluster.endpoints))
        assert done.returncode == 0, done.stderr
        assert "bytes before" in done.stdout


def _etcd_url(cluster: EtcdCluster, prefix: str) -> str:
    hosts = ",".join(e.removeprefix("http://") for e in cluster.endpoints)
    return f"etcd://{hosts}{prefix}"


class _Updater:
    """Updates ConfigMaps ``cm-0 .. cm-{count-1}`` through kstore.open until stopped,
    remembering the last value each update that succeeded wrote.

    A write etcd may or may not have applied (Timeout: under the load a migration adds to the
    shared member, a request can outlast its deadline) is what any client sees as unknown: that
    ConfigMap is left alone from then on, and :meth:`check` accepts either outcome for it."""

    def __init__(self, url: str, count: int, config: RegistryConfig | None = None) -> None:
        self._url = url
        self._count = count
        self._config = config
        self.acknowledged: dict[str, str] = {}
        self.deleted: set[str] = set()
        #: The values a ConfigMap may hold after an unknown outcome (None: it may be gone).
        self.uncertain: dict[str, set[str | None]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> Client:
        for attempt in range(5):
            try:
                return kstore.open(self._url, controllers=(), config=self._config)
            except Timeout:
                if attempt == 4:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")

    def _unknown(self, name: str, value: str | None) -> None:
        self.uncertain[name] = {self.acknowledged.pop(name, _INITIAL), value}

    def _run(self) -> None:
        with self._open() as client:
            cms = client.resource("v1", "configmaps", namespace="default")
            i = 0
            while not self.stop.is_set():
                name = f"cm-{(i * 7919) % self._count}"
                value = f"u{i}"
                i += 1
                if name in self.deleted or name in self.uncertain:
                    continue
                cm = cms.get(name)
                cm["data"]["k"] = value
                try:
                    cms.update(cm)
                except Conflict:
                    continue  # rewritten by the migration since the get: not acknowledged
                except Timeout:
                    self._unknown(name, value)
                    continue
                self.acknowledged[name] = value
                if i % 50 == 0:
                    try:
                        cms.delete(name)
                    except Timeout:
                        self._unknown(name, None)
                        continue
                    self.deleted.add(name)
                    del self.acknowledged[name]

    def check(self, found: dict[str, str]) -> None:
        """``found`` (name -> value of every ConfigMap) holds every acknowledged write, and
        for each unknown outcome one of the values the ConfigMap may have."""
        expected = {f"cm-{i}": _INITIAL for i in range(self._count)}
        for name in self.deleted:
            del expected[name]
        expected.update(self.acknowledged)
        rest = dict(found)
        for name, possible in self.uncertain.items():
            del expected[name]
            assert rest.pop(name, None) in possible, (name, found.get(name), possible)
        assert rest == expected


#: The value every ConfigMap is created with.
_INITIAL = "o" * 64


@pytest.mark.etcd
def test_storage_migration_on_etcd_killed_and_resumed_loses_no_concurrent_write(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    cluster = shared_cluster(request.config)
    prefix = f"/kstore-migrate-{os.getpid()}-svm"
    url = _etcd_url(cluster, prefix)
    count = 2000
    protobuf = "application/vnd.kubernetes.protobuf"
    location = ("etcd", EtcdConfig(endpoints=tuple(cluster.endpoints), prefix=prefix))

    def media_types() -> tuple[int, int]:
        pb = other = 0
        for key, value in stored_values(location):
            if key.startswith(b"/configmaps/"):
                if value.startswith(PROTOBUF_MAGIC):
                    pb += 1
                else:
                    other += 1
        return pb, other

    try:
        with kstore.open(url, controllers=()) as client:
            cms = client.resource("v1", "configmaps", namespace="default")
            for i in range(count):
                cms.create(_configmap(f"cm-{i}", "o"))
        # The servers now store protobuf: the updater writes as they do.
        updater = _Updater(url, count, RegistryConfig(storage_media_type=protobuf))
        updater.thread.start()
        args = [
            "storage",
            "migrate",
            "--storage-backend",
            "etcd",
            "--etcd-servers",
            ",".join(cluster.endpoints),
            "--etcd-prefix",
            prefix,
            "--storage-media-type",
            protobuf,
            "--resource",
            "configmaps",
        ]
        process = subprocess.Popen(
            [sys.executable, "-m", "kstore.cli", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while media_types()[0] < count // 4:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait()
        partly = media_types()
        assert partly[1] > 0, partly
        done = _kstore(*args)
        assert done.returncode == 0, done.stderr
        updater.stop.set()
        updater.thread.join(30)
        with kstore.open(url, controllers=()) as client:
            items = client.resource("v1", "configmaps", namespace="default").list()["items"]
        found = {cm["metadata"]["name"]: cm["data"]["k"] for cm in items}
        updater.check(found)
        assert media_types() == (len(found), 0)
        assert updater.acknowledged, "the updater wrote nothing meanwhile"
        checked = _kstore("check", *args[2:-2])
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"configmaps {' ' * 38}{len(found)}\n" in checked.stdout
    finally:
        raw = RawEtcd(cluster.endpoints[0])
        try:
            raw.delete_prefix(prefix.encode() + b"/")
        finally:
            raw.close()


@pytest.mark.etcd
def test_migrate_an_etcd_prefix_to_lmdb_while_it_is_written(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    cluster = shared_cluster(request.config)
    prefix = f"/kstore-migrate-{os.getpid()}-src"
    url = _etcd_url(cluster, prefix)
    count = 300
    target = tmp_path / "lmdb"
    try:
        with kstore.open(url, controllers=()) as client:
            cms = client.resource("v1", "configmaps", namespace="default")
            for i in range(count):
                cms.create(_configmap(f"cm-{i}", "o"))
        updater = _Updater(url, count)
        updater.thread.start()
        migration = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kstore.cli",
                "migrate",
                "--from",
                url,
                "--to",
                f"lmdb://{target}",
                "--follow",
                "--verify",
                "--work-dir",
                str(tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert migration.stdout is not None
        first = migration.stdout.readline()
        assert first.startswith("copied "), first
        time.sleep(1.0)
        updater.stop.set()
        updater.thread.join(30)
        migration.send_signal(signal.SIGINT)
        out, err = migration.communicate(timeout=120)
        assert migration.returncode == 0, first + out + err
        assert "stop requested" in out and "verified" in out, out
        with kstore.open(f"lmdb://{target}", controllers=()) as client:
            items = client.resource("v1", "configmaps", namespace="default").list()["items"]
        updater.check({cm["metadata"]["name"]: cm["data"]["k"] for cm in items})
        assert updater.deleted
    finally:
        raw = RawEtcd(cluster.endpoints[0])
        try:
            raw.delete_prefix(prefix.encode() + b"/")
        finally:
            raw.close()


@pytest.mark.etcd
def test_migrate_between_two_prefixes_of_one_etcd(tmp_path: Path) -> None:
    """The restore into the target compacts the etcd both prefixes share: following the
    source goes on from the copy's key listing, taken before."""
    require_etcd()
    with EtcdCluster(1) as cluster:
        source, target = _etcd_url(cluster, "/old"), _etcd_url(cluster, "/new")
        with kstore.open(source, controllers=()) as client:
            cms = client.resource("v1", "configmaps", namespace="default")
            for i in range(200):
                cms.create(_configmap(f"cm-{i}", "o"))
        updater = _Updater(source, 200)
        updater.thread.start()
        migration = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kstore.cli",
                "migrate",
                "--from",
                source,
                "--to",
                target,
                "--follow",
                "--verify",
                "--work-dir",
                str(tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert migration.stdout is not None
        first = migration.stdout.readline()
        assert first.startswith("copied "), first
        time.sleep(1.0)
        updater.stop.set()
        updater.thread.join(30)
        migration.send_signal(signal.SIGTERM)
        out, err = migration.communicate(timeout=120)
        assert migration.returncode == 0, first + out + err
        assert "verified" in out, out
        with kstore.open(target, controllers=()) as client:
            items = client.resource("v1", "configmaps", namespace="default").list()["items"]
        updater.check({cm["metadata"]["name"]: cm["data"]["k"] for cm in items})
