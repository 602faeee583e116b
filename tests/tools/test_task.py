"""Subagents: the task tool runs one stateless child per call; only its final answer enters the parent's context."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from haystack.tools import tool

from haystack_deep_research import ConfigurationError, RunInputs, create_deep_agent
from haystack_deep_research.events import Event
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import SubAgentDef

PRICING = "Acme's mid-market plan costs 45 dollars per seat per month."


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"{query}: {PRICING}"


def _analyst(**options: Any) -> SubAgentDef:
    child = ScriptedChatGenerator(
        role="agent", steps=[{"tool_name": "search_kb", "arguments": {"query": "Acme pricing"}}, PRICING]
    )
    settings: dict[str, Any] = {
        "name": "competitor_analyst",
        "description": "Deep-dives on a single competitor's product and pricing.",
        "system_prompt": "Research the given competitor and return its positioning and pricing.",
        "tools": [search_kb],
        "max_iterations": 4,
        "chat_generator": child,
    }
    settings.update(options)
    return SubAgentDef(**settings)


def _parent(subagent: SubAgentDef) -> Any:
    task = {"tool_name": "task", "arguments": {"subagent_type": "competitor_analyst", "task": "Research Acme."}}
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=[task, "Acme charges 45 dollars per seat."]),
        tools=[],
        system_prompt="Delegate competitor research.",
        subagents=[subagent],
        grounding=False,
        reflexion=False,
    )


def test_only_the_subagents_final_answer_enters_the_parents_context() -> None:
    events: list[Event] = []

    result = _parent(_analyst()).run(
        messages=[ChatMessage.from_user("How is Acme priced?")], inputs=RunInputs(on_event=events.append)
    )

    results = [m.tool_call_result for m in result["messages"] if m.tool_call_result is not None]
    assert [(r.origin.tool_name, r.result) for r in results] == [("task", PRICING)]
    assert not any(m.tool_calls and m.tool_calls[0].tool_name == "search_kb" for m in result["messages"])
    spawned = [e for e in events if e.kind == "subagent_spawned"]
    completed = [e for e in events if e.kind == "subagent_completed"]
    assert [(e.agent, e.subtopic) for e in spawned] == [("competitor_analyst", "Research Acme.")]
    assert [(e.agent, e.note, e.partial) for e in completed] == [("competitor_analyst", PRICING, False)]
    child_calls = [e for e in events if e.kind == "tool_called" and e.researcher == "competitor_analyst"]
    assert [e.tool for e in child_calls] == ["search_kb"]  # the child's own steps are events, not context
    assert "subagent" in result["usage_by_phase"]  # its tokens count toward the run


def test_each_call_is_stateless() -> None:
    agent = _parent(_analyst())

    first = agent.run(messages=[ChatMessage.from_user("How is Acme priced?")])
    second = agent.run(messages=[ChatMessage.from_user("How is Acme priced?")])

    assert first["last_message"].text == second["last_message"].text


def test_a_subagent_without_its_own_model_uses_the_parents() -> None:
    definition = _analyst(chat_generator=None)
    agent = _parent(definition)

    [task] = [t for t in agent.tools[0].tools if t.name == "task"]

    parents = agent.chat_generator.chat_generator  # inside the wrappers that keep a failed run and bound its calls
    assert task.subagents["competitor_analyst"][1].chat_generator.chat_generator is parents


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "bad name"}, "SubAgentDef.name must be 1 to 64 letters"),
        ({"description": ""}, "SubAgentDef.description must be a non-empty string"),
        ({"max_iterations": 0}, "max_iterations must be an integer from 1 to 200"),
        ({"chat_generator": object()}, "must be a Haystack chat generator"),
    ],
)
def test_bad_definitions_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _analyst(**options)
