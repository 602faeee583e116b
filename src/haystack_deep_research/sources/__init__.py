"""
Sources: where the researchers' evidence comes from (see docs/sources.md): the web, through the one ``web_search``
path :class:`SearchTool` over Tavily, the keyless ddgs search or any Haystack search component or Tool; datastores
(:func:`datastore_tools`, :func:`routing_prompt`), a folder among them (:func:`index_folder`); and the tools of MCP
servers (:class:`MCPServer`).
"""

from haystack_deep_research.sources.datastore import datastore_tools, index_folder, routing_prompt
from haystack_deep_research.sources.ddgs import DdgsSearch
from haystack_deep_research.sources.indexing import FolderIndex
from haystack_deep_research.sources.mcp_servers import MCPServer
from haystack_deep_research.sources.search import SearchTool
from haystack_deep_research.sources.tavily import TavilySearch, WebSearchTool

__all__ = [
    "DdgsSearch",
    "FolderIndex",
    "MCPServer",
    "SearchTool",
    "TavilySearch",
    "WebSearchTool",
    "datastore_tools",
    "index_folder",
    "routing_prompt",
]
