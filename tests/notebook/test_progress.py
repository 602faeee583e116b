"""Live progress from a run's events: counts and sub-topics, updated as the run goes."""

from __future__ import annotations

import io
from collections.abc import Callable

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import RunInputs
from haystack_deep_research.events import (
    Event,
    PageRead,
    RunEnded,
    RunStarted,
    SearchDone,
    SubagentFailed,
    SubagentSpawned,
    UsageRecorded,
)
from haystack_deep_research.notebook import LiveProgress, ResearchResult, run_with_progress


async def test_run_with_progress_shows_every_stage_and_returns_a_displayable_result(
    make_agent: Callable[..., Agent],
) -> None:
    blocks: list[str] = []
    seen: list[Event] = []

    result = await run_with_progress(
        make_agent(),
        "How fast is solar growing?",
        progress=LiveProgress(show=blocks.append, min_interval=0),
        inputs=RunInputs(on_event=seen.append),
    )

    assert isinstance(result, ResearchResult)
    assert result["exit_reason"] == "text"
    assert blocks[0].startswith("**Researching:** How fast is solar growing?")
    assert any("… solar capacity" in block for block in blocks)  # a sub-topic shown while it was researched
    final = blocks[-1]
    assert "finished (text) · 2/2 sub-topics · 2 searches · 2 pages read · 0 refused · 0 warnings" in final
    assert "- ✓ solar capacity" in final
    assert "- ✓ battery storage" in final
    shown = [event for event in seen if not isinstance(event, UsageRecorded)]  # usage is counted, never shown alone
    assert len(blocks) == len(shown)  # one update per event with no throttling; the caller's subscriber got them all


def test_outside_a_notebook_each_event_is_one_line(make_agent: Callable[..., Agent]) -> None:
    stream = io.StringIO()

    make_agent().run(
        messages=[ChatMessage.from_user("How fast is solar growing?")],
        inputs=RunInputs(on_event=LiveProgress(stream=stream)),
    )

    lines = stream.getvalue().splitlines()
    assert lines[0] == "[run] run started: How fast is solar growing?"
    assert "[research] [1/2] researching: solar capacity" in lines
    assert lines[-1].startswith("[run] run ended (text): 2 notes, ")


def test_outside_a_notebook_model_written_text_is_one_line_without_escape_sequences() -> None:
    stream = io.StringIO()
    progress = LiveProgress(stream=stream)
    hostile = "[bold]tides[/bold]\x1b]52;c;ZXZpbA==\x07 and\x1b[2K\nstorms"

    progress(RunStarted(phase="run", question="Why?"))
    progress(SubagentSpawned(phase="research", subtopic=hostile, slot=1, planned=1))
    progress(SearchDone(phase="research", researcher=hostile, query=hostile, results=1))

    assert stream.getvalue().splitlines() == [
        "[run] run started: Why?",
        "[research] [1/1] researching: [bold]tides[/bold] and storms",
        "[research] searched '[bold]tides[/bold] and storms': 1 result(s)",
    ]


def test_the_block_counts_as_the_command_line_does_a_failed_researcher_and_a_page_read_twice() -> None:
    blocks: list[str] = []
    progress = LiveProgress(show=blocks.append, min_interval=0)
    page = "https://example.org/gezeiten-übersicht"

    progress(RunStarted(phase="run", question="Warum gibt es zweimal täglich Flut?"))
    progress(SubagentSpawned(phase="research", subtopic="Mondanziehung", slot=1, planned=2))
    progress(SubagentSpawned(phase="research", subtopic="Erddrehung", slot=2, planned=2))
    progress(PageRead(phase="research", researcher="Mondanziehung", url=page))
    progress(PageRead(phase="research", researcher="Erddrehung", url=page))
    progress(SubagentFailed(phase="research", subtopic="Erddrehung", error="ConnectionError: down"))
    progress(RunEnded(phase="run", exit_reason="text", notes=1))

    final = blocks[-1]
    assert "finished (text) · 1/2 sub-topics · 0 searches · 1 pages read · 0 refused · 0 warnings" in final
    assert "- ✗ Erddrehung" in final  # a failed researcher no longer shows as still researching
    assert "- … Mondanziehung" in final


def test_updates_are_throttled_but_the_final_state_is_always_shown(make_agent: Callable[..., Agent]) -> None:
    blocks: list[str] = []

    make_agent().run(
        messages=[ChatMessage.from_user("How fast is solar growing?")],
        inputs=RunInputs(on_event=LiveProgress(show=blocks.append, min_interval=10)),
    )

    assert len(blocks) == 2  # the start, then nothing for 10 s but the end
    assert "finished (text)" in blocks[-1]
