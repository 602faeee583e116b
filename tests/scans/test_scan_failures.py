"""Scans are honest about failed research: a run that returns a fallback is a failed item, and one scan per file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack import Pipeline, component
from haystack.dataclasses import ChatMessage

from haystack_deep_research import Grounding, ResearchSummary
from haystack_deep_research.errors import ScanInUseError
from haystack_deep_research.scans import ScanRunner
from haystack_deep_research.scans.results import ResultsFile

ITEMS = ["solar", "storage", "wind"]


@component
class DownModel:
    """A chat generator whose every call raises, as a provider outage does; it counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.calls += 1
        raise RuntimeError("503 Service Unavailable: the model is down")


class DownWorkflow:
    """A research factory: the research workflow (real tools on loopback) whose every model is down."""

    def __init__(self, make_workflow: Callable[..., Pipeline], output_schema: Any) -> None:
        self.model = DownModel()
        self.make_workflow = make_workflow
        self.output_schema = output_schema

    def __call__(self) -> Pipeline:
        roles = ("chat_generator", "causal_llm", "summary_llm")
        return self.make_workflow(
            output_schema=self.output_schema,
            grounding=Grounding(judge_llm=self.model),
            **dict.fromkeys(roles, self.model),
        )


def _scan(research: Any, results: Path, **options: Any) -> ScanRunner:
    return ScanRunner(provider=ITEMS, research=research, results=results, retry_delay=0.0, **options)


@pytest.mark.parametrize("output_schema", [ResearchSummary, None])
def test_a_scan_whose_model_always_fails_records_every_item_as_failed(
    tmp_path: Path, make_workflow: Callable[..., Pipeline], output_schema: Any
) -> None:
    results = tmp_path / "rows.jsonl"
    research = DownWorkflow(make_workflow, output_schema)

    result = _scan(research, results, max_attempts=2).run()

    assert (result.rows, result.researched) == ([], 0)
    assert sorted(result.failed) == ITEMS
    for error in result.failed.values():
        assert error.startswith("ResearchFailedError: the research ended with exit_reason 'writer_failed'")
        assert "the model is down" in error
    assert not results.exists() or results.read_text() == ""
    failures = ResultsFile(results).failures()
    assert sorted(record["item"]["name"] for record in failures) == ITEMS
    for record in failures:
        assert (record["exit_reason"], record["attempts"]) == ("writer_failed", 2)
        assert "grounding_score" not in record["partial"]  # a fallback is not graded 1.0
        assert "The report writer failed" in record["partial"]["summary"]  # what was gathered is kept

    # Failed items are not finished: the next scan researches every one of them again.
    calls = research.model.calls
    rerun = _scan(research, results, max_attempts=1).run()
    assert (rerun.skipped, sorted(rerun.failed)) == (0, ITEMS)
    assert research.model.calls > calls


def test_a_failed_run_row_written_by_an_older_version_is_researched_again(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    old = {"summary": "fallback", "grounding_score": 1.0, "exit_reason": "structured_output_failed"}
    results.write_text(
        json.dumps({"item": {"name": "solar", "provider": "list"}, "id": "solar", "data": old}) + "\n", encoding="utf-8"
    )
    asked: list[str] = []

    def research(prompt: str) -> dict[str, Any]:
        asked.append(prompt)
        return {"summary": f"About {prompt}.", "exit_reason": "grounded"}

    result = ScanRunner(provider=["solar"], research=lambda: research, results=results).run()

    assert asked == ["solar"]
    assert result.rows[0].data == {"summary": "About solar.", "exit_reason": "grounded"}


def test_a_second_scan_of_the_same_results_file_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    refused: list[BaseException] = []

    def research(prompt: str) -> dict[str, Any]:
        # While the first scan holds the file, a second scanner of the same file starts (in another thread).
        try:
            ScanRunner(provider=["other"], research=lambda: research, results=results).run()
        except ScanInUseError as error:
            refused.append(error)
        return {"summary": f"About {prompt}."}

    result = ScanRunner(provider=["solar"], research=lambda: research, results=results).run()

    assert [row.id for row in result.rows] == ["solar"]
    [error] = refused
    assert "in use by another scan" in str(error)
    assert "rows.jsonl.lock" in str(error)
    # The same results file object, shared by two scans, is refused too.
    shared = ResultsFile(tmp_path / "shared.jsonl")

    def nested(prompt: str) -> dict[str, Any]:
        try:
            ScanRunner(provider=["other"], research=lambda: research, results=shared).run()
        except ScanInUseError as error:
            refused.append(error)
        return {"summary": f"About {prompt}."}

    ScanRunner(provider=["solar"], research=lambda: nested, results=shared).run()
    assert len(refused) == 2
    # The lock goes with the scan: the next scan of the file runs.
    again = ScanRunner(provider=["solar", "wind"], research=lambda: research, results=results).run()
    assert [row.id for row in again.rows] == ["solar", "wind"]
