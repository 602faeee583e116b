"""A researcher's context stays small: search results it has acted on keep their titles and URLs, not snippets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"


@component
class Recorder:
    """The scripted researcher, remembering the tool results of every conversation it was sent."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="researcher")
        self.seen: list[list[tuple[str, str]]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        results = [m.tool_call_result for m in messages if m.tool_call_result is not None]
        self.seen.append([(r.origin.tool_name, str(r.result)) for r in results])
        return self.inner.run(messages=messages, tools=tools)


def test_search_snippets_are_dropped_once_the_researcher_has_acted_on_them(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    researcher = Recorder()
    agent = make_agent(
        researcher_llm=researcher,
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
    )

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    first_look, last_look = researcher.seen[1], researcher.seen[-1]  # after the search; when writing the summary
    [(_, fresh)] = first_look
    assert "Snippet: Global solar capacity grew in 2025 solar." in fresh  # the model chooses with the snippets
    search, *reads = last_look
    assert search[0] == "web_search"
    assert "Snippet:" not in search[1]
    assert "left out once you had seen them" in search[1]
    assert f"URL: {web.url('/solar.html')}" in search[1]  # every result can still be read
    assert [line for line in fresh.split("\n") if line.startswith("URL: ")] == [
        line for line in search[1].split("\n") if line.startswith("URL: ")
    ]
    assert [name for name, _ in reads] == ["read_url"]
    assert "450 gigawatts" in reads[0][1]  # page summaries are never shortened
    assert "450 gigawatts" in result["notes"][0]
