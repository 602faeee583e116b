"""
A round of searches: every planned topic is searched side by side (at most ``max_parallel_searches`` at once) with the
query alone, its top results read, its datastores and MCP query tools asked, and its findings made one note (see
docs/iterative.md). A failing search or an unreadable page is part of the finding (and a warning), never the end of
the run.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    MAX_URLS_PER_READ,
    NOTE,
    TOPIC_NO_RESULTS,
    TOPIC_NOTHING_READ,
    TOPIC_SEARCH_FAILED,
    render_text,
)
from haystack_deep_research._serialization import init_parameters, restore_parameters
from haystack_deep_research.errors import ConfigurationError, DeepResearchError, SearchShapeError, UsageError
from haystack_deep_research.events import Notice, SearchRoundDone
from haystack_deep_research.iterative.iteration import IterationRun, IterationStep
from haystack_deep_research.run import ResearchRun, RunView
from haystack_deep_research.run._journal import JournaledNote
from haystack_deep_research.run._lifecycle import journal_note
from haystack_deep_research.run._phases import Phase, subphase
from haystack_deep_research.sources import SearchTool
from haystack_deep_research.sources.datastore import DatastoreSearchTool
from haystack_deep_research.sources.mcp_servers import MCPServer, mcp_servers_from, mcp_toolsets
from haystack_deep_research.state import PHASE_SEARCH
from haystack_deep_research.tools import ReadUrlTool

__all__ = ["SearchStep"]


def _query_argument(tool: Any) -> Any:
    """The name of a tool's one required text argument, or ``None`` when it has not exactly one."""
    schema = getattr(tool, "parameters", None) or {}
    required = list(schema.get("required") or [])
    properties = schema.get("properties") or {}
    if len(required) != 1 or (properties.get(required[0]) or {}).get("type") != "string":
        return None
    return required[0]


