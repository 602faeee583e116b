"""Scans on Ray: the same scan, one task per item, with retries and back-pressure; a killed worker loses nothing."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import ray
import ray.cloudpickle
from haystack import Pipeline
from haystack.utils import Secret

from haystack_deep_research import (
    Event,
    Grounding,
    ReadUrlTool,
    ResearchSummary,
    UrlPolicy,
    WebSearchTool,
    create_research_workflow,
)
from haystack_deep_research.scans import RayExecutor, ScanRunner
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

# Ray ships the factories below to its workers, which cannot import this test module: send them by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

pytestmark = pytest.mark.usefixtures("ray_session")

ITEMS = [f"solar capacity item {n:02d}" for n in range(20)]


def scripted_workflow(search_url: str) -> Pipeline:
    """A research workflow with scripted models, reading from the loopback servers (built inside a Ray worker)."""
    return create_research_workflow(
        chat_generator=ScriptedChatGenerator(role="researcher"),
        tools=[
            WebSearchTool(api_key=Secret.from_token("test-key"), api_base_url=search_url, max_results=2),
            ReadUrlTool(
                summarizer_llm=ScriptedChatGenerator(role="summarizer"),
                url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
            ),
        ],
        output_schema=ResearchSummary,
        causal_llm=ScriptedChatGenerator(role="causal"),
        summary_llm=ScriptedChatGenerator(role="summarize"),
        grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
    )


def _in_flight_peak(events: list[Event]) -> int:
    running = peak = 0
    for event in events:
        running += {"item_started": 1, "item_done": -1, "item_failed": -1}.get(event.kind, 0)
        peak = max(peak, running)
    return peak


def test_a_scan_of_twenty_items_runs_on_ray_one_task_per_item(
    tmp_path: Path, web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    events: list[Event] = []
    result = ScanRunner(
        provider=ITEMS,
        research=partial(scripted_workflow, search.base_url),
        results=tmp_path / "rows.jsonl",
        executor=RayExecutor(),
        max_concurrency=3,
        on_event=events.append,
    ).run()

    assert [row.id for row in result.rows] == ITEMS  # gathered in item order, whatever order they finished in
    assert result.failed == {}
    assert all(row.data["grounding_score"] == 1.0 and row.data["sources"] for row in result.rows)
    assert len(search.requests) == 20  # each item researched once, in a worker
    assert 1 <= _in_flight_peak(events) <= 3  # back-pressure: never more than max_concurrency tasks in flight
    assert ray.is_initialized()  # a connection the scan did not open is left open


def kill_once(marker: str, target: str) -> Callable[[str], dict[str, Any]]:
    """A research callable whose first attempt at ``target`` kills its own worker process."""

    def research(prompt: str) -> dict[str, Any]:
        if prompt == target and not os.path.exists(marker):
            Path(marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return {"summary": f"About {prompt}.", "pid": os.getpid()}

    return research


def test_a_worker_killed_mid_scan_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    events: list[Event] = []
    items = [f"item-{n:02d}" for n in range(20)]
    marker = tmp_path / "killed"
    result = ScanRunner(
        provider=items,
        research=partial(kill_once, str(marker), "item-07"),
        results=tmp_path / "rows.jsonl",
        executor="ray",
        max_concurrency=2,
        retry_delay=0.0,
        on_event=events.append,
    ).run()

    assert marker.exists()  # the worker really was killed
    crash = [e for e in events if e.kind == "item_failed"]
    assert [(e.item, e.attempt, e.final) for e in crash] == [("item-07", 1, False)]  # type: ignore[attr-defined]
    assert crash[0].error.startswith("WorkerCrashedError")  # type: ignore[attr-defined]
    assert [row.id for row in result.rows] == items
    lines = [json.loads(line)["id"] for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert sorted(lines) == items  # every item exactly once in the results file
    assert result.failed == {}
