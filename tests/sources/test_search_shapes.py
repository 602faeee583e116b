"""A user's own search tool or component, written the way users write them, read into results in every shape."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, component
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research import (
    ResearchCache,
    ResearchRun,
    Sources,
    UrlPolicy,
    create_deep_agent,
    create_deep_research_agent,
    create_iterative_research_agent,
)
from haystack_deep_research.errors import SearchShapeError
from haystack_deep_research.sources import SearchTool
from haystack_deep_research.sources.search import SearchHit, normalize_hits
from haystack_deep_research.sources.selection import search_backend
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))
QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
ARTICLE = (
    "<html><head><title>Tidal power 2025</title></head><body><article><h1>Tidal power 2025</h1>"
    "<p>Tidal power capacity reached 600 megawatts in 2025, led by new turbines off the coast of Scotland.</p>"
    "<p>Operators expect costs to fall as turbine designs standardise across the industry.</p>"
    "</article></body></html>"
)


@pytest.fixture
def pages() -> Iterator[LoopbackWebServer]:
    with LoopbackWebServer() as server:
        server.add_page("/tides.html", ARTICLE)
        server.add_page("/primer.html", ARTICLE.replace("Tidal power 2025", "Ocean energy primer"))
        yield server


def _tavily_rendering(url: str, second: str = "https://primer.example/ocean", aside: str = "") -> str:
    """What Haystack's TavilyWebSearchTool gives a model: '- title', '  URL: url', '  snippet' per result."""
    first = f"- Tidal power 2025\n  URL: {url}\n  Tidal capacity grew{aside}.\n"
    return f"{first}- Ocean energy primer\n  URL: {second}\n  An intro."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            _tavily_rendering("https://t.example/a", aside="; see https://aside.example/x"),
            [
                SearchHit(
                    "Tidal power 2025", "https://t.example/a", "Tidal capacity grew; see https://aside.example/x."
                ),
                SearchHit("Ocean energy primer", "https://primer.example/ocean", "An intro."),
            ],
        ),
        (
            "Title: A\nSource: https://a.example\nContent: aa\nTitle: B\nSource: https://b.example\nContent: bb",
            [SearchHit("A", "https://a.example", "aa"), SearchHit("B", "https://b.example", "bb")],
        ),
        (
            "Results:\n- [Alpha](https://a.example/1) - the first\n- [Beta](<https://b.example/2>): the second",
            [
                SearchHit("Alpha", "https://a.example/1", "the first"),
                SearchHit("Beta", "https://b.example/2", "the second"),
            ],
        ),
        (
            "1. https://a.example/x.\n2. Beta https://b.example\n   about beta",
            [SearchHit("", "https://a.example/x"), SearchHit("Beta", "https://b.example", "about beta")],
        ),
        ('[{"link": "https://j.example", "name": "J", "body": "json"}]', [SearchHit("J", "https://j.example", "json")]),
        ("No results.", []),
    ],
)
def test_text_renderings_are_read_one_result_per_url(text: str, expected: list[SearchHit]) -> None:
    assert normalize_hits(text, limit=10) == expected


@pytest.mark.parametrize("answer", [42, None, [object()], {"answer": "yes"}])
def test_an_unreadable_answer_is_refused_at_the_first_call_naming_the_shapes(answer: Any) -> None:
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: answer)

    with pytest.raises(SearchShapeError, match=r"URL: .*TavilyWebSearchTool.*'documents'"):
        SearchTool(backend=search_backend(tool)).bind(ResearchRun().view()).invoke(query="q")


def test_an_odd_answer_after_readable_ones_is_a_search_error_for_the_model() -> None:
    answers = iter([[{"url": "https://a.example"}], 42])
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: next(answers))
    bound = SearchTool(backend=search_backend(tool)).bind(ResearchRun().view())

    bound.invoke(query="first")
    with pytest.raises(ToolInvocationError, match="web_search failed: the search answered int") as raised:
        bound.invoke(query="second")
    assert not isinstance(raised.value, SearchShapeError)


def test_a_declared_unreadable_shape_is_refused_when_the_agent_is_built() -> None:
    def count(query: str) -> int:
        return len(query)

    with pytest.raises(SearchShapeError, match=r"answered int \(the declared return of 'web_search'\)"):
        create_deep_research_agent(
            sources=Sources(search=Tool(name="web_search", description="s", parameters=QUERY, function=count))
        )

    @component
    class Answerer:
        @component.output_types(answer=str)
        def run(self, query: str) -> dict[str, Any]:
            return {"answer": query}

    with pytest.raises(SearchShapeError, match="outputs named answer"):
        create_iterative_research_agent(
            sources=Sources(search=Answerer()),
            analysis_llm=ScriptedChatGenerator(role="analysis"),
            writer_llm=ScriptedChatGenerator(role="writer"),
        )


