"""The orchestrator is not asked for another turn once every sub-topic it may delegate has been researched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack.components.agents import Agent
from haystack.components.agents.state import State
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_deep_research.research.delegated import DelegationsDoneHook
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


class _Run:
    def __init__(self, left: int) -> None:
        self.left = left

    def delegations_left(self, limit: int) -> int:
        return self.left


def _state(messages: list[ChatMessage], tools: list[Any], left: int, monkeypatch: Any) -> State:
    from haystack_deep_research.research import delegated

    view = type("View", (), {"run": _Run(left)})()
    monkeypatch.setattr(delegated, "view_of", lambda state: view)
    monkeypatch.setattr(delegated.BudgetHook, "run", lambda self, state: None)
    state = State(schema={"messages": {"type": list[ChatMessage]}, "tools": {"type": list}, "stop_run": {"type": str}})
    state.set("messages", messages)
    state.set("tools", tools)
    return state


def _delegate_tool() -> Any:
    from haystack_deep_research.research import ResearchSubtopicTool

    researcher = Agent(chat_generator=ScriptedChatGenerator(role="researcher"))
    return ResearchSubtopicTool(researcher=researcher, max_subtopics=1)


def _after_tools() -> list[ChatMessage]:
    call = ToolCall(tool_name="research_subtopic", arguments={"subtopic": "solar"}, id="1")
    return [
        ChatMessage.from_user("brief"),
        ChatMessage.from_assistant(tool_calls=[call]),
        ChatMessage.from_tool("## solar\n\nA note.", origin=call),
    ]


def test_the_loop_ends_only_right_after_tools_with_no_slot_left_and_only_the_librarys_own_tools(
    monkeypatch: Any,
) -> None:
    hook, delegate, think = DelegationsDoneHook(), _delegate_tool(), _tool("think_tool")

    done = _state(_after_tools(), [delegate, think], 0, monkeypatch)
    hook.run(done)
    assert done.data.get("stop_run") == "subtopics_done"

    for messages, tools, left in (
        (_after_tools(), [delegate, think], 1),  # a slot is left
        (_after_tools()[:1], [delegate, think], 0),  # no tool has run yet
        (_after_tools(), [delegate, think, _tool("lookup")], 0),  # a tool of the caller's own could still act
        (_after_tools(), [think], 0),  # no research_subtopic tool at all
    ):
        state = _state(messages, tools, left, monkeypatch)
        hook.run(state)
        assert state.data.get("stop_run") is None
