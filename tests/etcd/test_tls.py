"""TLS to etcd as kube-apiserver's ``--etcd-cafile``/``--etcd-certfile``/``--etcd-keyfile``: a
member that requires client certificates, certificates made by ``openssl`` for the test."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kstore.errors import Unavailable
from kstore.storage.aio import as_async
from kstore.storage.etcd import EtcdBackend, EtcdConfig
from kstore.storage.interface import IdentityTransformer
from kstore.testing.etcd_cluster import EtcdCluster, EtcdTLSFiles
from kstore.testing.objects import pod, pod_config, rv_of
from tests.conftest_etcd import require_etcd

pytestmark = pytest.mark.etcd


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _make_certificates(directory: Path) -> EtcdTLSFiles:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificates")
    ca = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
    _openssl(
        *ca, "-subj", "/CN=kstore-test-ca", "-keyout", "ca.key", "-out", "ca.crt", cwd=directory
    )
    (directory / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
    )
    (directory / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for name, subject in (("server", "/CN=etcd"), ("client", "/CN=kstore")):
        request = ["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject]
        _openssl(*request, "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory)
        sign = ["x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key"]
        options = ["-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext"]
        _openssl(*sign, *options, "-out", f"{name}.crt", cwd=directory)
    return EtcdTLSFiles(
        ca_file=directory / "ca.crt",
        cert_file=directory / "server.crt",
        key_file=directory / "server.key",
        client_cert_file=directory / "client.crt",
        client_key_file=directory / "client.key",
    )


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    require_etcd()
    files = _make_certificates(tmp_path_factory.mktemp("certs"))
    with EtcdCluster(1, tls=files) as cluster:
        yield cluster


def test_client_certificates_reach_a_member_that_requires_them(tls_cluster: EtcdCluster) -> None:
    tls = tls_cluster.tls
    assert tls is not None
    backend = EtcdBackend(
        EtcdConfig(
            endpoints=tuple(f"https://{e}" for e in tls_cluster.endpoints),
            ca_file=str(tls.ca_file),
            cert_file=str(tls.client_cert_file),
            key_file=str(tls.client_key_file),
            compaction_interval=0,
        )
    )
    try:
        pods = backend.storage_for(pod_config(IdentityTransformer()))
        out = pods.create("/pods/ns/a", pod("a", "ns"))
        assert rv_of(pods.get("/pods/ns/a")) == rv_of(out)
        # The asyncio verbs' own grpc.aio channels carry the same certificates.
        aio = as_async(pods)
        created = asyncio.run(aio.create("/pods/ns/b", pod("b", "ns")))
        assert rv_of(asyncio.run(aio.get("/pods/ns/b"))) == rv_of(created) > rv_of(out)
    finally:
        backend.close()


def test_without_a_client_certificate_the_member_refuses_in_time(
    tls_cluster: EtcdCluster,
) -> None:
    tls = tls_cluster.tls
    assert tls is not None
    backend = EtcdBackend(
        EtcdConfig(
            endpoints=tuple(f"https://{e}" for e in tls_cluster.endpoints),
            ca_file=str(tls.ca_file),
            request_timeout=2.0,
            compaction_interval=0,
        )
    )
    try:
        with pytest.raises(Unavailable):
            backend.current_revision()
    finally:
        backend.close()


def test_plain_text_to_a_tls_member_fails_in_time(tls_cluster: EtcdCluster) -> None:
    backend = EtcdBackend(
        EtcdConfig(
            endpoints=tuple(tls_cluster.endpoints), request_timeout=2.0, compaction_interval=0
        )
    )
    try:
        with pytest.raises(Unavailable):
            backend.current_revision()
    finally:
        backend.close()