def _deep_research(search_tool: Tool) -> dict[str, Any]:
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["tidal power"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(search=search_tool, url_policy=LOOPBACK),
    )
    return agent.run(messages=[ChatMessage.from_user("How much tidal power is installed?")])


def _iterative(search: Any) -> dict[str, Any]:
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["tidal power", None]),
        writer_llm=ScriptedChatGenerator(role="writer"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=Sources(search=search, url_policy=LOOPBACK),
        read_top_k=1,
    )
    return agent.run(messages=[ChatMessage.from_user("How much tidal power is installed?")])


def test_a_plain_tool_answering_the_tavily_rendering_is_read_cited_and_recorded(pages: LoopbackWebServer) -> None:
    url, primer = pages.url("/tides.html"), pages.url("/primer.html")
    rendering = _tavily_rendering(url, primer)
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: rendering)

    for result in (_deep_research(tool), _iterative(tool)):
        assert result["exit_reason"] != "no_evidence", result["warnings"]
        assert f"]({url})" in result["report"]
        read = {entry["url"]: entry for entry in result["sources"]}
        assert (read[url]["kind"], read[url]["title"]) == ("page", "Tidal power 2025")
        assert read[primer]["kind"] in ("snippet", "page")  # its snippet is kept, or its page was read


@component
class UserWebSearch:
    """Written as users write a web-search component: documents with the URL in meta['link'], and links."""

    def __init__(self, url: str) -> None:
        self.url = url

    @component.output_types(documents=list[Document], links=list[str])
    def run(self, query: str) -> dict[str, Any]:
        document = Document(content=f"Tidal power, {query}.", meta={"title": "Tidal power 2025", "link": self.url})
        return {"documents": [document], "links": [self.url]}


def test_a_plain_component_and_a_tool_of_documents_are_read_and_cited(pages: LoopbackWebServer) -> None:
    url = pages.url("/tides.html")
    documents = Tool(
        name="web_search",
        description="search",
        parameters=QUERY,
        function=lambda query: [Document(content="Tidal power.", meta={"url": url, "title": "Tides"})],
    )

    for result in (_deep_research(documents), _iterative(UserWebSearch(url)), _iterative(documents)):
        assert f"]({url})" in result["report"]
        assert url in {entry["url"] for entry in result["sources"] if entry["kind"] == "page"}


def test_a_run_whose_tool_answers_an_unreadable_shape_stops_with_the_typed_error(pages: LoopbackWebServer) -> None:
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: 42)

    with pytest.raises(SearchShapeError, match="the search answered int"):
        _deep_research(tool)
    with pytest.raises(SearchShapeError, match="the search answered int"):
        _iterative(tool)


GUARDED = UrlPolicy(allow_hosts=("127.0.0.1",), deny_domains=("blocked.example",))
REFUSED = ("https://mirror.blocked.example/tides", "http://169.254.169.254/latest/meta-data")


def _guarded(shape: Any, search: Any) -> dict[str, Any]:
    common = {
        "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
        "writer_llm": ScriptedChatGenerator(role="writer"),
    }
    if shape is create_iterative_research_agent:
        steps = ScriptedChatGenerator(role="analysis", steps=["tidal power", None])
        agent = shape(analysis_llm=steps, sources=Sources(search=search, url_policy=GUARDED), read_top_k=3, **common)
    else:
        agent = shape(
            scope_llm=ScriptedChatGenerator(role="scope"),
            orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["tidal power"]),
            researcher_llm=ScriptedChatGenerator(role="researcher", read_top_k=3),
            sources=Sources(search=search, url_policy=GUARDED),
            **common,
        )
    return agent.run(messages=[ChatMessage.from_user("How much tidal power is installed?")])


def _assert_refused_never_entered(result: dict[str, Any], url: str) -> None:
    assert f"]({url})" in result["report"]
    assert {entry["url"] for entry in result["sources"]} == {url}
    for refused in REFUSED:
        assert refused not in result["report"]
    dropped = [warning for warning in result["warnings"] if "dropped a result the URL policy refuses" in warning]
    assert any("blocked.example is on the deny list" in warning for warning in dropped)
    assert any("169.254.169.254 is" in warning for warning in dropped)


