"""
``web_search``: the one path every web search takes, whatever engine answers it. :class:`SearchTool` asks a search
backend (any object with ``search(query, *, max_results)``, optionally an awaitable ``search_async``, and
``to_dict``), normalizes the answer into hits (:mod:`.hits`), keeps a :class:`SearchScope`'s domains and dates
whatever the engine did, looks a search up in the cross-run cache first, records every hit in the ledger and every
search in the search log, and fences the hits as untrusted. See docs/sources.md and docs/caching.md.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, Self, runtime_checkable

from haystack.core.serialization import default_from_dict, generate_qualified_class_name, import_class_by_name

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    QUERY_MISSING,
    QUERY_PARAMETER,
    SCOPE_DROPPED,
    SEARCH_RESULTS,
    WEB_SEARCH,
    WEB_SEARCH_DESCRIPTION,
    fence,
    render_text,
)
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import (
    ConfigurationError,
    DeepResearchError,
    SearchError,
    SearchShapeError,
    ToolArgumentsError,
    URLRefusedError,
)
from haystack_deep_research.events import SearchDone
from haystack_deep_research.evidence.searches import SearchOutcome
from haystack_deep_research.run import RunView
from haystack_deep_research.run._cache import CacheStore, cache_from_dict, cache_to_dict, check_cache, search_key
from haystack_deep_research.run._phases import Call, Phase, blocking
from haystack_deep_research.sources.hits import SearchHit, normalize_hits
from haystack_deep_research.state import PHASE_RESEARCH
from haystack_deep_research.web.url_policy import SearchScope

__all__ = ["SearchBackend", "SearchScope", "SearchTool", "backend_from_dict", "backend_to_dict"]


def _takes_scope(backend: Any) -> bool:
    try:
        return "scope" in inspect.signature(backend.search).parameters
    except (TypeError, ValueError):
        return False


@runtime_checkable
class SearchBackend(Protocol):
    """What :class:`SearchTool` needs from a search engine."""

    def search(self, query: str, *, max_results: int) -> Any:
        """
        :param query: The query.
        :param max_results: The most results wanted.
        :returns: The engine's answer, in a shape :func:`~haystack_deep_research.sources.hits.normalize_hits` accepts.
        """
        ...

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized backend."""
        ...


def backend_to_dict(backend: Any) -> dict[str, Any]:
    """
    :param backend: A search backend.
    :returns: Its serialized form: ``{"type": <qualified class name>, ...}`` as its ``to_dict`` returns.
    """
    data = backend.to_dict()
    data.setdefault("type", generate_qualified_class_name(type(backend)))
    return dict(data)


def backend_from_dict(data: dict[str, Any]) -> Any:
    """
    :param data: What :func:`backend_to_dict` returned.
    :returns: The backend, rebuilt by its class's ``from_dict``.
    """
    kind = import_class_by_name(data["type"])
    from_dict = getattr(kind, "from_dict", None)
    return from_dict(data) if callable(from_dict) else default_from_dict(kind, data)


def _check_backend(backend: Any) -> Any:
    if not callable(getattr(backend, "search", None)):
        raise ConfigurationError(
            "backend must have a search(query, *, max_results) method (for example DdgsSearch() or TavilySearch()); "
            f"{type(backend).__name__} has none. Wrap a Haystack component or Tool with search_backend(...)."
        )
    return backend


