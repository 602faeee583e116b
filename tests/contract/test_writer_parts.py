"""
One writer for every shape: the iterative agent's report and the research workflow's summary are written in parts,
as the deep research agent's report is, driven here by plain Haystack fakes written for this file.

The writer fake tells the parts apart by what its system message asks for (the opening, or one section), as any
model would; none of the testing kit's scripted roles is used. Each case holds for both shapes: one opening call
plus one call per note, side by side; a section the writer fails on twice keeps its note; a writer that always
fails leaves a report assembled from the notes and ``exit_reason`` ``writer_failed``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from haystack import component
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool

from haystack_deep_research import RunInputs, Sources, create_iterative_research_agent, create_research_workflow

QUESTION = "Why do tides rise twice a day?"
NOTE_TEXT = "Tides rise twice a day because the moon's pull bulges the oceans on both sides of the earth."
TOPICS = ["moon pull", "ocean bulges"]
USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def _reply(text: str) -> dict[str, Any]:
    return {"replies": [ChatMessage.from_assistant(text, meta={"model": "mock-model", "usage": USAGE})]}


@component
class PlainModel:
    """Answers every call with the same text (the workflow's Execute agent: its note)."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return _reply(NOTE_TEXT)


@component
class Analysis:
    """The iterative agent's analysis model: the given topics in its first round, then stop."""

    def __init__(self, topics: list[str]) -> None:
        self.topics = topics
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        topic: Any = self.topics if self.calls == 1 else None
        return _reply(json.dumps({"nextSearchTopic": topic, "shouldContinue": topic is not None}))


def _kind(messages: list[ChatMessage]) -> str:
    system = messages[0].text or ""
    if system.startswith("You write the opening of a research report"):
        return "opening"
    return "section" if system.startswith("You write one section of a research report") else "other"


def _note_heading(messages: list[ChatMessage]) -> str:
    user = messages[-1].text or ""
    return user.split('<untrusted_note index="1">\n', 1)[1].split("\n", 1)[0].lstrip("# ").strip()


@component
class PartsWriter:
    """
    Writes the part it is asked for; ``fails(kind, heading)`` makes a call raise instead. Counts its calls by kind and
    the most it had running at once.
    """

    def __init__(self, fails: Callable[[str, str], bool] = lambda kind, heading: False, delay: float = 0.0) -> None:
        self.fails, self.delay = fails, delay
        self.calls: list[str] = []
        self.running = self.peak = 0
        self._lock = threading.Lock()

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        kind = _kind(messages)
        heading = _note_heading(messages) if kind == "section" else ""
        with self._lock:
            self.calls.append(kind)
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.delay)
            if self.fails(kind, heading):
                raise ConnectionError("the writer is down")
            if kind == "opening":
                return _reply("# Tides\n\n## Executive summary\n\nThe moon makes the tides.")
            return _reply(f"## {heading}\n\nWritten from the note on {heading}.")
        finally:
            with self._lock:
                self.running -= 1


def _search(query: str) -> list[dict[str, str]]:
    return []


SEARCH = Tool(
    name="web_search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=_search,
)


def iterative(writer: Any, topics: list[str] = TOPICS) -> Any:
    return create_iterative_research_agent(
        analysis_llm=Analysis(topics), writer_llm=writer, sources=Sources(search=SEARCH)
    )


def workflow(writer: Any, topics: list[str] = TOPICS) -> Any:
    return create_research_workflow(
        chat_generator=PlainModel(), tools=[SEARCH], output_schema=None, summary_llm=writer, causal_inference=False
    )


SHAPES: dict[str, Callable[..., Any]] = {"iterative_agent": iterative, "research_workflow": workflow}
shapes = pytest.mark.parametrize("build", SHAPES.values(), ids=SHAPES.keys())


def _ask(agent: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


@shapes
def test_the_writer_is_called_once_for_the_opening_and_once_per_note(build: Callable[..., Any]) -> None:
    writer = PartsWriter()
    result = _ask(build(writer))

    notes = result["notes"]
    assert notes
    assert sorted(writer.calls) == sorted(["opening", *["section"] * len(notes)])
    report = result["report"]
    assert "# Tides\n\n## Executive summary\n\nThe moon makes the tides." in report  # after a no-evidence notice
    for note in notes:
        heading = note.split("\n", 1)[0].lstrip("# ")
        assert f"{heading}\n\nWritten from the note on {heading}." in report
    assert result["exit_reason"] != "writer_failed"
    assert not any("writer failed" in warning for warning in result["warnings"])


def test_the_iterative_agent_writes_one_section_per_topic_under_its_main_findings() -> None:
    writer = PartsWriter()
    result = _ask(iterative(writer))

    assert result["topics"] == TOPICS
    assert writer.calls.count("section") == len(result["notes"]) == 2
    report = result["report"]
    findings = report.index("## Main findings")
    assert findings < report.index("### moon pull") < report.index("### ocean bulges")


@shapes
def test_a_section_the_writer_fails_on_twice_keeps_its_note_and_the_run_still_ends_with_a_report(
    build: Callable[..., Any],
) -> None:
    writer = PartsWriter(fails=lambda kind, heading: kind == "section" and heading in (QUESTION, "ocean bulges"))
    result = _ask(build(writer))

    report = result["report"]
    failed = [note for note in result["notes"] if note.split("\n", 1)[0].lstrip("# ") in (QUESTION, "ocean bulges")]
    [note] = failed
    assert writer.calls.count("section") == len(result["notes"]) + 1  # the failed section was tried twice
    assert "*The report writer could not write this section (ConnectionError: the writer is down)" in report
    assert note.split("\n", 2)[-1].strip() in report  # the note's content, as written
    assert "The moon makes the tides." in report  # the other parts were written
    assert result["exit_reason"] != "writer_failed"
    assert any("the writer failed twice on section" in warning for warning in result["warnings"])


@shapes
def test_a_writer_that_always_fails_leaves_a_report_assembled_from_the_notes(build: Callable[..., Any]) -> None:
    writer = PartsWriter(fails=lambda kind, heading: True)
    result = _ask(build(writer))

    notes = result["notes"]
    assert len(writer.calls) == 2 * (1 + len(notes))  # every part, tried twice
    assert result["exit_reason"] == "writer_failed"
    assert "The report writer failed (ConnectionError: the writer is down)" in result["report"]
    for note in notes:
        assert note.split("\n", 2)[-1].strip() in result["report"]
    assert result["grounding_score"] is None


@shapes
def test_the_report_assembled_without_the_writer_opens_with_the_runs_own_brief(build: Callable[..., Any]) -> None:
    brief = "Überprüfe: warum steigt die Flut zweimal am Tag — Mond, Erddrehung und die Gegenseite?"
    writer = PartsWriter(fails=lambda kind, heading: True)
    result = build(writer).run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(brief=brief))

    assert result["exit_reason"] == "writer_failed"
    assert f"## Executive summary\n\n{brief}\n\n## Findings" in result["report"]


def test_the_iterative_writer_runs_its_parts_side_by_side_within_the_step_concurrency() -> None:
    writer = PartsWriter(delay=0.05)
    topics = [f"topic {n}" for n in range(7)]
    result = _ask(iterative(writer, topics))

    assert len(writer.calls) == 1 + len(result["notes"]) == 8
    assert 1 < writer.peak <= 5  # side by side, at most the write step's max_concurrency at once
