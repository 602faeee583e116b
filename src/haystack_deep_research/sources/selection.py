"""
Choosing the web search: by name (``"tavily"``, ``"ddgs"``, ``"auto"``: Tavily with ``TAVILY_API_KEY``, else the
keyless ddgs, said once per run as a warning), or any backend, Haystack component or Tool.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from haystack.tools import Tool

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.sources.ddgs import DdgsSearch
from haystack_deep_research.sources.plugins import search_backend
from haystack_deep_research.sources.search import SearchTool
from haystack_deep_research.sources.tavily import WebSearchTool
from haystack_deep_research.web.url_policy import SearchScope

__all__ = ["KEYLESS_NOTICE", "SEARCH_NAMES", "default_search_name", "resolve_search"]

SEARCH_NAMES = ("auto", "tavily", "ddgs")
"""The search engines known by name."""

KEYLESS_NOTICE = (
    "TAVILY_API_KEY is not set, so the web is searched with the keyless ddgs metasearch "
    "(set TAVILY_API_KEY, or pass search='tavily', for Tavily)"
)
"""What a run says once when ``"auto"`` picked the keyless search."""


def default_search_name(environ: Mapping[str, str] | None = None) -> str:
    """
    :param environ: The environment to look in; ``os.environ`` by default.
    :returns: ``"tavily"`` when ``TAVILY_API_KEY`` is set (not blank), else ``"ddgs"``.
    """
    env = os.environ if environ is None else environ
    return "tavily" if env.get("TAVILY_API_KEY", "").strip() else "ddgs"


def resolve_search(
    search: Any = "auto",
    *,
    max_results: int = 10,
    environ: Mapping[str, str] | None = None,
    scope: SearchScope | None = None,
) -> SearchTool:
    """
    The researchers' ``web_search`` tool for a choice of search.

    :param search: ``"auto"`` (Tavily with ``TAVILY_API_KEY``, else keyless ddgs), ``"tavily"``, ``"ddgs"``, a
        :class:`SearchTool` (used as it is), a search backend, a Haystack component with a ``query`` input, or a
        Haystack Tool with a ``query`` parameter.
    :param max_results: Results per search, 1 to 20.
    :param environ: The environment ``"auto"`` looks in; ``os.environ`` by default.
    :param scope: The domains and recency window every search keeps to; a :class:`SearchTool` given is copied with
        it (the caller's tool keeps its own).
    :returns: The tool; every choice goes through the same :class:`SearchTool` path.
    :raises ConfigurationError: If ``search`` is none of these.
    """
    if isinstance(search, SearchTool):
        if not scope:
            return search
        scoped = search.spawn()  # a copy, as for a cache: the caller's tool keeps its own scope
        scoped.scope = scope
        return scoped
    if isinstance(search, str):
        name = search.strip().lower()
        if name not in SEARCH_NAMES:
            raise ConfigurationError(f"search must be one of {', '.join(SEARCH_NAMES)}; got {search!r}.")
        notice = ""
        if name == "auto":
            name = default_search_name(environ)
            notice = KEYLESS_NOTICE if name == "ddgs" else ""
        if name == "tavily":
            return WebSearchTool(max_results=max_results, scope=scope)
        return SearchTool(backend=DdgsSearch(), max_results=max_results, notice=notice, scope=scope)
    if isinstance(search, Tool) or search is not None:
        return SearchTool(backend=search_backend(search), max_results=max_results, scope=scope)
    raise ConfigurationError("search must not be None; pass 'auto' for the default.")
