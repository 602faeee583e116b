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
