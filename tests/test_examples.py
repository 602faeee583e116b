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


def test_the_deep_agent_example_submits_a_typed_grounded_result(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / "deep_agent_offline.py"), run_name="__main__")

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "submit_research"
    assert lines[1].startswith("Acme leads the mid-market CRM segment with a 30 percent share.")
    assert lines[2] == "confidence 0.9, grounding 1.00"
    assert lines[3:] == ["[in_progress] find the segment leader", "[pending] compare pricing"]
