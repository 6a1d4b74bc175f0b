"""Test support shipped with kstore: the storage conformance suite any backend can run.

The suite is pytest test classes in the ``*_conformance`` modules of this package, ports of
Kubernetes' ``store_tests.go`` and ``watcher_tests.go`` written against
:mod:`kstore.storage.interface`. To run it over a backend (kstore's own, or yours):

1. define a fixture named ``conformance_env`` yielding a fresh
   :class:`~kstore.testing.env.ConformanceEnv` per test (a new, empty store), closing the
   backend afterwards, and declaring the :class:`~kstore.testing.env.Capabilities` that differ;
2. import the test classes listed in :data:`SUITE_MODULES` into one of your test modules.

Call ``pytest.register_assert_rewrite("kstore.testing")`` in your conftest before importing
anything from here, so failures show the compared values. ``tests/conformance/`` in kstore's
repository does all this for every backend. The suite needs pytest; importing this package
alone does not.

The package also ships the drivers of the HTTP robustness tests, for any server speaking
Kubernetes' REST API: :mod:`~kstore.testing.serve_process` (start, kill -9 and restart
``kstore serve``), :mod:`~kstore.testing.http_workload` and :mod:`~kstore.testing.writers`
(clients and writers recording every outcome), :mod:`~kstore.testing.load_run` (the bounded
load run), :mod:`~kstore.testing.watch_history` (the history checkers) and
:mod:`~kstore.testing.api_model` (the model of the API state machine).
"""

from kstore.testing.env import Capabilities, ConformanceEnv

__all__ = ["SUITE_MODULES", "Capabilities", "ConformanceEnv"]

#: The modules holding the suite's test classes (each lists them in its ``__all__``).
SUITE_MODULES = (
    "kstore.testing.store_conformance",
    "kstore.testing.delete_conformance",
    "kstore.testing.update_conformance",
    "kstore.testing.list_conformance",
    "kstore.testing.paging_conformance",
    "kstore.testing.scoped_conformance",
    "kstore.testing.corruption_conformance",
    "kstore.testing.watch_conformance",
    "kstore.testing.watch_list_conformance",
)
