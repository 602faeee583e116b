"""
What servers of the library share: where their agents come from, who may call them (one guard for every route of every
server), and a run streamed as a chat reply. Used by the MCP server and the Hayhooks wrapper; needs no optional
package (:mod:`haystack_deep_research.serving.hayhooks` needs the ``hayhooks`` extra).
"""

from haystack_deep_research.serving.agents import agent_factory, question_from_chat, question_from_text, stream_research
from haystack_deep_research.serving.guard import RequestGuard, RequestGuardMiddleware, http_status

__all__ = [
    "RequestGuard",
    "RequestGuardMiddleware",
    "agent_factory",
    "http_status",
    "question_from_chat",
    "question_from_text",
    "stream_research",
]
