"""The README's Python examples run as written and print what their comments say."""

from __future__ import annotations

import re

import pytest

from tests.fixtures_path import REPO_ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (REPO_ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) >= 2


def test_kstore_open_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    (example,) = [b for b in BLOCKS if "kstore.open" in b and "customresourcedefinitions" not in b]
    exec(compile(example, "README.md", "exec"), {"__name__": "__main__"})
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


def test_crd_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    (example,) = [b for b in BLOCKS if "customresourcedefinitions" in b]
    exec(compile(example, "README.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.splitlines() == [
        "{'max': 10, 'min': 1}",
        'Range.example.com "bad" is invalid: spec: Invalid value: min must not exceed max',
    ]


def test_custom_kind_example_runs() -> None:
    (example,) = [b for b in BLOCKS if "KindDefinition(" in b]
    exec(compile(example, "README.md", "exec"), {"__name__": "__main__"})


def test_asyncio_storage_example_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    (example,) = [b for b in BLOCKS if "as_async" in b]
    exec(compile(example, "README.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.splitlines() == ["['w0', 'w1', 'w2']", "1"]
