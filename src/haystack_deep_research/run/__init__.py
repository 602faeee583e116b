"""
The run layer: one :class:`ResearchRun` per run, its lifecycle hooks, budget, journal, read cache and usage, and the
phase driver every hook and tool is written with.
"""

from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.hooks import PhaseHook, RunBound, StatelessHook, UsesModels
from haystack_deep_research.run.journal import JOURNAL_FILE, LEDGER_FILE, REPORT_FILE, RunJournal, subtopic_key
from haystack_deep_research.run.lifecycle import (
    BudgetHook,
    CloseRunHook,
    OpenRunHook,
    event_bus,
    publish,
    question_from,
    view_of,
)
from haystack_deep_research.run.phases import (
    MODEL_CALL_SPAN,
    Call,
    Outcome,
    Phase,
    ask,
    blocking,
    drive,
    drive_async,
    subphase,
)
from haystack_deep_research.run.read_cache import CachedRead, ReadCache, ReadClaim
from haystack_deep_research.run.research_run import ResearchRun, RunView
from haystack_deep_research.run.usage import add_usage, total_tokens, usage_delta

__all__ = [
    "JOURNAL_FILE",
    "LEDGER_FILE",
    "MODEL_CALL_SPAN",
    "REPORT_FILE",
    "BudgetHook",
    "CachedRead",
    "Call",
    "CloseRunHook",
    "OpenRunHook",
    "Outcome",
    "Phase",
    "PhaseHook",
    "ReadCache",
    "ReadClaim",
    "ResearchRun",
    "RunBound",
    "RunBudget",
    "RunJournal",
    "RunView",
    "StatelessHook",
    "UsesModels",
    "add_usage",
    "ask",
    "blocking",
    "drive",
    "drive_async",
    "event_bus",
    "publish",
    "question_from",
    "subphase",
    "subtopic_key",
    "total_tokens",
    "usage_delta",
    "view_of",
]
