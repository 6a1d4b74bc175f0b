"""kstore.cache: the watch cache ("cacher"), a Storage decorator serving reads and watches
from memory (see :mod:`kstore.cache.cacher`)."""

from kstore.cache.cacher import CacheConfig, Cacher
from kstore.cache.caching_object import (
    CachedListResult,
    CachedWatchEvent,
    Encodings,
    encoded_frame,
    encoded_object,
)
from kstore.cache.consistency import ConsistencyReport, check_consistency
from kstore.cache.freshness import UnchangedProbe
from kstore.cache.reflector import ProgressRequester
from kstore.cache.watcher import CacheWatcher

__all__ = [
    "CacheConfig",
    "CacheWatcher",
    "CachedListResult",
    "CachedWatchEvent",
    "Cacher",
    "ConsistencyReport",
    "Encodings",
    "ProgressRequester",
    "UnchangedProbe",
    "check_consistency",
    "encoded_frame",
    "encoded_object",
]
