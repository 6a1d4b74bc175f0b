"""kstore's storage conformance suite (kstore.testing), run by the fixture in conftest.py."""

from __future__ import annotations

from kstore.testing.corruption_conformance import (
    TestCorruptData,
    TestCorruptWatch,
)
from kstore.testing.delete_conformance import (
    TestConditionalDelete,
    TestDelete,
    TestDeleteWithSuggestion,
)
from kstore.testing.list_conformance import (
    TestConsistentList,
    TestGetListNonRecursive,
    TestGetListRecursivePrefix,
    TestList,
)
from kstore.testing.paging_conformance import (
    TestListPaging,
    TestListResourceVersionMatch,
)
from kstore.testing.scoped_conformance import (
    TestClusterScopedList,
    TestClusterScopedWatch,
    TestNamespaceScopedList,
    TestNamespaceScopedWatch,
)
from kstore.testing.store_conformance import (
    TestCompactRevision,
    TestConsistentReads,
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
from kstore.testing.watch_conformance import (
    TestWatch,
    TestWatchDelivery,
    TestWatchFromRevision,
)
from kstore.testing.watch_list_conformance import (
    TestBookmarks,
    TestWatchList,
    TestWatchSemantics,
)

__all__ = [
    "TestBookmarks",
    "TestClusterScopedList",
    "TestClusterScopedWatch",
    "TestCompactRevision",
    "TestConditionalDelete",
    "TestConsistentList",
    "TestConsistentReads",
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
]
