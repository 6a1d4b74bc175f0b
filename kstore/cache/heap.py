"""Handing freed heap memory back to the operating system.

Filling a watch cache decodes the whole initial list, object by object, and drops each decoded
object once its entry holds it compactly. The C allocator keeps the freed pages for reuse, so
the process's resident memory would stay at that transient high-water mark for as long as it
runs. After such a burst, :func:`return_free_memory` asks glibc to give back the free pages
at the top and in the middle of its heaps (``malloc_trim``); elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable

__all__ = ["return_free_memory"]

_lock = threading.Lock()
_trim: Callable[[int], int] | None = None
_looked_up = False


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked_up
    with _lock:
        if not _looked_up:
            _looked_up = True
            name = ctypes.util.find_library("c")
            try:
                libc = ctypes.CDLL(name) if name else None
                trim = None if libc is None else libc.malloc_trim
            except (OSError, AttributeError):
                trim = None
            if trim is not None:
                trim.argtypes = [ctypes.c_size_t]
                trim.restype = ctypes.c_int
                _trim = trim
        return _trim


def return_free_memory() -> bool:
    """Give free heap pages back to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
