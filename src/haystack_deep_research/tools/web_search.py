"""``web_search`` moved to :mod:`haystack_deep_research.sources`; this module keeps the old import path working."""

from haystack_deep_research.sources.tavily import SearchClient, WebSearchTool

__all__ = ["SearchClient", "WebSearchTool"]
