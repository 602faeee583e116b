"""
The research layer. For the deep research agent: the scope hook that opens a run, the ``research_subtopic`` tool
that runs a sub-researcher, the sub-researcher's final-summary hook, the plan hook, and the wrapper that keeps
research when the orchestrator's model fails. For the deep agent: its exit conditions (its other layers are in
:mod:`haystack_deep_research.deep_agent`). Shared by both: the loop guard and the tool-call hooks.
"""

from haystack_deep_research.research import exits
from haystack_deep_research.research.exits import *  # noqa: F403

__all__ = exits.__all__
