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


def test_the_workflow_example_rewrites_then_replans_until_grounded(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / "research_workflow.py"), run_name="__main__")

    out = capsys.readouterr().out
    assert out.startswith("# Summary")
    assert "Spring tides occur at new and full moon" in out
    assert "Tides stopped in 1990" not in out
    assert "grounding 100%, rewrites 1, replans 1, exit reason grounded" in out
    assert '"confidence": 0.8' in out


def test_the_scan_example_researches_each_item_once(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / "scan_items.py"), run_name="__main__")

    out = capsys.readouterr().out
    assert out.count("researching ") == 3
    assert "scan ended: 3 row(s), 0 failed, 0 skipped" in out
    assert "scan started: 3 item(s), 3 already done" in out
    assert "/moon.html']" in out
    assert out.rstrip().endswith("second run researched 0, skipped 3")


def test_the_testing_guide_shows_the_example_the_suite_runs() -> None:
    guide = (EXAMPLES.parent / "docs" / "testing.md").read_text(encoding="utf-8")
    shown = guide.split("## A complete offline run\n\n```python\n", 1)[1].split("```\n", 1)[0]

    assert shown == (EXAMPLES / "offline_run.py").read_text(encoding="utf-8")
