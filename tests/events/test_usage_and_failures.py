"""What displays follow a run by: usage as it is counted, a researcher that failed, and the run handed to the caller
as it opens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import (
    Budgets,
    ConfigurationError,
    Price,
    ResearchRun,
    RunInputs,
)
from haystack_deep_research.events import Event, SubagentFailed, SubagentSpawned, UsageRecorded, progress_view
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "How fast is solar growing?"


def _run(agent: Agent, **inputs: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)], **inputs)


def test_usage_events_add_up_to_the_runs_usage_with_its_cost(make_agent: Callable[..., Agent]) -> None:
    events: list[Event] = []
    priced = {"ScriptedChatGenerator": Price(input_per_mtok=1.0, output_per_mtok=2.0)}

    result = _run(
        make_agent(sources=SUMMARIZE_EVERY_PAGE, budgets=Budgets(prices=priced)),
        inputs=RunInputs(on_event=events.append),
    )

    usage = [event for event in events if isinstance(event, UsageRecorded)]
    total = sum(int(phase["total_tokens"]) for phase in result["usage_by_phase"].values())
    assert sum(event.tokens for event in usage) == total
    assert max(event.run_tokens for event in usage) == total
    assert max(event.cost or 0.0 for event in usage) == pytest.approx(result["cost"])
    researched = {event.researcher for event in usage if event.phase in ("research", "summarize")}
    assert researched == {"solar capacity", "battery storage"}
    assert {event.phase for event in usage} >= {"scope", "orchestrator", "research", "summarize", "write"}


def test_usage_events_do_not_warn_of_an_unknown_cost_before_the_run_does(make_agent: Callable[..., Agent]) -> None:
    unpriced = ScriptedChatGenerator(role="writer")
    unpriced.model = "house-model"  # type: ignore[attr-defined]  # what model_name() reads
    events: list[Event] = []

    result = _run(make_agent(writer_llm=unpriced), inputs=RunInputs(on_event=events.append))

    assert [event.cost for event in events if isinstance(event, UsageRecorded)][-1] is None
    assert sum("the run's cost is unknown" in warning for warning in result["warnings"]) == 1
    assert result["cost"] is None


def test_the_progress_callback_gets_no_line_per_model_call(make_agent: Callable[..., Agent]) -> None:
    lines: list[tuple[str, str]] = []

    _run(make_agent(), inputs=RunInputs(on_event=progress_view(lambda phase, line: lines.append((phase, line)))))

    assert lines
    assert not any("tokens (" in line for _, line in lines)


def test_a_failed_researcher_is_an_event_naming_its_subtopic_and_error(make_agent: Callable[..., Agent]) -> None:
    events: list[Event] = []

    _run(
        make_agent(researcher_llm=ScriptedChatGenerator(role="researcher", fail=True)),
        inputs=RunInputs(on_event=events.append),
    )

    failed = [event for event in events if isinstance(event, SubagentFailed)]
    spawned = [event for event in events if isinstance(event, SubagentSpawned)]
    assert sorted(event.subtopic for event in failed) == sorted(event.subtopic for event in spawned)
    assert all(event.error.startswith("ScriptedModelError: ") for event in failed)
    assert failed[0].describe() == f"failed: {failed[0].subtopic} ({failed[0].error})"


def test_the_caller_gets_the_run_as_it_opens(make_agent: Callable[..., Agent]) -> None:
    opened: list[ResearchRun] = []

    result = _run(make_agent(), inputs=RunInputs(on_run_opened=opened.append))

    [run] = opened
    assert run.question == QUESTION
    assert run.notes() == result["notes"]
    assert run.ledger.to_list() == result["sources"]


def test_a_run_opened_callback_must_be_callable(make_agent: Callable[..., Agent]) -> None:
    with pytest.raises(ConfigurationError, match="must be a callable on_run_opened"):
        _run(make_agent(), inputs=RunInputs(on_run_opened="not callable"))
