"""Which dict <-> wire converters run: the compiled ones when they are built and current.

The converters exist twice, from one source. :mod:`kstore.codec._pb_encode` and
:mod:`kstore.codec._pb_decode` generate a Python function per message type and ``exec`` it on
first use (the pure-Python path, always available). :mod:`kstore.codec._pb_native_source`
writes the same functions for the messages on hot paths (its ``HOT_KINDS`` and what they
nest, short of ``COLD``), with C types declared and shared C helpers in place of unrolled
steps, to ``_pb_native_encode.pyx`` and ``_pb_native_decode.pyx``, which ``setup.py``
compiles with Cython when the package is installed (``pip install .`` or ``pip install -e .``).
A message not compiled runs on its Python converter, also when a compiled one nests it.

Invariants:

- both paths produce the same bytes and the same dicts (the codec tests run on both);
- a compiled converter is used only if the message plans it was generated from (its message
  and every message it reaches) equal the running ones, compared by :func:`digest`; otherwise,
  message by message, the Python converter is used. So a stale or missing build is slower,
  never wrong, and importing kstore never needs the extension;
- ``KSTORE_PROTOBUF_PURE=1`` in the environment (or :func:`use_native` with ``False``) selects
  the Python path everywhere.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

from kstore.codec._pb_plan import LEAF_CACHE_SIZE, JsonKind, is_flat, plan_for

__all__ = [
    "DECODE_MODULE",
    "ENCODE_MODULE",
    "PURE_ENV",
    "closure",
    "digest",
    "enabled",
    "load",
    "use_native",
]

PURE_ENV = "KSTORE_PROTOBUF_PURE"
ENCODE_MODULE = "kstore.codec._pb_native_encode"
DECODE_MODULE = "kstore.codec._pb_native_decode"

#: Read on every ``encoder_for``/``decoder_for`` call: whether compiled converters may be used.
enabled: bool = os.environ.get(PURE_ENV, "") in ("", "0")


def use_native(flag: bool) -> None:
    """Select the compiled converters (where built and current) or the Python ones."""
    global enabled
    enabled = flag


def closure(full_name: str) -> list[str]:
    """The message and every plain-object message it reaches, sorted by name."""
    seen: set[str] = set()
    pending = [full_name]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for f in plan_for(name).fields:
            if f.message and plan_for(f.message).form == JsonKind.OBJECT:
                pending.append(f.message)
    return sorted(seen)


@cache
def digest(full_name: str) -> str:
    """A digest of everything the generated converters of ``full_name`` depend on: the plans
    of the messages it reaches, which of them are flat, and the leaf cache size."""
    h = hashlib.sha256(f"leaf cache {LEAF_CACHE_SIZE}\n".encode())
    for name in closure(full_name):
        h.update(f"{plan_for(name)!r} flat={is_flat(name)}\n".encode())
    return h.hexdigest()[:32]


def load(module_name: str, helpers: Callable[[ModuleType], dict[str, Any]]) -> dict[str, Any]:
    """The current compiled converters of a module, by message name ({} when not built).

    ``helpers`` gives the names the compiled functions look up at run time (the Python
    helpers they share with the generated Python code); they are bound into the module first.
    """
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return {}
    module.bind(helpers(module))
    converters: dict[str, Any] = module.CONVERTERS
    digests: dict[str, str] = module.DIGESTS
    return {name: fn for name, fn in converters.items() if digests.get(name) == _current(name)}


def _current(full_name: str) -> str | None:
    try:
        return digest(full_name)
    except KeyError:  # the message is no longer in the schema
        return None
