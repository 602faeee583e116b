"""
The research layer. For the deep research agent: the scope hook that opens a run, the ``research_subtopic`` tool
that runs a sub-researcher, the sub-researcher's final-summary hook, the plan hook, and the wrapper that keeps
research when the orchestrator's model fails. For the deep agent: its exit conditions (its other layers are in
:mod:`haystack_deep_research.deep_agent`). Shared by both: the loop guard and the tool-call hooks.
"""

from haystack_deep_research.research.exits import (
    AllOf,
    AnyOf,
    ConfidenceMet,
    ExitCondition,
    MaxIterations,
    StepCall,
    StepFacts,
    TextReply,
    TokenLimit,
    ToolUsed,
    exit_condition_from_dict,
)
from haystack_deep_research.research.final_summary import FinalSummaryHook
from haystack_deep_research.research.loop_guard import LoopGuard
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool

__all__ = [
    "AllOf",
    "AnyOf",
    "ConfidenceMet",
    "ExitCondition",
    "FinalSummaryHook",
    "LoopGuard",
    "MaxIterations",
    "ResearchSubtopicTool",
    "ScopeHook",
    "StepCall",
    "StepFacts",
    "TextReply",
    "TokenLimit",
    "ToolUsed",
    "exit_condition_from_dict",
]
