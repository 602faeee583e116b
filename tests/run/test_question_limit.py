"""A question longer than MAX_QUESTION_CHARS is refused by every shape before anything runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import InvalidQuestionError, Sources, UrlPolicy, create_iterative_research_agent
from haystack_deep_research.run import MAX_QUESTION_CHARS
from haystack_deep_research.testing import LoopbackSearchServer, ScriptedChatGenerator

LONG = "Why? " + "x" * MAX_QUESTION_CHARS
LIMIT = "the limit is 20,000"


def _iterative(make_search_tool: Callable[..., Any]) -> Any:
    return create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity", None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=Sources(search=make_search_tool(max_results=2), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))),
    )


def test_the_agents_refuse_an_overlong_question(
    make_agent: Callable[..., Agent], make_search_tool: Callable[..., Any], search: LoopbackSearchServer
) -> None:
    for agent in (make_agent(), _iterative(make_search_tool)):
        with pytest.raises(InvalidQuestionError, match=LIMIT):
            agent.run(messages=[ChatMessage.from_user(LONG)])
    assert len(search.requests) == 0  # nothing was searched


def test_the_research_workflow_refuses_an_overlong_question(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    with pytest.raises(InvalidQuestionError, match=LIMIT):  # the typed error itself, as from every shape
        make_workflow().run(messages=[ChatMessage.from_user(LONG)])
    assert len(search.requests) == 0


def test_a_question_at_the_limit_is_taken(make_workflow: Callable[..., Pipeline]) -> None:
    result = make_workflow().run(messages=[ChatMessage.from_user("x" * MAX_QUESTION_CHARS)])
    assert result["exit_reason"]
