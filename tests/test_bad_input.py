"""Every public entry point refuses bad input with a typed error that says what to change, before anything runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import (
    PROGRESS_KEY,
    ConfigurationError,
    FetchLimits,
    FinalSummaryHook,
    ReadUrlTool,
    ResearchSubtopicTool,
    ScopeHook,
    UrlPolicy,
    WebSearchTool,
    WriteHook,
    create_deep_research_agent,
)
from haystack_deep_research.research import LoopGuardHook
from haystack_deep_research.run import OpenRunHook
from haystack_deep_research.testing import ScriptedChatGenerator

SUMMARIZER = ScriptedChatGenerator(role="summarizer")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: create_deep_research_agent(url_policy={"allow_hosts": []}),
            "url_policy must be a UrlPolicy; got dict",
        ),
        (lambda: create_deep_research_agent(fetch_limits=30), "fetch_limits must be a FetchLimits; got int"),
        (lambda: ReadUrlTool(summarizer_llm=SUMMARIZER, url_policy="public"), "url_policy must be a UrlPolicy"),
        (lambda: ReadUrlTool(summarizer_llm=SUMMARIZER, fetch_limits={}), "fetch_limits must be a FetchLimits"),
        (lambda: WebSearchTool(api_key="tvly-123"), "api_key must be a haystack Secret"),
        (lambda: WebSearchTool(api_base_url="localhost:8080"), "api_base_url must be an http(s) URL or None"),
        (lambda: WebSearchTool(client=object()), "client must have Tavily's search"),
        (lambda: WebSearchTool(max_retries=11), "max_retries must be an integer from 0 to 10"),
        (lambda: ResearchSubtopicTool(researcher="agent"), "researcher must be a Haystack Agent; got str"),
        (lambda: ScopeHook(chat_generator="gpt-5.4"), "chat_generator must be a Haystack chat generator"),
        (lambda: WriteHook(chat_generator=None), "chat_generator must be a Haystack chat generator"),
        (lambda: FinalSummaryHook(chat_generator=42), "chat_generator must be a Haystack chat generator"),
        (lambda: LoopGuardHook(threshold=0), "threshold must be an integer from 2 to 20"),
        (lambda: OpenRunHook(token_budget=-1), "token_budget must be an integer from 1 to 1000000000"),
        (lambda: OpenRunHook(time_budget=0.0), "time_budget must be a number greater than 0"),
        (lambda: UrlPolicy(allow_hosts=("not a host!",)), "allow_hosts"),
        (lambda: FetchLimits(total_timeout=-1), "FetchLimits.total_timeout must be a number greater than 0"),
    ],
)
def test_a_bad_argument_raises_a_configuration_error_naming_the_fix(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        build()


def test_a_progress_callback_that_cannot_be_called_is_refused_before_any_model_is_called(
    make_agent: Callable[..., Agent],
) -> None:
    calls: list[str] = []
    scope = MockChatGenerator(response_fn=lambda messages: calls.append("scope") or "brief")
    agent = make_agent(scope_llm=scope)

    with pytest.raises(ConfigurationError, match=rf"hook_context\['{PROGRESS_KEY}'\] must be a callable"):
        agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")], hook_context={PROGRESS_KEY: "log"})
    assert calls == []
