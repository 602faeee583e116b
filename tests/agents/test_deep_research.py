"""The factory: validation, defaults without keys, serialization, Pipelines."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import yaml
from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import flatten_tools_or_toolsets

from haystack_deep_research import (
    ConfigurationError,
    InvalidQuestionError,
    Sources,
    WebSearchTool,
    create_deep_research_agent,
)
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.report.writer import WriteHook
from haystack_deep_research.research.final_summary import PreservingChatGenerator
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.sources import DdgsSearch, SearchTool
from haystack_deep_research.testing.generators import ROLES


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("max_subtopics", 0, "from 1 to 50"),
        ("max_subtopics", 51, "from 1 to 50"),
        ("max_subtopics", "5", "from 1 to 50"),
        ("max_subtopics", True, "from 1 to 50"),
        ("max_concurrent_researchers", 0, "from 1 to 50"),
        ("max_orchestrator_steps", 0, "from 1 to 100"),
        ("max_researcher_steps", 201, "from 1 to 200"),
        ("max_search_results", 21, "from 1 to 20"),
        ("max_content_length", 999, "from 1000 to 1000000"),
    ],
)
def test_bad_limits_raise_a_configuration_error_naming_parameter_and_range(
    name: str, value: object, allowed: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"^{name} must be an integer {allowed}; got"):
        create_deep_research_agent(**{name: value})  # type: ignore[arg-type]


def test_a_configuration_error_is_also_a_value_error() -> None:
    with pytest.raises(ValueError, match="max_subtopics"):
        create_deep_research_agent(max_subtopics=-1)


def test_a_model_without_tool_support_is_refused_for_tool_using_roles() -> None:
    class NoTools:
        def run(self, messages: list[ChatMessage]) -> dict:
            return {"replies": []}

    with pytest.raises(ConfigurationError, match="orchestrator_llm must support tool calling"):
        create_deep_research_agent(orchestrator_llm=NoTools())
    with pytest.raises(ConfigurationError, match="researcher_llm must support tool calling"):
        create_deep_research_agent(researcher_llm=NoTools())
    # Roles that never call tools accept it.
    create_deep_research_agent(scope_llm=NoTools(), writer_llm=NoTools(), summarizer_llm=NoTools())


def test_objects_that_are_not_models_or_tools_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="writer_llm must be a Haystack chat generator"):
        create_deep_research_agent(writer_llm="gpt-5.4")
    with pytest.raises(ConfigurationError, match="search must be 'tavily', 'ddgs', 'auto'"):
        create_deep_research_agent(sources=Sources(search=lambda query: query))  # type: ignore[arg-type]


def test_defaults_build_without_any_api_key() -> None:
    agent = create_deep_research_agent()

    assert isinstance(agent, Agent)
    assert isinstance(agent.chat_generator, PreservingChatGenerator)
    orchestrator = agent.chat_generator.chat_generator
    assert isinstance(orchestrator, OpenAIResponsesChatGenerator)
    assert orchestrator.model == "gpt-5.4"
    assert agent.max_agent_steps == 8
    assert agent.tool_concurrency_limit == 5
    delegate = next(t for t in flatten_tools_or_toolsets(agent.tools) if isinstance(t, ResearchSubtopicTool))
    researcher = delegate.researcher
    assert researcher.chat_generator.model == "gpt-5.4-mini"
    assert researcher.max_agent_steps == 20
    search = next(t for t in flatten_tools_or_toolsets(researcher.tools) if isinstance(t, SearchTool))
    assert search.max_results == 10
    assert isinstance(search.backend, DdgsSearch)  # no TAVILY_API_KEY here: the keyless search
    assert not isinstance(search, WebSearchTool)
    assert sorted(t.name for t in flatten_tools_or_toolsets(researcher.tools)) == [
        "read_url",
        "think_tool",
        "web_search",
    ]
    assert sorted(t.name for t in flatten_tools_or_toolsets(agent.tools)) == ["research_subtopic", "think_tool"]


def test_limits_reach_the_agents() -> None:
    agent = create_deep_research_agent(
        max_subtopics=3, max_concurrent_researchers=2, max_orchestrator_steps=4, max_researcher_steps=6
    )
    delegate = next(t for t in flatten_tools_or_toolsets(agent.tools) if isinstance(t, ResearchSubtopicTool))
    assert (agent.max_agent_steps, agent.tool_concurrency_limit) == (4, 2)
    assert (delegate.max_subtopics, delegate.researcher.max_agent_steps) == (3, 6)
    assert "at most 3 sub-topics" in agent.system_prompt


def test_to_dict_from_dict_round_trip_keeps_the_whole_tree() -> None:
    agent = create_deep_research_agent(max_subtopics=3, max_search_results=4)
    data = agent.to_dict()

    restored = ResearchAgent.from_dict(copy.deepcopy(data))

    assert restored.to_dict() == data
    assert ScopeHook in [type(h) for h in restored.hooks["before_run"]]
    assert WriteHook in [type(h) for h in restored.hooks["after_run"]]
    delegate = next(t for t in flatten_tools_or_toolsets(restored.tools) if isinstance(t, ResearchSubtopicTool))
    assert delegate.max_subtopics == 3
    assert (
        next(t for t in flatten_tools_or_toolsets(delegate.researcher.tools) if isinstance(t, SearchTool)).max_results
        == 4
    )


def test_a_restored_agent_runs(make_agent: Callable[..., Agent]) -> None:
    restored = ResearchAgent.from_dict(make_agent().to_dict())

    result = restored.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert "## Sources" in result["report"]
    assert len(result["notes"]) == 2


def test_yaml_round_trip_through_a_pipeline(make_agent: Callable[..., Agent]) -> None:
    pipeline = Pipeline()
    pipeline.add_component("research", make_agent())
    text = pipeline.dumps()
    before_run = yaml.safe_load(text)["components"]["research"]["init_parameters"]["hooks"]["before_run"]
    assert "haystack_deep_research.research.scope.ScopeHook" in [hook["type"] for hook in before_run]

    loaded = Pipeline.loads(text)
    result = loaded.run({"research": {"messages": [ChatMessage.from_user("How fast is solar growing?")]}})

    assert "## Executive summary" in result["research"]["report"]
    assert result["research"]["exit_reason"] == "text"


@pytest.mark.parametrize("messages", [[], [ChatMessage.from_user("   ")], [ChatMessage.from_system("only system")]])
def test_bad_input_raises_before_any_model_is_called(messages: list[ChatMessage]) -> None:
    calls: list[str] = []

    def model(role: str) -> MockChatGenerator:
        return MockChatGenerator(response_fn=lambda prompt: calls.append(role) or "reply")

    agent = create_deep_research_agent(**{f"{role}_llm": model(role) for role in ROLES})
    with pytest.raises(InvalidQuestionError, match="No research question"):
        agent.run(messages=messages)
    assert calls == []
