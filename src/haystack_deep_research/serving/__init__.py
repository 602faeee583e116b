"""
What servers of the library share: where their agents come from, and a run streamed as a chat reply.

Used by the MCP server (:mod:`haystack_deep_research.mcp_server`) and by the Hayhooks pipeline wrapper in
``examples/hayhooks``; needs no optional package.
"""

from haystack_deep_research.serving.chat import question_from_chat, stream_research
from haystack_deep_research.serving.factory import AGENT_FACTORY_ENV, AgentFactory, agent_factory, default_agent

__all__ = [
    "AGENT_FACTORY_ENV",
    "AgentFactory",
    "agent_factory",
    "default_agent",
    "question_from_chat",
    "stream_research",
]