@component
class SearchStep(IterationStep):
    """
    One round of searches: each planned topic is searched with ``search`` (``None``: the datastores and MCP servers
    only) and its top ``read_top_k`` (1 to 5) results read with ``read_url``, in ``datastores`` and in the query tools
    (one required text argument) of ``mcp_servers``; at most ``max_parallel_searches`` topics (1 to 10) at once.
    """

    def __init__(
        self,
        *,
        search: SearchTool | None,
        read_url: ReadUrlTool | None,
        datastores: list[DatastoreSearchTool] | None = None,
        mcp_servers: list[Any] | None = None,
        read_top_k: int = 3,
        max_parallel_searches: int = 10,
        depth: int = 3,
    ) -> None:
        if search is not None and not isinstance(search, SearchTool):
            raise ConfigurationError(f"search must be a SearchTool (see resolve_search); got {type(search).__name__}.")
        if search is not None and not isinstance(read_url, ReadUrlTool):
            raise ConfigurationError("read_url must be a ReadUrlTool when the web is searched.")
        stores = list(datastores or [])
        if not all(isinstance(store, DatastoreSearchTool) for store in stores):
            raise ConfigurationError("datastores must be DatastoreSearchTools (see datastore_tools).")
        servers = mcp_servers_from(mcp_servers)
        if search is None and not stores and not servers:
            raise ConfigurationError("there is nothing to search: give a web search, a datastore or an MCP server.")
        self.mcp_servers = servers
        self.search = search
        self.read_url = read_url
        self.datastores = stores
        self.read_top_k = _checks.int_in_range("read_top_k", read_top_k, 1, MAX_URLS_PER_READ)
        self.max_parallel_searches = _checks.int_in_range("max_parallel_searches", max_parallel_searches, 1, 10)
        self.depth = _checks.int_in_range("depth", depth, 1, 50)

    def _used_models(self) -> list[Any]:
        return [tool for tool in (self.search, self.read_url, *self.datastores) if tool is not None]

    @property
    def max_concurrency(self) -> int:  # type: ignore[override]
        return self.max_parallel_searches

    def phase(self, iteration: IterationRun) -> Phase[IterationRun]:
        """The round: its topics (``planned``) searched side by side, their findings added."""
        run, planned = iteration.run, iteration.planned
        run.plan(planned)
        searched = yield [subphase(lambda topic=topic: self.research_topic(run, topic)) for topic in planned]  # type: ignore[misc]
        mistake = next((done.error for done in searched if isinstance(done.error, UsageError)), None)
        if mistake is not None:
            raise mistake  # a usage mistake (the caller's search answers what no round can read) reaches the caller
        topics = (*iteration.topics, *planned)
        if iteration.recheck:
            run.events.emit(Notice(phase=PHASE_SEARCH, text=f"checked {len(planned)} stale topic(s) again"))
            return iteration.but(topics=topics, planned=(), recheck=())
        rounds = iteration.rounds + 1
        run.events.emit(SearchRoundDone(phase=PHASE_SEARCH, round=rounds, depth=self.depth, topics=planned))
        return iteration.but(topics=topics, planned=(), rounds=rounds)

    def research_topic(self, run: ResearchRun, topic: str) -> Phase[None]:
        """Search, read and query one topic; its finding joins the run's notes and its journal."""
        view = run.researcher(topic)
        if self.read_url is not None:
            run.ledger.adopt_policy(self.read_url.url_policy)  # the policy every URL entering the ledger passes
        parts: list[str] = []
        if self.search is not None and self.read_url is not None:
            try:
                hits = yield from self.search.search_hits(view, topic)
                urls = [hit.url for hit in hits][: self.read_top_k]
                if urls:
                    parts.append((yield from self.read_url.phase(view, urls=urls, question=topic)))
                    if not any(url in run.ledger.citable_urls() for url in urls):  # no page read, no snippet
                        parts.append(TOPIC_NOTHING_READ)
                else:
                    parts.append(TOPIC_NO_RESULTS)
            except SearchShapeError:
                raise  # the caller's search answers what no round could read: a usage mistake, not a finding
            except DeepResearchError as error:
                view.warn(PHASE_SEARCH, f"searching '{topic}' failed ({error})")
                parts.append(render_text(TOPIC_SEARCH_FAILED, error=str(error)))
        for store in self.datastores:
            try:
                parts.append((yield from store.phase(view, query=topic)))
            except Exception as error:  # a retriever's failure is part of the finding, never the end of the run
                view.warn(PHASE_SEARCH, f"searching {store.name} for '{topic}' failed ({type(error).__name__})")
                parts.append(render_text(TOPIC_SEARCH_FAILED, error=f"{store.name}: {type(error).__name__}: {error}"))
        for tool in self._query_tools(view):
            try:
                parts.append((yield from tool.phase(view, **{_query_argument(tool): topic})))
            except DeepResearchError as error:  # a server's failure is part of the finding, never the end of the run
                view.warn(PHASE_SEARCH, f"asking {tool.name} about '{topic}' failed ({error})")
                parts.append(render_text(TOPIC_SEARCH_FAILED, error=f"{tool.name}: {error}"))
        summary = "\n\n".join(part for part in parts if part)
        note = render_text(NOTE, subtopic=topic, summary=summary, partial=False, reason=None)
        run.add_notes([note], position=run.position(topic))
        yield from journal_note(run.view(PHASE_SEARCH), topic, JournaledNote(topic, note, summary, False))

    def _query_tools(self, view: RunView) -> list[Any]:
        """The MCP tools a topic is asked of: those taking one required text argument (a query)."""
        if not self.mcp_servers:
            return []
        tools = [tool for toolset in mcp_toolsets(self.mcp_servers) for tool in toolset.bind(view)]
        return [tool for tool in tools if _query_argument(tool) is not None]

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized step, with its tools."""
        return default_to_dict(self, **init_parameters(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchStep:
        """:returns: The step, its tools and MCP servers restored."""
        params = restore_parameters(cls, data["init_parameters"])
        params["mcp_servers"] = [MCPServer.from_dict(server) for server in params.get("mcp_servers") or []]
        return default_from_dict(cls, {**data, "init_parameters": params})
