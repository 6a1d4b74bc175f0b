"""kstore's storage conformance suite on the etcd backend, against a real etcd.

The same test classes as ``test_storage_conformance.py``, collected here with a
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
from kstore.testing.corruption_conformance import TestCorruptData, TestCorruptWatch
from kstore.testing.delete_conformance import (
    TestConditionalDelete,
    TestDelete,
    TestDeleteWithSuggestion,
)
from kstore.testing.env import Capabilities, ConformanceEnv
from kstore.testing.list_conformance import (
    TestConsistentList,
    TestGetListNonRecursive,
    TestGetListRecursivePrefix,
    TestList,
)
from kstore.testing.paging_conformance import TestListPaging, TestListResourceVersionMatch
from kstore.testing.scoped_conformance import (
    TestClusterScopedList,
    TestClusterScopedWatch,
    TestNamespaceScopedList,
    TestNamespaceScopedWatch,
)
from kstore.testing.store_conformance import (
    TestCompactRevision,
    TestCreate,
    TestCreateWithTTL,
    TestGet,
    TestKeySchema,
    TestStats,
)
from kstore.testing.update_conformance import (
    TestGuaranteedUpdate,
    TestGuaranteedUpdateConcurrency,
    TestGuaranteedUpdateRace,
)
from kstore.testing.watch_conformance import TestWatch, TestWatchDelivery, TestWatchFromRevision
from kstore.testing.watch_list_conformance import TestBookmarks, TestWatchList, TestWatchSemantics
from tests.conftest_etcd import etcd_backend, etcd_single

pytestmark = pytest.mark.etcd

__all__ = [
    "TestBookmarks",
    "TestClusterScopedList",
    "TestClusterScopedWatch",
    "TestCompactRevision",
    "TestConditionalDelete",
    "TestConsistentList",
    "TestCorruptData",
    "TestCorruptWatch",
    "TestCreate",
    "TestCreateWithTTL",
    "TestDelete",
    "TestDeleteWithSuggestion",
    "TestGet",
    "TestGetListNonRecursive",
    "TestGetListRecursivePrefix",
    "TestGuaranteedUpdate",
    "TestGuaranteedUpdateConcurrency",
    "TestGuaranteedUpdateRace",
    "TestKeySchema",
    "TestList",
    "TestListPaging",
    "TestListResourceVersionMatch",
    "TestNamespaceScopedList",
    "TestNamespaceScopedWatch",
    "TestStats",
    "TestWatch",
    "TestWatchDelivery",
    "TestWatchFromRevision",
    "TestWatchList",
    "TestWatchSemantics",
    "etcd_backend",
    "etcd_single",
]

#: etcd3's abilities where Kubernetes' suite lets implementations differ.
ETCD_CAPABILITIES = Capabilities(
    progress_notify=True,
    estimates_object_size=False,
    expires_before_reaping=False,
)


@pytest.fixture
def conformance_env(etcd_backend: EtcdBackend) -> Iterator[ConformanceEnv]:
    yield ConformanceEnv(backend=etcd_backend, capabilities=ETCD_CAPABILITIES)
