"""
The research layer of the deep research agent: the scope hook that opens a run, the ``research_subtopic`` tool that
runs a sub-researcher, the sub-researcher's final-summary hook and loop guard, and the wrapper that keeps research
when the orchestrator's model fails.
"""

from haystack_deep_research.research.final_summary import PARTIAL_REASONS, FinalSummaryHook, failure
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD, LoopGuard, LoopGuardHook, call_signature
from haystack_deep_research.research.plan import PlanHook
from haystack_deep_research.research.preserve import FAILURE_META, PreservingChatGenerator, model_failure
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.research.tool_calls import ToolResultsHook

__all__ = [
    "DEFAULT_LOOP_THRESHOLD",
    "FAILURE_META",
    "PARTIAL_REASONS",
    "FinalSummaryHook",
    "LoopGuard",
    "LoopGuardHook",
    "PlanHook",
    "PreservingChatGenerator",
    "ResearchSubtopicTool",
    "ScopeHook",
    "ToolResultsHook",
    "call_signature",
    "failure",
    "model_failure",
]
