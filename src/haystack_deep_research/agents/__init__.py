"""
The agent shapes of the library; each module is wiring only, over the shared layers. A shape's modules are imported
when one of its names is first used.
"""

from typing import TYPE_CHECKING

from haystack_deep_research._lazy import lazy_exports

if TYPE_CHECKING:
    from haystack_deep_research.agents.deep_agent import create_deep_agent
    from haystack_deep_research.agents.deep_research import create_deep_research_agent
    from haystack_deep_research.agents.iterative_agent import IterativeResearchAgent, create_iterative_research_agent
    from haystack_deep_research.agents.models import chat_generator, default_chat_generator, role_models
    from haystack_deep_research.agents.research_agent import ResearchAgent
    from haystack_deep_research.agents.workflow import ResearchWorkflow, create_research_workflow

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        ".deep_agent": ("create_deep_agent",),
        ".deep_research": ("create_deep_research_agent",),
        ".iterative_agent": ("IterativeResearchAgent", "create_iterative_research_agent"),
        ".models": ("chat_generator", "default_chat_generator", "role_models"),
        ".research_agent": ("ResearchAgent",),
        ".workflow": ("ResearchWorkflow", "create_research_workflow"),
    },
)

__all__ = [
    "IterativeResearchAgent",
    "ResearchAgent",
    "ResearchWorkflow",
    "chat_generator",
    "create_deep_agent",
    "create_deep_research_agent",
    "create_iterative_research_agent",
    "create_research_workflow",
    "default_chat_generator",
    "role_models",
]
