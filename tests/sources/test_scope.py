"""Chosen domains and dates: passed to every engine in its own terms, and enforced on what comes back and on reading."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from haystack import Document, component
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from haystack_deep_research import (
    ConfigurationError,
    ReadUrlTool,
    ResearchRun,
    Sources,
    UrlPolicy,
    create_deep_research_agent,
    create_iterative_research_agent,
    create_research_workflow,
)
from haystack_deep_research.errors import URLRefusedError
from haystack_deep_research.sources import DdgsSearch, SearchTool, WebSearchTool
from haystack_deep_research.sources.selection import resolve_search
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator
from haystack_deep_research.web import SearchScope

TODAY = datetime.now(UTC).date()
RECENT = (TODAY - timedelta(days=3)).isoformat()
OLD = "Tue, 02 Jan 2018 10:00:00 GMT"


class Engine:
    """A search engine of a user's own: a plain object, no scope parameter, answering dictionaries."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.results = results
        self.queries: list[str] = []

    def search(self, query: str, *, max_results: int) -> list[dict[str, Any]]:
        self.queries.append(query)
        return self.results

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tests.sources.test_scope.Engine", "init_parameters": {"results": self.results}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Engine:
        return cls(data["init_parameters"]["results"])


RESULTS = [
    {"url": "https://www.who.int/news/tides", "title": "Tides at WHO", "content": "Tides, 2026.", "date": RECENT},
    {"url": "https://who.int/archive/tides", "title": "Old tides", "content": "Tides, 2018.", "published_date": OLD},
    {"url": "https://blog.example/tides", "title": "A blog", "content": "Tides are great."},
    {"url": "https://ads.who.int/buy", "title": "Buy tides", "content": "Buy now."},
    {"url": "https://europa.eu/tides", "title": "EU tides", "content": "No date given."},
]


def test_results_outside_the_domains_or_the_window_never_reach_the_ledger_or_the_model() -> None:
    run = ResearchRun()
    scope = SearchScope(include_domains=("WHO.int", "europa.eu."), exclude_domains=("ads.who.int",), since="month")
    tool = SearchTool(backend=Engine(RESULTS), scope=scope).bind(run.view())

    text = tool.invoke(query="tides")

    kept = ["https://www.who.int/news/tides", "https://europa.eu/tides"]  # the undated one is kept: nothing says old
    assert [entry.url for entry in run.ledger.entries()] == kept
    for url in ("https://who.int/archive/tides", "https://blog.example/tides", "https://ads.who.int/buy"):
        assert url not in text
    assert "3 result(s) outside the run's chosen domains or dates were left out" in text
    [warning] = run.warnings()
    assert "outside the chosen domains or dates are dropped" in warning
    tool.invoke(query="tides again")
    assert len(run.warnings()) == 1  # said once per run


def test_a_scope_reads_past_max_results_so_what_it_drops_leaves_room() -> None:
    results = [{"url": f"https://spam{n}.example/x"} for n in range(8)] + [{"url": "https://who.int/a"}]
    run = ResearchRun()

    SearchTool(backend=Engine(results), max_results=2, scope=SearchScope(include_domains=("who.int",))).bind(
        run.view()
    ).invoke(query="q")

    assert [entry.url for entry in run.ledger.entries()] == ["https://who.int/a"]


class TavilyClient:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        self.calls.append({"query": query, **options})
        return {"results": [{"url": "https://who.int/a", "title": "A", "content": "x"}]}


@pytest.mark.parametrize(
    ("since", "expected"),
    [("week", {"time_range": "week"}), (date(2026, 1, 31), {"start_date": "2026-01-31"}), (None, {})],
)
def test_tavily_is_asked_with_its_own_parameters(since: Any, expected: dict[str, Any]) -> None:
    client = TavilyClient()
    scope = SearchScope(include_domains=("who.int",), exclude_domains=("ads.who.int",), since=since)

    WebSearchTool(client=client, scope=scope).invoke(query="tides")

    [call] = client.calls
    assert call["include_domains"] == ["who.int"]
    assert call["exclude_domains"] == ["ads.who.int"]
    assert {key: call[key] for key in ("time_range", "start_date") if key in call} == expected


