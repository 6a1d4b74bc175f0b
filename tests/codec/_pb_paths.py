"""Run protobuf codec tests on both converter paths: compiled (Cython) and pure Python.

Use ``pytestmark = pytest.mark.usefixtures("converter_path")`` after importing
:func:`converter_path`: every test then runs once per path, so neither can drift from
Kubernetes' bytes. The compiled path must be built (``pip install -e .`` builds it); a test on
that path fails, rather than skips, when it is missing or stale, since a skip would hide that
the compiled converters went untested. Subprocesses follow the path through
``KSTORE_PROTOBUF_PURE``.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import FunctionType

import pytest

from kstore.codec import _pb_native
from kstore.codec._pb_decode import decoder_for
from kstore.codec._pb_encode import encoder_for
from kstore.codec._pb_native_source import messages

PATHS = ("compiled", "python")


def compiled_missing() -> list[str]:
    """Messages whose compiled encoder or decoder is not in use (empty when all are)."""
    previous = _pb_native.enabled
    _pb_native.use_native(True)
    try:
        return [
            name
            for name in messages()
            if not _is_compiled(encoder_for(name)) or not _is_compiled(decoder_for(name))
        ]
    finally:
        _pb_native.use_native(previous)


def _is_compiled(fn: object) -> bool:
    # The Python path's converters are generated functions; the compiled ones are not.
    return not isinstance(fn, FunctionType)


@pytest.fixture(params=PATHS)
def converter_path(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    path: str = request.param
    compiled = path == "compiled"
    if compiled:
        missing = compiled_missing()
        if missing:
            pytest.fail(
                f"the compiled protobuf converters are not built or are stale for {len(missing)}"
                f" messages (e.g. {missing[0]}): run scripts/gen-proto, then pip install -e ."
            )
    monkeypatch.setenv(_pb_native.PURE_ENV, "0" if compiled else "1")
    previous = _pb_native.enabled
    _pb_native.use_native(compiled)
    try:
        yield path
    finally:
        _pb_native.use_native(previous)
