"""
``web_search``: the one path every web search takes, whatever engine answers it. :class:`SearchTool` asks a search
backend (any object with ``search(query, *, max_results)``, optionally an awaitable ``search_async``, and
``to_dict``), reads the answer as hits (:class:`SearchHit`, :func:`normalize_hits`), keeps a :class:`SearchScope`'s
domains and dates whatever the engine did, looks a search up in the cross-run cache first, records every hit in the
ledger and every search in the search log, and fences the hits as untrusted. See docs/sources.md and docs/caching.md.

:func:`normalize_hits` reads the shapes listed in docs/sources.md and refuses any other with
:class:`~haystack_deep_research.errors.SearchShapeError`. A result without an ``http(s)`` URL is dropped, a URL is
kept as the engine gave it, and duplicates keep their first occurrence. Text results are blocks (a new one at a list
marker or after a blank line); a block holding several labelled URLs is split before each, the line above a URL line
being its title; when a text has labelled URLs, only those count. Hand-written on purpose: no library reads
free-form result listings, and the rules are few.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

from haystack import Document
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
from haystack_deep_research.evidence.text import clean_text, plain_title
from haystack_deep_research.run import RunView
from haystack_deep_research.run._cache import CacheStore, cache_from_dict, cache_to_dict, check_cache, search_key
from haystack_deep_research.run._phases import Call, Phase, blocking
from haystack_deep_research.state import PHASE_RESEARCH
from haystack_deep_research.web.url_policy import SearchScope

__all__ = [
    "SearchBackend",
    "SearchHit",
    "SearchScope",
    "SearchTool",
    "backend_from_dict",
    "backend_to_dict",
    "normalize_hits",
]


def _takes_scope(backend: Any) -> bool:
    try:
        return "scope" in inspect.signature(backend.search).parameters
    except (TypeError, ValueError):
        return False


@runtime_checkable
class SearchBackend(Protocol):
    """What :class:`SearchTool` needs from a search engine."""

    def search(self, query: str, *, max_results: int) -> Any:
        """:returns: The engine's answer, in a shape :func:`normalize_hits` reads."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized backend."""
        ...


def backend_to_dict(backend: Any) -> dict[str, Any]:
    """A backend's ``to_dict``, with ``"type"`` its qualified class name unless it gave one."""
    data = backend.to_dict()
    data.setdefault("type", generate_qualified_class_name(type(backend)))
    return dict(data)


def backend_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a backend from what :func:`backend_to_dict` returned, with its class's ``from_dict``."""
    kind = import_class_by_name(data["type"])
    from_dict = getattr(kind, "from_dict", None)
    return from_dict(data) if callable(from_dict) else default_from_dict(kind, data)


class SearchTool(ResearchTool):
    """
    Search the web through a backend and return title, exact URL and snippet of each result, fenced as untrusted.

    :param backend: The search engine (see the module docstring).
    :param max_results: Results per search, 1 to 20; extra results the engine gives are dropped.
    :param notice: Said once per run, as a warning, the first time the tool searches (for example which engine a
        default picked); ``""`` for none.
    :param cache: A cross-run cache of search results (for example ``ResearchCache(directory=...)``), or ``None``.
    :param scope: The domains and recency window searches keep to (:class:`SearchScope`), or ``None`` for none.
    :raises ConfigurationError: If a parameter is invalid.
    """

    _model_attributes = ("backend",)

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
        if not callable(getattr(backend, "search", None)):
            raise ConfigurationError(
                "backend must have a search(query, *, max_results) method (for example DdgsSearch() or "
                f"TavilySearch()); {type(backend).__name__} has none. Wrap a Haystack component or Tool with "
                "search_backend(...)."
            )
        self.backend = backend
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
        """Search, record the results in the run's ledger and search log, and render them fenced."""
        if not isinstance(query, str) or not query.strip():
            raise ToolArgumentsError(render_text(QUERY_MISSING, got=repr(query)))
        hits, dropped = yield from self._scoped_hits(view, query)
        fenced = [{key: fence(value) for key, value in hit.to_dict().items()} for hit in hits]
        return render_text(SEARCH_RESULTS, query=fence(query.strip()), results=fenced, dropped=dropped)

    def engine(self) -> str:
        """:returns: What names the engine in cache keys: the backend's class (what it wraps, for a Haystack component
        or Tool), and its address when it has one."""
        base = getattr(self.backend, "api_base_url", None)
        name = (
            getattr(self.backend, "cache_name", None)
            or f"{type(self.backend).__module__}.{type(self.backend).__qualname__}"
        )
        return f"{name}@{base}" if isinstance(base, str) and base else name

    def _scope(self, hits: list[SearchHit]) -> tuple[list[SearchHit], int]:
        kept = [hit for hit in hits if self.scope.keeps(hit.url, hit.published)] if self.scope else hits
        return kept[: self.max_results], len(hits) - len(kept)

    def search_hits(self, view: RunView | None, query: str) -> Phase[list[SearchHit]]:
        """
        Search (or take the cached search) and record the hits in the run's ledger and search log; the phase returns
        at most ``max_results`` hits inside the scope, in the engine's order. An unreadable first answer of the run is a
        :class:`SearchShapeError` (no later search could be read either), one after readable answers a ``SearchError``.
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
        cache = {} if self.cache is None else {"cache": cache_to_dict(self.cache)}
        return self._serialized({**data, **cache, **({"scope": self.scope.to_dict()} if self.scope else {})})

    def _backend_parameters(self) -> dict[str, Any]:
        return {"backend": backend_to_dict(self.backend)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Rebuild the tool from what ``to_dict`` returned."""
        params = dict(data["data"])
        if "backend" in params:
            params["backend"] = backend_from_dict(params["backend"])
        params["cache"] = cache_from_dict(params.get("cache"))
        params["scope"] = SearchScope.from_dict(params.get("scope"))
        return cls(**params)