class DdgsClient:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def text(self, query: str, **options: Any) -> list[dict[str, Any]]:
        self.calls.append({"query": query, **options})
        return [{"href": "https://who.int/a", "title": "A", "body": "x"}]


def test_the_keyless_search_gets_site_operators_and_a_time_limit() -> None:
    client = DdgsClient()
    scope = SearchScope(include_domains=("who.int", "europa.eu"), exclude_domains=("ads.who.int",), since="week")

    SearchTool(backend=DdgsSearch(client=client), scope=scope).invoke(query="tides")

    [call] = client.calls
    assert call["query"] == "tides (site:who.int OR site:europa.eu) -site:ads.who.int"
    assert call["timelimit"] == "w"


def test_a_users_tool_and_component_get_the_scope_where_their_signature_takes_it() -> None:
    asked: list[dict[str, Any]] = []

    def search(query: str, include_domains: list[str] | None = None) -> list[dict[str, str]]:
        asked.append({"query": query, "include_domains": include_domains})
        return [{"url": "https://who.int/a"}, {"url": "https://other.example/b"}]

    parameters = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "include_domains": {"type": "array", "items": {"type": "string"}}},
    }
    tool = Tool(name="my_search", description="search", parameters=parameters, function=search)

    @component
    class Component:
        @component.output_types(documents=list[Document])
        def run(self, query: str, time_range: str | None = None) -> dict[str, Any]:
            asked.append({"query": query, "time_range": time_range})
            return {"documents": [Document(content="x", meta={"url": "https://who.int/c", "date": OLD})]}

    scope = SearchScope(include_domains=("who.int",), since="year")
    run = ResearchRun()
    resolve_search(tool, scope=scope).bind(run.view()).invoke(query="tides")
    resolve_search(Component(), scope=scope).bind(run.view()).invoke(query="tides")

    assert asked == [{"query": "tides", "include_domains": ["who.int"]}, {"query": "tides", "time_range": "year"}]
    assert [entry.url for entry in run.ledger.entries()] == ["https://who.int/a"]  # other.example and 2018 dropped


def test_a_search_tool_given_keeps_its_own_scope_and_the_runs_copy_gets_the_sources() -> None:
    given = SearchTool(backend=DdgsSearch())

    scoped = resolve_search(given, scope=SearchScope(include_domains=("europa.eu",)))

    assert not given.scope
    assert scoped.scope.include_domains == ("europa.eu",)
    assert SearchTool.from_dict(scoped.to_dict()).scope == scoped.scope


def test_a_page_outside_the_chosen_domains_is_never_fetched(web: LoopbackWebServer) -> None:
    policy = Sources(include_domains=["localhost"], url_policy=UrlPolicy(allow_hosts=("localhost",))).read_policy
    assert policy is not None
    tool = ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=policy)

    text = tool.invoke(urls=[web.url("/solar.html")], question="solar")

    assert "outside the domains this run may read (localhost)" in text
    assert web.requests.snapshot() == []
    with pytest.raises(URLRefusedError, match="deny list"):
        Sources(exclude_domains=["evil.example"]).read_policy.check("https://www.evil.example/x")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"include_domains": "who.int"}, "must be a list of domain names"),
        ({"include_domains": ["10.0.0.1"]}, "is an IP address"),
        ({"exclude_domains": ["not a host"]}, "is not a valid host name"),
        ({"since": "last tuesday"}, "since must be a date"),
        ({"web": False, "since": "week", "datastores": {"x": object()}}, "Sources\\(web=False\\) has no web search"),
    ],
)
def test_bad_domains_and_dates_are_refused_with_the_fix(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Sources(**options)


def _researcher(web: LoopbackWebServer) -> MockChatGenerator:
    """A researcher of our own: searches, reads every URL it was given, and cites them all."""

    def reply(messages: list[ChatMessage], tools: Any = None) -> ChatMessage | str:
        results = [m.tool_call_result for m in messages if m.tool_call_result is not None]
        urls = sorted({url for r in results for url in re.findall(r"URL: (\S+)", str(r.result))})
        if tools and not results:
            return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name="web_search", arguments={"query": "x"})])
        if tools and len(results) == 1 and urls:
            call = ToolCall(tool_name="read_url", arguments={"urls": urls, "question": "solar"})
            return ChatMessage.from_assistant(tool_calls=[call])
        cited = [web.url("/storage.pdf"), *urls]
        return " ".join(f"Solar grew by 450 gigawatts [source]({url})." for url in cited)

    return MockChatGenerator(response_fn=reply)


