"""
The tools of the library: ``read_url`` (guarded fetch, extraction, summary) and ``think_tool``, on the
:class:`ResearchTool` base that works inside a run, and the :class:`RunToolset` that gives each run its own copies.
The search tools (``web_search``, ``search_<store>``) live in :mod:`haystack_deep_research.sources`;
``WebSearchTool`` and ``SearchClient`` are still importable from here.
"""

from typing import Any

from haystack_deep_research.tools.base import ResearchTool, RunToolset
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.think import create_think_tool

__all__ = ["ReadUrlTool", "ResearchTool", "RunToolset", "SearchClient", "WebSearchTool", "create_think_tool"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the sources layer builds on this package's base, so importing it here eagerly would
    # make an import cycle.
    if name in ("SearchClient", "WebSearchTool"):
        from haystack_deep_research.sources import tavily

        return getattr(tavily, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