class SearchTool(ResearchTool):
    """
    Search the web through a backend and return title, exact URL and snippet of each result, fenced as untrusted.

    Every result is recorded in the run's evidence ledger (as a search result: it still has to be read to be
    cited), and every search in the run's search log. A backend failure is a tool error the model can react to.

    :param backend: The search engine (see the module docstring).
    :param max_results: Results per search, 1 to 20; extra results the engine gives are dropped.
    :param notice: Said once per run, as a warning, the first time the tool searches (for example which engine a
        default picked); ``""`` for none.
    :param cache: A cross-run cache of search results (for example ``ResearchCache(directory=...)``), or ``None``.
    :param scope: The domains and recency window searches keep to (:class:`SearchScope`), or ``None`` for none.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        backend: Any,
        max_results: int = 10,
        notice: str = "",
        cache: CacheStore | None = None,
        scope: SearchScope | None = None,
    ) -> None:
        if not isinstance(notice, str):
            raise ConfigurationError(f"notice must be a string; got {type(notice).__name__}.")
        if scope is not None and not isinstance(scope, SearchScope):
            raise ConfigurationError(f"scope must be a SearchScope or None; got {type(scope).__name__}.")
        self.backend = _check_backend(backend)
        self.max_results = _checks.int_in_range("max_results", max_results, 1, 20)
        self.notice = notice
        self.cache = check_cache(cache)
        self.scope = scope or SearchScope()
        super().__init__(
            name=WEB_SEARCH,
            description=render_text(WEB_SEARCH_DESCRIPTION, max_results=self.max_results),
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": QUERY_PARAMETER}},
                "required": ["query"],
            },
        )

    def _used_models(self) -> list[Any]:
        return [self.backend]

    def _call(self, query: str) -> Call:
        backend, limit = self.backend, self.max_results
        options: dict[str, Any] = {"scope": self.scope} if self.scope and _takes_scope(backend) else {}
        if callable(getattr(backend, "search_async", None)):
            return Call(
                lambda: backend.search(query, max_results=limit, **options),
                lambda: backend.search_async(query, max_results=limit, **options),
            )
        return blocking(backend.search, query, max_results=limit, **options)

    def phase(self, view: RunView | None, query: Any = None, **_: Any) -> Phase[str]:
        """
        Search, record the results in the run's ledger and search log, and render them fenced.

        :param view: The researcher's view of the run, or ``None``.
        :param query: The model's query.
        :returns: The phase; it returns the rendered results.
        :raises ToolArgumentsError: (from the phase) If the query is missing or blank.
        :raises SearchError: (from the phase) If the engine failed or answered something that is not a result list.
        """
        if not isinstance(query, str) or not query.strip():
            raise ToolArgumentsError(render_text(QUERY_MISSING, got=repr(query)))
        hits, dropped = yield from self._scoped_hits(view, query)
        fenced = [{key: fence(value) for key, value in hit.to_dict().items()} for hit in hits]
        return render_text(SEARCH_RESULTS, query=fence(query.strip()), results=fenced, dropped=dropped)

    def engine(self) -> str:
        """:returns: What names the engine in cache keys: the backend's class, and its address when it has one."""
        base = getattr(self.backend, "api_base_url", None)
        name = f"{type(self.backend).__module__}.{type(self.backend).__qualname__}"
        return f"{name}@{base}" if isinstance(base, str) and base else name

    def _scope(self, hits: list[SearchHit]) -> tuple[list[SearchHit], int]:
        kept = [hit for hit in hits if self.scope.keeps(hit.url, hit.published)] if self.scope else hits
        return kept[: self.max_results], len(hits) - len(kept)

    def search_hits(self, view: RunView | None, query: str) -> Phase[list[SearchHit]]:
        """
        Search (or take the cached search) and record the hits in the run's ledger and search log.

        :param view: The view of the run the search belongs to, or ``None``.
        :param query: The query, not blank.
        :returns: The phase; it returns the hits, at most ``max_results``, in the engine's order, inside the scope.
        :raises SearchError: (from the phase) If the engine failed, or answered an unreadable shape after readable ones.
        :raises SearchShapeError: (from the phase) If the engine's first answer in the run has a shape the library
            cannot read: it reaches the caller, since no later search of the run could be read either.
        """
        hits, _ = yield from self._scoped_hits(view, query)
        return hits

    def _scoped_hits(self, view: RunView | None, query: str) -> Phase[tuple[list[SearchHit], int]]:
        text = query.strip()
        if view is not None and self.notice and view.searches.first(f"{self.name}:{self.notice}"):
            view.warn(PHASE_RESEARCH, self.notice)
        key = search_key(self.engine() + self.scope.key(), text, self.max_results)
        if self.cache is not None:
            [cached] = yield [blocking(self.cache.get, "search", key)]
            if cached.error is not None:
                raise cached.error
            if isinstance(cached.value, dict):
                hits, dropped = self._scope([SearchHit(**hit) for hit in cached.value.get("hits") or []])
                if view is not None:
                    hits = self._record(view, text, hits, dropped, cached=True)
                return hits, dropped
        [searched] = yield [self._call(text)]
        try:
            if searched.error is not None:
                raise searched.error
            # With a scope, read past max_results: what the scope drops leaves room for what it keeps.
            hits, dropped = self._scope(normalize_hits(searched.value, limit=100 if self.scope else self.max_results))
        except Exception as error:
            failure = error if isinstance(error, DeepResearchError) else SearchError(f"{type(error).__name__}: {error}")
            if isinstance(failure, SearchShapeError) and self._answered(view):
                failure = SearchError(str(failure))  # one odd answer after readable ones: the model may go on
            if view is not None:
                view.searches.record(SearchOutcome(tool=self.name, query=text, error=str(failure)))
            raise failure from error
        if self.cache is not None:
            yield [blocking(self.cache.put, "search", key, {"hits": [hit.to_dict() for hit in hits]})]
        if view is not None:
            hits = self._record(view, text, hits, dropped)
        return hits, dropped

    def _answered(self, view: RunView | None) -> bool:
        """Whether this tool gave a readable answer earlier in the run (a shape error is then no usage mistake)."""
        outcomes = view.searches.outcomes() if view is not None else []
        return any(outcome.tool == self.name and not outcome.error for outcome in outcomes)

    def _record(
        self, view: RunView, query: str, hits: list[SearchHit], dropped: int, *, cached: bool = False
    ) -> list[SearchHit]:
        """Record the hits the run's URL policy admits; a refused one is dropped, with a warning."""
        kept = []
        for hit in hits:
            try:
                view.ledger.record_search_result(url=hit.url, title=hit.title, snippet=hit.snippet)
            except URLRefusedError as refused:
                view.warn(PHASE_RESEARCH, f"{self.name}: dropped a result the URL policy refuses: {refused}", once=True)
                continue
            kept.append(hit)
        view.searches.record(SearchOutcome(tool=self.name, query=query, results=len(kept), dropped=dropped))
        if dropped and view.searches.first(f"{self.name}:scope"):
            view.warn(PHASE_RESEARCH, render_text(SCOPE_DROPPED, dropped=dropped))
        view.emit(SearchDone(phase=PHASE_RESEARCH, query=query, results=len(kept), cached=cached))
        return kept

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized tool, its backend nested."""
        data = {**self._backend_parameters(), "max_results": self.max_results, "notice": self.notice}
        return self._serialized({**data, **self.cache_parameters()})

    def _backend_parameters(self) -> dict[str, Any]:
        return {"backend": backend_to_dict(self.backend)}

    def cache_parameters(self) -> dict[str, Any]:
        """:returns: ``{"cache": <serialized cache>}`` when the tool has one, and ``{"scope": ...}`` when it has a
        scope; else ``{}``."""
        cache = {} if self.cache is None else {"cache": cache_to_dict(self.cache)}
        return {**cache, "scope": self.scope.to_dict()} if self.scope else cache

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """
        :param data: What ``to_dict`` returned.
        :returns: The tool.
        """
        params = dict(data["data"])
        if "backend" in params:
            params["backend"] = backend_from_dict(params["backend"])
        params["cache"] = cache_from_dict(params.get("cache"))
        params["scope"] = SearchScope.from_dict(params.get("scope"))
        return cls(**params)
