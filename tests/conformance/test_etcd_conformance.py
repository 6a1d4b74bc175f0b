"""kstore's storage conformance suite on the etcd backend, against a real etcd.

Every test class of ``test_storage_conformance.py``, collected here with a
``conformance_env`` fixture of this module's own: a fresh etcd backend (its own key prefix on
the session's single-member etcd) per test. Capabilities are etcd3's, as Kubernetes' suite
treats them: no bookmarks of its own, progress notifications from etcd (the test cluster sends
them every 0.2 s), no object size estimate, and expiry seen only through the lease's DELETED
event (a lease may outlive its TTL by etcd's minimum lease time).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kstore.storage.etcd import EtcdBackend
from kstore.testing.env import Capabilities, ConformanceEnv
from tests.conformance import test_storage_conformance as suite
from tests.conftest_etcd import etcd_backend, etcd_single  # noqa: F401  (fixtures)

pytestmark = pytest.mark.etcd

# Every suite class the LMDB run collects, collected here again with this module's fixture.
for _name in suite.__all__:
    globals()[_name] = getattr(suite, _name)

#: etcd3's abilities where Kubernetes' suite lets implementations differ.
ETCD_CAPABILITIES = Capabilities(
    progress_notify=True,
    estimates_object_size=False,
    expires_before_reaping=False,
)


@pytest.fixture
def conformance_env(etcd_backend: EtcdBackend) -> Iterator[ConformanceEnv]:  # noqa: F811
    yield ConformanceEnv(backend=etcd_backend, capabilities=ETCD_CAPABILITIES)
