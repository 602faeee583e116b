"""Plan approval: a person accepts, edits or drops each planned sub-topic through Haystack's confirmation hooks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.hooks.human_in_the_loop import (
    AlwaysAskPolicy,
    BlockingConfirmationStrategy,
    ConfirmationUIResult,
    SimpleConsoleUI,
    ToolExecutionDecision,
)

from haystack_deep_research import ConfigurationError, RunInputs
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.events import Event, PlanReviewed, SubagentSpawned
from haystack_deep_research.run._journal import JOURNAL_FILE
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"
TOPICS = ["solar capacity", "battery storage", "wind turbines"]


class ScriptedUI:
    """A confirmation UI answering from a script by sub-topic (accept when unscripted); it counts what it was asked."""

    def __init__(self, answers: dict[str, ConfirmationUIResult] | None = None) -> None:
        self.answers = answers or {}
        self.asked: list[str] = []

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> ConfirmationUIResult:
        self.asked.append(tool_params["subtopic"])
        return self.answers.get(tool_params["subtopic"], ConfirmationUIResult(action="confirm"))

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedUI:
        return default_from_dict(cls, data)


def _approval(ui: ScriptedUI) -> BlockingConfirmationStrategy:
    return BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ui)


def _run(agent: Agent, inputs: RunInputs | None = None) -> tuple[dict[str, Any], list[Event]]:
    events: list[Event] = []
    given = dataclasses.replace(inputs or RunInputs(), on_event=events.append)
    result = agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=given)
    return result, events


def _headings(notes: list[str]) -> list[str]:
    return [note.splitlines()[0] for note in notes]


def _orchestrator() -> ScriptedChatGenerator:
    return ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS)


def test_accepting_every_subtopic_researches_the_plan_as_it_was(make_agent: Callable[..., Agent]) -> None:
    ui = ScriptedUI()
    plain, _ = _run(make_agent(orchestrator_llm=_orchestrator()))

    approved, events = _run(make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(ui)))

    assert ui.asked == TOPICS
    assert approved["notes"] == plain["notes"]
    assert approved["report"] == plain["report"]
    assert [(e.subtopic, e.decision) for e in events if isinstance(e, PlanReviewed)] == [(t, "accept") for t in TOPICS]


def test_every_subtopic_is_reviewed_before_any_researcher_starts(make_agent: Callable[..., Agent]) -> None:
    _, events = _run(make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(ScriptedUI())))

    kinds = [type(e) for e in events if isinstance(e, PlanReviewed | SubagentSpawned)]
    assert kinds == [PlanReviewed] * 3 + [SubagentSpawned] * 3


def test_an_edited_subtopic_is_the_one_researched(make_agent: Callable[..., Agent]) -> None:
    edit = ConfirmationUIResult(action="modify", new_tool_params={"subtopic": "rooftop solar in Germany"})
    agent = make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(ScriptedUI({"solar capacity": edit})))

    result, events = _run(agent)

    headings = _headings(result["notes"])
    assert any("rooftop solar in Germany" in heading for heading in headings)
    assert not any("solar capacity" in heading for heading in headings)
    assert next(e.subtopic for e in events if isinstance(e, SubagentSpawned)) == "rooftop solar in Germany"
    [edited] = [e for e in events if isinstance(e, PlanReviewed) and e.decision == "edit"]
    assert (edited.subtopic, edited.edited_to) == ("solar capacity", "rooftop solar in Germany")
    told = [m.text for m in result["messages"] if m.is_from("user") and m.text and "rooftop solar" in m.text]
    assert told  # the orchestrator read that its call was changed


def test_a_dropped_subtopic_gets_no_researcher_and_the_orchestrator_reads_why(
    make_agent: Callable[..., Agent],
) -> None:
    drop = ConfirmationUIResult(action="reject", feedback="out of scope: no wind in this report")
    agent = make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(ScriptedUI({"wind turbines": drop})))

    result, events = _run(agent)

    assert len(result["notes"]) == 2
    assert not any("wind" in heading.casefold() for heading in _headings(result["notes"]))
    assert "wind turbines" not in [e.subtopic for e in events if isinstance(e, SubagentSpawned)]
    rejections = [
        m.tool_call_result
        for m in result["messages"]
        if m.tool_call_result is not None and m.tool_call_result.origin.arguments == {"subtopic": "wind turbines"}
    ]
    assert len(rejections) == 1
    assert rejections[0].error
    assert "out of scope: no wind in this report" in str(rejections[0].result)
    assert result["exit_reason"] == "text"


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / JOURNAL_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_decisions_are_journaled_and_a_resumed_run_does_not_ask_again(
    make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    answers = {
        "solar capacity": ConfirmationUIResult(action="modify", new_tool_params={"subtopic": "rooftop solar"}),
        "wind turbines": ConfirmationUIResult(action="reject", feedback="not wanted"),
    }
    first_ui = ScriptedUI(answers)
    first, _ = _run(
        make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(first_ui)),
        inputs=RunInputs(run_dir=run_dir),
    )

    decisions = [r for r in _records(run_dir) if r["type"] == "decision"]
    assert [(r["subtopic"], r["decision"], r["edited_to"]) for r in decisions] == [
        ("solar capacity", "edit", "rooftop solar"),
        ("battery storage", "accept", None),
        ("wind turbines", "drop", None),
    ]
    assert "not wanted" in decisions[2]["feedback"]

    again_ui = ScriptedUI()  # would accept everything: it must not be asked
    again, events = _run(
        make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(again_ui)),
        inputs=RunInputs(run_dir=run_dir),
    )

    assert again_ui.asked == []
    assert again["notes"] == first["notes"]
    reused = [(e.subtopic, e.decision, e.restored) for e in events if isinstance(e, PlanReviewed)]
    assert ("wind turbines", "drop", True) in reused
    assert ("solar capacity", "edit", True) in reused
    assert not [e for e in events if isinstance(e, SubagentSpawned)]  # nothing researched again


async def test_the_async_path_reviews_the_plan_too(make_agent: Callable[..., Agent]) -> None:
    ui = ScriptedUI({"battery storage": ConfirmationUIResult(action="reject")})
    agent = make_agent(orchestrator_llm=_orchestrator(), approve_plan=_approval(ui))

    result = await agent.run_async(messages=[ChatMessage.from_user(QUESTION)])

    assert ui.asked == TOPICS
    assert len(result["notes"]) == 2


def test_a_strategy_returning_a_bare_decision_is_applied(make_agent: Callable[..., Agent]) -> None:
    class DropAll:
        def run(self, *, tool_name: str, tool_call_id: str | None = None, **_: Any) -> ToolExecutionDecision:
            return ToolExecutionDecision(tool_name=tool_name, execute=False, tool_call_id=tool_call_id)

        def to_dict(self) -> dict[str, Any]:
            return {"type": "DropAll", "init_parameters": {}}

    result, events = _run(make_agent(orchestrator_llm=_orchestrator(), approve_plan=DropAll()))

    assert result["notes"] == []
    assert not [e for e in events if isinstance(e, SubagentSpawned)]
    assert result["report"]  # the run still ends with a report, saying it found nothing


def test_approve_plan_must_be_a_confirmation_strategy(make_agent: Callable[..., Agent]) -> None:
    with pytest.raises(ConfigurationError, match="approve_plan must be a Haystack confirmation strategy"):
        make_agent(approve_plan=ScriptedUI())


def test_the_agent_serializes_with_its_plan_review(make_agent: Callable[..., Agent]) -> None:
    console = BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=SimpleConsoleUI())
    agent = make_agent(orchestrator_llm=_orchestrator(), approve_plan=console)

    restored = ResearchAgent.from_dict(agent.to_dict())

    assert restored.to_dict() == agent.to_dict()