@pytest.mark.parametrize("shape", [create_deep_research_agent, create_iterative_research_agent])
def test_a_users_tool_naming_a_denied_or_metadata_url_gets_it_dropped(pages: LoopbackWebServer, shape: Any) -> None:
    url = pages.url("/tides.html")
    answer = {"results": [{"url": refused, "title": "Gezeitenkraft", "content": "Tidal."} for refused in REFUSED]}
    answer["results"].append({"url": url, "title": "Tidal power 2025", "content": "Tidal capacity grew."})
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: answer)

    _assert_refused_never_entered(_guarded(shape, tool), url)


@pytest.mark.parametrize("shape", [create_deep_research_agent, create_iterative_research_agent])
def test_a_users_tool_of_documents_with_a_refused_meta_url_gets_it_dropped(
    pages: LoopbackWebServer, shape: Any
) -> None:
    url = pages.url("/tides.html")
    documents = [Document(content="Tidal power.", meta={"url": u, "title": "Tides"}) for u in (*REFUSED, url)]
    tool = Tool(name="web_search", description="search", parameters=QUERY, function=lambda query: documents)

    _assert_refused_never_entered(_guarded(shape, tool), url)


@component
class CitingWhatToolsSay:
    """A model that calls the one tool it has, then cites every web URL the tool's answer names."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        results = [m.tool_call_result.result for m in messages if m.tool_call_result is not None]
        if not results:
            call = ToolCall(tool_name="lookup", arguments={"query": "tidal power"})
            return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}
        urls = dict.fromkeys(re.findall(r"https?://[^\s'\"<>)\]]+", " ".join(results)))
        lines = [f"Tidal capacity reached 600 MW [source]({url})." for url in urls]
        return {"replies": [ChatMessage.from_assistant("# Tides\n\n" + "\n\n".join(lines))]}


@pytest.mark.parametrize(
    "answer",
    [
        {"url": "https://tides.third-party.example/2025", "text": "Tidal capacity reached 600 MW."},
        [Document(content="Tidal capacity reached 600 MW.", meta={"url": "https://tides.third-party.example/2025"})],
    ],
    ids=["dict", "documents"],
)
def test_a_url_a_users_own_tool_names_is_never_a_verified_citation(answer: Any) -> None:
    lookup = Tool(name="lookup", description="look up", parameters=QUERY, function=lambda query: answer)
    agent = create_deep_agent(chat_generator=CitingWhatToolsSay(), tools=[lookup], system_prompt="Answer.")

    result = agent.run(messages=[ChatMessage.from_user("How much tidal power is installed?")])

    assert result["citations"]["verified_urls"] == []
    assert "https://tides.third-party.example/2025" in {c["url"] for c in result["citations"]["unverified"]}
    assert "](https://tides.third-party.example" not in result["report"]
    assert result["sources"] == []


@component
class _Encyclopedia:
    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, Any]:
        return {
            "documents": [Document(content="Ein Lexikon über Köln.", meta={"link": "https://lexikon.example/koeln"})]
        }


@component
class _Newspaper:
    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, Any]:
        return {
            "documents": [Document(content="Die Zeitung über Köln.", meta={"link": "https://zeitung.example/koeln"})]
        }


def _wiki_tool(name: str, url: str) -> Tool:
    return Tool(
        name=name,
        description="search",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        function=lambda query: [{"url": url, "title": name, "snippet": f"{name} über {query}"}],
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (_Encyclopedia(), _Newspaper()),
        (
            _wiki_tool("lexikon", "https://lexikon.example/koeln"),
            _wiki_tool("zeitung", "https://zeitung.example/koeln"),
        ),
    ],
    ids=["components", "tools"],
)
def test_two_search_components_sharing_a_cache_never_answer_for_each_other(
    first: Any, second: Any, tmp_path: Path
) -> None:
    # The cache key names what the wrapper wraps (the component's class, the tool's name and function), not the wrapper.
    cache = ResearchCache(directory=tmp_path)
    answers = [
        SearchTool(backend=search_backend(source), cache=cache).bind(ResearchRun().view()).invoke(query="Köln")
        for source in (first, second)
    ]

    assert "lexikon.example" in answers[0]
    assert "zeitung.example" not in answers[0]
    assert "zeitung.example" in answers[1]
    assert "lexikon.example" not in answers[1]
