"""Kinds that come and go while the registry serves: :meth:`StoreRegistry.apply_scheme`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kstore.api.kinds import builtin_scheme
from kstore.api.scheme import KindVersion, Scheme
from kstore.errors import NotFound
from kstore.registry.interface import CreateOptions
from kstore.storage.interface import EventType, ListOptions
from kstore.storage.lmdb import LmdbBackend
from tests.registry.conftest import make_registry
from tests.registry.objects import WIDGET, ctx, hub, widget


def test_a_kind_added_at_run_time_gets_a_store_and_keeps_its_objects_across_changes(
    backend: LmdbBackend, watch_cache: bool
) -> None:
    registry = make_registry(builtin_scheme(), backend, watch_cache=watch_cache)
    seen: list[Scheme] = []
    registry.add_scheme_listener(seen.append)
    try:
        with pytest.raises(NotFound):
            registry.store("example.com", "widgets")
        configmaps = registry.store("", "configmaps")

        with_widgets = builtin_scheme().with_definitions(add=[WIDGET])
        registry.apply_scheme(with_widgets)
        assert seen == [with_widgets] and registry.scheme is with_widgets
        assert registry.store("", "configmaps") is configmaps  # built-in stores stay
        widgets = registry.store("example.com", "widgets")
        created = widgets.create(
            ctx(api_version="example.com/v1"), hub(with_widgets, widget("a")), CreateOptions()
        ).object
        assert created["metadata"]["name"] == "a"

        # A changed definition (a second version) gets a new store over the same objects.
        two_versions = replace(WIDGET, versions=(*WIDGET.versions, KindVersion(version="v2")))
        registry.apply_scheme(with_widgets.with_definitions(add=[two_versions]))
        renewed = registry.store("example.com", "widgets")
        assert renewed is not widgets
        assert renewed.get(ctx(), "a")["metadata"]["uid"] == created["metadata"]["uid"]

        registry.apply_scheme(builtin_scheme())
        with pytest.raises(NotFound):
            registry.store("example.com", "widgets")
        assert len(seen) == 3
    finally:
        registry.close()


def test_watches_of_a_dropped_kinds_cache_end(backend: LmdbBackend) -> None:
    registry = make_registry(
        builtin_scheme().with_definitions(add=[WIDGET]), backend, watch_cache=True
    )
    try:
        watcher = registry.store("example.com", "widgets").watch(
            ctx(), ListOptions(resource_version="0")
        )
        registry.apply_scheme(builtin_scheme())
        while (event := watcher.next(timeout=5)) is not None:
            assert event.type in (EventType.BOOKMARK, EventType.ERROR)
        watcher.stop()
    finally:
        registry.close()