_URL_KEYS = ("url", "href", "link", "source_url")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "content", "body", "description")
_DATE_KEYS = ("published_date", "published", "date", "publication_date")


@dataclass(frozen=True)
class SearchHit:
    """
    One search result.

    :param title: The result's title as plain text, the one the ledger keeps ("" when the engine gave none): links,
        images and HTML in an engine's title are dropped, so a title cannot hand a researcher a URL to read.
    :param url: The exact URL, as the engine gave it.
    :param snippet: The engine's snippet ("" when it gave none).
    :param published: When the engine says the result was published, as it said it ("" when it did not); a search
        with a recency window drops a result whose date falls before it.
    """

    title: str
    url: str
    snippet: str = ""
    published: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.title, str):
            object.__setattr__(self, "title", plain_title(self.title))

    def to_dict(self) -> dict[str, str]:
        """:returns: ``{"title", "url", "snippet"}``, and ``"published"`` when known."""
        data = {"title": self.title, "url": self.url, "snippet": self.snippet}
        return {**data, "published": self.published} if self.published else data


def _text(value: Any) -> str:
    return clean_text(" ".join(str(value).split())) if value is not None else ""


def _first(data: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    return next((data[key] for key in keys if isinstance(data.get(key), str) and data[key].strip()), "")


def _hit(item: Any) -> SearchHit | None:
    if isinstance(item, SearchHit):
        return item
    if isinstance(item, str):
        return SearchHit(title="", url=clean_text(item.strip()))
    if isinstance(item, Document | Mapping):
        data = (item.meta or {}) if isinstance(item, Document) else item
        snippet = item.content if isinstance(item, Document) else _first(item, _SNIPPET_KEYS)
        return SearchHit(
            title=_text(_first(data, _TITLE_KEYS)),
            url=clean_text(_first(data, _URL_KEYS).strip()),
            snippet=_text(snippet),
            published=_text(_first(data, _DATE_KEYS)),
        )
    return None


def _from_text(text: str) -> Iterable[Any]:
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return _items(json.loads(stripped))
        except ValueError:
            pass  # not JSON after all: read as rendered text
    return [
        SearchHit(title=_text(title), url=url, snippet=_text(snippet)) for title, url, snippet in text_results(text)
    ]


def _items(raw: Any) -> Iterable[Any]:
    if isinstance(raw, str):
        return _from_text(raw)
    if isinstance(raw, Mapping):
        if isinstance(raw.get("results"), list):
            return raw["results"]
        if "documents" in raw or "links" in raw:
            documents = list(raw.get("documents") or [])
            known = {hit.url for hit in map(_hit, documents) if hit is not None}
            links = [link for link in raw.get("links") or [] if isinstance(link, str) and link.strip() not in known]
            return [*documents, *links]
        raise SearchShapeError(
            f"a mapping without 'results', 'documents' or 'links' (its keys are {sorted(map(str, raw))[:8]})"
        )
    if isinstance(raw, list | tuple):
        unread = [item for item in raw if not isinstance(item, SearchHit | str | Document | Mapping)]
        if unread:
            raise SearchShapeError(f"a list holding {type(unread[0]).__name__}")
        return raw
    raise SearchShapeError(type(raw).__name__)


def normalize_hits(raw: Any, *, limit: int) -> list[SearchHit]:
    """
    At most ``limit`` hits with an ``http(s)`` URL from what a search engine answered (see the module docstring for
    the shapes), duplicates removed, in the engine's order.

    :raises SearchShapeError: If the answer has none of the accepted shapes.
    """
    hits: dict[str, SearchHit] = {}
    for item in _items(raw):
        hit = _hit(item)
        if hit is None or not hit.url.lower().startswith(("http://", "https://")) or hit.url in hits:
            continue
        hits[hit.url] = hit
        if len(hits) >= limit:
            break
    return list(hits.values())


_MARKER = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)]|\[\d{1,3}\]|#{1,6})\s+")
_LABELLED = re.compile(r"^\s*(?:url|source|link|href)\s*:\s*<?(https?://\S+?)>?\s*$", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?(https?://[^\s)>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_BARE = re.compile(r"https?://[^\s<>\"'()\[\]]+")
_LABEL = re.compile(r"^\s*(?:title|name|snippet|content|body|description|summary)\s*:\s*", re.IGNORECASE)
_TITLE_LABEL = re.compile(r"^\s*(?:title|name)\s*:", re.IGNORECASE)
_TRAILING = ".,;:!?"


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip():
            blocks.append([])
        elif _MARKER.match(line) and blocks[-1]:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return [block for block in blocks if block]


def _split_labelled(block: list[str]) -> list[list[str]]:
    """Split a block holding several labelled URLs before each (taking the title line above it along)."""
    urls = [i for i, line in enumerate(block) if _LABELLED.match(line)]
    if len(urls) < 2:
        return [block]
    starts = [0]
    for index in urls[1:]:
        start = index - 1 if index - 1 > starts[-1] and not _LABELLED.match(block[index - 1]) else index
        if start > 1 and _TITLE_LABEL.match(block[start - 1]):
            start -= 1  # "Title:" above a "Content:" or similar line
        starts.append(start)
    return [block[a:b] for a, b in zip(starts, [*starts[1:], len(block)], strict=True)]


def _clean(line: str) -> str:
    return _LABEL.sub("", _MARKER.sub("", line)).strip()


def _labelled(block: list[str]) -> tuple[str, str, str] | None:
    at = next((i for i, line in enumerate(block) if _LABELLED.match(line)), None)
    if at is None:
        return None
    url = _LABELLED.match(block[at]).group(1)  # type: ignore[union-attr]
    rest = [i for i in range(len(block)) if i != at]
    titled = [i for i in rest if _TITLE_LABEL.match(block[i])]
    title = titled[0] if titled else (rest[0] if rest and rest[0] < at else None)
    snippet = [_clean(block[i]) for i in rest if i != title and not _LABELLED.match(block[i])]
    return (_clean(block[title]) if title is not None else ""), url, " ".join(part for part in snippet if part)


def _linked(line: str, rest: list[str]) -> tuple[str, str, str] | None:
    line = _MARKER.sub("", line)
    link = _LINK.search(line)
    if link:
        title, url = link.group(1).strip(), link.group(2)
        around = (line[: link.start()] + " " + line[link.end() :]).strip(" -:\u2013\u2014|")
        snippet = " ".join(part for part in [_clean(around), *map(_clean, rest)] if part)
        return title, url, snippet
    bare = _BARE.search(line)
    if bare is None:
        return None
    url = bare.group(0).rstrip(_TRAILING)
    title = _clean((line[: bare.start()] + line[bare.end() :]).strip(" -:\u2013\u2014|<>"))
    return title, url, " ".join(part for part in map(_clean, rest) if part)


def _unlabelled(block: list[str]) -> list[tuple[str, str, str]]:
    """Each line holding a link or URL starts a result; the lines after it, up to the next, are its snippet."""
    found: list[tuple[str, str, str]] = []
    heads = [i for i, line in enumerate(block) if _LINK.search(line) or _BARE.search(line)]
    for position, index in enumerate(heads):
        end = heads[position + 1] if position + 1 < len(heads) else len(block)
        title_above = _clean(block[index - 1]) if position == 0 and index == 1 else ""
        hit = _linked(block[index], block[index + 1 : end])
        if hit is not None:
            title, url, snippet = hit
            if title_above and not title:
                title = title_above
            elif title_above:
                snippet = f"{title_above} {snippet}".strip()
            found.append((title or "", url, snippet))
    return found


def text_results(text: str) -> list[tuple[str, str, str]]:
    """
    ``(title, url, snippet)`` per search result rendered as text (see the module docstring), in order; ``[]``
    when the text holds no URL.
    """
    blocks = _blocks(text)
    if any(_LABELLED.match(line) for block in blocks for line in block):
        labelled = [_labelled(part) for block in blocks for part in _split_labelled(block)]
        return [hit for hit in labelled if hit is not None]
    return [hit for block in blocks for hit in _unlabelled(block)]
