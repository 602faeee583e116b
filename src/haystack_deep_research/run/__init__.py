"""
The run layer: one :class:`ResearchRun` per run, its lifecycle hooks, budget, journal, read cache, usage and cost, and
the phase driver every hook and tool is written with.
"""

from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.cost import DEFAULT_PRICES, PRICES_AS_OF, CostMeter, Price, price_of, usage_cost
from haystack_deep_research.run.entry import RunGuard, check_hook_context, check_messages
from haystack_deep_research.run.hooks import PhaseHook, RunBound, StatelessHook, UsesModels
from haystack_deep_research.run.journal import (
    JOURNAL_FILE,
    LEDGER_FILE,
    LOCK_FILE,
    REPORT_FILE,
    RunJournal,
    subtopic_key,
)
from haystack_deep_research.run.lifecycle import (
    BudgetHook,
    CloseRunHook,
    OpenRunHook,
    event_bus,
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
    failure,
    model_name,
    subphase,
)
from haystack_deep_research.run.read_cache import CachedRead, ReadCache, ReadClaim
from haystack_deep_research.run.research_run import ResearchRun, RunView, publish
from haystack_deep_research.run.streaming import (
    AGENT_META,
    ROLE_META,
    accepts_streaming,
    for_async,
    for_sync,
    tag_chunk,
)
from haystack_deep_research.run.usage import add_usage, total_tokens, usage_delta

__all__ = [
    "AGENT_META",
    "DEFAULT_PRICES",
    "JOURNAL_FILE",
    "LEDGER_FILE",
    "LOCK_FILE",
    "MODEL_CALL_SPAN",
    "PRICES_AS_OF",
    "REPORT_FILE",
    "ROLE_META",
    "BudgetHook",
    "CachedRead",
    "Call",
    "CloseRunHook",
    "CostMeter",
    "OpenRunHook",
    "Outcome",
    "Phase",
    "PhaseHook",
    "Price",
    "ReadCache",
    "ReadClaim",
    "ResearchRun",
    "RunBound",
    "RunBudget",
    "RunGuard",
    "RunJournal",
    "RunView",
    "StatelessHook",
    "UsesModels",
    "accepts_streaming",
    "add_usage",
    "ask",
    "blocking",
    "check_hook_context",
    "check_messages",
    "drive",
    "drive_async",
    "event_bus",
    "failure",
    "for_async",
    "for_sync",
    "model_name",
    "price_of",
    "publish",
    "question_from",
    "subphase",
    "subtopic_key",
    "tag_chunk",
    "total_tokens",
    "usage_cost",
    "usage_delta",
    "view_of",
]
