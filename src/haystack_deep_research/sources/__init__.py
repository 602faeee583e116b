"""
Sources: where the researchers' evidence comes from.

- Web search: :class:`SearchTool` is the one ``web_search`` path (normalize, limit, record in the ledger, fence),
  over a backend: :class:`TavilySearch` (``WebSearchTool`` is the Tavily tool), the keyless :class:`DdgsSearch`, or
  any Haystack web-search component or Tool (:func:`search_backend`). :func:`resolve_search` picks one by name
  (``"auto"``: Tavily with ``TAVILY_API_KEY``, else ddgs).
- Datastores: your own documents behind any Haystack retriever. :func:`datastore_tools` builds one ``search_<name>``
  tool per store and :func:`routing_prompt` the routing block of a system prompt; both work for any agent shape.
- MCP servers: the tools of any MCP server (:class:`MCPServer`, a stdio command or a streamable-HTTP URL), one
  ``<server>_<tool>`` tool each in an :class:`MCPToolset`, connected once per run; their results are read like
  documents and cited as ``mcp://<server>/<tool>/<id>`` (or the URL a result gives).
- Folders: :func:`index_folder` indexes PDF, HTML, Markdown, text, CSV, Word, PowerPoint and Excel files into an
  in-memory BM25 store, persisted and reused while the files are unchanged, and returns a datastore spec.
"""

from haystack_deep_research.sources.datastore import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    Datastore,
    citation_target,
    datastores_from,
    routing_prompt,
)
from haystack_deep_research.sources.datastore_tool import MAX_DOCUMENT_CHARS, DatastoreSearchTool, datastore_tools
from haystack_deep_research.sources.ddgs import DdgsClient, DdgsSearch
from haystack_deep_research.sources.folder import FolderRetriever, folder_store_name, index_folder
from haystack_deep_research.sources.hits import SearchHit, normalize_hits
from haystack_deep_research.sources.indexing import (
    FILE_TYPES,
    FolderIndex,
    IndexProgress,
    build_index,
    default_cache_dir,
)
from haystack_deep_research.sources.mcp_servers import MCPServer, mcp_servers_from
from haystack_deep_research.sources.mcp_tool import MCPTool, MCPToolset, mcp_toolsets
from haystack_deep_research.sources.plugins import ComponentSearch, ToolSearch, search_backend
from haystack_deep_research.sources.search import SearchBackend, SearchTool
from haystack_deep_research.sources.selection import KEYLESS_NOTICE, SEARCH_NAMES, default_search_name, resolve_search
from haystack_deep_research.sources.tavily import SearchClient, TavilySearch, WebSearchTool

__all__ = [
    "DEFAULT_TOP_K",
    "FILE_TYPES",
    "KEYLESS_NOTICE",
    "MAX_DOCUMENT_CHARS",
    "MAX_TOP_K",
    "SEARCH_NAMES",
    "ComponentSearch",
    "Datastore",
    "DatastoreSearchTool",
    "DdgsClient",
    "DdgsSearch",
    "FolderIndex",
    "FolderRetriever",
    "IndexProgress",
    "MCPServer",
    "MCPTool",
    "MCPToolset",
    "SearchBackend",
    "SearchClient",
    "SearchHit",
    "SearchTool",
    "TavilySearch",
    "ToolSearch",
    "WebSearchTool",
    "build_index",
    "citation_target",
    "datastore_tools",
    "datastores_from",
    "default_cache_dir",
    "default_search_name",
    "folder_store_name",
    "index_folder",
    "mcp_servers_from",
    "mcp_toolsets",
    "normalize_hits",
    "resolve_search",
    "routing_prompt",
    "search_backend",
]
