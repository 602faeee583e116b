"""Choosing the web search: Tavily with a key, keyless ddgs without one, said once per run; ddgs offline."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research import ConfigurationError, ResearchRun, RunInputs, WebSearchTool, create_deep_research_agent
from haystack_deep_research.events import progress_view
from haystack_deep_research.sources import DdgsSearch, SearchTool
from haystack_deep_research.sources.selection import KEYLESS_NOTICE, default_search_name, resolve_search
from haystack_deep_research.testing import ScriptedChatGenerator


class FakeDdgs:
    """Stands in for ddgs.DDGS at its seam: the text() method."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.error = error

    def text(self, query: str, **options: Any) -> list[dict[str, str]]:
        self.calls.append({"query": query, **options})
        if self.error is not None:
            raise self.error
        return [{"title": f"About {query}", "href": f"https://ddg.example/{i}", "body": "b"} for i in range(12)]


def test_auto_picks_tavily_with_a_key_and_ddgs_without() -> None:
    assert default_search_name({"TAVILY_API_KEY": "tvly-1"}) == "tavily"
    assert default_search_name({"TAVILY_API_KEY": "  "}) == "ddgs"
    assert default_search_name({}) == "ddgs"
    with_key = resolve_search("auto", environ={"TAVILY_API_KEY": "tvly-1"})
    without = resolve_search("auto", max_results=4, environ={})
    assert isinstance(with_key, WebSearchTool)
    assert with_key.notice == ""
    assert isinstance(without.backend, DdgsSearch)
    assert (without.max_results, without.notice) == (4, KEYLESS_NOTICE)


def test_explicit_names_say_nothing_and_unknown_ones_are_refused() -> None:
    assert isinstance(resolve_search("tavily", environ={}), WebSearchTool)
    chosen = resolve_search("DDGS")
    assert isinstance(chosen.backend, DdgsSearch)
    assert chosen.notice == ""
    with pytest.raises(ConfigurationError, match="search must be one of auto, tavily, ddgs; got 'bing'"):
        resolve_search("bing")


def test_the_agent_without_a_tavily_key_uses_ddgs(monkeypatch: pytest.MonkeyPatch) -> None:
    researcher = _researcher(create_deep_research_agent())
    search = next(t for t in researcher.tools[0].tools if t.name == "web_search")
    assert isinstance(search.backend, DdgsSearch)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    researcher = _researcher(create_deep_research_agent())
    assert isinstance(next(t for t in researcher.tools[0].tools if t.name == "web_search"), WebSearchTool)


def _researcher(agent: Any) -> Any:
    delegate = next(t for t in agent.tools[0].tools if t.name == "research_subtopic")
    return delegate.researcher


def test_ddgs_results_flow_through_the_one_path_and_the_keyless_choice_is_said_once_per_run() -> None:
    fake = FakeDdgs()
    tool = SearchTool(backend=DdgsSearch(client=fake, timeout=3), max_results=5, notice=KEYLESS_NOTICE)
    run = ResearchRun()
    events: list[str] = []
    run.events.subscribe(lambda event: events.append(event.describe()))
    bound = tool.bind(run.researcher("tides"))

    first = bound.invoke(query="tides")
    bound.invoke(query="moon")

    assert first.count("URL: ") == 5
    assert fake.calls[0] == {
        "query": "tides",
        "region": "us-en",
        "safesearch": "moderate",
        "backend": "auto",
        "max_results": 5,
    }
    assert run.warnings() == [f"research: {KEYLESS_NOTICE}"]
    assert sum(KEYLESS_NOTICE in line for line in events) == 1
    assert len(run.ledger) == 5


def test_ddgs_offline_is_a_search_error_for_the_model() -> None:
    from ddgs.exceptions import DDGSException

    run = ResearchRun()
    tool = SearchTool(backend=DdgsSearch(client=FakeDdgs(error=DDGSException("dns error")))).bind(run.view())

    with pytest.raises(ToolInvocationError, match=r"keyless search \(ddgs\) failed: DDGSException: dns error"):
        tool.invoke(query="q")
    assert "all 1 searches failed" in run.searches.explain()


def test_bad_ddgs_settings_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="timeout must be an integer from 1 to 60"):
        DdgsSearch(timeout=0)
    with pytest.raises(ConfigurationError, match="safesearch must be"):
        DdgsSearch(safesearch="strict")


def test_a_run_without_tavily_says_so_once_in_warnings_and_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeDdgs()
    monkeypatch.setattr(DdgsSearch, "_get_client", lambda self: fake)  # the seam: no network
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["a", "b"]),
        researcher_llm=ScriptedChatGenerator(role="researcher", read_top_k=0),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
    )
    progress: list[tuple[str, str]] = []

    result = agent.run(
        messages=[ChatMessage.from_user("What is new?")],
        inputs=RunInputs(on_event=progress_view(lambda phase, line: progress.append((phase, line)))),
    )

    assert len(fake.calls) == 2  # both researchers searched
    assert result["warnings"].count(f"research: {KEYLESS_NOTICE}") == 1
    assert sum(KEYLESS_NOTICE in line for _, line in progress) == 1
