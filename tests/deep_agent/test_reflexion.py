"""Reflexion: after each step the agent evaluates it; a wrong step rewrites the plan, visibly."""

from __future__ import annotations

import json
from typing import Any

from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import tool

from haystack_deep_research import RunInputs, create_deep_agent
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.events import Event, Reflected
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = [ChatMessage.from_user("Which CRM leads the mid-market?")]
STEPS = [
    {"tool_name": "search_kb", "arguments": {"query": "enterprise CRM"}},
    {"tool_name": "search_kb", "arguments": {"query": "mid-market CRM"}},
    "Acme leads the mid-market CRM segment.",
]


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return "Acme leads the mid-market CRM segment." if "mid-market" in query else "Enterprise vendors only."


class Reflector:
    """A reflexion model: the first step was wrong (the wrong segment), the later ones fine."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.steps_seen: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[ChatMessage]) -> str:
        found = prompt_of(messages[-1])
        assert found is not None
        assert found[0] == "reflect"
        self.steps_seen.append(found[1]["calls"])
        return self.replies.pop(0) if self.replies else json.dumps({"step_ok": True, "critique": "ok", "plan": ""})


def _run(reflector: Reflector, **options: Any) -> tuple[dict[str, Any], list[Event]]:
    events: list[Event] = []
    agent = create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=STEPS),
        tools=[search_kb],
        system_prompt="Answer from the knowledge base.",
        reflexion_llm=MockChatGenerator(response_fn=reflector),
        grounding=False,
        **options,
    )
    return agent.run(messages=QUESTION, inputs=RunInputs(on_event=events.append)), events


def test_a_wrong_step_rewrites_the_plan_in_the_trace_and_the_outputs() -> None:
    wrong = {
        "step_ok": False,
        "critique": "That searched enterprise CRM, not mid-market.",
        "plan": "1. Search mid-market CRM.",
    }
    reflector = Reflector(json.dumps(wrong))

    result, events = _run(reflector)

    assert result["plan"] == "1. Search mid-market CRM."
    notes = [m.text for m in result["messages"] if m.text and m.text.startswith("Reflection on your last step")]
    assert notes == [
        "Reflection on your last step: That searched enterprise CRM, not mid-market.\nRevised plan:\n"
        "1. Search mid-market CRM.\nFollow the revised plan."
    ]
    reflections = [e for e in events if isinstance(e, Reflected)]
    assert [(e.step_ok, e.plan_rewritten) for e in reflections] == [(False, True), (True, False)]
    assert reflector.steps_seen[0][0]["tool"] == "search_kb"
    assert "Enterprise vendors only." in reflector.steps_seen[0][0]["result"]
    assert "reflect" in result["usage_by_phase"]


def test_a_first_plan_is_kept_without_a_message_when_the_step_was_fine() -> None:
    fine = {"step_ok": True, "critique": "Good start.", "plan": "1. Search. 2. Answer."}

    result, _ = _run(Reflector(json.dumps(fine)))

    assert result["plan"] == "1. Search. 2. Answer."
    assert not any(m.text and m.text.startswith("Reflection on") for m in result["messages"])


def test_an_unreadable_reflection_changes_nothing_and_warns() -> None:
    result, _ = _run(Reflector("I think it went well."))

    assert result["plan"] == ""
    assert any("a reflection could not be read (not the JSON asked for)" in w for w in result["warnings"])
    assert result["exit_reason"] == "text"


def test_reflexion_off_makes_no_reflection_calls() -> None:
    reflector = Reflector()

    result, events = _run(reflector, reflexion=False)

    assert reflector.steps_seen == []
    assert not any(isinstance(e, Reflected) for e in events)
    assert result["exit_reason"] == "text"
