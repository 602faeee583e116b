"""The time budget is a deadline: a model call still in flight when it runs out is cut, and the run keeps its work."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from haystack import Pipeline, component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import Budgets, Sources, create_iterative_research_agent
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"


@component
class StuckModel:
    """
    A model server that answers its first ``answers`` calls as scripted and then never answers until the test ends
    (it blocks on an event the test sets at teardown). Sync only: on the async path it runs in a worker thread.
    """

    def __init__(self, scripted: ScriptedChatGenerator, released: threading.Event, answers: int = 0) -> None:
        self.scripted, self.released, self.answers = scripted, released, answers
        self.calls = 0
        self.ended = threading.Event()  # set when a stuck call gives up: never before the run returns

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls > self.answers:
            self.released.wait(60)
            self.ended.set()
            raise TimeoutError("the stuck server was released at the end of the test")
        return self.scripted.run(messages, tools)


@pytest.fixture
def released() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # the abandoned calls end now


@pytest.mark.parametrize("run_async", [False, True])
async def test_a_stuck_researcher_model_ends_the_run_at_the_time_budget_with_a_report(
    make_agent: Callable[..., Agent], released: threading.Event, run_async: bool
) -> None:
    # The researcher searches, then its model never answers again (neither the next step nor the final summary).
    stuck = StuckModel(ScriptedChatGenerator(role="researcher"), released, answers=1)
    agent = make_agent(
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
        researcher_llm=stuck,
        budgets=Budgets(seconds=1.5),
    )
    messages = [ChatMessage.from_user(QUESTION)]

    result = await agent.run_async(messages=messages) if run_async else agent.run(messages=messages)

    assert not stuck.ended.is_set()  # returned while the stuck calls were still hanging
    assert result["exit_reason"] == "time_budget"
    assert result["report"].strip()
    [note] = result["notes"]
    assert "these are the results it gathered" in note  # the search results are kept
    assert "[Partial: the run's time budget was spent" in note
    assert any("time budget of 1.5 s ran out while a model call was in flight" in w for w in result["warnings"])


@pytest.mark.parametrize("run_async", [False, True])
async def test_a_stuck_orchestrator_before_any_research_ends_the_run_at_the_time_budget(
    make_agent: Callable[..., Agent], released: threading.Event, run_async: bool
) -> None:
    stuck = StuckModel(ScriptedChatGenerator(role="orchestrator"), released)
    agent = make_agent(orchestrator_llm=stuck, budgets=Budgets(seconds=1))
    messages = [ChatMessage.from_user(QUESTION)]

    result = await agent.run_async(messages=messages) if run_async else agent.run(messages=messages)

    assert not stuck.ended.is_set()
    assert result["exit_reason"] == "time_budget"
    assert result["report"].strip()


@pytest.mark.parametrize("run_async", [False, True])
async def test_a_stuck_analysis_model_ends_the_iterative_run_at_the_time_budget(
    make_search_tool: Callable[..., Any], released: threading.Event, run_async: bool
) -> None:
    stuck = StuckModel(ScriptedChatGenerator(role="analysis"), released)
    agent = create_iterative_research_agent(
        analysis_llm=stuck,
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(search=make_search_tool(max_results=2)),
        budgets=Budgets(seconds=1),
    )
    messages = [ChatMessage.from_user(QUESTION)]

    result = await agent.run_async(messages=messages) if run_async else agent.run(messages=messages)

    assert not stuck.ended.is_set()
    assert result["exit_reason"] == "time_budget"
    assert result["report"].strip()
    assert any("ran out while a model call was in flight" in w for w in result["warnings"])


def test_a_stuck_researcher_ends_the_workflow_at_the_time_budget(
    make_workflow: Callable[..., Pipeline], released: threading.Event
) -> None:
    stuck = StuckModel(ScriptedChatGenerator(role="researcher"), released, answers=1)
    pipeline = make_workflow(chat_generator=stuck, budgets=Budgets(seconds=1))

    result = pipeline.run(messages=[ChatMessage.from_user(QUESTION)])

    assert not stuck.ended.is_set()
    assert result["exit_reason"] == "time_budget"
    [note] = result["notes"]
    assert "these are the results it gathered" in note  # the search results are kept
    assert isinstance(result["report"], str)