def _world(web: LoopbackWebServer) -> tuple[Engine, Sources]:
    local = web.url("/solar.html").replace("127.0.0.1", "localhost")
    engine = Engine([{"url": local, "title": "Solar"}, {"url": web.url("/storage.pdf"), "title": "Storage"}])
    sources = Sources(search=engine, include_domains=["localhost"], url_policy=UrlPolicy(allow_hosts=("localhost",)))
    return engine, sources


def test_no_shape_cites_outside_the_chosen_domains(web: LoopbackWebServer) -> None:
    local = web.url("/solar.html").replace("127.0.0.1", "localhost")
    models = {
        "scope_llm": ScriptedChatGenerator(role="scope"),
        "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
        "writer_llm": ScriptedChatGenerator(role="writer"),
    }
    _, sources = _world(web)
    agent = create_deep_research_agent(
        **models,
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
        researcher_llm=_researcher(web),
        sources=sources,
    )

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert {entry["url"] for entry in result["sources"]} == {local}
    assert local in result["citations"]["verified_urls"]
    assert web.url("/storage.pdf") not in result["report"]
    assert [r.path for r in web.requests.snapshot()] == ["/solar.html"]  # the outside page was never fetched


def test_the_iterative_agent_keeps_to_the_chosen_domains(web: LoopbackWebServer) -> None:
    local = web.url("/solar.html").replace("127.0.0.1", "localhost")
    engine, sources = _world(web)
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["solar capacity", None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=sources,
        read_top_k=2,
    )

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert engine.queries  # it did search
    assert {entry["url"] for entry in result["sources"]} == {local}
    assert web.url("/storage.pdf") not in result["report"]
    assert all(r.path != "/storage.pdf" for r in web.requests.snapshot())


def test_the_shapes_that_search_with_your_tools_refuse_the_scope_and_say_why() -> None:
    from haystack_deep_research import create_deep_agent

    model = ScriptedChatGenerator(role="researcher")
    sources = Sources(include_domains=["who.int"])
    with pytest.raises(ConfigurationError, match="include_domains"):
        create_research_workflow(chat_generator=model, tools=[], output_schema=None, sources=sources)
    with pytest.raises(ConfigurationError, match="include_domains"):
        create_deep_agent(chat_generator=model, tools=[], system_prompt="Research.", sources=sources)


def test_an_internationalised_domain_is_matched_however_it_is_written() -> None:
    scope = SearchScope(include_domains=("münchen.de",))

    assert scope.keeps("https://www.münchen.de/rathaus")
    assert scope.keeps("https://www.xn--mnchen-3ya.de/rathaus")
    assert not scope.keeps("https://muenchen.de/rathaus")


def test_chosen_domains_never_widen_the_policys_own() -> None:
    policy = UrlPolicy(only_domains=("intranet.example",))

    narrowed = Sources(url_policy=policy, include_domains=["evil.example", "wiki.intranet.example"]).read_policy

    assert narrowed is not None
    assert narrowed.only_domains == ("wiki.intranet.example",)
    with pytest.raises(URLRefusedError, match="outside the domains"):
        narrowed.check("https://evil.example/x")
    nothing = Sources(url_policy=policy, include_domains=["evil.example"]).read_policy
    with pytest.raises(URLRefusedError):
        nothing.check("https://intranet.example/x")  # type: ignore[union-attr]
