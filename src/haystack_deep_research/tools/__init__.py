"""
The tools of the library: ``web_search`` (Tavily), ``read_url`` (guarded fetch, extraction, summary) and
``think_tool``, on the :class:`ResearchTool` base that works inside a run, and the :class:`RunToolset` that gives each
run its own copies.
"""

from haystack_deep_research.tools.base import ResearchTool, RunToolset, bind_tools
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.think import create_think_tool
from haystack_deep_research.tools.web_search import SearchClient, WebSearchTool

__all__ = [
    "ReadUrlTool",
    "ResearchTool",
    "RunToolset",
    "SearchClient",
    "WebSearchTool",
    "bind_tools",
    "create_think_tool",
]
