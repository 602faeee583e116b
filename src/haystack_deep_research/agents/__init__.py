"""The agent shapes of the library; each module is wiring only, over the shared layers."""

from haystack_deep_research.agents.deep_research import create_deep_research_agent
from haystack_deep_research.agents.models import (
    DEFAULT_MODEL,
    DEFAULT_SMALL_MODEL,
    default_chat_generator,
)
from haystack_deep_research.agents.research_workflow import create_research_workflow

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SMALL_MODEL",
    "create_deep_research_agent",
    "create_research_workflow",
    "default_chat_generator",
]
