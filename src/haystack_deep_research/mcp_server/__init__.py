"""The MCP server (``deep-research mcp``); needs the ``mcp`` extra (see docs/mcp.md)."""

from haystack_deep_research.mcp_server.server import build_server

__all__ = ["build_server"]
