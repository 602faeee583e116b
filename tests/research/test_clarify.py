"""``clarify=True``: the scope phase may ask one clarifying question instead of writing a brief."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from tests.support import ListScope

from haystack_deep_research import ConfigurationError, create_deep_research_agent
from haystack_deep_research.testing import ScriptedChatGenerator

QUESTION = "What is the best battery?"
ASKED = "For which use: electric cars, home storage or phones?"
ANSWER = "Home storage in Europe."


@component
class Counting:
    """Wraps a scripted role and counts its calls."""

    def __init__(self, role: str, **options: Any) -> None:
        self.inner = ScriptedChatGenerator(role=role, **options)
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.calls += 1
        return self.inner.run(messages=messages, tools=tools, **kwargs)


@pytest.fixture
def models() -> dict[str, Counting]:
    return {
        "orchestrator_llm": Counting("orchestrator", subtopics=["home batteries"]),
        "researcher_llm": Counting("researcher"),
        "summarizer_llm": Counting("summarizer"),
        "writer_llm": Counting("writer"),
    }


def _agent(make_agent: Callable[..., Agent], scope: ListScope, models: dict[str, Counting], **more: Any) -> Agent:
    return make_agent(scope_llm=scope, clarify=True, **models, **more)


def test_an_ambiguous_question_ends_with_one_clarifying_question_after_the_scope_call_alone(
    make_agent: Callable[..., Agent], models: dict[str, Counting]
) -> None:
    scope = ListScope([f'```json\n{{"clarification": "{ASKED}"}}\n```'])

    result = _agent(make_agent, scope, models).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["exit_reason"] == "clarification_needed"
    assert result["clarification"] == ASKED
    assert result["report"] == ""
    assert result["brief"] == ""
    assert result["notes"] == []
    assert result["sources"] == []
    assert isinstance(result["citations"], dict)
    assert result["warnings"] == []
    assert result["grounding_score"] is None
    assert result["structured"] is None
    assert result["messages"][-1].text == ASKED
    assert len(scope.received) == 1
    assert {name: model.calls for name, model in models.items()} == dict.fromkeys(models, 0)


def test_the_answer_in_the_conversation_leads_to_a_brief_and_research(
    make_agent: Callable[..., Agent], models: dict[str, Counting]
) -> None:
    scope = ListScope(["Brief: compare home storage batteries sold in Europe."])
    conversation = [ChatMessage.from_user(QUESTION), ChatMessage.from_assistant(ASKED), ChatMessage.from_user(ANSWER)]

    result = _agent(make_agent, scope, models).run(messages=conversation)

    assert result["exit_reason"] != "clarification_needed"
    assert result["clarification"] == ""
    assert result["brief"] == "Brief: compare home storage batteries sold in Europe."
    assert result["report"].startswith("# ")
    assert len(result["notes"]) == 1
    assert models["writer_llm"].calls > 0
    sent = scope.received[0][-1].text or ""
    assert QUESTION in sent
    assert ASKED in sent
    assert ANSWER in sent
    assert "clarification" not in (scope.received[0][0].text or "")  # one question per conversation


def test_a_brief_reply_in_clarify_mode_researches(
    make_agent: Callable[..., Agent], models: dict[str, Counting]
) -> None:
    scope = ListScope(['{"brief": "Compare lithium iron phosphate and NMC batteries for homes."}'])

    result = _agent(make_agent, scope, models).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["brief"] == "Compare lithium iron phosphate and NMC batteries for homes."
    assert result["clarification"] == ""
    assert len(result["notes"]) == 1


def test_a_prose_reply_in_clarify_mode_is_the_brief(
    make_agent: Callable[..., Agent], models: dict[str, Counting]
) -> None:
    scope = ListScope(['Research home batteries; ignore {"clarification": 3} and any JSON-looking text.'])

    result = _agent(make_agent, scope, models).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["exit_reason"] != "clarification_needed"
    assert result["brief"].startswith("Research home batteries")


def test_a_hostile_clarifying_question_is_cleaned_and_bounded(
    make_agent: Callable[..., Agent], models: dict[str, Counting]
) -> None:
    hostile = "\u001b[2J\u001b]0;pwned\u0007Which region? " + "x" * 5_000
    scope = ListScope([json.dumps({"clarification": hostile})])

    result = _agent(make_agent, scope, models).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["exit_reason"] == "clarification_needed"
    assert "\u001b" not in result["clarification"]
    assert "\u0007" not in result["clarification"]
    assert len(result["clarification"]) <= 1_000


def test_without_clarify_the_scope_prompt_asks_for_the_brief_only(make_agent: Callable[..., Agent]) -> None:
    scope = ListScope(['{"clarification": "Which region?"}'])

    result = make_agent(scope_llm=scope).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["exit_reason"] != "clarification_needed"
    assert result["clarification"] == ""
    assert "clarification" not in (scope.received[0][0].text or "")


def test_clarify_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="clarify must be True or False"):
        create_deep_research_agent(clarify="yes")  # type: ignore[arg-type]
