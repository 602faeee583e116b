"""
Sources: where the researchers' evidence comes from.

- Web search: :class:`SearchTool` is the one ``web_search`` path (normalize, limit, record in the ledger, fence),
  over a backend: :class:`TavilySearch` (``WebSearchTool`` is the Tavily tool), the keyless :class:`DdgsSearch`, or
  any Haystack web-search component or Tool (:func:`.plugins.search_backend`); :func:`.selection.resolve_search`
  picks one by name (``"auto"``: Tavily with ``TAVILY_API_KEY``, else ddgs).
- Datastores: your own documents behind any Haystack retriever. :func:`datastore_tools` builds one ``search_<name>``
  tool per store and :func:`routing_prompt` the routing block of a system prompt; both work for any agent shape.
- MCP servers: the tools of any MCP server (:class:`MCPServer`, a stdio command or a streamable-HTTP URL), one
  ``<server>_<tool>`` tool each in an :class:`.mcp_tool.MCPToolset`, connected once per run; their results are read
  like documents and cited as ``mcp://<server>/<tool>/<id>`` (or the URL a result gives).
- Folders: :func:`index_folder` indexes PDF, HTML, Markdown, text, CSV, Word, PowerPoint and Excel files into an
  in-memory BM25 store, persisted and reused while the files are unchanged, and returns a datastore spec; its
  retriever's ``warm_up`` gives the :class:`FolderIndex`, whose ``warnings`` name the files left out.
"""

from haystack_deep_research.sources.datastore import routing_prompt
from haystack_deep_research.sources.datastore_tool import datastore_tools
from haystack_deep_research.sources.ddgs import DdgsSearch
from haystack_deep_research.sources.folder import index_folder
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
