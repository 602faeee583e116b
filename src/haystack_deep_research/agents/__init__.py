"""The agent shapes of the library; each module is wiring only, over the shared layers."""

from haystack_deep_research.agents.deep_agent import create_deep_agent, default_termination
from haystack_deep_research.agents.deep_research import create_deep_research_agent
from haystack_deep_research.agents.models import (
    DEFAULT_MODEL,
    DEFAULT_SMALL_MODEL,
    default_chat_generator,
)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SMALL_MODEL",
    "create_deep_agent",
    "create_deep_research_agent",
    "default_chat_generator",
    "default_termination",
]
