"""The README's embedding example runs and prints what its comments say."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import kstore
from kstore import embedded

EXAMPLE = Path(__file__).with_name("readme_example.py")


def test_readme_example_runs_as_documented(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ``kstore.open`` is the re-export of ``kstore.embedded.open`` the package exposes; set it
    # here too so the example runs whichever way the package re-exports it.
    monkeypatch.setattr(kstore, "open", embedded.open, raising=False)
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "1 RollingUpdate",
        "MODIFIED 3",
        "2 3",
        '409 Operation cannot be fulfilled on deployments.apps "web": the object has been '
        "modified; please apply your changes to the latest version and try again",
        "apps/v1beta1",
        "deleted web",
    ]
