"""
Shared fixtures. Every test runs with the network forbidden except loopback (connections and name look-ups), and
Haystack's telemetry off, so the suite is a specification of the library alone.
"""

from __future__ import annotations

import dataclasses
import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before Haystack is imported: it reads this once, at import
import tempfile

# The key that seals journaled sources lives outside every run directory: for the tests, in a folder of their own.
os.environ.setdefault("DEEP_RESEARCH_JOURNAL_KEY_FILE", os.path.join(tempfile.mkdtemp(), "journal.key"))
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.utils import Secret
from tests.support import loopback_sources

from haystack_deep_research import (
    Grounding,
    ReadUrlTool,
    ResearchSummary,
    UrlPolicy,
    WebSearchTool,
    create_deep_research_agent,
    create_research_workflow,
)
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
    forbid_network,
)

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))


LIVE_KEYS = ("OPENAI_API_KEY", "TAVILY_API_KEY")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip live tests unless both API keys are set."""
    missing = [key for key in LIVE_KEYS if not os.environ.get(key)]
    for item in items:
        if missing and item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.skip(reason=f"live test: set {' and '.join(missing)} to run it"))


@pytest.fixture(autouse=True)
def _no_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if request.node.get_closest_marker("integration"):
        yield  # a live test talks to the real services on purpose
        return
    for name in ("OPENAI_API_KEY", "TAVILY_API_KEY", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with forbid_network():
        yield


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line reads no config file of the machine's user (``~/.config/deep-research/config.toml``)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    monkeypatch.delenv("DEEP_RESEARCH_CONFIG", raising=False)


@pytest.fixture
def web() -> Iterator[LoopbackWebServer]:
    """A web server with one HTML article and one PDF report."""
    with LoopbackWebServer() as server:
        server.add_page(
            "/solar.html",
            "<html><head><title>Solar capacity 2025</title></head><body><article>"
            "<h1>Solar capacity 2025</h1>"
            "<p>Global solar capacity grew by 450 gigawatts in 2025, a record year for installations worldwide.</p>"
            "<p>China installed more than half of the new capacity, followed by Europe and the United States.</p>"
            "<p>Analysts expect growth to continue as module prices keep falling across all markets.</p>"
            "</article></body></html>",
        )
        server.add_pdf(
            "/storage.pdf",
            ["Battery storage report. Grid battery storage doubled in 2025 to 300 gigawatt hours of capacity."],
            title="Battery storage report",
        )
        yield server


@pytest.fixture
def search(web: LoopbackWebServer) -> Iterator[LoopbackSearchServer]:
    """A Tavily-compatible search server whose corpus points at the web server's pages."""
    documents = [
        SearchDocument(web.url("/solar.html"), "Solar capacity 2025", "Global solar capacity grew in 2025 solar."),
        SearchDocument(web.url("/storage.pdf"), "Battery storage report", "Grid battery storage doubled in 2025."),
    ]
    with LoopbackSearchServer(documents, require_api_key="test-key") as server:
        yield server


@pytest.fixture
def make_search_tool(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch) -> Callable[..., WebSearchTool]:
    """Build the library's WebSearchTool pointed at the loopback search server (serializable: the key is an env var)."""
    monkeypatch.setenv("LOOPBACK_TAVILY_KEY", "test-key")

    def build(**options: Any) -> WebSearchTool:
        key = Secret.from_env_var("LOOPBACK_TAVILY_KEY")
        return WebSearchTool(api_key=key, api_base_url=search.base_url, **options)

    return build


@pytest.fixture
def make_agent(make_search_tool: Callable[..., WebSearchTool]) -> Callable[..., Agent]:
    """Build an agent whose five models are scripted and whose tools run for real against the loopback servers."""

    def build(**overrides: Any) -> Agent:
        options: dict[str, Any] = {
            "scope_llm": ScriptedChatGenerator(role="scope"),
            "orchestrator_llm": ScriptedChatGenerator(
                role="orchestrator", subtopics=["solar capacity", "battery storage"]
            ),
            "researcher_llm": ScriptedChatGenerator(role="researcher"),
            "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
            "writer_llm": ScriptedChatGenerator(role="writer"),
        }
        options.update(overrides)
        options["sources"] = loopback_sources(make_search_tool(max_results=2), overrides.get("sources"))
        return create_deep_research_agent(**options)

    return build


@pytest.fixture
def make_workflow(make_search_tool: Callable[..., WebSearchTool]) -> Callable[..., Pipeline]:
    """Build a research workflow whose models are scripted and whose tools run for real against the loopback servers."""

    def build(**overrides: Any) -> Pipeline:
        read_url = ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=LOOPBACK)
        options: dict[str, Any] = {
            "chat_generator": ScriptedChatGenerator(role="researcher"),
            "tools": [make_search_tool(max_results=2), read_url],
            "output_schema": ResearchSummary,
            "causal_llm": ScriptedChatGenerator(role="causal"),
            "summary_llm": ScriptedChatGenerator(role="summarize"),
        }
        options.update(overrides)
        judge = ScriptedChatGenerator(role="judge")  # the test's own grounding settings, judged by the scripted judge
        given = options.get("grounding") or Grounding()
        options["grounding"] = given if given.judge_llm is not None else dataclasses.replace(given, judge_llm=judge)
        return create_research_workflow(**options)

    return build
