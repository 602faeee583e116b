"""
The MCP server (``deep-research mcp``): the ``deep_research`` and ``check_report`` tools over stdio or streamable HTTP.

Needs the optional extra: ``pip install "haystack-deep-research[mcp]"`` (the official ``mcp`` SDK, 2.x line).
Building the server without it raises :class:`~haystack_deep_research.errors.MissingExtraError`.
"""

from haystack_deep_research.mcp_server.server import build_server

__all__ = ["build_server"]
