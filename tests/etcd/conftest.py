"""Fixtures of the etcd backend's own tests: the shared single member (tests.conftest_etcd) and
a three-member cluster per module for fail-over and fault tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# As tests/conformance/conftest.py does: assertions inside kstore.testing are explained. This
# directory may be collected first, so the registration must happen here too.
pytest.register_assert_rewrite("kstore.testing")

from kstore.testing.etcd_cluster import EtcdCluster  # noqa: E402
from tests.conftest_etcd import etcd_backend, etcd_single, require_etcd  # noqa: E402

__all__ = ["etcd_backend", "etcd_single", "etcd_trio"]


@pytest.fixture(scope="module")
def etcd_trio() -> Iterator[EtcdCluster]:
    """Three members with etcd's default timing (100 ms heartbeat, 1 s election), shared by
    the tests of one module; a test that stops members starts them again before it ends."""
    require_etcd()
    with EtcdCluster(3) as cluster:
        yield cluster
