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
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD, LoopGuard, LoopGuardHook, call_signature
from haystack_deep_research.research.plan import PlanHook
from haystack_deep_research.research.preserve import FAILURE_META, PreservingChatGenerator, model_failure
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.research.tool_calls import ToolResultsHook

__all__ = [
    "DEFAULT_LOOP_THRESHOLD",
    "FAILURE_META",
    "AllOf",
    "AnyOf",
    "ConfidenceMet",
    "ExitCondition",
    "FinalSummaryHook",
    "LoopGuard",
    "LoopGuardHook",
    "MaxIterations",
    "PlanHook",
    "PreservingChatGenerator",
    "ResearchSubtopicTool",
    "ScopeHook",
    "StepCall",
    "StepFacts",
    "TextReply",
    "TokenLimit",
    "ToolResultsHook",
    "ToolUsed",
    "call_signature",
    "exit_condition_from_dict",
    "model_failure",
]
