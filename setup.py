"""Builds the compiled protobuf converters; all other metadata is in pyproject.toml.

``kstore/codec/_pb_native_encode.pyx`` and ``_pb_native_decode.pyx`` are generated (by
``scripts/gen-proto``) and committed; Cython (a build requirement, see ``[build-system]``)
turns them into C here, under ``build/``, and the C compiler into extension modules. kstore
works without them (the same converters run as Python, see ``kstore/codec/_pb_native.py``):
``KSTORE_PURE_BUILD=1`` skips them, e.g. for a quick editable install.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    if os.environ.get("KSTORE_PURE_BUILD", "") not in ("", "0"):
        return []
    from Cython.Build import cythonize

    # No debug information: it triples the compile time of these large modules for nothing
    # a user of the package needs; -O2 rather than Python's -O3 for the same reason.
    modules = [
        Extension(
            f"kstore.codec.{name}",
            [f"kstore/codec/{name}.pyx"],
            extra_compile_args=["-O2", "-g0"],
        )
        for name in ("_pb_native_encode", "_pb_native_decode")
    ]
    return list(cythonize(modules, build_dir="build/cython", quiet=True))


# Two modules of ~65,000 lines of C each (the hot kinds only, see _pb_native_source): compiled
# at once, ~30 s on two cores.
setup(ext_modules=_extensions(), options={"build_ext": {"parallel": 2}})
