"""The examples are code the test suite runs."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_the_offline_example_writes_a_cited_report(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / "offline_run.py"), run_name="__main__")

    report = capsys.readouterr().out
    assert report.startswith("# Research report")
    assert "/tides.html)" in report
    assert "/moon.pdf)" in report


def test_the_testing_guide_shows_the_example_the_suite_runs() -> None:
    guide = (EXAMPLES.parent / "docs" / "testing.md").read_text(encoding="utf-8")
    shown = guide.split("## A complete offline run\n\n```python\n", 1)[1].split("```\n", 1)[0]

    assert shown == (EXAMPLES / "offline_run.py").read_text(encoding="utf-8")
