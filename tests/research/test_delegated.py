"""The orchestrator is not asked for another turn once every sub-topic it may delegate has been researched."""

from __future__ import annotations

from collections.abc import Callable

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool

from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "How fast is solar growing, and how much storage is built?"


class Counted:
    """The scripted orchestrator, counting its calls."""

    def __init__(self, subtopics: list[str]) -> None:
        self.calls = 0
        self._inner = ScriptedChatGenerator(role="orchestrator", subtopics=subtopics)
        self.generator = MockChatGenerator(response_fn=self)

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage:
        self.calls += 1
        # The scripted orchestrator delegates when research_subtopic is offered; the mock hands its function no tools.
        return self._inner.run(messages, tools=[_tool("research_subtopic")])["replies"][0]


def _tool(name: str) -> Tool:
    return Tool(name=name, description=name, parameters={"type": "object", "properties": {}}, function=lambda: "")


def test_once_every_sub_topic_is_researched_the_writer_starts_without_another_orchestrator_turn(
    make_agent: Callable[..., Agent],
) -> None:
    orchestrator = Counted(["solar capacity", "battery storage"])
    agent = make_agent(orchestrator_llm=orchestrator.generator, max_subtopics=2)

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert orchestrator.calls == 1  # the turn that delegated both; none after the notes came back
    assert result["exit_reason"] == "subtopics_done"
    assert len(result["notes"]) == 2
    assert "## solar capacity" in result["report"]
    assert "## battery storage" in result["report"]
    assert result["usage_by_phase"]["orchestrator"]["prompt_tokens"] > 0  # the one turn's usage is counted


def test_with_sub_topics_left_the_orchestrator_decides_when_research_is_complete(
    make_agent: Callable[..., Agent],
) -> None:
    orchestrator = Counted(["solar capacity", "battery storage"])
    agent = make_agent(orchestrator_llm=orchestrator.generator, max_subtopics=3)

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert orchestrator.calls == 2  # it could still delegate a third: it is asked, and says research is complete
    assert result["exit_reason"] == "text"


def test_an_orchestrator_with_a_tool_of_the_callers_own_still_decides_when_research_is_complete(
    make_agent: Callable[..., Agent],
) -> None:
    orchestrator = Counted(["solar capacity", "battery storage"])
    agent = make_agent(orchestrator_llm=orchestrator.generator, max_subtopics=2)
    agent.tools = [*agent.tools, _tool("lookup")]  # a caller's own tool could still act after the notes are back

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert orchestrator.calls == 2
    assert result["exit_reason"] == "text"
    assert len(result["notes"]) == 2


def test_a_sub_topic_refused_before_research_leaves_the_orchestrator_its_turn(
    make_agent: Callable[..., Agent],
) -> None:
    orchestrator = Counted(["   ", "solar capacity"])  # the first delegation is refused: it names no sub-topic
    agent = make_agent(orchestrator_llm=orchestrator.generator, max_subtopics=2)

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert len(result["notes"]) == 1  # a slot is left, so the orchestrator is asked again
    assert orchestrator.calls == 2
    assert result["exit_reason"] == "text"
